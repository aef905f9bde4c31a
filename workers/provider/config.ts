// The login service's configuration (README "Configuration"): its environment as `wrangler types`
// generates it for the authorize worker (the one with every provider binding), the optional
// variables it reads, and their parser. Each worker of the service uses a slice of it.

import { commonConfig, configOf, ConfigError, enumVar, intVar, type CommonVars } from "../core/config";
import type { SigninVars } from "./authorize/config";
import type { OneTimeStore } from "./store/one-time-store";

/** The provider's optional variables (defaults in README "Configuration"). */
export interface ProviderVars extends CommonVars {
  TOKEN_ERROR_STYLE?: string;
  CODE_TTL_SECONDS?: string;
  ACCESS_TOKEN_TTL_SECONDS?: string;
  USER_ME_MAX_READS?: string;
  ONE_TIME_SHARDS?: string;
  CLIENT_CACHE_SECONDS?: string;
}

/** Every binding and variable of the login service's workers. */
export type ProviderEnv = Omit<Cloudflare.AuthorizeEnv, "ONE_TIME"> &
  ProviderVars &
  SigninVars & {
    // Typed here: `wrangler types` cannot type a namespace bound to another worker's class.
    ONE_TIME: DurableObjectNamespace<OneTimeStore>;
  };

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

function parse(env: ProviderVars): ProviderConfig {
  const shards = intVar(env, "ONE_TIME_SHARDS", 16, 1, 64);
  if ((shards & (shards - 1)) !== 0) throw new ConfigError("ONE_TIME_SHARDS", "must be a power of two");
  const common = commonConfig(env);
  return {
    devMode: common.devMode,
    tokenErrorStyle: enumVar(env, "TOKEN_ERROR_STYLE", ["reference", "rfc6749"] as const, "reference"),
    codeTtlMs: intVar(env, "CODE_TTL_SECONDS", 60, 1, 600) * 1000,
    accessTokenTtlSeconds: intVar(env, "ACCESS_TOKEN_TTL_SECONDS", 600, 1, 86400),
    userMeMaxReads: intVar(env, "USER_ME_MAX_READS", 1, 1, 1000),
    oneTimeShards: shards,
    clientCacheMs: intVar(env, "CLIENT_CACHE_SECONDS", 10, 0, 3600) * 1000,
    maxBodyBytes: common.maxBodyBytes,
  };
}

/** The provider variables, parsed once; throws ConfigError naming a malformed one. */
export function providerConfig(env: ProviderVars): ProviderConfig {
  return configOf(env, parse);
}
