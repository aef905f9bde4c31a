// One way to read configuration (docs/architecture.md "Configuration"): bindings and secrets are
// typed by `wrangler types` (worker-configuration.d.ts); each worker's optional variables are
// declared next to the parser that reads them. Every parser runs once per env object (`configOf`),
// which an isolate keeps across requests, and fails loudly naming the variable.

import { base64ToBytes } from "./crypto.js";

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`configuration: ${variable} ${detail}`);
    this.name = "ConfigError";
  }
}

type Vars = object;

/** Where a derived env (the same bindings plus request-scoped ones) keeps its configuration. */
const bases = new WeakMap<object, object>();
const caches = new WeakMap<object, Map<unknown, unknown>>();

/**
 * `parse(env)`, run once per env object: the one configuration cache. A parser must read only
 * variables and bindings that do not change between requests.
 */
export function configOf<E extends object, T>(env: E, parse: (env: E) => T): T {
  const key = bases.get(env) ?? env;
  let cache = caches.get(key);
  if (!cache) {
    cache = new Map();
    caches.set(key, cache);
  }
  if (cache.has(parse)) return cache.get(parse) as T;
  const value = parse(env);
  cache.set(parse, value);
  return value;
}

/**
 * `env` with request-scoped bindings added (an in-process service), sharing `env`'s configuration
 * cache, so building it per request costs no parsing.
 */
export function withBindings<E extends object, X extends object>(env: E, extra: X): E & X {
  const derived = Object.assign(Object.create(env) as object, extra) as E & X;
  bases.set(derived, bases.get(env) ?? env);
  return derived;
}

/** An optional string variable: undefined when unset or empty. */
export function optionalVar(env: Vars, name: string): string | undefined {
  const v = (env as Record<string, unknown>)[name];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw new ConfigError(name, "must be a string");
  return v;
}

export function requiredVar(env: Vars, name: string): string {
  const v = optionalVar(env, name);
  if (v === undefined) throw new ConfigError(name, "is required but not set");
  return v;
}

export function intVar(env: Vars, name: string, dflt: number, min: number, max: number): number {
  const v = optionalVar(env, name);
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v)) throw new ConfigError(name, `must be a whole number, got ${JSON.stringify(v)}`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}`);
  return n;
}

export function boolVar(env: Vars, name: string, dflt: boolean): boolean {
  const v = optionalVar(env, name);
  if (v === undefined) return dflt;
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  throw new ConfigError(name, 'must be "true" or "false"');
}

export function enumVar<T extends string>(env: Vars, name: string, values: readonly T[], dflt: T): T {
  const v = optionalVar(env, name);
  if (v === undefined) return dflt;
  if (!(values as readonly string[]).includes(v)) throw new ConfigError(name, `must be one of ${values.join(", ")}`);
  return v as T;
}

/**
 * A required key secret, checked to be Base64 of 32 bytes (AES-256-GCM), instead of a bare crypto
 * failure at first use. Returns the Base64 text.
 */
export function keyVar(env: Vars, name: string): string {
  const v = requiredVar(env, name);
  let length = -1;
  try {
    length = base64ToBytes(v.trim()).length;
  } catch {
    /* not Base64: reported below */
  }
  if (length !== 32) throw new ConfigError(name, "must be Base64 of 32 bytes (openssl rand -base64 32)");
  return v;
}

/** Variables every worker reads. */
export interface CommonVars {
  /** "true" loads the dev seed and the dev-only pages (the all-in-one dev worker). */
  DEV_MODE?: string;
  /** Request bodies above this many bytes get 413. */
  MAX_BODY_BYTES?: string;
  /** "false" silences the per-request log line. */
  LOG_REQUESTS?: string;
}

export interface CommonConfig {
  devMode: boolean;
  maxBodyBytes: number;
  logRequests: boolean;
}

function parseCommon(env: CommonVars): CommonConfig {
  return {
    devMode: boolVar(env, "DEV_MODE", false),
    maxBodyBytes: intVar(env, "MAX_BODY_BYTES", 64 * 1024, 1024, 1024 * 1024),
    logRequests: boolVar(env, "LOG_REQUESTS", true),
  };
}

/** DEV_MODE, MAX_BODY_BYTES and LOG_REQUESTS, parsed once. */
export function commonConfig(env: CommonVars): CommonConfig {
  return configOf(env, parseCommon);
}
