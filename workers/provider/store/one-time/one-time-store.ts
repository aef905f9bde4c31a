// The one-time store: a SQLite-backed Durable Object holding authorization codes, access tokens,
// sign-in transactions and counters (docs/architecture.md §6). Every method body is synchronous SQL with no
// await, so each call is atomic: two concurrent redemptions of one code cannot both succeed.
// Callers hash before calling (WebCrypto is async and would open the input gate).
//
// Keys are spread over ONE_TIME_SHARDS objects by the first character of the random value
// (`shardOf`), so one object is never the whole service's bottleneck.

import { DurableObject } from "cloudflare:workers";
import { B64URL_ALPHABET } from "../../../core/crypto";
import type { IdentityItem } from "../../../core/spec";
import { dirAt, dirShards, type DirectoryEnv, type Subscriber } from "../directory/directory";
import { plidHome } from "../directory/keys";
import {
  deliver,
  KEEP_UNDELIVERED_MS,
  nextAttemptAt,
  RETRY_FOR_MS,
  type EndReason,
  type EventVars,
  type PendingEvent,
} from "../flows/events";
import type { Lang } from "../../signin/i18n";
import { archive, objectLabel, type OutboxRow } from "../audit-archive";
import type { AuditRecord } from "./audit";
import { auditConfig, type AuditVars } from "../config";
import { ConfigError } from "../../../core/config";
import {
  SigninMachine,
  type NumberLimits,
  type OpenRequest,
  type OpenResult,
  type ResendRequest,
  type ResendResult,
  type SigninRecord,
  type Step,
  type GatedVerifyRequest,
  type StepGate,
  type Unsettled,
  type VerifyRequest,
  type VerifyResult,
} from "./signin-store";

/**
 * What an authorization code stands for; carried on to the access token issued from it. It holds
 * what /v1/user/me needs, so that read touches no D1: the subscriber as the directory had them at
 * sign-in and the items consented then (docs/storage.md "Snapshots").
 */
export interface CodeGrant {
  clientId: string;
  subscriberId: number;
  plid: string;
  redirectUri: string;
  /** The automatic-login grant this login was made under, if any (spec §2.1 modes). */
  autoLogin: { deviceHash: string; automatic: boolean } | null;
  /** The sign-in's time: a revocation of the plid at or after it ends the code and its token. */
  issuedAt: number;
  /** The client's agreed items that the subscriber consented to, at sign-in. */
  items: IdentityItem[];
  /** The subscriber's directory entry at sign-in. */
  subscriber: SubscriberSnapshot;
}

export type SubscriberSnapshot = Omit<Subscriber, "id">;

/**
 * One read of an access token, as positional values (the RPC carries them for less than an
 * object's keys): its grant as stored (JSON of a `CodeGrant`: a string crosses the RPC for a
 * fraction of what the object's structured clone costs; `tokenGrant` parses it), the fingerprint
 * of the secret that authenticated the exchange, and whether it takes its automatic-login first
 * report.
 */
export type TokenRead = [grantJson: string, secretId: string, firstReport: boolean];

/** The grant of a token read. */
export function tokenGrant([grantJson, secretId]: TokenRead): TokenGrant {
  return { ...(JSON.parse(grantJson) as CodeGrant), secretId };
}

/** The entry marking an automatic-login grant's first report as pending (spec §2.1 autoStatusCheck). */
export function firstReportKey(deviceHash: string, clientId: string): string {
  return `first:${deviceHash}:${clientId}`;
}

/** An access token's record: the code's grant plus which client secret authenticated the exchange. */
export interface TokenGrant extends CodeGrant {
  /** `secretFingerprint` of that secret: user/me encrypts with it, whatever rotations came since. */
  secretId: string;
}

export type RedeemFailure =
  | "unknown"
  | "expired"
  | "reused"
  | "foreign_client"
  | "redirect_mismatch"
  | "pkce_missing"
  | "pkce_mismatch"
  | "pkce_unexpected"
  | "revoked";
export type RedeemResult = { ok: true } | { ok: false; reason: RedeemFailure };

/**
 * A redemption as the RPC carries it: the fields of a `RedeemRequest` as positional values, which
 * the runtime serializes for a fraction of an object's cost (each key written and read back).
 */
export type RedeemArgs = [
  codeHash: string,
  clientId: string,
  tokenHash: string,
  secretId: string,
  tokenTtlMs: number,
  verifierChallenge: string | null,
  redirectUri: string | null,
];

