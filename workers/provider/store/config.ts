// The store's own variables, read by every worker that touches the stores (the service's workers
// and the admin API): how many objects the one-time store and the directory are spread over, how
// long a code and a token live (which bounds how long a plid's revocation must be kept), a review
// test number's cap, the audit trail's, and the daily SMS budgets. Every room of the store may read
// this module; it reads none of them.

import { commonConfig, configOf, ConfigError, intVar, optionalVar } from "../../core/config";

export interface StoreVars extends SmsBudgetVars {
  ONE_TIME_SHARDS?: string;
  CODE_TTL_SECONDS?: string;
  ACCESS_TOKEN_TTL_SECONDS?: string;
  DIRECTORY_SHARDS?: string;
  TEST_NUMBER_MAX_FAILURES?: string;
  SIGNIN_RISK_WINDOW_SECONDS?: string;
  JWKS_MAX_AGE_SECONDS?: string;
}

export interface StoreConfig {
  oneTimeShards: number;
  codeTtlMs: number;
  accessTokenTtlSeconds: number;
  /** How long a plid's revocation is kept: longer than any code and token of it can live. */
  revocationRetainMs: number;
  /** Directory shards people, links and grants are spread over (docs/capacity.md sizes the default). */
  directoryShards: number;
  /** Wrong codes a review test number takes from all networks over its registration before it is suspended. */
  testNumberMaxFailures: number;
  /**
   * How long after a person-kind SIM change or a port the number is at risk (directory/risk.ts):
   * no automatic login, no passkey enrolment, SMS refused where a passkey exists. 0: never.
   */
  riskWindowMs: number;
  /** The signing keys' times (signing-keys.ts), all from how long a JWKS answer may be cached. */
  keys: KeyTimes;
}

/**
 * How long a JWKS answer may be cached (its Cache-Control max-age), how long an isolate keeps the
 * keys it read (at most a minute, never longer than the JWKS's life), and so how long before it
 * signs a new key is published: the JWKS's life, but never under a minute (a verifier that ignores
 * the max-age and fetches again on an unknown kid at most once a minute, as oauth4webapi does,
 * then holds the key too), and twice an isolate's copy.
 */
export interface KeyTimes {
  jwksMaxAgeSeconds: number;
  keysCacheMs: number;
  publishAheadMs: number;
}

/** The longest a verifier known here waits before fetching the JWKS again on an unknown kid (oauth4webapi). */
export const REFETCH_COOLDOWN_MS = 60_000;

export function keyTimes(jwksMaxAgeSeconds: number): KeyTimes {
  const keysCacheMs = Math.min(60_000, jwksMaxAgeSeconds * 1000);
  return {
    jwksMaxAgeSeconds,
    keysCacheMs,
    publishAheadMs: Math.max(jwksMaxAgeSeconds * 1000, REFETCH_COOLDOWN_MS) + 2 * keysCacheMs,
  };
}

/** The most objects the store may be spread over (ONE_TIME_SHARDS is a power of two up to this). */
export const MAX_SHARDS = 64;
const MAX_CODE_TTL_SECONDS = 600;
const MAX_TOKEN_TTL_SECONDS = 86_400;
/** Production's directory shard count, from the capacity model (docs/capacity.md). */
export const DEFAULT_DIRECTORY_SHARDS = 64;
/**
 * Shard slots a person's id, a plid or a device id can name (directory/keys.ts lays them out):
 * DIRECTORY_SHARDS is at most this.
 */
export const SHARD_SLOTS = 4096;

function parse(env: StoreVars): StoreConfig {
  const shards = intVar(env, "ONE_TIME_SHARDS", 16, 1, MAX_SHARDS);
  if ((shards & (shards - 1)) !== 0) throw new ConfigError("ONE_TIME_SHARDS", "must be a power of two");
  const codeTtlMs = intVar(env, "CODE_TTL_SECONDS", 60, 1, MAX_CODE_TTL_SECONDS) * 1000;
  const accessTokenTtlSeconds = intVar(env, "ACCESS_TOKEN_TTL_SECONDS", 600, 1, MAX_TOKEN_TTL_SECONDS);
  return {
    oneTimeShards: shards,
    codeTtlMs,
    accessTokenTtlSeconds,
    // An ended plid is kept as long as the longest code and token any worker may be configured to
    // issue, not this worker's: the worker ending a plid (disconnect, admin) need not share the
    // token worker's ACCESS_TOKEN_TTL_SECONDS, and a token must not outlive its plid's end record.
    revocationRetainMs: (MAX_CODE_TTL_SECONDS + MAX_TOKEN_TTL_SECONDS) * 1000 + 60_000,
    // Fixed for a deployment: a number, a ci and an id map to a shard by it (directory/keys.ts).
    directoryShards: intVar(env, "DIRECTORY_SHARDS", DEFAULT_DIRECTORY_SHARDS, 1, SHARD_SLOTS),
    testNumberMaxFailures: intVar(env, "TEST_NUMBER_MAX_FAILURES", 100, 1, 10_000),
    // 72 hours: a cloned SIM is usually found out within a day or two, when the person's own phone
    // loses service; a new phone's owner waits three days for automatic login and a passkey
    riskWindowMs: intVar(env, "SIGNIN_RISK_WINDOW_SECONDS", 259_200, 0, 30 * 86_400) * 1000,
    // 5 minutes: a rotation's new key signs 7 minutes after it is published
    keys: keyTimes(intVar(env, "JWKS_MAX_AGE_SECONDS", 300, 1, 3600)),
  };
}

