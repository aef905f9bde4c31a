// The SMS senders' variables (docs/signin.md "SMS interface", "SMS gateways"): which senders
// `SMS_SENDER` lists, the webhook's and the built-in gateways' settings, parsed once per env. The
// sign-in's configuration carries them (signin/config.ts); the senders (configured.ts) read them here.

import { commonConfig, configOf, ConfigError, intVar, optionalVar, type CommonVars } from "../../../core/config";
import { LOOPBACK_HOSTS } from "../../../core/spec";
import { sharedSecretVar } from "../config";
import type { SmsGatewayName } from "./sender";

export interface SmsVars extends CommonVars {
  SMS_SENDER?: string;
  SMS_WEBHOOK_URL?: string;
  SMS_WEBHOOK_SECRET?: string;
  SMS_WEBHOOK_TIMEOUT_MS?: string;
  SMS_TIMEOUT_MS?: string;
  SMS_FROM?: string;
  SENS_SERVICE_ID?: string;
  SENS_ACCESS_KEY?: string;
  SENS_SECRET_KEY?: string;
  SENS_BASE_URL?: string;
  NHN_SMS_APP_KEY?: string;
  NHN_SMS_SECRET_KEY?: string;
  NHN_SMS_BASE_URL?: string;
}

export interface SmsConfig {
  /** `outbox` alone, or the gateways to try in order. */
  smsSenders: readonly ["outbox"] | readonly SmsGatewayName[];
  smsWebhookUrl: string | undefined;
  smsWebhookSecret: string | undefined;
  smsWebhookTimeoutMs: number;
  sms: SmsGatewayConfig;
}

/** The built-in gateways' settings (docs/signin.md "SMS gateways"); presence is checked at use. */
export interface SmsGatewayConfig {
  /** One attempt's timeout at a built-in gateway (SMS_TIMEOUT_MS). */
  timeoutMs: number;
  /** The sender number registered with the providers (SMS_FROM), digits only. */
  from: string | undefined;
  sens: { baseUrl: string; serviceId?: string; accessKey?: string; secretKey?: string };
  nhn: { baseUrl: string; appKey?: string; secretKey?: string };
}

/** Every gateway `SMS_SENDER` may name. */
export const GATEWAYS: readonly SmsGatewayName[] = ["naver-sens", "nhn-cloud", "webhook"];

/** `SMS_SENDER`: `outbox` (DEV_MODE only) alone, or gateways in the order they are tried, each once. */
function smsSenders(env: SmsVars, devMode: boolean): SmsConfig["smsSenders"] {
  const v = optionalVar(env, "SMS_SENDER") ?? (devMode ? "outbox" : "webhook");
  if (v === "outbox") {
    if (!devMode) throw new ConfigError("SMS_SENDER", "outbox is for DEV_MODE only");
    return ["outbox"];
  }
  const names = v.split(",").map((n) => n.trim());
  if (!names.every((n): n is SmsGatewayName => (GATEWAYS as readonly string[]).includes(n)))
    throw new ConfigError("SMS_SENDER", `must be outbox, or a list of ${GATEWAYS.join(", ")}`);
  if (new Set(names).size !== names.length) throw new ConfigError("SMS_SENDER", "lists a gateway twice");
  return names;
}

/**
 * A gateway's base URL: https, or http on a loopback host with DEV_MODE (tests, local fakes); an
 * origin with an optional path, no trailing slash.
 */
function baseUrlVar(env: SmsVars, name: "SENS_BASE_URL" | "NHN_SMS_BASE_URL", dflt: string, devMode: boolean) {
  const v = optionalVar(env, name) ?? dflt;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(name, "must be an https URL");
  }
  const loopback = u.protocol === "http:" && LOOPBACK_HOSTS.has(u.hostname) && devMode;
  if (!(u.protocol === "https:" || loopback) || u.username || u.password || u.search || u.hash)
    throw new ConfigError(name, "must be an https URL (http only on a loopback host with DEV_MODE=true)");
  return v.replace(/\/+$/, "");
}

function smsGatewayConfig(env: SmsVars, devMode: boolean): SmsGatewayConfig {
  const from = optionalVar(env, "SMS_FROM")?.replace(/-/g, "");
  // NHN Cloud's sendNo is at most 13 characters; Korean sender numbers are 8 (1588-xxxx) to 12 digits.
  if (from !== undefined && !/^\d{8,13}$/.test(from)) throw new ConfigError("SMS_FROM", "must be 8 to 13 digits");
  const serviceId = optionalVar(env, "SENS_SERVICE_ID");
  // The service id goes into the request path and its signature as it is.
  if (serviceId !== undefined && !/^[A-Za-z0-9:_.-]{1,100}$/.test(serviceId))
    throw new ConfigError("SENS_SERVICE_ID", "must be a SENS service id (ncp:sms:kr:...)");
  return {
    timeoutMs: intVar(env, "SMS_TIMEOUT_MS", 3000, 100, 30_000),
    from,
    sens: {
      baseUrl: baseUrlVar(env, "SENS_BASE_URL", "https://sens.apigw.ntruss.com", devMode),
      serviceId,
      accessKey: optionalVar(env, "SENS_ACCESS_KEY"),
      secretKey: optionalVar(env, "SENS_SECRET_KEY"),
    },
    nhn: {
      baseUrl: baseUrlVar(env, "NHN_SMS_BASE_URL", "https://api-sms.cloud.toast.com", devMode),
      appKey: optionalVar(env, "NHN_SMS_APP_KEY"),
      secretKey: optionalVar(env, "NHN_SMS_SECRET_KEY"),
    },
  };
}

function parse(env: SmsVars): SmsConfig {
  const devMode = commonConfig(env).devMode;
  const smsWebhookUrl = optionalVar(env, "SMS_WEBHOOK_URL");
  if (smsWebhookUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(smsWebhookUrl)) {
    throw new ConfigError("SMS_WEBHOOK_URL", "must be an http(s) URL");
  }
  return {
    smsSenders: smsSenders(env, devMode),
    smsWebhookUrl,
    smsWebhookSecret: sharedSecretVar(env, "SMS_WEBHOOK_SECRET", "signin"),
    smsWebhookTimeoutMs: intVar(env, "SMS_WEBHOOK_TIMEOUT_MS", 5000, 100, 60_000),
    sms: smsGatewayConfig(env, devMode),
  };
}

/** The SMS senders' variables, parsed once; throws ConfigError naming a malformed one. */
export function smsConfig(env: SmsVars): SmsConfig {
  return configOf(env, parse);
}