export interface RedeemRequest {
  codeHash: string;
  clientId: string;
  /** S256 of the presented code_verifier, or null when none was sent. */
  verifierChallenge: string | null;
  /** When set, must equal the code's redirect_uri (TOKEN_ERROR_STYLE=rfc6749, RFC 6749 §4.1.3). */
  redirectUri: string | null;
  tokenHash: string;
  tokenTtlMs: number;
  secretId: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS codes (
  hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, grant_json TEXT NOT NULL, challenge TEXT,
  expires_at INTEGER NOT NULL, used_at INTEGER, token_hash TEXT, purge_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
  hash TEXT PRIMARY KEY, grant_json TEXT NOT NULL, expires_at INTEGER NOT NULL,
  reads INTEGER NOT NULL DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS entries (
  key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS counters (
  key TEXT PRIMARY KEY, count INTEGER NOT NULL, window_end INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS entries_expiry ON entries (expires_at);
CREATE INDEX IF NOT EXISTS counters_expiry ON counters (window_end);
CREATE TABLE IF NOT EXISTS revoked_plids (
  plid TEXT PRIMARY KEY, at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS event_outbox (
  jti TEXT PRIMARY KEY, client_id TEXT NOT NULL, plid TEXT NOT NULL, reason TEXT NOT NULL,
  created_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER, last_outcome TEXT);
CREATE TABLE IF NOT EXISTS audit_outbox (
  id INTEGER PRIMARY KEY, at INTEGER NOT NULL, type TEXT NOT NULL,
  client_id TEXT, outcome TEXT NOT NULL, detail TEXT);
CREATE TABLE IF NOT EXISTS audit_mark (
  id INTEGER PRIMARY KEY CHECK (id = 1), tokens_rowid INTEGER NOT NULL);
`;

const SWEEP_MS = 60_000;
/**
 * Audit events wait in the object's outbox and are written to R2 in batches (audit-archive.ts):
 * AUDIT_FLUSH_SECONDS (60 s) after the first event of a batch, by the object's alarm, or at once
 * when the outbox holds this many rows, so a busy service writes a few objects a minute per
 * object, not one per event. A good redemption's record is its token row (client, issue time),
 * written by the redemption's own statement; each flush counts the token rows above a mark and
 * writes one `code.redeemed` event per client with the count and the window's first and last
 * redemption: an outbox row for each was about a fifth of the token route's CPU
 * (docs/benchmarks.md). Refusals, which carry their reason, stay one event each.
 */
export const AUDIT_FLUSH_ROWS = 1000;
/** Audit events a statement appends: 5 bound values each, and a statement binds at most 100. */
const AUDIT_APPEND_ROWS = 20;

export class OneTimeStore extends DurableObject {
  private readonly sql: SqlStorage;
  private readonly db: D1Database | undefined;
  /** The audit trail's bucket (the hosting worker's AUDIT binding). */
  private bucket: R2Bucket | undefined;
  /** This object's name in audit keys and event ids. */
  private readonly label: string;
  private readonly auditFlushMs: number;
  /** Whether the alarm is set for the outbox's next flush (cleared when a flush starts). */
  private flushArmed = false;
  /** Whether an alarm is known to be set, which sweeps what writes leave (`scheduleSweep`). */
  private sweepArmed = false;
  /** Rows in the audit outbox, once counted (the flush threshold). */
  private outboxRows: number | null = null;
  private flushing: Promise<number> | null = null;
  /** When a flush last failed: the threshold waits an interval before trying R2 again. */
  private flushFailedAt = 0;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    this.sql = ctx.storage.sql;
    this.sql.exec(SCHEMA);
    migrate(this.sql);
    this.db = (env as { DB?: D1Database }).DB;
    this.bucket = (env as { AUDIT?: R2Bucket }).AUDIT;
    this.label = objectLabel(ctx.id);
    this.auditFlushMs = auditConfig(env as AuditVars).flushMs;
  }

  /**
   * Stores a new authorization code (by hash) for `ttlMs`. With `firstReport` (an automatic-login
   * opt-in), the grant's first report becomes pending, in this same object: the plid's.
   */
  putCode(
    codeHash: string,
    grant: CodeGrant,
    challenge: string | null,
    ttlMs: number,
    firstReport?: { key: string; ttlMs: number },
    audit?: readonly AuditRecord[],
  ): void {
    const now = Date.now();
    if (firstReport) this.putEntry(firstReport.key, "1", firstReport.ttlMs);
    this.sql.exec(
      "INSERT INTO codes (hash, client_id, grant_json, challenge, expires_at, purge_at, plid, first_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      codeHash,
      grant.clientId,
      asciiJson(grant),
      challenge,
      now + ttlMs,
      now + ttlMs,
      grant.plid,
      grant.autoLogin ? firstReportKey(grant.autoLogin.deviceHash, grant.clientId) : "",
    );
    // the sign-in's events ride along: any object's outbox will do (appendAudit), and this call is made anyway
    if (audit?.length) this.appendAudit(audit);
    this.scheduleSweep();
  }

  /**
   * Redeems a code atomically and stores the access token issued from it. A foreign client or a
   * PKCE failure does not consume the code (docs/architecture.md §4.7); a reused code revokes the token
   * issued from it (RFC 6749 §4.1.2).
   */
  redeemCode(
    ...[codeHash, clientId, tokenHash, secretId, tokenTtlMs, verifierChallenge, redirectUri]: RedeemArgs
  ): RedeemResult {
    const r: RedeemRequest = { codeHash, clientId, tokenHash, secretId, tokenTtlMs, verifierChallenge, redirectUri };
    const result = this.redeem(r);
    // The audit event is written in the same synchronous step as the redemption, into this
    // object's outbox (a good redemption's by the code_redeemed trigger: its token row, counted at
    // the flush); R2 receives it batched (flushAudit), off the token endpoint's hot path.
    if (!result.ok) {
      this.sql.exec(
        "INSERT INTO audit_outbox (at, type, client_id, outcome, detail) VALUES (?, ?, ?, ?, ?)",
        Date.now(),
        "code.refused",
        r.clientId,
        "refused",
        JSON.stringify({ reason: result.reason }),
      );
      this.auditRecorded(1);
    } else this.armAuditFlush();
    return result;
  }

  /**
   * Appends audit events of the service's workers (workers/provider/store/one-time/audit.ts) to this
   * object's outbox, written to R2 with its own (docs/storage.md "R2").
   */
  appendAudit(records: readonly AuditRecord[]): void {
    // one statement per AUDIT_APPEND_ROWS events (a sign-in's two go in one)
    for (let i = 0; i < records.length; i += AUDIT_APPEND_ROWS) {
      const rows = records.slice(i, i + AUDIT_APPEND_ROWS);
      this.sql.exec(
        `INSERT INTO audit_outbox (at, type, client_id, outcome, detail) VALUES ${rows.map(() => "(?, ?, ?, ?, ?)").join(", ")}`,
        ...rows.flat(),
      );
    }
    this.auditRecorded(records.length);
  }

  /** `n` rows were just added to the outbox: flush now at the threshold, else within the interval. */
  private auditRecorded(n: number): void {
    this.outboxRows =
      this.outboxRows === null
        ? this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM audit_outbox").one().n
        : this.outboxRows + n;
    // kept in the outbox on failure: the alarm armed below retries it
    if (
      this.outboxRows >= AUDIT_FLUSH_ROWS &&
      this.flushing === null &&
      Date.now() - this.flushFailedAt >= this.auditFlushMs
    )
      void this.flushAudit().catch(() => {});
    this.armAuditFlush();
  }

  /** Makes sure the alarm fires within the flush interval (one storage call per interval, not per event). */
  private armAuditFlush(): void {
    if (this.flushArmed) return;
    this.flushArmed = true;
    this.alarmBy(Date.now() + this.auditFlushMs);
  }

  /**
   * Writes the audit outbox to R2 (audit-archive.ts), up to AUDIT_FLUSH_ROWS rows an R2 object
   * (one per UTC hour of their events); returns how many rows moved. One flush at a time; rows
   * leave the outbox only after R2 accepted them, and in the same step the object's sequence
   * number moves past them, so a retry names the rows (and the objects) as the failed try did.
   */
  async flushAudit(): Promise<number> {
    if (this.flushing) return this.flushing;
    const run = async () => {
      // events recorded from here on arm the next flush
      this.flushArmed = false;
      this.countRedeemed();
      let moved = 0;
      for (;;) {
        const rows = this.sql
          .exec<OutboxRow & { id: number }>(
            "SELECT id, at, type, client_id, outcome, detail FROM audit_outbox ORDER BY id LIMIT ?",
            AUDIT_FLUSH_ROWS,
          )
          .toArray();
        if (rows.length === 0) {
          this.outboxRows = 0;
          return moved;
        }
        if (!this.bucket)
          throw new ConfigError("AUDIT", "must bind an R2 bucket in the worker hosting the one-time store");
        const seq = this.sql.exec<{ s: number }>("SELECT audit_seq AS s FROM audit_mark").one().s;
        await archive(this.bucket, this.label, seq + 1, rows);
        this.sql.exec("DELETE FROM audit_outbox WHERE id <= ?", rows[rows.length - 1]!.id);
        this.sql.exec("UPDATE audit_mark SET audit_seq = audit_seq + ?", rows.length);
        moved += rows.length;
      }
    };
    // cleared once settled, after the assignment below (the callbacks run later)
    const flushing = run().then(
      (moved) => {
        this.flushing = null;
        return moved;
      },
      (e: unknown) => {
        this.flushing = null;
        this.flushFailedAt = Date.now();
        throw e;
      },
    );
    this.flushing = flushing;
    return this.flushing;
  }

  /**
   * The tokens issued since the last count become one `code.redeemed` outbox row per client, and
   * the mark moves past them, in one synchronous step (so a failing write loses none of them). Tokens
   * take increasing rowids; the sweep lowers the mark if it ever deletes the highest (see `alarm`).
   */
  private countRedeemed(): void {
    const mark = this.sql.exec<{ m: number }>("SELECT tokens_rowid AS m FROM audit_mark").one().m;
    this.sql.exec(
      `INSERT INTO audit_outbox (at, type, client_id, outcome, detail)
       SELECT min(issued_at), 'code.redeemed', client_id, 'ok', json_object('count', count(*), 'until', max(issued_at))
       FROM tokens WHERE rowid > ? AND client_id IS NOT NULL GROUP BY client_id ORDER BY min(issued_at)`,
      mark,
    );
    this.sql.exec("UPDATE audit_mark SET tokens_rowid = (SELECT coalesce(max(rowid), 0) FROM tokens)");
    this.outboxRows = null; // counted again when next needed
  }

  private redeem(r: RedeemRequest): RedeemResult {
    const now = Date.now();
    const tokenExpires = now + r.tokenTtlMs;
    // The good redemption is one statement: the conditional UPDATE takes the code only if it is
    // unused, unexpired, this client's, with this PKCE challenge (`IS`: both absent, or equal) and
    // its plid (stored with it; a code from before that column takes the path below) not ended;
    // the code_redeemed trigger then stores the token and the audit row. The used code is kept until its token expires, so a replay can still revoke
    // that token. Anything else (or a redirect_uri to compare) takes the path below, which names
    // the reason; both run inside this one synchronous call.
    if (r.redirectUri === null) {
      const won = this.sql
        .exec(
          `UPDATE codes SET used_at = ?, token_hash = ?, purge_at = ?, secret_id = ?
           WHERE hash = ? AND used_at IS NULL AND expires_at > ? AND client_id = ? AND challenge IS ?
             AND plid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM revoked_plids p WHERE p.plid = codes.plid)
           RETURNING 1`,
          now,
          r.tokenHash,
          tokenExpires,
          r.secretId,
          r.codeHash,
          now,
          r.clientId,
          r.verifierChallenge,
        )
        .toArray();
      if (won.length === 1) return { ok: true };
    }
    const row = this.sql
      .exec<{
        client_id: string;
        grant_json: string;
        challenge: string | null;
        expires_at: number;
        used_at: number | null;
        token_hash: string | null;
      }>(
        "SELECT client_id, grant_json, challenge, expires_at, used_at, token_hash FROM codes WHERE hash = ?",
        r.codeHash,
      )
      .toArray()[0];
    if (!row) return { ok: false, reason: "unknown" };
    // Who may present this code is checked before anything else, used or not: a replay by another
    // client or without the verifier revokes nothing (RFC 9700 §4.5: the revocation of RFC 6749
    // §4.1.2 is for the rightful client's replay) and a foreign request burns no good code.
    const grant = JSON.parse(row.grant_json) as CodeGrant;
    const refused = presenterRefusal(row, grant, r);
    if (refused) return { ok: false, reason: refused };
    if (row.used_at !== null) {
      if (row.token_hash) this.sql.exec("UPDATE tokens SET revoked = 1 WHERE hash = ?", row.token_hash);
      return { ok: false, reason: "reused" };
    }
    if (row.expires_at <= now) {
      this.sql.exec("DELETE FROM codes WHERE hash = ?", r.codeHash);
      return { ok: false, reason: "expired" };
    }
    const revoked = this.sql
      .exec<{ n: number }>("SELECT count(*) AS n FROM revoked_plids WHERE plid = ?", grant.plid)
      .one().n;
    if (revoked > 0) return { ok: false, reason: "revoked" };
    // a code stored before the plid column existed: it is filled here for the trigger
    this.sql.exec(
      "UPDATE codes SET used_at = ?, token_hash = ?, purge_at = ?, secret_id = ?, plid = ? WHERE hash = ?",
      now,
      r.tokenHash,
      tokenExpires,
      r.secretId,
      grant.plid,
      r.codeHash,
    );
    return { ok: true };
  }

  /**
   * One read of an access token: null when unknown, expired, revoked, its plid ended, or already
   * read `maxReads` times (the reference allows one `/v1/user/me` read per token). Under an
   * automatic-login grant, the read takes the grant's pending first report. One synchronous call:
   * the check, the read count and the report cannot interleave with another.
   */
  readToken(tokenHash: string, maxReads: number): TokenRead | null {
    const now = Date.now();
    const row = this.sql
      .exec<{ grant_json: string; secret_id: string | null; first_key: string | null }>(
        `UPDATE tokens SET reads = reads + 1
         WHERE hash = ? AND revoked = 0 AND expires_at > ? AND reads < ?
           AND NOT EXISTS (SELECT 1 FROM revoked_plids r WHERE r.plid = tokens.plid)
         RETURNING grant_json, secret_id, first_key`,
        tokenHash,
        now,
        maxReads,
      )
      .toArray()[0];
    if (!row) return null;
    // The key of a pending first report under the grant's automatic login ("" without one), kept
    // with the token so that the read needs no JSON; tokens from before it, and their secret's
    // fingerprint, are in the JSON only.
    let { secret_id: secretId, first_key: firstKey } = row;
    if (secretId === null || firstKey === null) {
      const grant = JSON.parse(row.grant_json) as TokenGrant;
      secretId ??= grant.secretId;
      firstKey ??= grant.autoLogin ? firstReportKey(grant.autoLogin.deviceHash, grant.clientId) : "";
    }
    const firstReport =
      firstKey !== "" &&
      this.sql.exec("DELETE FROM entries WHERE key = ? AND expires_at > ? RETURNING key", firstKey, now).toArray()
        .length > 0;
    return [row.grant_json, secretId, firstReport];
  }

  /**
   * Ends plids (a disconnect, the person's termination, a number reassigned, a subscriber or a
   * client removed): none of their codes redeems and none of their tokens reads from now on,
   * whenever issued. An ended plid is never given again (the next sign-in links anew, with a new
   * plid), so a code minted in the moment between this end and the deletion of the link (a sign-in
   * that read the link just before) is refused too. Kept for `retainMs` (longer than a code and its
   * token can live). `events` for the apps are recorded in this same step, and sent by this
   * object's alarm (docs/events.md).
   */
  revokePlids(plids: readonly string[], retainMs: number, events: readonly PendingEvent[] = []): void {
    const now = Date.now();
    for (const plid of plids) {
      this.sql.exec(
        `INSERT INTO revoked_plids (plid, at, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (plid) DO UPDATE SET at = excluded.at, expires_at = excluded.expires_at`,
        plid,
        now,
        now + retainMs,
      );
    }
    for (const e of events) {
      // one event per (plid, reason): a retried end records no second one
      const dup = this.sql
        .exec<{ n: number }>("SELECT count(*) AS n FROM event_outbox WHERE plid = ? AND reason = ?", e.plid, e.reason)
        .one().n;
      if (dup > 0) continue;
      this.sql.exec(
        "INSERT INTO event_outbox (jti, client_id, plid, reason, created_at, next_at) VALUES (?, ?, ?, ?, ?, ?)",
        e.jti,
        e.clientId,
        e.plid,
        e.reason,
        e.createdAt,
        now,
      );
    }
    // Events: the alarm now (it sweeps and reschedules itself). Not both: each reads the alarm
    // before either sets it, and the sweep's later time would win on an object without one.
    if (events.length) this.alarmBy(now);
    else this.scheduleSweep();
  }

  /** The events not yet delivered (never the plid: the operator sees client, reason and tries). */
  pendingEvents(): {
    jti: string;
    clientId: string;
    reason: string;
    attempts: number;
    nextAt: number | null;
    createdAt: number;
    lastOutcome: string | null;
  }[] {
    return this.sql
      .exec<{
        jti: string;
        client_id: string;
        reason: string;
        attempts: number;
        next_at: number | null;
        created_at: number;
        last_outcome: string | null;
      }>(
        "SELECT jti, client_id, reason, attempts, next_at, created_at, last_outcome FROM event_outbox ORDER BY created_at",
      )
      .toArray()
      .map((r) => ({
        jti: r.jti,
        clientId: r.client_id,
        reason: r.reason,
        attempts: r.attempts,
        nextAt: r.next_at,
        createdAt: r.created_at,
        lastOutcome: r.last_outcome,
      }));
  }

  /** Sends every due event once; each outcome is audited; returns when the next one is due. */
  private async deliverDue(): Promise<number | null> {
    const env = this.env as unknown as { DB: D1Database; SEAL_KEY: string } & EventVars;
    if (!this.db) return null;
    const now = Date.now();
    const due = this.sql
      .exec<{ jti: string; client_id: string; plid: string; reason: EndReason; created_at: number; attempts: number }>(
        "SELECT jti, client_id, plid, reason, created_at, attempts FROM event_outbox WHERE next_at IS NOT NULL AND next_at <= ? ORDER BY next_at LIMIT 50",
        now,
      )
      .toArray();
    for (const r of due) {
      const e: PendingEvent = {
        jti: r.jti,
        clientId: r.client_id,
        plid: r.plid,
        reason: r.reason,
        createdAt: r.created_at,
      };
      const outcome = await deliver(env, e, Date.now()).catch(() => "unreachable" as const);
      const attempts = r.attempts + 1;
      // delivered, or nobody left to tell (a deleted client), or an app that no longer takes the type
      const dropped = outcome === "client_gone" || outcome === "not_subscribed";
      const done = outcome === "delivered" || dropped;
      const next = done ? null : nextAttemptAt(attempts, r.created_at, Date.now());
      if (done) this.sql.exec("DELETE FROM event_outbox WHERE jti = ?", r.jti);
      else
        this.sql.exec(
          "UPDATE event_outbox SET attempts = ?, next_at = ?, last_outcome = ? WHERE jti = ?",
          attempts,
          next,
          outcome,
          r.jti,
        );
      const type =
        outcome === "delivered"
          ? "event.delivered"
          : dropped
            ? "event.dropped"
            : next === null
              ? "event.abandoned"
              : "event.failed";
      this.auditLater(type, r.client_id, outcome === "delivered" ? "ok" : "refused", {
        reason: r.reason,
        outcome,
        attempts,
      });
    }
    const nextDue = this.sql.exec<{ t: number | null }>("SELECT min(next_at) AS t FROM event_outbox").one().t;
    return nextDue;
  }

  /** An audit row through this object's outbox (batched into R2 like the redemptions'). */
  private auditLater(type: string, clientId: string, outcome: "ok" | "refused", detail: Record<string, unknown>): void {
    this.sql.exec(
      "INSERT INTO audit_outbox (at, type, client_id, outcome, detail) VALUES (?, ?, ?, ?, ?)",
      Date.now(),
      type,
      clientId,
      outcome,
      JSON.stringify(detail),
    );
    this.auditRecorded(1);
  }

  /** Makes sure the alarm fires no later than `at`. */
  private alarmBy(at: number): void {
    void this.ctx.storage
      .getAlarm()
      .then((cur) => {
        if (cur === null || cur > at) return this.ctx.storage.setAlarm(at);
      })
      .catch(() => {});
  }

  // ---- generic entries and counters (sign-in transactions, OTP challenges, rate limits) ----

  /** Stores a value under `key` for `ttlMs`, replacing any earlier value. */
  putEntry(key: string, value: string, ttlMs: number): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO entries (key, value, expires_at) VALUES (?, ?, ?)",
      key,
      value,
      Date.now() + ttlMs,
    );
    this.scheduleSweep();
  }

  /** The live value under `key`, or null. */
  getEntry(key: string): string | null {
    const row = this.sql
      .exec<{ value: string }>("SELECT value FROM entries WHERE key = ? AND expires_at > ?", key, Date.now())
      .toArray()[0];
    return row ? row.value : null;
  }

  /** Removes the value under `key`; true when there was a live one (exactly one caller wins). */
  takeEntry(key: string): boolean {
    return this.sql.exec("DELETE FROM entries WHERE key = ? AND expires_at > ?", key, Date.now()).rowsWritten > 0;
  }

  /**
   * Fixed-window counter: adds `by` to `key` and returns the new count and when the window ends.
   * The window starts at the first hit and lasts `windowMs`.
   */
  hit(key: string, windowMs: number, by = 1): { count: number; windowEnd: number } {
    const now = Date.now();
    const row = this.sql
      .exec<{ count: number; window_end: number }>(
        `INSERT INTO counters (key, count, window_end) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET
           count = CASE WHEN window_end <= ? THEN excluded.count ELSE count + excluded.count END,
           window_end = CASE WHEN window_end <= ? THEN excluded.window_end ELSE window_end END
         RETURNING count, window_end`,
        key,
        by,
        now + windowMs,
        now,
        now,
      )
      .toArray()[0]!;
    this.scheduleSweep();
    return { count: row.count, windowEnd: row.window_end };
  }

  /** The live count of `key` (0 when absent or its window ended). */
  peek(key: string): { count: number; windowEnd: number } {
    return this.peekEach([key])[0]!;
  }

  /** The live counts of `keys` in their order, in one statement. */
  private peekEach(keys: readonly string[]): { count: number; windowEnd: number }[] {
    const rows = this.sql
      .exec<{ key: string; count: number; window_end: number }>(
        `SELECT key, count, window_end FROM counters WHERE key IN (${keys.map(() => "?").join(", ")}) AND window_end > ?`,
        ...keys,
        Date.now(),
      )
      .toArray();
    return keys.map((k) => {
      const row = rows.find((r) => r.key === k);
      return row ? { count: row.count, windowEnd: row.window_end } : { count: 0, windowEnd: 0 };
    });
  }

  /** Removes a counter (a success resets a consecutive-failure count). */
  clear(key: string): void {
    this.clearEach([key]);
  }

  private clearEach(keys: readonly string[]): void {
    this.sql.exec(`DELETE FROM counters WHERE key IN (${keys.map(() => "?").join(", ")})`, ...keys);
  }

  // ---- sign-in transactions (docs/signin.md "State machine"): one synchronous call per step ----

  private readonly signin = new SigninMachine(
    {
      get: (key) => this.getEntry(key),
      put: (key, value, ttlMs) => this.putEntry(key, value, ttlMs),
      delete: (key) => void this.sql.exec("DELETE FROM entries WHERE key = ?", key),
    },
    {
      hit: (k, w, by) => this.hit(k, w, by),
      peek: (...keys) => this.peekEach(keys),
      clear: (...keys) => this.clearEach(keys),
    },
  );

  signinCreate(key: string, record: SigninRecord): void {
    this.signin.create(key, record);
  }

  signinGet(key: string): SigninRecord | null {
    return this.signin.get(key);
  }

  /** A transaction's record read with one count of a limit here (a first page's step 1 and its network's limit). */
  signinGetHit(
    key: string,
    counter: string,
    windowMs: number,
  ): { record: SigninRecord | null; hit: { count: number; windowEnd: number } } {
    return { record: this.signin.get(key), hit: this.hit(counter, windowMs) };
  }

  signinOpen(o: OpenRequest): OpenResult {
    return this.signin.open(o);
  }

  signinAbandon(key: string, phoneKey: string, refundSend: boolean, limits: NumberLimits): void {
    this.signin.abandon(key, phoneKey, refundSend, limits);
  }

  signinUnsend(key: string, phoneKey: string, limits: NumberLimits): SigninRecord | null {
    return this.signin.unsend(key, phoneKey, limits);
  }

  signinSupersede(key: string, v: number, movedTo: string): { moved: boolean; record: SigninRecord | null } {
    return this.signin.supersede(key, v, movedTo);
  }

  signinVerify(o: VerifyRequest): VerifyResult {
    return this.signin.verify(o);
  }

  signinVerifyGated(o: GatedVerifyRequest): VerifyResult | Unsettled {
    return this.signin.verifyGated(o);
  }

  signinFinishGated(key: string, gate: StepGate, clientId: string): { ended: true; record: SigninRecord } | Unsettled {
    return this.signin.finishGated(key, gate, clientId);
  }

  signinResend(o: ResendRequest): ResendResult {
    return this.signin.resend(o);
  }

  signinFinish(key: string, from: readonly Step[]): { ended: boolean; record: SigninRecord | null } {
    return this.signin.finish(key, from);
  }

  signinSetLang(key: string, lang: Lang): SigninRecord | null {
    return this.signin.setLang(key, lang);
  }

  /**
   * Makes sure an alarm will sweep what a write left: asked of storage once, then known until the
   * alarm runs (which sets the next one itself when anything is left), so a sign-in's several
   * writes do not each read the alarm.
   */
  private scheduleSweep(): void {
    if (this.sweepArmed) return;
    this.sweepArmed = true;
    // Fire-and-forget: storage writes are ordered, and an alarm already set is kept.
    // A failure here is not the caller's: the next write schedules again.
    void this.ctx.storage
      .getAlarm()
      .then((at) => {
        if (at === null) return this.ctx.storage.setAlarm(Date.now() + SWEEP_MS);
      })
      .catch(() => {
        this.sweepArmed = false;
      });
  }

  /**
   * Drops the ends whose retention is over, once their links are surely gone from D1: an end whose
   * link deletion failed after the revocation (a D1 error, the caller gone) would otherwise bring
   * the plid back to life when its end is forgotten. A plid is never given again, so a link still
   * holding one is a leftover and goes now, with its automatic-login grants; a D1 failure keeps the
   * ends for the next sweep.
   */
  private async forgetEndedPlids(now: number): Promise<void> {
    const ended = this.sql
      .exec<{ plid: string }>("SELECT plid FROM revoked_plids WHERE expires_at <= ? LIMIT 500", now)
      .toArray()
      .map((r) => r.plid);
    if (ended.length === 0) return;
    const list = JSON.stringify(ended);
    const env = this.env as unknown as Partial<DirectoryEnv>;
    if (env.DIRECTORY) {
      const dir = env as DirectoryEnv;
      const n = dirShards(dir);
      const byShard = new Map<number, string[]>();
      for (const p of ended) byShard.set(plidHome(p, n), [...(byShard.get(plidHome(p, n)) ?? []), p]);
      try {
        await Promise.all(
          [...byShard].map(async ([s, plids]) => {
            // plids moved from the single database: their links are at the home the named shard keeps
            const missing = await dirAt(dir, s).deleteLinksByPlid(plids);
            if (missing.length === 0) return;
            const forwards = await dirAt(dir, s).plidForwards(missing);
            await Promise.all(forwards.map((f) => dirAt(dir, f.home).deleteLinksByPlid([f.plid])));
          }),
        );
      } catch {
        return;
      }
    }
    this.sql.exec("DELETE FROM revoked_plids WHERE plid IN (SELECT value FROM json_each(?))", list);
  }

  /**
   * Sends due events, writes the audit outbox to R2, deletes what has expired; reschedules while
   * anything is left, and within the flush interval while audit events wait (also after a failed
   * flush: the retry).
   */
  override async alarm(): Promise<void> {
    this.sweepArmed = false; // this alarm has fired: a write while it runs asks again
    const nextEvent = await this.deliverDue().catch(() => Date.now() + SWEEP_MS);
    await this.flushAudit().catch(() => {});
    const now = Date.now();
    sweepInOrder(this.sql, "codes", now);
    // Every token row is counted before any is deleted: the flush above may have been one already
    // under way, which counted at its start. With the highest rows deleted (every token expired),
    // the next would take a rowid under the mark: lower it.
    this.countRedeemed();
    sweepInOrder(this.sql, "tokens", now);
    this.sql.exec(
      "UPDATE audit_mark SET tokens_rowid = min(tokens_rowid, (SELECT coalesce(max(rowid), 0) FROM tokens))",
    );
    sweepByExpiry(this.sql, now);
    await this.forgetEndedPlids(now);
    this.sql.exec(
      "DELETE FROM event_outbox WHERE next_at IS NULL AND created_at <= ?",
      now - RETRY_FOR_MS - KEEP_UNDELIVERED_MS,
    );
    // whether anything is left, not how much: a count walks every row
    const left = this.sql
      .exec<{ n: number }>(
        `SELECT EXISTS (SELECT 1 FROM codes) OR EXISTS (SELECT 1 FROM tokens) OR EXISTS (SELECT 1 FROM entries)
           OR EXISTS (SELECT 1 FROM counters) OR EXISTS (SELECT 1 FROM revoked_plids)
           OR EXISTS (SELECT 1 FROM event_outbox) OR EXISTS (SELECT 1 FROM audit_outbox) AS n`,
      )
      .one().n;
    const auditWaits = this.sql
      .exec<{ n: number }>(
        `SELECT EXISTS (SELECT 1 FROM audit_outbox)
           OR EXISTS (SELECT 1 FROM tokens WHERE rowid > (SELECT tokens_rowid FROM audit_mark)) AS n`,
      )
      .one().n;
    const sweep = left > 0 ? now + SWEEP_MS : null;
    let at = nextEvent !== null && (sweep === null || nextEvent < sweep) ? Math.max(nextEvent, now + 100) : sweep;
    if (auditWaits > 0 && (at === null || now + this.auditFlushMs < at)) at = now + this.auditFlushMs;
    this.flushArmed = auditWaits > 0;
    if (at !== null) {
      this.sweepArmed = true;
      void this.ctx.storage.setAlarm(at).catch(() => {
        this.sweepArmed = false;
      });
    }
  }
}

/** When a row of each table written in expiry order has passed (a redeemed code's is its token's). */
const PASSES_AT = { codes: "purge_at", tokens: "expires_at" } as const;

/**
 * Deletes a table's rows that have passed, in the order they were written: every row before the
 * oldest that still lives. No index and no scan of the live rows (they are most of an object's
 * codes and tokens): the rows are read from the oldest, as far as the first live one, then deleted
 * by rowid range. A row that has passed waits for the live ones written before it, at most the
 * longest life a row of the table is given; reads check expiry themselves, so a row waiting here
 * is never taken. A function of the object's SQL, not a method: nothing outside the object calls
 * it. Returns the rows read (tested: not the live ones).
 */
export function sweepInOrder(sql: SqlStorage, table: keyof typeof PASSES_AT, now: number): number {
  const until = PASSES_AT[table];
  return sql.exec(
    `DELETE FROM ${table} WHERE rowid < coalesce(
       (SELECT rowid FROM ${table} WHERE ${until} > ? ORDER BY rowid LIMIT 1),
       (SELECT max(rowid) + 1 FROM ${table}))`,
    now,
  ).rowsRead;
}

/**
 * Deletes the entries and counters that have passed, found by the index of their expiry (their
 * rows are rewritten with new lives, so write order says nothing): it reads the rows it deletes,
 * not the sign-ins still under way. Returns the rows read (tested).
 */
export function sweepByExpiry(sql: SqlStorage, now: number): number {
  return (
    sql.exec("DELETE FROM entries WHERE expires_at <= ?", now).rowsRead +
    sql.exec("DELETE FROM counters WHERE window_end <= ?", now).rowsRead
  );
}

/** Columns added after the first release: an object created before gets them once. */
function migrate(sql: SqlStorage): void {
  const columns = new Set(
    sql
      .exec<{ name: string }>("PRAGMA table_info(tokens)")
      .toArray()
      .map((c) => c.name),
  );
  if (!columns.has("plid")) sql.exec("ALTER TABLE tokens ADD COLUMN plid TEXT");
  if (!columns.has("issued_at")) sql.exec("ALTER TABLE tokens ADD COLUMN issued_at INTEGER NOT NULL DEFAULT 0");
  if (!columns.has("secret_id")) sql.exec("ALTER TABLE tokens ADD COLUMN secret_id TEXT");
  if (!columns.has("first_key")) sql.exec("ALTER TABLE tokens ADD COLUMN first_key TEXT");
  if (!columns.has("client_id")) sql.exec("ALTER TABLE tokens ADD COLUMN client_id TEXT");
  // the audit counts tokens above the mark: the rows an object holds when the count begins were
  // audited one by one before
  sql.exec("INSERT OR IGNORE INTO audit_mark (id, tokens_rowid) SELECT 1, coalesce(max(rowid), 0) FROM tokens");
  // the audit events' sequence number (`<object>-<seq>` ids, audit-archive.ts): it never goes back,
  // where the outbox's own ids start again once it is empty
  const markColumns = sql
    .exec<{ name: string }>("PRAGMA table_info(audit_mark)")
    .toArray()
    .map((c) => c.name);
  if (!markColumns.includes("audit_seq"))
    sql.exec("ALTER TABLE audit_mark ADD COLUMN audit_seq INTEGER NOT NULL DEFAULT 0");
  const codeColumns = new Set(
    sql
      .exec<{ name: string }>("PRAGMA table_info(codes)")
      .toArray()
      .map((c) => c.name),
  );
  if (!codeColumns.has("plid")) sql.exec("ALTER TABLE codes ADD COLUMN plid TEXT");
  // codes.issued_at is no longer written or read: an ended plid is refused whatever the issue
  // time. tokens.issued_at is the redemption's time (the audit counts it).
  if (!codeColumns.has("issued_at")) sql.exec("ALTER TABLE codes ADD COLUMN issued_at INTEGER NOT NULL DEFAULT 0");
  if (!codeColumns.has("secret_id")) sql.exec("ALTER TABLE codes ADD COLUMN secret_id TEXT");
  if (!codeColumns.has("first_key")) sql.exec("ALTER TABLE codes ADD COLUMN first_key TEXT");
  // A code's redemption (used_at set once) stores its token in the same statement: the code's
  // grant, with the secret that authenticated the exchange, the key of its first report, and its
  // client and time, which are the redemption's audit record. Objects made before hold a trigger
  // writing one audit row per redemption: it is replaced once.
  const trigger = sql
    .exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'code_redeemed'")
    .toArray()[0];
  if (trigger && !trigger.sql.includes("NEW.client_id)")) sql.exec("DROP TRIGGER code_redeemed");
  sql.exec(`CREATE TRIGGER IF NOT EXISTS code_redeemed AFTER UPDATE OF used_at ON codes
    WHEN OLD.used_at IS NULL AND NEW.used_at IS NOT NULL
    BEGIN
      INSERT INTO tokens (hash, grant_json, expires_at, plid, issued_at, secret_id, first_key, client_id)
        VALUES (NEW.token_hash, NEW.grant_json, NEW.purge_at, NEW.plid, NEW.used_at, NEW.secret_id, NEW.first_key, NEW.client_id);
    END`);
}

/**
 * JSON with every character past ASCII escaped (`\uXXXX`): the same value once parsed, but a
 * one-byte string from SQLite through the RPC to `JSON.parse`, each of which handles a Hangul name
 * in a two-byte string at about twice the cost (docs/benchmarks.md).
 */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Why a request may not present this code at all (client, redirect, PKCE), or null. */
function presenterRefusal(
  row: { client_id: string; challenge: string | null },
  grant: CodeGrant,
  r: RedeemRequest,
): RedeemFailure | null {
  if (row.client_id !== r.clientId) return "foreign_client";
  if (r.redirectUri !== null && r.redirectUri !== grant.redirectUri) return "redirect_mismatch";
  if (row.challenge !== null && r.verifierChallenge === null) return "pkce_missing";
  if (row.challenge !== null && row.challenge !== r.verifierChallenge) return "pkce_mismatch";
  if (row.challenge === null && r.verifierChallenge !== null) return "pkce_unexpected";
  return null;
}

type OneTimeEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/** Each shard's object id, by shard number (`shard-N` hashed once per isolate). */
const idCache: DurableObjectId[] = [];

function stubAt(env: OneTimeEnv, shard: number): DurableObjectStub<OneTimeStore> {
  const id = (idCache[shard] ??= env.ONE_TIME.idFromName(`shard-${shard}`));
  return env.ONE_TIME.get(id);
}

/** The shard of a random base64url value: its first character (uniform), masked to the shard count. */
export function shardOf(value: string, shards: number): number {
  const i = B64URL_ALPHABET.indexOf(value.charAt(0));
  return i < 0 ? 0 : i & (shards - 1);
}

/**
 * `value` (random base64url) with its first character changed so that it lives in `shard`; only
 * the low bits of that character change, so log2(shards) of its bits are spent.
 */
export function inShard(value: string, shard: number, shards: number): string {
  const i = B64URL_ALPHABET.indexOf(value.charAt(0));
  return B64URL_ALPHABET.charAt((i & ~(shards - 1)) | shard) + value.slice(1);
}

/**
 * The shard of a plid: every code and token of one plid lives there, with its revocation and its
 * automatic-login first report, so ending a plid is one call. A UUID v4's last byte is random.
 */
export function plidShard(plid: string, shards: number): number {
  const n = parseInt(plid.slice(-2), 16);
  return Number.isNaN(n) ? 0 : n & (shards - 1);
}

/** The object of one shard (the admin API lists every object's undelivered events). */
export function storeAt(env: OneTimeEnv, shard: number): DurableObjectStub<OneTimeStore> {
  return stubAt(env, shard);
}

/** The object holding a plid's codes, tokens and revocation. */
export function storeForPlid(env: OneTimeEnv, plid: string, shards: number): DurableObjectStub<OneTimeStore> {
  return stubAt(env, plidShard(plid, shards));
}

/** The object holding a random base64url value (code, token, transaction id). */
export function storeFor(env: OneTimeEnv, value: string, shards: number): DurableObjectStub<OneTimeStore> {
  return stubAt(env, shardOf(value, shards));
}
