// The admin API's variables and secrets (docs/operations.md "Configuration"), parsed once per env
// into a typed object that fails naming the variable.

import type { GuardStore, GuardRuleVars } from "../provider/store/guard/index";
import { commonConfig, configOf, ConfigError, intVar, type CommonVars } from "../core/config";
import { sealKeyVar } from "../provider/store/clients";
import { auditConfig, checkConfig, type AuditVars, type StoreVars } from "../provider/store/config";
import type { OneTimeStore } from "../provider/store/one-time/index";
import type { DirectoryShard } from "../provider/store/directory/index";
import type { MetricsStore } from "../provider/store/metrics/index";

/** The admin worker's optional variables (docs/operations.md "Configuration"). */
export interface AdminVars extends CommonVars {
  SECRET_ROTATION_GRACE_SECONDS?: string;
  ADMIN_MAX_IMPORT_BYTES?: string;
  ADMIN_MAX_IMPORT_ROWS?: string;
  CLIENT_CACHE_SECONDS?: string;
}

/** The admin worker's bindings and secrets (`wrangler types`) and variables. ADMIN_TOKEN unset means no admin API. */
export type AdminEnv = Omit<Cloudflare.AdminEnv, "ADMIN_TOKEN" | "ONE_TIME" | "DIRECTORY" | "METRICS" | "GUARD"> &
  AdminVars &
  StoreVars &
  GuardRuleVars &
  AuditVars & {
    ADMIN_TOKEN?: string;
    // Typed here: `wrangler types` cannot type a namespace bound to another worker's class.
    ONE_TIME: DurableObjectNamespace<OneTimeStore>;
    DIRECTORY: DurableObjectNamespace<DirectoryShard>;
    METRICS: DurableObjectNamespace<MetricsStore>;
    GUARD: DurableObjectNamespace<GuardStore>;
  };

export interface AdminConfig {
  /** The bearer token, or null: ADMIN_TOKEN unset means the admin API does not exist (404). */
  token: string | null;
  /** SEAL_KEY, checked: new and rotated client secrets are sealed with it. */
  sealKey: string;
  /** How long a rotated-out client secret keeps working unless the rotation says otherwise. */
  rotationGraceSeconds: number;
  /** Largest accepted JSON body of the client endpoints. */
  maxBodyBytes: number;
  /** Largest accepted directory import file, and most rows in one import. */
  maxImportBytes: number;
  maxImportRows: number;
  /** AUDIT_RETENTION_DAYS: the audit list and export return nothing older. */
  auditRetentionMs: number;
  /** CLIENT_CACHE_SECONDS: how long an isolate trusts a cached API token (a revocation's reach). */
  clientCacheMs: number;
}

/** Longest grace a rotation may ask for: 30 days. */
export const MAX_ROTATION_GRACE_SECONDS = 30 * 86400;
/** Shortest accepted ADMIN_TOKEN: 32 characters (openssl rand -base64 32 gives 44). */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

function adminToken(env: AdminEnv): string | null {
  const v = env.ADMIN_TOKEN;
  if (v === undefined || v === "") return null;
  // RFC 6750 §2.1 b64token: what a Bearer header can carry.
  if (!/^[A-Za-z0-9._~+/-]+=*$/.test(v))
    throw new ConfigError("ADMIN_TOKEN", "may hold only letters, digits and -._~+/ (Base64 or hex)");
  if (v.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(
      "ADMIN_TOKEN",
      `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (openssl rand -base64 32)`,
    );
  }
  return v;
}

function parse(env: AdminEnv): AdminConfig {
  const token = adminToken(env);
  return {
    token,
    // Only a live admin API needs the sealing key; an absent token keeps the worker a plain 404.
    sealKey: token === null ? "" : sealKeyVar(env),
    rotationGraceSeconds: intVar(env, "SECRET_ROTATION_GRACE_SECONDS", 86400, 0, MAX_ROTATION_GRACE_SECONDS),
    maxBodyBytes: commonConfig(env).maxBodyBytes,
    maxImportBytes: intVar(env, "ADMIN_MAX_IMPORT_BYTES", 5 * 1024 * 1024, 1024, 50 * 1024 * 1024),
    maxImportRows: intVar(env, "ADMIN_MAX_IMPORT_ROWS", 10_000, 1, 100_000),
    auditRetentionMs: auditConfig(env).retentionMs,
    clientCacheMs: intVar(env, "CLIENT_CACHE_SECONDS", 10, 0, 3600) * 1000,
  };
}

/** The admin variables, parsed once; throws ConfigError naming a malformed one. */
export function adminConfig(env: AdminEnv): AdminConfig {
  return configOf(env, parse);
}

checkConfig(adminConfig);
