// The SMS-abuse guard's variables (docs/abuse.md "Configuration"), parsed once per env: on or off,
// the thresholds and times of the scopes, the safe network blocks, and Cloudflare Turnstile's keys
// and addresses (in DEV_MODE, the local fake's: the all-in-one serves it under /_dev/turnstile/).

import { commonConfig, configOf, ConfigError, enumVar, intVar, optionalVar, type CommonVars } from "../../core/config";
import { checkConfig, sharedSecretVar } from "../store/config";
import { guardRules, type GuardRuleVars, type GuardRules } from "../store/guard/index";
import { TURNSTILE_SCRIPT_URL, TURNSTILE_SITEVERIFY_URL, type TurnstileConfig } from "./turnstile";

export interface GuardVars extends CommonVars, GuardRuleVars {
  SMS_GUARD?: string;
  GUARD_CACHE_SECONDS?: string;
  GUARD_FLUSH_MS?: string;
  GUARD_SAFE_BLOCKS?: string;
  TURNSTILE_SITE_KEY?: string;
  TURNSTILE_SECRET_KEY?: string;
  TURNSTILE_SCRIPT_URL?: string;
  TURNSTILE_SITEVERIFY_URL?: string;
  TURNSTILE_TIMEOUT_MS?: string;
}

/** A safe network block: an IPv4 or IPv6 prefix, as bits. */
export interface Cidr {
  v6: boolean;
  bits: bigint;
  length: number;
}

export interface GuardConfig {
  on: boolean;
  devMode: boolean;
  rules: GuardRules;
  /** How long an isolate uses its copy of an app's states before reading them again. */
  cacheMs: number;
  /** How long an isolate gathers counts before it sends them in one call. */
  flushMs: number;
  safeBlocks: Cidr[];
  turnstile: TurnstileConfig;
}

/** The local fake's keys (workers/all-in-one/turnstile-fake.js): DEV_MODE's defaults. */
export const DEV_TURNSTILE = {
  siteKey: "1x0000000000000000FAKE",
  secretKey: "fake-turnstile-secret-0123456789abcdef",
  scriptUrl: "/_dev/turnstile/turnstile/v0/api.js",
  siteverifyUrl: "/_dev/turnstile/turnstile/v0/siteverify",
};

/** An address as bits (IPv4: 32, IPv6: 128), or null when it is not one. */
export function addressBits(ip: string): { v6: boolean; bits: bigint } | null {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) {
    const parts = ip.split(".").map(Number);
    if (parts.some((p) => p > 255)) return null;
    return { v6: false, bits: parts.reduce((a, p) => (a << 8n) | BigInt(p), 0n) };
  }
  if (!ip.includes(":")) return null;
  let host: string;
  try {
    host = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head = "", tail] = host.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  if (left.length + right.length > 8 || left.concat(right).some((g) => g.includes("."))) return null;
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return { v6: true, bits: groups.reduce((a, g) => (a << 16n) | BigInt(parseInt(g, 16)), 0n) };
}

export function parseCidr(text: string): Cidr | null {
  const [ip = "", len] = text.trim().split("/");
  const a = addressBits(ip);
  if (!a || len === undefined || !/^\d{1,3}$/.test(len)) return null;
  const length = Number(len);
  if (length > (a.v6 ? 128 : 32)) return null;
  return { ...a, length };
}

export function inCidr(c: Cidr, a: { v6: boolean; bits: bigint }): boolean {
  if (c.v6 !== a.v6) return false;
  const width = BigInt(c.v6 ? 128 : 32);
  const shift = width - BigInt(c.length);
  return c.bits >> shift === a.bits >> shift;
}

function turnstileConfig(env: GuardVars, devMode: boolean, on: boolean): TurnstileConfig {
  const siteKey = optionalVar(env, "TURNSTILE_SITE_KEY") ?? (devMode ? DEV_TURNSTILE.siteKey : undefined);
  const secretKey =
    sharedSecretVar(env, "TURNSTILE_SECRET_KEY", "guard") ?? (devMode ? DEV_TURNSTILE.secretKey : undefined);
  if (on && (!siteKey || !secretKey))
    throw new ConfigError(
      siteKey ? "TURNSTILE_SECRET_KEY" : "TURNSTILE_SITE_KEY",
      "is required while SMS_GUARD is on (the challenge it asks for is Turnstile's)",
    );
  const url = (name: "TURNSTILE_SCRIPT_URL" | "TURNSTILE_SITEVERIFY_URL", prod: string, dev: string) => {
    const v = optionalVar(env, name) ?? (devMode ? dev : prod);
    if (!(/^https:\/\/[^\s"<>]+$/.test(v) || (devMode && /^(http:\/\/|\/)[^\s"<>]*$/.test(v))))
      throw new ConfigError(name, "must be an https URL (http or a path on this host only with DEV_MODE=true)");
    return v;
  };
  return {
    siteKey: siteKey ?? "",
    secretKey: secretKey ?? "",
    scriptUrl: url("TURNSTILE_SCRIPT_URL", TURNSTILE_SCRIPT_URL, DEV_TURNSTILE.scriptUrl),
    siteverifyUrl: url("TURNSTILE_SITEVERIFY_URL", TURNSTILE_SITEVERIFY_URL, DEV_TURNSTILE.siteverifyUrl),
    timeoutMs: intVar(env, "TURNSTILE_TIMEOUT_MS", 3000, 100, 30_000),
  };
}

function parse(env: GuardVars): GuardConfig {
  const devMode = commonConfig(env).devMode;
  const on = enumVar(env, "SMS_GUARD", ["on", "off"] as const, "on") === "on";
  const safe = (optionalVar(env, "GUARD_SAFE_BLOCKS") ?? "")
    .split(",")
    .filter((s) => s.trim() !== "")
    .map((s) => {
      const c = parseCidr(s);
      if (!c)
        throw new ConfigError(
          "GUARD_SAFE_BLOCKS",
          `must be network blocks like 203.0.113.0/24, not ${JSON.stringify(s.trim())}`,
        );
      return c;
    });
  return {
    on,
    devMode,
    rules: guardRules(env),
    cacheMs: intVar(env, "GUARD_CACHE_SECONDS", 5, 0, 300) * 1000,
    flushMs: intVar(env, "GUARD_FLUSH_MS", 100, 0, 5000),
    safeBlocks: safe,
    turnstile: turnstileConfig(env, devMode, on),
  };
}

export function guardConfig(env: GuardVars): GuardConfig {
  return configOf(env, parse);
}

checkConfig(guardConfig);
