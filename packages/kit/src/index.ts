// phone-login-kit: log people in to your own Worker with a phone-number login service (ours, or the
// reference service at its real address; docs/interface.md). `createPhoneLogin(options)` gives a
// `fetch` that answers the kit's routes under a base path (default /auth) and `getSession` for the
// app's own routes. It is the same route code the three-worker deploy runs, configured by options
// instead of variables: each option becomes the variable the kit reads (OPTION_OF names them back),
// and the kit's context over them (context.ts) carries the app's onLogin and onLogout.

import { ConfigError, type CommonVars } from "./core/config.js";
import { errorResponse } from "./core/errors.js";
import { createWorker } from "./core/router.js";
import { LOOPBACK_HOSTS, type IdentityItem } from "./core/spec.js";
import type { ProviderFetcher } from "./client.js";
import { rpClientConfig, rpConfig, rpSealKeyText, type KitVars, type RpEnv } from "./config.js";
import { kitContext, routesOver, type KitContext, type KitRoute } from "./context.js";
import type { KitHooks, LogoutReason } from "./hooks.js";
import { kitRoutes as callbackRoutes } from "./routes/callback.js";
import { kitRoutes as loginRoutes } from "./routes/login.js";
import { kitRoutes as sessionRoutes } from "./routes/session.js";
import { sessionOf } from "./sessions.js";
import { ensureStream, type SignalStream } from "./signals.js";
import { flatUser, type KitUser } from "./user.js";
import type { PhoneLoginStore } from "./login-store.js";

export type { KitUser } from "./user.js";
export { PhoneLoginStore } from "./login-store.js";
export type { LogoutReason } from "./hooks.js";
export type { SignalStream } from "./signals.js";
export type { IdentityItem, YN } from "./core/spec.js";
export { IDENTITY_ITEMS } from "./core/spec.js";
export {
  authorizationUrl,
  basicAuthorization,
  createPkce,
  decryptUser,
  disconnectUser,
  exchangeCode,
  readUser,
  RpClientError,
  type AuthorizationUrlOptions,
  type ProviderFetcher,
  type ProviderUser,
  type RpClientConfig,
  type RpClientErrorKind,
  type TokenSet,
} from "./client.js";

/** A value given as is, or read from the Worker's env on first use (secrets, bindings). */
export type FromEnv<T, Env> = T | ((env: Env) => T);

/** What a hook gets besides its event: the request that caused it and the Worker's env. */
export interface HookContext<Env> {
  request: Request;
  env: Env;
  /** The request's `ctx.waitUntil`: work that may finish after the answer. */
  waitUntil(promise: Promise<unknown>): void;
}

/** What the kit uses of a request's ExecutionContext (Workers' `ctx`, Hono's `c.executionCtx`). */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

