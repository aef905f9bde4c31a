// The relying-party kit's bindings and variables (docs/rp-kit.md "Configuration"), parsed once per
// env into typed objects that fail naming the variable. Split in three so that each route worker
// needs only what it uses: /auth/login holds no secret.

import {
  boolVar,
  configOf,
  ConfigError,
  enumVar,
  intVar,
  keyVar,
  optionalVar,
  requiredVar,
  type CommonVars,
} from "./core/config.js";
import { fieldKeyBytes, importSealKey } from "./core/crypto.js";
import { IDENTITY_ITEMS, isIdentityItem, LOOPBACK_HOSTS, type IdentityItem } from "./core/spec.js";
import type { ProviderFetcher, RpClientConfig } from "./client.js";
import type { PhoneLoginStore } from "./login-store.js";

/** The kit's optional variables (docs/rp-kit.md "Configuration"). */
export interface KitVars extends CommonVars {
  RP_PUBLIC_ORIGIN?: string;
  RP_STATE_TTL_SECONDS?: string;
  RP_SESSION_TTL_SECONDS?: string;
  RP_IDENTITY_TTL_SECONDS?: string;
  RP_PKCE?: string;
  RP_CLIENT_AUTH?: string;
  RP_TOKEN_RATE_LIMIT?: string;
  RP_TOKEN_RATE_WINDOW_SECONDS?: string;
  RP_PROVIDER_TIMEOUT_MS?: string;
  RP_RELOGIN_PROMPT?: string;
  RP_TOKEN_PKCE?: string;
  RP_BASE_PATH?: string;
  RP_ITEMS?: string;
  RP_EVENTS?: string;
  RP_SIGNALS?: string;
}

/**
 * The kit's environment: its KV namespace, the public variables, the secrets (/auth/login needs
 * none), the optional variables and an optional service binding to the login service (without it
 * the kit fetches PROVIDER_BASE_URL). The routes read it through the kit's context (context.ts).
 */
export type RpEnv = KitVars & {
  RP_KV: KVNamespace;
  /** The kit's Durable Object store (login-store.ts): exact claims, the plid index; without it, KV. */
  RP_STORE?: DurableObjectNamespace<PhoneLoginStore>;
  PROVIDER_BASE_URL: string;
  RP_CLIENT_ID: string;
  RP_REDIRECT_URI: string;
  RP_CLIENT_SECRET?: string;
  RP_SEAL_KEY?: string;
  PROVIDER?: ProviderFetcher;
};

export interface RpConfig {
  /** PROVIDER_BASE_URL: the service's `{base_url}` as browsers reach it. */
  providerBaseUrl: string;
  /** RP_CLIENT_ID */
  clientId: string;
  /** RP_REDIRECT_URI: this kit's /auth/callback, registered at the service. */
  redirectUri: string;
  /** RP_PUBLIC_ORIGIN: the app's origin (default: the redirect URI's). Cookies and Origin checks use it. */
  publicOrigin: string;
  /** RP_STATE_TTL_SECONDS (600): how long a login may take between /auth/login and /auth/callback. */
  stateTtlSeconds: number;
  /** RP_SESSION_TTL_SECONDS (3600): session lifetime. */
  sessionTtlSeconds: number;
  /** RP_IDENTITY_TTL_SECONDS (30 days): how long a sealed identity is kept for automatic logins. */
  identityTtlSeconds: number;
  /** RP_PKCE (true): send an S256 challenge with every browser login. */
  pkce: boolean;
  /** RP_CLIENT_AUTH (basic): token endpoint client authentication, `basic` or `params` (spec §5). */
  clientAuth: "basic" | "params";
  /** RP_TOKEN_RATE_LIMIT (20) requests per RP_TOKEN_RATE_WINDOW_SECONDS (60) per IP on /auth/token. */
  tokenRateLimit: number;
  tokenRateWindowSeconds: number;
  /** RP_PROVIDER_TIMEOUT_MS (10000): back-channel call timeout. */
  providerTimeoutMs: number;
  /** RP_RELOGIN_PROMPT (login): prompt used to fetch the identity again when none is stored. */
  reloginPrompt: string;
  /**
   * RP_TOKEN_PKCE (required): /auth/token refuses a code without `code_verifier`, so an app-link
   * code intercepted on its way to the app is not enough (RFC 8252 §8.1); `optional` for legacy apps.
   */
  tokenPkce: "required" | "optional";
  /** RP_BASE_PATH (/auth): where the kit's routes are mounted (`/auth/login`, `/auth/callback`, ...). */
  basePath: string;
  /** RP_ITEMS (all): the identity items the kit keeps (comma-separated spec §2.1 names); others are dropped. */
  items: readonly IdentityItem[];
  /** RP_EVENTS (true): POST {basePath}/events takes the service's signed events; false: 404. */
  events: boolean;
  /** RP_SIGNALS (false): POST {basePath}/ssf takes the SETs of the app's Shared Signals stream; false: 404. */
  signals: boolean;
}

