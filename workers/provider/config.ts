// The login service's configuration (README "Configuration"): its environment as `wrangler types`
// generates it for the authorize worker (the one with every provider binding), the optional
// variables it reads, and their parser. Each worker of the service uses a slice of it.

import { commonConfig, configOf, enumVar, intVar, type CommonVars } from "../core/config";
import { checkConfig, storeConfig, type AuditVars, type StoreVars } from "./store/config";
import { sealKeyVar } from "./store/clients";
import type { SigninVars } from "./signin/config";
import type { OneTimeStore } from "./store/one-time/one-time-store";
import type { DirectoryShard } from "./store/directory/directory-shard";

/** The provider's optional variables (defaults in README "Configuration"). */
export interface ProviderVars extends CommonVars, StoreVars, AuditVars {
  TOKEN_ERROR_STYLE?: string;
  USER_ME_MAX_READS?: string;
  CLIENT_CACHE_SECONDS?: string;
}

/** Every binding and variable of the login service's workers. */
export type ProviderEnv = Omit<Cloudflare.AuthorizeEnv, "ONE_TIME" | "DIRECTORY"> &
  ProviderVars &
  SigninVars & {
    // Typed here: `wrangler types` cannot type a namespace bound to another worker's class.
    ONE_TIME: DurableObjectNamespace<OneTimeStore>;
    DIRECTORY: DurableObjectNamespace<DirectoryShard>;
  };

export interface ProviderConfig {
  devMode: boolean;
  tokenErrorStyle: "reference" | "rfc6749";
  codeTtlMs: number;
  accessTokenTtlSeconds: number;
  userMeMaxReads: number;
  /** OpenID Connect UserInfo reads per access token, counted apart from /v1/user/me's. */
  userinfoMaxReads: number;
  oneTimeShards: number;
  revocationRetainMs: number;
  clientCacheMs: number;
  maxBodyBytes: number;
}

function parse(env: ProviderVars): ProviderConfig {
  const common = commonConfig(env);
  const store = storeConfig(env);
  return {
    devMode: common.devMode,
    tokenErrorStyle: enumVar(env, "TOKEN_ERROR_STYLE", ["reference", "rfc6749"] as const, "reference"),
    codeTtlMs: store.codeTtlMs,
    accessTokenTtlSeconds: store.accessTokenTtlSeconds,
    userMeMaxReads: intVar(env, "USER_ME_MAX_READS", 1, 1, 1000),
    userinfoMaxReads: intVar(env, "USERINFO_MAX_READS", 1, 1, 1000),
    oneTimeShards: store.oneTimeShards,
    revocationRetainMs: store.revocationRetainMs,
    clientCacheMs: intVar(env, "CLIENT_CACHE_SECONDS", 10, 0, 3600) * 1000,
    maxBodyBytes: common.maxBodyBytes,
  };
}

/** The provider variables, parsed once; throws ConfigError naming a malformed one. */
export function providerConfig(env: ProviderVars): ProviderConfig {
  return configOf(env, parse);
}

checkConfig(providerConfig);
checkConfig(sealKeyVar);