export interface PhoneLoginOptions<Env = Record<string, unknown>> {
  /** The service's base URL (spec `{base_url}`), https: e.g. `https://login.example.com`. */
  providerUrl: FromEnv<string, Env>;
  /** The app's client id at the service. */
  clientId: FromEnv<string, Env>;
  /** The client secret (at least 16 characters; also the key of the encrypted items). Default: `env.PHONE_LOGIN_CLIENT_SECRET`. */
  clientSecret?: FromEnv<string, Env>;
  /** Base64 of 32 random bytes (`openssl rand -base64 32`): seals identities in KV. Default: `env.PHONE_LOGIN_SEAL_KEY`. */
  sealKey?: FromEnv<string, Env>;
  /** The KV namespace for states, sessions and sealed identities. Default: `env.PHONE_LOGIN_KV`. */
  kv?: (env: Env) => KVNamespace;
  /**
   * The kit's Durable Object store (`export { PhoneLoginStore } from "phone-login-kit"` in the
   * Worker, a binding of that class, a `new_sqlite_classes` migration): each login's state and its
   * one code exchange claimed exactly in one call, a person's sessions ended exactly. Default:
   * `env.PHONE_LOGIN_STORE` when bound; without it the kit keeps these in KV, best effort.
   */
  store?: (env: Env) => DurableObjectNamespace<PhoneLoginStore>;
  /** The callback address registered at the service: `https://<your app>{basePath}/callback`. */
  redirectUri: FromEnv<string, Env>;
  /** The app's origin, when it differs from the redirect URI's (cookies, Origin checks, `return_to`). */
  publicOrigin?: FromEnv<string, Env>;
  /** Where the kit's routes answer (default `/auth`): `/auth/login`, `/auth/callback`, `/auth/me`, ... */
  basePath?: string;
  /** The identity items the app keeps (default: every item the service sends); others are dropped. */
  items?: readonly IdentityItem[];
  /** Lifetimes in seconds: a login (default 600), a session (3600), a stored identity for automatic logins (30 days). */
  ttl?: { state?: number; session?: number; identity?: number };
  /** Take the service's signed events at `{basePath}/events` (default true; false: 404). */
  events?: boolean;
  /**
   * Take the service's Shared Signals (standard SETs) at `{basePath}/ssf` instead of its own events:
   * the kit creates the app's stream at the service on its first request (in the background, once;
   * `createStream: false` leaves that to `login.signals.ensureStream(env)`). Default: off (404).
   */
  signals?: { createStream?: boolean };
  /** After each login made a session: keep the app's own user table in step. A throw fails the login. */
  onLogin?: (user: KitUser, info: { via: "callback" | "token" } & HookContext<Env>) => Promise<void> | void;
  /** After a logout, a disconnect or the service's plid-deleted event. A throw is logged only. */
  onLogout?: (event: { plid: string; reason: LogoutReason } & HookContext<Env>) => Promise<void> | void;
  /** A service binding to the login service on the same account (default: `fetch` to providerUrl). */
  provider?: (env: Env) => ProviderFetcher | undefined;
  /** Send a PKCE S256 challenge with browser logins (default true). */
  pkce?: boolean;
  /** Client authentication at the token endpoint (spec §5): `basic` (default) or `params`. */
  clientAuth?: "basic" | "params";
  /** Back-channel timeout in milliseconds (default 10 000). */
  providerTimeoutMs?: number;
  /** `{basePath}/token` for native apps: PKCE `required` (default) or `optional`; requests per window per IP (20 per 60 s). */
  token?: { pkce?: "required" | "optional"; rateLimit?: number; rateWindowSeconds?: number };
  /** The `prompt` of the one re-login when an automatic login finds no stored identity (default `login`). */
  reloginPrompt?: string;
  /** One JSON log line per request (default true). Lines carry route templates, never personal data. */
  logRequests?: boolean;
}

export interface PhoneLogin<Env = Record<string, unknown>> {
  /** Where the kit's routes answer, e.g. `/auth`. */
  readonly basePath: string;
  /** True when `request` is for one of the kit's routes (its path is under `basePath`). */
  handles(request: Request): boolean;
  /** Answers the kit's routes; any other path is 404. */
  fetch(request: Request, env: Env, ctx?: WaitUntil): Promise<Response>;
  /** The signed-in person of `request` (session cookie or `Authorization: Bearer`), or null. */
  getSession(request: Request, env: Env): Promise<KitUser | null>;
  /** With `signals`: the app's Shared Signals stream. */
  readonly signals: {
    /** The app's stream at the service; creates it (push to `{basePath}/ssf`) if the app has none. */
    ensureStream(env: Env): Promise<{ created: boolean; stream: SignalStream }>;
  };
}

/** The option each kit variable comes from, so a configuration error names what the app wrote. */
const OPTION_OF: Record<string, string> = {
  PROVIDER_BASE_URL: "providerUrl",
  RP_CLIENT_ID: "clientId",
  RP_CLIENT_SECRET: "clientSecret (default env.PHONE_LOGIN_CLIENT_SECRET)",
  RP_SEAL_KEY: "sealKey (default env.PHONE_LOGIN_SEAL_KEY)",
  RP_REDIRECT_URI: "redirectUri",
  RP_PUBLIC_ORIGIN: "publicOrigin",
  RP_BASE_PATH: "basePath",
  RP_ITEMS: "items",
  RP_STATE_TTL_SECONDS: "ttl.state",
  RP_SESSION_TTL_SECONDS: "ttl.session",
  RP_IDENTITY_TTL_SECONDS: "ttl.identity",
  RP_PKCE: "pkce",
  RP_CLIENT_AUTH: "clientAuth",
  RP_PROVIDER_TIMEOUT_MS: "providerTimeoutMs",
  RP_TOKEN_PKCE: "token.pkce",
  RP_TOKEN_RATE_LIMIT: "token.rateLimit",
  RP_TOKEN_RATE_WINDOW_SECONDS: "token.rateWindowSeconds",
  RP_RELOGIN_PROMPT: "reloginPrompt",
  RP_SIGNALS: "signals",
};