/** What `rpConfig` reads: the public variables (checked there to be present) and the optional ones. */
export type RpVars = Partial<Pick<RpEnv, "PROVIDER_BASE_URL" | "RP_CLIENT_ID" | "RP_REDIRECT_URI">> & KitVars;

/** An absolute https URL (http only for loopback: spec §1 "HTTPS only", dev on localhost). */
function urlVar(env: RpVars, name: string, value?: string): URL {
  const v = value ?? requiredVar(env, name);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new ConfigError(name, "must be an absolute URL");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) {
    throw new ConfigError(name, "must be an https URL (http only for localhost)");
  }
  if (url.username || url.password) throw new ConfigError(name, "must not carry credentials");
  return url;
}

/** RP_ITEMS: a comma-separated list of spec §2.1 item names; unset means all nine. */
function itemsVar(env: RpVars): readonly IdentityItem[] {
  const v = optionalVar(env, "RP_ITEMS");
  if (v === undefined) return IDENTITY_ITEMS;
  const items = v.split(",").map((s) => s.trim());
  const bad = items.find((i) => !isIdentityItem(i));
  if (bad !== undefined) throw new ConfigError("RP_ITEMS", `names an unknown item ${JSON.stringify(bad)}`);
  return IDENTITY_ITEMS.filter((i) => items.includes(i));
}

