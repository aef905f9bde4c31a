// The login service's configuration (README "Configuration"): its environment as `wrangler types`
// generates it for the authorize worker (the one with every provider binding), the optional
// variables it reads, and their parser. Each worker of the service uses a slice of it.

import { commonConfig, configOf, enumVar, intVar, type CommonVars } from "../core/config";
import { checkConfig, storeConfig, type AuditVars, type StoreVars } from "./store/config";
import { sealKeyVar } from "./store/clients";
import type { SmsVars } from "./store/sms/index";
import type { OneTimeStore } from "./store/one-time/index";
import type { DirectoryShard } from "./store/directory/index";
import type { WebAuthnVerifier } from "./webauthn/index";

/** The provider's optional variables (defaults in README "Configuration"). */
export interface ProviderVars extends CommonVars, StoreVars, AuditVars {
  TOKEN_ERROR_STYLE?: string;
  USER_ME_MAX_READS?: string;
  CLIENT_CACHE_SECONDS?: string;
}

/**
 * The sign-in pages' optional variables (docs/signin.md "Configuration"), parsed by `signin/config.ts`;
 * the SMS senders' (SmsVars) by `store/sms/config.ts`.
 */
export interface SigninVars extends CommonVars, StoreVars, SmsVars {
  SIGNIN_TX_TTL_SECONDS?: string;
  SIGNIN_OTP_TTL_SECONDS?: string;
  SIGNIN_OTP_MAX_ATTEMPTS?: string;
  SIGNIN_LOCK_AFTER_FAILURES?: string;
  SIGNIN_NUMBER_LOCK_AFTER_FAILURES?: string;
  SIGNIN_LOCK_SECONDS?: string;
  SIGNIN_FAILURE_MEMORY_SECONDS?: string;
  SIGNIN_RESEND_COOLDOWN_SECONDS?: string;
  SIGNIN_SENDS_PER_WINDOW?: string;
  SIGNIN_SEND_WINDOW_SECONDS?: string;
  SIGNIN_IP_LIMIT?: string;
  SIGNIN_IP_WINDOW_SECONDS?: string;
  AUTO_LOGIN_TTL_SECONDS?: string;
  PASSKEY_ACTIVATION_SECONDS?: string;
  PASSKEY_RECHECK_SECONDS?: string;
  CARRIER_DIRECTORY?: string;
  CARRIER_API_URL?: string;
  CARRIER_API_SECRET?: string;
  CARRIER_API_SECRET_NEXT?: string;
  CARRIER_API_TIMEOUT_MS?: string;
  OPERATOR_NAME?: string;
  SIGNIN_TERMS?: string;
  TERMS_URL?: string;
  PRIVACY_URL?: string;
  HELP_URL?: string;
}

/** Every binding and variable of the login service's workers. */
export type ProviderEnv = Omit<Cloudflare.AuthorizeEnv, "ONE_TIME" | "DIRECTORY" | "WEBAUTHN"> &
  ProviderVars &
  SigninVars & {
    // Typed here: `wrangler types` cannot type a namespace bound to another worker's class.
    ONE_TIME: DurableObjectNamespace<OneTimeStore>;
    DIRECTORY: DurableObjectNamespace<DirectoryShard>;
    /** The WebAuthn verifier worker (workers/provider/webauthn/): a passkey's credential checked. */
    WEBAUTHN: Service<WebAuthnVerifier>;
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