/** After a failed background creation of the stream, the next request tries again after this long. */
const STREAM_RETRY_MS = 60_000;

/** What the package's router is given for an app's env: its two variables and the kit's context. */
interface RouterEnv extends CommonVars {
  readonly kit: KitContext;
}

const contextOf = (e: RouterEnv): KitContext => e.kit;

/** Without a ctx (a test's direct call) background work is simply not awaited. */
const FALLBACK_CTX: WaitUntil = { waitUntil() {} };

function resolve<T, Env>(v: FromEnv<T, Env> | undefined, env: Env): T | undefined {
  return typeof v === "function" ? (v as (env: Env) => T)(env) : v;
}

const str = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v));

/** Creates the kit for one app. Routes are built once; options read from env are read once per env. */
export function createPhoneLogin<Env extends object = Record<string, unknown>>(
  options: PhoneLoginOptions<Env>,
): PhoneLogin<Env> {
  const basePath = options.basePath ?? "/auth";
  if (!/^(?:\/[A-Za-z0-9._~-]+)+$/.test(basePath))
    throw new ConfigError("basePath", "must be a path like /auth (no trailing slash)");
  const routes: KitRoute[] = [...loginRoutes, ...callbackRoutes, ...sessionRoutes]
    // events off: no route at all, so every method is 404 there (not a 405 naming POST)
    .filter((r) => options.events !== false || r.path !== "/auth/events")
    .filter((r) => options.signals !== undefined || r.path !== "/auth/ssf")
    .map((r) => ({ ...r, path: basePath + r.path.slice("/auth".length) }));
  const worker = createWorker<RouterEnv>("phone-login-kit", routesOver(routes, contextOf));
  const routerEnvs = new WeakMap<object, RouterEnv>();
  /** Per app env: when the background creation of the stream last started (it runs once per isolate). */
  const streamTried = new WeakMap<object, number>();

  /** The app's hooks with its env added (the kit gives them the request). */
  function hooksFor(env: Env): KitHooks {
    const { onLogin, onLogout } = options;
    return {
      ...(onLogin ? { onLogin: (user, info) => onLogin(user, { ...info, env }) } : {}),
      ...(onLogout ? { onLogout: (event) => onLogout({ ...event, env }) } : {}),
    };
  }

  /** The router's env for the app's env: options as the kit's variables, checked once, and the kit's context over them. */
  function routerEnvFor(env: Env): RouterEnv {
    const known = routerEnvs.get(env);
    if (known) return known;
    const e = env as Record<string, unknown>;
    const redirectUri = str(resolve(options.redirectUri, env));
    const vars: KitVars & Record<string, unknown> = {
      PROVIDER_BASE_URL: str(resolve(options.providerUrl, env)),
      RP_CLIENT_ID: str(resolve(options.clientId, env)),
      RP_CLIENT_SECRET: str(options.clientSecret ? resolve(options.clientSecret, env) : e.PHONE_LOGIN_CLIENT_SECRET),
      RP_SEAL_KEY: str(options.sealKey ? resolve(options.sealKey, env) : e.PHONE_LOGIN_SEAL_KEY),
      RP_REDIRECT_URI: redirectUri,
      RP_PUBLIC_ORIGIN: str(resolve(options.publicOrigin, env)),
      RP_KV: options.kv ? options.kv(env) : e.PHONE_LOGIN_KV,
      RP_STORE: options.store ? options.store(env) : e.PHONE_LOGIN_STORE,
      RP_BASE_PATH: basePath,
      RP_ITEMS: options.items?.join(","),
      RP_STATE_TTL_SECONDS: str(options.ttl?.state),
      RP_SESSION_TTL_SECONDS: str(options.ttl?.session),
      RP_IDENTITY_TTL_SECONDS: str(options.ttl?.identity),
      RP_EVENTS: str(options.events),
      RP_SIGNALS: str(options.signals !== undefined),
      RP_PKCE: str(options.pkce),
      RP_CLIENT_AUTH: options.clientAuth,
      RP_PROVIDER_TIMEOUT_MS: str(options.providerTimeoutMs),
      RP_TOKEN_PKCE: options.token?.pkce,
      RP_TOKEN_RATE_LIMIT: str(options.token?.rateLimit),
      RP_TOKEN_RATE_WINDOW_SECONDS: str(options.token?.rateWindowSeconds),
      RP_RELOGIN_PROMPT: options.reloginPrompt,
      LOG_REQUESTS: options.logRequests === false ? "false" : "true",
      // Plain http is served only where the app itself is configured on http://localhost (development).
      DEV_MODE: String(isLoopbackHttp(redirectUri)),
      PROVIDER: options.provider?.(env),
    };
    const k = Object.fromEntries(Object.entries(vars).filter(([, v]) => v !== undefined)) as unknown as RpEnv;
    try {
      rpConfig(k);
      rpClientConfig(k);
      rpSealKeyText(k);
      if (typeof k.RP_KV?.get !== "function") throw new ConfigError("RP_KV", "is not a KV namespace");
      if (k.RP_STORE !== undefined && typeof k.RP_STORE.idFromName !== "function")
        throw new ConfigError("RP_STORE", "is not a Durable Object namespace");
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const option =
        err.variable === "RP_KV"
          ? "kv (default env.PHONE_LOGIN_KV)"
          : err.variable === "RP_STORE"
            ? "store (default env.PHONE_LOGIN_STORE)"
            : OPTION_OF[err.variable];
      throw new ConfigError(option ?? err.variable, err.message.slice(`configuration: ${err.variable} `.length));
    }
    const routerEnv: RouterEnv = {
      DEV_MODE: k.DEV_MODE,
      LOG_REQUESTS: k.LOG_REQUESTS,
      kit: kitContext(k, hooksFor(env)),
    };
    routerEnvs.set(env, routerEnv);
    return routerEnv;
  }

  return {
    basePath,
    handles(request) {
      const path = new URL(request.url).pathname;
      return path.startsWith(`${basePath}/`);
    },
    async fetch(request, env, ctx = FALLBACK_CTX) {
      let routerEnv: RouterEnv;
      try {
        routerEnv = routerEnvFor(env);
      } catch (err) {
        // The one line naming the option; the wire gets the fixed server_error.
        console.error(JSON.stringify({ worker: "phone-login-kit", status: 500, cause: String(err) }));
        return errorResponse(err);
      }
      if (options.signals && options.signals.createStream !== false) ctx.waitUntil(streamOnce(env, routerEnv.kit));
      const context = { waitUntil: (p: Promise<unknown>) => ctx.waitUntil(p), passThroughOnException() {}, props: {} };
      return worker.fetch!(request as never, routerEnv, context as unknown as ExecutionContext);
    },
    async getSession(request, env) {
      const s = await sessionOf(request, routerEnvFor(env).kit);
      return s ? flatUser(s.identity, s.record) : null;
    },
    signals: {
      async ensureStream(env) {
        if (!options.signals) throw new ConfigError("signals", "is not set: the kit takes no stream");
        return ensureStream(routerEnvFor(env).kit);
      },
    },
  };

  /** The stream made sure of once per isolate and app env, in the background; a failure is logged and tried again later. */
  async function streamOnce(env: Env, kit: KitContext): Promise<void> {
    const last = streamTried.get(env);
    if (last !== undefined && (last === Infinity || Date.now() - last < STREAM_RETRY_MS)) return;
    streamTried.set(env, Date.now());
    try {
      const { created } = await ensureStream(kit);
      streamTried.set(env, Infinity);
      if (created && options.logRequests !== false)
        console.log(JSON.stringify({ worker: "phone-login-kit", event: "rp.stream_created" }));
    } catch (err) {
      const cause = err instanceof Error ? err.message : "error";
      console.error(JSON.stringify({ worker: "phone-login-kit", event: "rp.stream_failed", cause }));
    }
  }
}

function isLoopbackHttp(url: string | undefined): boolean {
  if (url === undefined) return false;
  try {
    const u = new URL(url);
    return u.protocol === "http:" && LOOPBACK_HOSTS.has(u.hostname);
  } catch {
    return false;
  }
}