function parseConfig(env: RpVars): RpConfig {
  {
    const base = urlVar(env, "PROVIDER_BASE_URL");
    if (base.search || base.hash) throw new ConfigError("PROVIDER_BASE_URL", "must not have a query or fragment");
    const redirect = urlVar(env, "RP_REDIRECT_URI");
    let origin = redirect.origin;
    if (optionalVar(env, "RP_PUBLIC_ORIGIN") !== undefined) {
      const o = urlVar(env, "RP_PUBLIC_ORIGIN");
      if (o.pathname !== "/" || o.search || o.hash) {
        throw new ConfigError("RP_PUBLIC_ORIGIN", "must be an origin (scheme, host, port) only");
      }
      origin = o.origin;
    }
    const clientId = requiredVar(env, "RP_CLIENT_ID");
    if (!/^[\x21-\x7e]{1,256}$/.test(clientId)) throw new ConfigError("RP_CLIENT_ID", "must be printable ASCII");
    const sessionTtlSeconds = intVar(env, "RP_SESSION_TTL_SECONDS", 3600, 60, 30 * 86400);
    const identityTtlSeconds = intVar(env, "RP_IDENTITY_TTL_SECONDS", 30 * 86400, 60, 365 * 86400);
    // A session reads the identity by plid: a shorter identity lifetime would end sessions early.
    if (identityTtlSeconds < sessionTtlSeconds) {
      throw new ConfigError("RP_IDENTITY_TTL_SECONDS", "must be at least RP_SESSION_TTL_SECONDS");
    }
    const reloginPrompt = optionalVar(env, "RP_RELOGIN_PROMPT") ?? "login";
    if (!/^[A-Za-z0-9_ -]{1,32}$/.test(reloginPrompt))
      throw new ConfigError("RP_RELOGIN_PROMPT", "must be a short word");
    const basePath = optionalVar(env, "RP_BASE_PATH") ?? "/auth";
    if (!/^(?:\/[A-Za-z0-9._~-]+)+$/.test(basePath))
      throw new ConfigError("RP_BASE_PATH", "must be a path like /auth (no trailing slash)");
    if (redirect.origin === origin && redirect.pathname !== `${basePath}/callback`)
      throw new ConfigError("RP_REDIRECT_URI", `must be ${basePath}/callback on the app's origin`);
    return {
      providerBaseUrl: base.toString().replace(/\/+$/, ""),
      clientId,
      redirectUri: redirect.toString(),
      publicOrigin: origin,
      // KV's shortest expiration is 60 s.
      stateTtlSeconds: intVar(env, "RP_STATE_TTL_SECONDS", 600, 60, 3600),
      sessionTtlSeconds,
      identityTtlSeconds,
      pkce: boolVar(env, "RP_PKCE", true),
      clientAuth: enumVar(env, "RP_CLIENT_AUTH", ["basic", "params"] as const, "basic"),
      tokenRateLimit: intVar(env, "RP_TOKEN_RATE_LIMIT", 20, 1, 100_000),
      tokenRateWindowSeconds: intVar(env, "RP_TOKEN_RATE_WINDOW_SECONDS", 60, 60, 86400),
      providerTimeoutMs: intVar(env, "RP_PROVIDER_TIMEOUT_MS", 10_000, 100, 60_000),
      reloginPrompt,
      tokenPkce: enumVar(env, "RP_TOKEN_PKCE", ["required", "optional"] as const, "required"),
      basePath,
      items: itemsVar(env),
      events: boolVar(env, "RP_EVENTS", true),
      signals: boolVar(env, "RP_SIGNALS", false),
    };
  }
}

/** The kit's public variables, parsed once; throws ConfigError naming a malformed one. */
export function rpConfig(env: RpVars): RpConfig {
  return configOf(env, parseConfig);
}

function parseClientConfig(env: RpEnv): RpClientConfig {
  const cfg = rpConfig(env);
  const secret = requiredVar(env, "RP_CLIENT_SECRET");
  try {
    fieldKeyBytes(secret);
  } catch {
    throw new ConfigError("RP_CLIENT_SECRET", "must be at least 16 characters (spec §2.2 key)");
  }
  return {
    baseUrl: cfg.providerBaseUrl,
    clientId: cfg.clientId,
    clientSecret: secret,
    redirectUri: cfg.redirectUri,
    clientAuth: cfg.clientAuth,
    timeoutMs: cfg.providerTimeoutMs,
  };
}

/**
 * The client module's configuration: the public variables plus RP_CLIENT_SECRET (a Workers
 * secret), parsed once, and the PROVIDER service binding when there is one (per request: in the
 * all-in-one worker it is an in-process call bound to the request).
 */
export function rpClientConfig(env: RpEnv): RpClientConfig {
  const c = configOf(env, parseClientConfig);
  return env.PROVIDER ? { ...c, fetcher: env.PROVIDER } : c;
}

function parseSealKeyText(env: RpEnv): string {
  return keyVar(env, "RP_SEAL_KEY");
}

/** RP_SEAL_KEY's Base64 text, checked once (it also keys the derived session ids). */
export function rpSealKeyText(env: RpEnv): string {
  return configOf(env, parseSealKeyText);
}

function parseSealKey(env: RpEnv): Promise<CryptoKey> {
  return importSealKey(rpSealKeyText(env));
}

/** RP_SEAL_KEY (a Workers secret, Base64 of 32 bytes): seals identities at rest (AES-256-GCM). */
export function rpSealKey(env: RpEnv): Promise<CryptoKey> {
  return configOf(env, parseSealKey);
}
