// The sign-in pages' variables (docs/signin.md "Configuration"), parsed once per env. Every TTL
// and limit has its documented default, so tests can shorten windows.

import { commonConfig, configOf, ConfigError, enumVar, intVar, optionalVar, type CommonVars } from "../../core/config";
import { LOOPBACK_HOSTS } from "../../core/spec";
import { smsConfig, type SmsConfig } from "../store/sms/index";
import { checkConfig, storeConfig, tolerated, type StoreVars } from "../store/config";
import { termsVar, type CarrierTerm } from "./terms";
import type { SigninVars } from "../config";

export type { SigninVars };
/** Who runs the pages (every page's footer): the operator's name and links, from configuration. */
export interface Operator {
  name?: string;
  terms?: string;
  privacy?: string;
  help?: string;
  /** The agreements the identify step shows (SIGNIN_TERMS, or the samples: terms.ts). */
  agreements: readonly CarrierTerm[];
}

/** The sign-in's variables, and the SMS senders' (store/sms/config.ts) it sends its codes with. */
export interface SigninConfig extends SmsConfig {
  operator: Operator;
  txTtlMs: number;
  otpTtlMs: number;
  otpMaxAttempts: number;
  lockAfterFailures: number;
  numberLockAfterFailures: number;
  testNumberMaxFailures: number;
  lockMs: number;
  failureMemoryMs: number;
  resendCooldownMs: number;
  sendsPerWindow: number;
  sendWindowMs: number;
  ipLimit: number;
  ipWindowMs: number;
  autoLoginTtlMs: number;
  /** A passkey made with an SMS proof alone signs in only after this (docs/passkeys.md). */
  passkeyActivationMs: number;
  /** A passkey sign-in asks the carrier again when the number's last confirmation is older (CARRIER_DIRECTORY=http). */
  passkeyRecheckMs: number;
  carrierDirectory: "d1" | "http";
  carrierApi: CarrierApiConfig;
}