/** The store's variables, parsed once; throws ConfigError naming a malformed one. */
export function storeConfig(env: StoreVars): StoreConfig {
  return configOf(env, parse);
}

/** The audit trail's variables (docs/operations.md "Configuration"). */
export interface AuditVars {
  AUDIT_RETENTION_DAYS?: string;
  AUDIT_FLUSH_SECONDS?: string;
}

export interface AuditConfig {
  /** How long events are listed and exported (the bucket's lifecycle rule deletes them after it). */
  retentionMs: number;
  /** How long an event may wait in a one-time-store object before its batch is written to R2. */
  flushMs: number;
}

function parseAudit(env: AuditVars): AuditConfig {
  return {
    // Korean access-record rules ask for at least a year, two where more than 50,000 people are
    // processed: 730 days by default.
    retentionMs: intVar(env, "AUDIT_RETENTION_DAYS", 730, 1, 3650) * 86_400_000,
    flushMs: intVar(env, "AUDIT_FLUSH_SECONDS", 60, 1, 3600) * 1000,
  };
}

/** The audit variables, parsed once; throws ConfigError naming a malformed one. */
export function auditConfig(env: AuditVars): AuditConfig {
  return configOf(env, parseAudit);
}

/** A whole-number variable whose malformed value is logged (naming it, for `worker`) and its default kept. */
function lenientIntVar(env: object, name: string, dflt: number, min: number, max: number, worker: string): number {
  try {
    return intVar(env, name, dflt, min, max);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    tolerated(err, worker);
    return dflt;
  }
}

/**
 * A whole-number variable of the metrics (its flush, its alerts' interval) in ms: a malformed value
 * is logged and the default kept, since a count or an alert must never fail the request or the
 * roll-up around it.
 */
export function metricsSeconds(env: object, name: string, dflt: number, min: number): number {
  return lenientIntVar(env, name, dflt, min, 3600, "metrics") * 1000;
}

/** The shortest shared secret reported as sound: 16 characters (the spec's shortest key, spec §2.2). */
export const SHARED_SECRET_MIN = 16;

/**
 * A shared secret (SMS_WEBHOOK_SECRET, ALERT_WEBHOOK_SECRET, TURNSTILE_SECRET_KEY): one shorter
 * than 16 characters, or with a space or a control character (a pasted newline), is used all the
 * same, so messages and checks keep going, and reported (`tolerated`).
 */
export function sharedSecretVar(env: object, name: string, worker: string): string | undefined {
  const v = optionalVar(env, name);
  if (v !== undefined && (v.length < SHARED_SECRET_MIN || /[\s\x00-\x1f\x7f]/.test(v)))
    tolerated(new ConfigError(name, `must be at least ${SHARED_SECRET_MIN} characters, without spaces`), worker);
  return v;
}

/** The daily SMS budgets' variables (docs/operations.md "SMS budgets"). */
export interface SmsBudgetVars {
  SMS_APP_DAILY_BUDGET?: string;
  SMS_GLOBAL_DAILY_BUDGET?: string;
}

export interface SmsBudgetConfig {
  /** Messages an app without a budget of its own may be sent in a Korean day. */
  appDaily: number;
  /** Messages the whole service sends in a Korean day before its alerts fire; nothing stops at it. */
  globalDaily: number;
}

/** The bounds of an app's daily SMS budget in messages: SMS_APP_DAILY_BUDGET's and each app's own. */
export const SMS_BUDGET_MIN = 1;
export const SMS_BUDGET_MAX = 10_000_000;
/** SMS_APP_DAILY_BUDGET unset: 200,000 원 a day at 20 원 a message (docs/operations.md "SMS budgets"). */
export const DEFAULT_SMS_APP_DAILY_BUDGET = 10_000;
/** SMS_GLOBAL_DAILY_BUDGET unset: a small deployment's; one at national volume sets its own. */
export const DEFAULT_SMS_GLOBAL_DAILY_BUDGET = 1_000_000;
/** SMS_GLOBAL_DAILY_BUDGET's largest: ten times the national 10 million sign-ins a day (docs/capacity.md). */
export const SMS_GLOBAL_BUDGET_MAX = 100_000_000;

