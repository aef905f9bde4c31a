// The sign-in pages' variables (docs/signin.md "Configuration"), parsed once per env object. Every
// TTL and limit has the default the issue names, so tests can shorten windows (DESIGN.md §4.7).

import { boolVar, ConfigError, enumVar, intVar } from "../../core/config";

export interface SigninConfig {
  txTtlMs: number;
  otpTtlMs: number;
  otpMaxAttempts: number;
  lockAfterFailures: number;
  numberLockAfterFailures: number;
  lockMs: number;
  failureMemoryMs: number;
  resendCooldownMs: number;
  sendsPerWindow: number;
  sendWindowMs: number;
  ipLimit: number;
  ipWindowMs: number;
  autoLoginTtlMs: number;
  carrierDirectory: "d1";
  smsSender: "outbox" | "webhook";
  smsWebhookUrl: string | undefined;
  smsWebhookSecret: string | undefined;
  smsWebhookTimeoutMs: number;
}

type Vars = Record<string, unknown>;

const cache = new WeakMap<object, SigninConfig>();

function optional(env: Vars, name: string): string | undefined {
  const v = env[name];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw new ConfigError(name, "must be a string");
  return v;
}

/** Parses the sign-in variables once per env; throws ConfigError naming a malformed variable. */
export function signinConfig(env: Vars): SigninConfig {
  let c = cache.get(env);
  if (c) return c;
  const devMode = boolVar(env, "DEV_MODE", false);
  const smsSender = enumVar(env, "SMS_SENDER", ["outbox", "webhook"] as const, devMode ? "outbox" : "webhook");
  if (smsSender === "outbox" && !devMode) throw new ConfigError("SMS_SENDER", "outbox is for DEV_MODE only");
  const smsWebhookUrl = optional(env, "SMS_WEBHOOK_URL");
  if (smsWebhookUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(smsWebhookUrl)) {
    throw new ConfigError("SMS_WEBHOOK_URL", "must be an http(s) URL");
  }
  c = {
    txTtlMs: intVar(env, "SIGNIN_TX_TTL_SECONDS", 600, 10, 3600) * 1000,
    otpTtlMs: intVar(env, "SIGNIN_OTP_TTL_SECONDS", 180, 10, 1800) * 1000,
    otpMaxAttempts: intVar(env, "SIGNIN_OTP_MAX_ATTEMPTS", 5, 1, 100),
    lockAfterFailures: intVar(env, "SIGNIN_LOCK_AFTER_FAILURES", 20, 1, 1000),
    numberLockAfterFailures: intVar(env, "SIGNIN_NUMBER_LOCK_AFTER_FAILURES", 100, 1, 100),
    lockMs: intVar(env, "SIGNIN_LOCK_SECONDS", 3600, 1, 7 * 86400) * 1000,
    failureMemoryMs: intVar(env, "SIGNIN_FAILURE_MEMORY_SECONDS", 86400, 60, 30 * 86400) * 1000,
    resendCooldownMs: intVar(env, "SIGNIN_RESEND_COOLDOWN_SECONDS", 30, 0, 3600) * 1000,
    sendsPerWindow: intVar(env, "SIGNIN_SENDS_PER_WINDOW", 5, 1, 1000),
    sendWindowMs: intVar(env, "SIGNIN_SEND_WINDOW_SECONDS", 3600, 1, 86400) * 1000,
    ipLimit: intVar(env, "SIGNIN_IP_LIMIT", 100, 1, 1_000_000),
    ipWindowMs: intVar(env, "SIGNIN_IP_WINDOW_SECONDS", 600, 1, 86400) * 1000,
    autoLoginTtlMs: intVar(env, "AUTO_LOGIN_TTL_SECONDS", 14 * 86400, 60, 365 * 86400) * 1000,
    carrierDirectory: enumVar(env, "CARRIER_DIRECTORY", ["d1"] as const, "d1"),
    smsSender,
    smsWebhookUrl,
    smsWebhookSecret: optional(env, "SMS_WEBHOOK_SECRET"),
    smsWebhookTimeoutMs: intVar(env, "SMS_WEBHOOK_TIMEOUT_MS", 5000, 100, 60_000),
  };
  cache.set(env, c);
  return c;
}
