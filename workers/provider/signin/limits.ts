// The sign-in limits (docs/signin.md "Limits"). The per-IP limit on step 1 is counted here; the
// number's limits (lock, cooldown, sends) are decided inside the sign-in's own store calls
// (workers/provider/store/one-time/signin-store.ts), in the same step as the code they concern. Keys hold hashes only.

import { sha256 } from "../../core/crypto";
import { clientNetwork } from "../../core/http";
import { storeFor, type OneTimeStore, ipCounter, type NumberLimits, type Refusal } from "../store/one-time/index";
import type { SigninConfig } from "./config";

export { type Refusal, phoneKey } from "../store/one-time/index";

type LimitEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/** The key of the request's network (IPv4 address, IPv6 /64) in the number's counters. */
export function networkKey(req: Request): Promise<string> {
  return sha256(`net:${clientNetwork(req)}`);
}

/** The number's limits as the store applies them. */
export function numberLimits(cfg: SigninConfig): NumberLimits {
  return {
    otpMaxAttempts: cfg.otpMaxAttempts,
    lockAfterFailures: cfg.lockAfterFailures,
    numberLockAfterFailures: cfg.numberLockAfterFailures,
    testNumberMaxFailures: cfg.testNumberMaxFailures,
    lockMs: cfg.lockMs,
    failureMemoryMs: cfg.failureMemoryMs,
    resendCooldownMs: cfg.resendCooldownMs,
    sendsPerWindow: cfg.sendsPerWindow,
    sendWindowMs: cfg.sendWindowMs,
  };
}

/**
 * The key of the request's network in the per-IP limit: the object of this key counts the
 * network's step-1 submissions, and holds the first-page transactions made from it.
 */
export function ipKey(req: Request): Promise<string> {
  return sha256(`ip:${clientNetwork(req)}`);
}

/** One count of the per-IP limit, as the store answered it. */
export interface IpHit {
  count: number;
  windowEnd: number;
}

/** The counter key of the network `ipKey` in its object (the one-time store's keys name every counter). */
export { ipCounter };

/** A refusal when the count is over SIGNIN_IP_LIMIT in the window. */
export function ipRefusal(r: IpHit, cfg: SigninConfig): Refusal | null {
  return r.count > cfg.ipLimit ? { limit: "ip", until: r.windowEnd } : null;
}

/** Counts one step-1 submission from the request's network; a refusal when over SIGNIN_IP_LIMIT in the window. */
export async function hitIp(env: LimitEnv, shards: number, cfg: SigninConfig, req: Request): Promise<Refusal | null> {
  const key = await ipKey(req);
  return ipRefusal(await storeFor(env, key, shards).hit(ipCounter(key), cfg.ipWindowMs), cfg);
}
