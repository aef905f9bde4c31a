// The kit's context: what its routes and session reads are given in place of the env, typed once.
// It holds the parsed variables, the login store (store.ts `loginStoreFor`: the Durable Object
// store where it is bound, KV otherwise), the KV namespace of sessions and identities, the app's
// hooks, and the secrets, read on first use (/auth/login holds none). A route worker's env gives a
// context with no hooks (`kitContext`); `createPhoneLogin` builds one per app env with the app's.
//
// A route is written over the context (`KitRoute`); `routesOver` turns a table of them into the
// router's routes over an env, each request's context from `contextOf`.

import type { Route, RequestContext } from "./core/router.js";
import type { RpClientConfig } from "./client.js";
import { rpClientConfig, rpConfig, rpSealKey, rpSealKeyText, type RpConfig, type RpEnv } from "./config.js";
import type { KitHooks } from "./hooks.js";
import type { LoginStore } from "./storage.js";
import { loginStoreFor } from "./store.js";

export interface KitContext {
  /** The kit's variables, parsed (config.ts); a malformed one throws ConfigError naming it. */
  readonly config: RpConfig;
  /** States, claims, a plid's index and end, events' jtis (storage.ts). */
  readonly store: LoginStore;
  /** Sessions, sealed identities and the rate counter (kv.ts). */
  readonly kv: KVNamespace;
  /** The app's onLogin and onLogout (none in a route worker). */
  readonly hooks: KitHooks;
  /** The client module's configuration: RP_CLIENT_SECRET, and the PROVIDER binding when there is one. */
  client(): RpClientConfig;
  /** RP_SEAL_KEY: seals identities at rest (AES-256-GCM). */
  sealKey(): Promise<CryptoKey>;
  /** RP_SEAL_KEY's Base64 text (it also keys the derived session ids). */
  sealKeyText(): string;
}

const NO_HOOKS: KitHooks = {};

/** Every part read from the env when asked for, each parsed once per env (config.ts, `configOf`). */
class EnvContext implements KitContext {
  constructor(
    private readonly env: RpEnv,
    readonly hooks: KitHooks,
  ) {}

  get config(): RpConfig {
    return rpConfig(this.env);
  }

  get store(): LoginStore {
    return loginStoreFor(this.env);
  }

  get kv(): KVNamespace {
    return this.env.RP_KV;
  }

  client(): RpClientConfig {
    return rpClientConfig(this.env);
  }

  sealKey(): Promise<CryptoKey> {
    return rpSealKey(this.env);
  }

  sealKeyText(): string {
    return rpSealKeyText(this.env);
  }
}

/** The kit's context over `env` (a route worker's, or the one `createPhoneLogin` makes from its options). */
export function kitContext(env: RpEnv, hooks: KitHooks = NO_HOOKS): KitContext {
  return new EnvContext(env, hooks);
}

/** A kit route: its handler is given the kit's context. */
export interface KitRoute extends Omit<Route<unknown>, "handler"> {
  handler(req: Request, kit: KitContext, rc: RequestContext): Promise<Response>;
}

/** The router's routes over env `E` for a table of kit routes, each request's context from `contextOf`. */
export function routesOver<E>(routes: readonly KitRoute[], contextOf: (env: E) => KitContext): Route<E>[] {
  return routes.map(({ handler, ...r }) => ({
    ...r,
    handler: (req: Request, env: E, rc: RequestContext) => handler(req, contextOf(env), rc),
  }));
}