/** A footer link: an https URL (http too in DEV_MODE) or a path on this host. */
function linkVar(
  env: SigninVars,
  name: "TERMS_URL" | "PRIVACY_URL" | "HELP_URL",
  devMode: boolean,
): string | undefined {
  const v = optionalVar(env, name);
  if (v === undefined) return undefined;
  if (!(/^https:\/\/[^\s"<>]+$/.test(v) || (devMode && /^http:\/\/[^\s"<>]+$/.test(v)) || /^\/[^\s"<>]*$/.test(v)))
    throw new ConfigError(name, "must be an https URL or a path starting with /");
  return v;
}

// ---- the carrier verification API (CARRIER_DIRECTORY=http, docs/carrier-api.md)

/** Where and how the carrier API is asked; the URL and secret are required only by `http`. */
export interface CarrierApiConfig {
  url: string | undefined;
  secret: string | undefined;
  /** Set during a change of secret (docs/carrier-api.md "Rotating the secret"). */
  nextSecret: string | undefined;
  timeoutMs: number;
}

/** The shortest shared secret accepted: 32 characters (`openssl rand -hex 32` gives 64). */
const CARRIER_SECRET_MIN = 32;

function carrierApiConfig(env: SigninVars, devMode: boolean): CarrierApiConfig {
  const url = optionalVar(env, "CARRIER_API_URL");
  if (url !== undefined) {
    let u: URL | null = null;
    try {
      u = new URL(url);
    } catch {
      /* reported below */
    }
    const loopbackHttp = u?.protocol === "http:" && LOOPBACK_HOSTS.has(u.hostname) && devMode;
    if (!u || !(u.protocol === "https:" || loopbackHttp) || u.username || u.password || u.hash)
      throw new ConfigError("CARRIER_API_URL", "must be an https URL (http only on loopback with DEV_MODE=true)");
  }
  const short = (name: string) => new ConfigError(name, `must be at least ${CARRIER_SECRET_MIN} characters`);
  const secret = optionalVar(env, "CARRIER_API_SECRET");
  if (secret !== undefined && secret.length < CARRIER_SECRET_MIN) throw short("CARRIER_API_SECRET");
  // A malformed next secret is left unused and reported: the current secret still signs and
  // checks every call, so the sign-in goes on as before the change of secret began.
  let nextSecret = optionalVar(env, "CARRIER_API_SECRET_NEXT");
  if (nextSecret !== undefined && nextSecret.length < CARRIER_SECRET_MIN) {
    tolerated(short("CARRIER_API_SECRET_NEXT"), "signin");
    nextSecret = undefined;
  }
  return { url, secret, nextSecret, timeoutMs: intVar(env, "CARRIER_API_TIMEOUT_MS", 3000, 100, 30_000) };
}

/** OPERATOR_NAME: at most 100 characters. */
const OPERATOR_NAME_MAX = 100;

/**
 * OPERATOR_NAME alone, for a page that needs nothing else of the sign-in (the consoles' frame): a
 * malformed one is left out here, and named by the sign-in's own parse (signinConfig).
 */
export function operatorName(env: SigninVars): string | undefined {
  const v = optionalVar(env, "OPERATOR_NAME");
  return v !== undefined && v.length <= OPERATOR_NAME_MAX ? v : undefined;
}

function parse(env: SigninVars): SigninConfig {
  const devMode = commonConfig(env).devMode;
  const name = optionalVar(env, "OPERATOR_NAME");
  if (name !== undefined && name.length > OPERATOR_NAME_MAX)
    throw new ConfigError("OPERATOR_NAME", "at most 100 characters");
  return {
    operator: {
      name,
      terms: linkVar(env, "TERMS_URL", devMode),
      privacy: linkVar(env, "PRIVACY_URL", devMode),
      help: linkVar(env, "HELP_URL", devMode),
      agreements: termsVar(env),
    },
    txTtlMs: intVar(env, "SIGNIN_TX_TTL_SECONDS", 600, 10, 3600) * 1000,
    otpTtlMs: intVar(env, "SIGNIN_OTP_TTL_SECONDS", 180, 10, 1800) * 1000,
    otpMaxAttempts: intVar(env, "SIGNIN_OTP_MAX_ATTEMPTS", 5, 1, 100),
    lockAfterFailures: intVar(env, "SIGNIN_LOCK_AFTER_FAILURES", 20, 1, 1000),
    numberLockAfterFailures: intVar(env, "SIGNIN_NUMBER_LOCK_AFTER_FAILURES", 100, 1, 100),
    testNumberMaxFailures: storeConfig(env).testNumberMaxFailures,
    lockMs: intVar(env, "SIGNIN_LOCK_SECONDS", 3600, 1, 7 * 86400) * 1000,
    failureMemoryMs: intVar(env, "SIGNIN_FAILURE_MEMORY_SECONDS", 86400, 60, 30 * 86400) * 1000,
    resendCooldownMs: intVar(env, "SIGNIN_RESEND_COOLDOWN_SECONDS", 30, 0, 3600) * 1000,
    sendsPerWindow: intVar(env, "SIGNIN_SENDS_PER_WINDOW", 5, 1, 1000),
    sendWindowMs: intVar(env, "SIGNIN_SEND_WINDOW_SECONDS", 3600, 1, 86400) * 1000,
    ipLimit: intVar(env, "SIGNIN_IP_LIMIT", 100, 1, 1_000_000),
    ipWindowMs: intVar(env, "SIGNIN_IP_WINDOW_SECONDS", 600, 1, 86400) * 1000,
    autoLoginTtlMs: intVar(env, "AUTO_LOGIN_TTL_SECONDS", 14 * 86400, 60, 365 * 86400) * 1000,
    passkeyActivationMs: intVar(env, "PASSKEY_ACTIVATION_SECONDS", 86400, 0, 30 * 86400) * 1000,
    passkeyRecheckMs: intVar(env, "PASSKEY_RECHECK_SECONDS", 7 * 86400, 0, 365 * 86400) * 1000,
    carrierDirectory: enumVar(env, "CARRIER_DIRECTORY", ["d1", "http"] as const, "d1"),
    carrierApi: carrierApiConfig(env, devMode),
    ...smsConfig(env),
  };
}

/** The sign-in variables, parsed once; throws ConfigError naming a malformed one. */
export function signinConfig(env: SigninVars): SigninConfig {
  return configOf(env, parse);
}

checkConfig(signinConfig);
