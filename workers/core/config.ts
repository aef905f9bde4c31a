// The environment, typed once (STYLE.md §8), and the variables parsed once into a typed config
// that fails loudly naming the variable (issue 5). Every TTL and limit has a documented default
// (DESIGN.md §4.7) so that tests can shorten windows.

import { base64ToBytes } from "./crypto";
import type { OneTimeStore } from "../provider/store/one-time-store";

/** Every binding any worker of this project may have. A worker gets only those it uses. */
export interface Env {
  DB: D1Database;
  ONE_TIME: DurableObjectNamespace<OneTimeStore>;
  /** AES-256-GCM key (Base64 of 32 bytes) sealing client secrets at rest. A Workers secret. */
  SEAL_KEY: string;
  [name: string]: unknown;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`configuration: ${variable} ${detail}`);
    this.name = "ConfigError";
  }
}

type Vars = Record<string, unknown>;

function str(env: Vars, name: string): string | undefined {
  const v = env[name];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw new ConfigError(name, "must be a string");
  return v;
}

export function intVar(env: Vars, name: string, dflt: number, min: number, max: number): number {
  const v = str(env, name);
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v)) throw new ConfigError(name, `must be a whole number, got ${JSON.stringify(v)}`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}`);
  return n;
}

export function boolVar(env: Vars, name: string, dflt: boolean): boolean {
  const v = str(env, name);
  if (v === undefined) return dflt;
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  throw new ConfigError(name, 'must be "true" or "false"');
}

export function enumVar<T extends string>(env: Vars, name: string, values: readonly T[], dflt: T): T {
  const v = str(env, name);
  if (v === undefined) return dflt;
  if (!(values as readonly string[]).includes(v)) {
    throw new ConfigError(name, `must be one of ${values.join(", ")}`);
  }
  return v as T;
}

export function requiredVar(env: Vars, name: string): string {
  const v = str(env, name);
  if (v === undefined) throw new ConfigError(name, "is required but not set");
  return v;
}

const sealKeys = new WeakMap<object, string>();

/**
 * The SEAL_KEY secret, checked to be Base64 of 32 bytes (AES-256-GCM); throws ConfigError naming
 * it when missing or malformed, instead of a bare crypto failure at first use.
 */
export function sealKeyVar(env: Vars): string {
  let v = sealKeys.get(env);
  if (v === undefined) {
    v = requiredVar(env, "SEAL_KEY");
    let length = -1;
    try {
      length = base64ToBytes(v.trim()).length;
    } catch {
      /* not Base64: reported below */
    }
    if (length !== 32) throw new ConfigError("SEAL_KEY", "must be Base64 of 32 bytes (openssl rand -base64 32)");
    sealKeys.set(env, v);
  }
  return v;
}

/** The provider's variables (README "Configuration" lists each with its default). */
export interface ProviderConfig {
  devMode: boolean;
  tokenErrorStyle: "reference" | "rfc6749";
  codeTtlMs: number;
  accessTokenTtlSeconds: number;
  userMeMaxReads: number;
  oneTimeShards: number;
  clientCacheMs: number;
  maxBodyBytes: number;
}

const cache = new WeakMap<object, ProviderConfig>();

/** Parses the provider variables once per env object; throws ConfigError naming the variable. */
export function providerConfig(env: Vars): ProviderConfig {
  let c = cache.get(env);
  if (!c) {
    const shards = intVar(env, "ONE_TIME_SHARDS", 16, 1, 64);
    if ((shards & (shards - 1)) !== 0) throw new ConfigError("ONE_TIME_SHARDS", "must be a power of two");
    c = {
      devMode: boolVar(env, "DEV_MODE", false),
      tokenErrorStyle: enumVar(env, "TOKEN_ERROR_STYLE", ["reference", "rfc6749"] as const, "reference"),
      codeTtlMs: intVar(env, "CODE_TTL_SECONDS", 60, 1, 600) * 1000,
      accessTokenTtlSeconds: intVar(env, "ACCESS_TOKEN_TTL_SECONDS", 600, 1, 86400),
      userMeMaxReads: intVar(env, "USER_ME_MAX_READS", 1, 1, 1000),
      oneTimeShards: shards,
      clientCacheMs: intVar(env, "CLIENT_CACHE_SECONDS", 10, 0, 3600) * 1000,
      maxBodyBytes: intVar(env, "MAX_BODY_BYTES", 64 * 1024, 1024, 1024 * 1024),
    };
    cache.set(env, c);
  }
  return c;
}