// Lenient, as the metrics' variables are: a malformed budget must not turn every sign-in by SMS into
// a 500 (the one outage the budgets exist to prevent); it is logged, naming it, and the default kept.
function parseSmsBudgets(env: SmsBudgetVars): SmsBudgetConfig {
  return {
    appDaily: lenientIntVar(
      env,
      "SMS_APP_DAILY_BUDGET",
      DEFAULT_SMS_APP_DAILY_BUDGET,
      SMS_BUDGET_MIN,
      SMS_BUDGET_MAX,
      "sms-budget",
    ),
    globalDaily: lenientIntVar(
      env,
      "SMS_GLOBAL_DAILY_BUDGET",
      DEFAULT_SMS_GLOBAL_DAILY_BUDGET,
      SMS_BUDGET_MIN,
      SMS_GLOBAL_BUDGET_MAX,
      "sms-budget",
    ),
  };
}

/** The SMS budgets' variables, parsed once per env (a malformed one logged once, its default kept). */
export function smsBudgetConfig(env: SmsBudgetVars): SmsBudgetConfig {
  return configOf(env, parseSmsBudgets);
}

/**
 * An app's daily SMS budget in messages: its own (`clients.sms_daily_budget`, `Client.smsDailyBudget`),
 * else SMS_APP_DAILY_BUDGET. Takes any record with the field, so a room that may not import the
 * clients' module (an object's folder) can call it.
 */
export function appSmsBudget(client: { smsDailyBudget: number | null }, env: SmsBudgetVars): number {
  return client.smsDailyBudget ?? smsBudgetConfig(env).appDaily;
}

/** Korea's offset from UTC (no daylight saving time). */
const KST_OFFSET_MS = 9 * 3_600_000;

/** The start (ms) of the Korean calendar day holding `now`: the budgets count from midnight KST (15:00 UTC). */
export function kstDayStart(now: number): number {
  return now - ((now + KST_OFFSET_MS) % 86_400_000);
}

// ---- the one check of the configuration (docs/operations.md "Checking the configuration")

type Check = (env: never) => unknown;
/** Every parser of this worker's variables: each module that reads some adds its own (checkConfig). */
const checks = new Set<Check>();
/** While configProblems runs: the variables found so far. */
let noticed: Set<string> | null = null;

/**
 * Adds a parser to `configProblems`: a function of the env that throws ConfigError naming a
 * malformed or missing variable (or calls `tolerated`). Each module of a worker that parses
 * variables adds its own, so a worker checks exactly what it reads.
 */
export function checkConfig<E>(parse: (env: E) => unknown): void {
  checks.add(parse as Check);
}

/**
 * A malformed variable the worker does without (its default kept, or an optional secret left
 * unused): logged once per env as `{worker, cause}` (the cause names the variable), and reported by
 * configProblems, so /healthz?deep=1, the console and the `config.<VARIABLE>` alert show it.
 */
export function tolerated(err: ConfigError, worker: string): void {
  if (noticed) noticed.add(err.variable);
  else console.log(JSON.stringify({ worker, cause: err.message }));
}

/**
 * Every variable this worker's parsers find malformed or missing (a documented form not met), by
 * name only, never a value, sorted; once per env. Each parser runs on a fresh view of the env (no
 * cached parse); a variable it names is then hidden (its default) and the parser runs again, so one
 * parser reports each of its problems.
 */
export function configProblems(env: object): string[] {
  return configOf(env, findProblems);
}

function findProblems(env: object): string[] {
  const found = new Set<string>();
  const outer = noticed;
  noticed = found;
  try {
    for (const check of checks) {
      const hidden: Record<string, undefined> = {};
      for (;;) {
        try {
          check(Object.assign(Object.create(env) as object, hidden) as never);
          break;
        } catch (err) {
          if (!(err instanceof ConfigError)) break;
          found.add(err.variable);
          if (err.variable in hidden) break;
          hidden[err.variable] = undefined;
        }
      }
    }
  } finally {
    noticed = outer;
  }
  return [...found].sort();
}

checkConfig(commonConfig);
checkConfig(storeConfig);
checkConfig(auditConfig);
checkConfig(smsBudgetConfig);
checkConfig((env: object) => {
  metricsSeconds(env, "METRICS_FLUSH_SECONDS", 60, 0);
  metricsSeconds(env, "ALERT_EVALUATE_SECONDS", 60, 1);
});

// ---- what an isolate keeps between requests

/**
 * How each module that keeps something in the isolate between requests (the caches of clients, API
 * tokens and signing keys; the metric sums not yet sent) drops it. Nothing in a worker calls
 * `forgetIsolateMemory`: an isolate forgets by ending. The workers tests hand one isolate from test
 * file to test file and call it between them (test/support/fresh.ts), so each file starts as a
 * fresh isolate would (docs/testing.md "Where the time goes").
 */
const forgetters: (() => void)[] = [];

/** Registers how to drop what a module keeps in this isolate (once, at the module's load). */
export function keptInIsolate(forget: () => void): void {
  forgetters.push(forget);
}

/** Drops everything registered: the isolate's caches and unsent sums, as a new isolate has them. */
export function forgetIsolateMemory(): void {
  for (const forget of forgetters) forget();
}
