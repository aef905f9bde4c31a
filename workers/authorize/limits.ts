// The sign-in limits (issue 3), all counted atomically in the one-time store: per-IP on step 1,
// the per-number lock after consecutive failures (survives resends and new transactions), the
// resend cooldown and the sends per number per window. Keys hold hashes only.

import { sha256 } from "../core/crypto";
import { storeFor, type OneTimeStore } from "../core/one-time-store";
import type { SigninConfig } from "../core/signin-config";

type LimitEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/** A refusal by a limit: which one, and how long until it lifts. */
export interface Refusal {
  limit: "ip" | "locked" | "cooldown" | "sends";
  retryAfterMs: number;
}

/** The store key of a phone number's counters: the SHA-256 of the number, never the number. */
export function phoneKey(phone: string): Promise<string> {
  return sha256(`phone:${phone}`);
}

function numberStore(env: LimitEnv, shards: number, key: string): DurableObjectStub<OneTimeStore> {
  return storeFor(env, key, shards);
}

/** Counts one step-1 submission from `ip`; a refusal when over SIGNIN_IP_LIMIT in the window. */
export async function hitIp(env: LimitEnv, shards: number, cfg: SigninConfig, ip: string): Promise<Refusal | null> {
  const key = await sha256(`ip:${ip}`);
  const r = await storeFor(env, key, shards).hit(`ip:${key}`, cfg.ipWindowMs);
  return r.count > cfg.ipLimit ? { limit: "ip", retryAfterMs: r.windowEnd - Date.now() } : null;
}

/** The number's lock, if it is locked now. */
export async function lockOf(env: LimitEnv, shards: number, key: string): Promise<Refusal | null> {
  const r = await numberStore(env, shards, key).peek(`lock:${key}`);
  return r.count > 0 ? { limit: "locked", retryAfterMs: r.windowEnd - Date.now() } : null;
}

/** Counts a wrong code for the number; at SIGNIN_LOCK_AFTER_FAILURES locks it and says so. */
export async function recordFailure(env: LimitEnv, shards: number, cfg: SigninConfig, key: string): Promise<Refusal | null> {
  const store = numberStore(env, shards, key);
  const f = await store.hit(`fail:${key}`, cfg.failureMemoryMs);
  if (f.count < cfg.lockAfterFailures) return null;
  const lock = await store.hit(`lock:${key}`, cfg.lockMs);
  await store.clear(`fail:${key}`);
  return { limit: "locked", retryAfterMs: lock.windowEnd - Date.now() };
}

/** A correct code ends the run of consecutive failures. */
export async function recordSuccess(env: LimitEnv, shards: number, key: string): Promise<void> {
  await numberStore(env, shards, key).clear(`fail:${key}`);
}

/**
 * Takes one send for a real number: refused inside the cooldown since the last send, or past
 * SIGNIN_SENDS_PER_WINDOW in the window. Both counters are atomic hits, so two concurrent
 * requests cannot both pass the cooldown.
 */
export async function takeSend(env: LimitEnv, shards: number, cfg: SigninConfig, key: string): Promise<Refusal | null> {
  const store = numberStore(env, shards, key);
  if (cfg.resendCooldownMs > 0) {
    const c = await store.hit(`cool:${key}`, cfg.resendCooldownMs);
    if (c.count > 1) return { limit: "cooldown", retryAfterMs: c.windowEnd - Date.now() };
  }
  const s = await store.hit(`sends:${key}`, cfg.sendWindowMs);
  if (s.count > cfg.sendsPerWindow) return { limit: "sends", retryAfterMs: s.windowEnd - Date.now() };
  return null;
}
