// Authorization codes and access tokens (tables `codes`, `tokens`; docs/storage.md "Durable Object
// OneTimeStore", "Snapshots"): a code by its hash with the grant it stands for, and the token issued
// from it, which carries what /v1/user/me needs so that read touches no D1.
//
// Invariants:
// - a code is redeemed at most once: the good redemption is one conditional statement (unused,
//   unexpired, this client's, this PKCE challenge, its plid not ended), and the `code_redeemed`
//   trigger stores the token in that same statement;
// - who may present a code (client, redirect URI, PKCE) is checked before anything else, used or
//   not: a refused presenter burns no good code and revokes nothing (RFC 9700 §4.5);
// - the rightful presenter's replay revokes the token issued from the code (RFC 6749 §4.1.2): a
//   used code is kept until its token expires (`purge_at`);
// - a token reads at most `maxReads` times, never once revoked, expired or its plid ended
//   (ended-plids.ts), and a read takes the grant's pending first report (entries.ts) in the same
//   call;
// - rows are swept in the order they were written, and every read checks expiry itself, so a row
//   the sweep has not reached is never taken.

import { signInClaims, type CodeGrant } from "./grant";
import { firstReportKey } from "../keys";
import type { Schedule } from "../schedule";
import type { AuditOutbox, AuditRecord } from "./audit-outbox";
import type { EndedPlids } from "./ended-plids";
import type { Entries } from "./entries";

export type { CodeGrant, SubscriberSnapshot } from "./grant";

/** An access token's record: the code's grant plus which client secret authenticated the exchange. */
export interface TokenGrant extends CodeGrant {
  /** `secretFingerprint` of that secret: user/me encrypts with it, whatever rotations came since. */
  secretId: string;
}

/**
 * One read of an access token, as positional values (the RPC carries them for less than an
 * object's keys): its grant as stored (JSON of a `CodeGrant`: a string crosses the RPC for a
 * fraction of what the object's structured clone costs; user-me parses it), the fingerprint
 * of the secret that authenticated the exchange, and whether it takes its automatic-login first
 * report.
 */
export type TokenRead = [grantJson: string, secretId: string, firstReport: boolean];

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
/**
 * `idClaims`: JSON of the claims the code's sign-in fixed for its id_token (grant.ts
 * `signInClaims`), when the redemption asked for them (an OpenID Connect client's) and the code is
 * of an `openid` request.
 */
export type RedeemResult = { ok: true; idClaims?: string } | { ok: false; reason: RedeemFailure };

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
  /** Answer a good redemption with its id_token's claims (an OpenID Connect client's exchange). */
  withIdClaims?: boolean,
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
  /** Answer a good redemption with its id_token's claims. */
  withIdClaims?: boolean;
}

/** When a row of each table written in expiry order has passed (a redeemed code's is its token's). */
const PASSES_AT = { codes: "purge_at", tokens: "expires_at" } as const;

export class Codes {
  constructor(
    private readonly sql: SqlStorage,
    private readonly entries: Entries,
    private readonly ended: EndedPlids,
    private readonly audit: AuditOutbox,
    private readonly schedule: Schedule,
  ) {}

  /**
   * Stores a new code (by hash) for `ttlMs`; with `firstReport`, the grant's first report becomes
   * pending in the same step, and the sign-in's `audit` events go into the outbox with it.
   */
  put(
    codeHash: string,
    grant: CodeGrant,
    challenge: string | null,
    ttlMs: number,
    firstReport: { key: string; ttlMs: number } | undefined,
    audit: readonly AuditRecord[] | undefined,
  ): void {
    const now = Date.now();
    if (firstReport) this.entries.put(firstReport.key, "1", firstReport.ttlMs);
    this.sql.exec(
      `INSERT INTO codes (hash, client_id, grant_json, challenge, expires_at, purge_at, plid, first_key, id_claims)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      codeHash,
      grant.clientId,
      asciiJson(grant),
      challenge,
      now + ttlMs,
      now + ttlMs,
      grant.plid,
      grant.autoLogin ? firstReportKey(grant.autoLogin.deviceHash, grant.clientId) : "",
      idClaimsOf(grant),
    );
    if (audit?.length) this.audit.append(audit);
    this.schedule.sweepSoon();
  }

  /**
   * Redeems a code and stores the token issued from it, audited in the same synchronous step (a
   * good redemption by its token row, counted at the flush; a refusal by an outbox row).
   */
  redeem(
    codeHash: string,
    clientId: string,
    tokenHash: string,
    secretId: string,
    tokenTtlMs: number,
    verifierChallenge: string | null,
    redirectUri: string | null,
    withIdClaims = false,
  ): RedeemResult {
    const r: RedeemRequest = {
      codeHash,
      clientId,
      tokenHash,
      secretId,
      tokenTtlMs,
      verifierChallenge,
      redirectUri,
      withIdClaims,
    };
    const result = this.take(r);
    if (!result.ok) this.audit.refused(r.clientId, result.reason);
    else this.audit.redeemed();
    return result;
  }

  private take(r: RedeemRequest): RedeemResult {
    const now = Date.now();
    const tokenExpires = now + r.tokenTtlMs;
    // The good redemption is one statement: the conditional UPDATE takes the code only if it is
    // unused, unexpired, this client's, with this PKCE challenge (`IS`: both absent, or equal) and
    // its plid (stored with it; a code from before that column takes the path below) not ended;
    // the code_redeemed trigger then stores the token. Anything else (or a redirect_uri to
    // compare) takes the path below, which names the reason; both run inside this one call.
    if (r.redirectUri === null) {
      const won = this.sql
        .exec(
          `UPDATE codes SET used_at = ?, token_hash = ?, purge_at = ?, secret_id = ?
           WHERE hash = ? AND used_at IS NULL AND expires_at > ? AND client_id = ? AND challenge IS ?
             AND plid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM revoked_plids p WHERE p.plid = codes.plid)
           RETURNING ${r.withIdClaims ? "id_claims" : "1"} AS g`,
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
      if (won.length === 1) {
        if (!r.withIdClaims) return { ok: true };
        const stored = won[0]!.g as string | null;
        return claimsAnswer(stored ?? idClaimsOf(JSON.parse(this.grantJson(r.codeHash)) as CodeGrant));
      }
    }
    const row = this.sql
      .exec<{
        client_id: string;
        grant_json: string;
        id_claims: string | null;
        challenge: string | null;
        expires_at: number;
        used_at: number | null;
        token_hash: string | null;
      }>(
        "SELECT client_id, grant_json, id_claims, challenge, expires_at, used_at, token_hash FROM codes WHERE hash = ?",
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
    if (this.ended.isEnded(grant.plid)) return { ok: false, reason: "revoked" };
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
    return r.withIdClaims ? claimsAnswer(row.id_claims ?? idClaimsOf(grant)) : { ok: true };
  }

  /** A code's grant as stored. */
  private grantJson(codeHash: string): string {
    return this.sql.exec<{ g: string }>("SELECT grant_json AS g FROM codes WHERE hash = ?", codeHash).one().g;
  }

  /**
   * One read of an access token: null when unknown, expired, revoked, its plid ended, or already
   * read `maxReads` times. Under an automatic-login grant, the read takes the grant's pending first
   * report.
   */
  read(tokenHash: string, maxReads: number): TokenRead | null {
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
    const firstReport = firstKey !== "" && this.entries.takeAt(firstKey, now);
    return [row.grant_json, secretId, firstReport];
  }

  /**
   * One OpenID Connect UserInfo read of an access token (docs/oidc.md "UserInfo"): its grant and
   * secret fingerprint, or null when unknown, expired, revoked, its plid ended, not issued for an
   * OpenID Connect request, or already read `maxReads` times this way. Counted apart from the
   * /v1/user/me reads, and never takes an automatic login's first report (that is /v1/user/me's).
   */
  readInfo(tokenHash: string, maxReads: number): [grantJson: string, secretId: string] | null {
    const row = this.sql
      .exec<{ grant_json: string; secret_id: string | null }>(
        `UPDATE tokens SET info_reads = info_reads + 1
         WHERE hash = ? AND revoked = 0 AND expires_at > ? AND info_reads < ?
           AND json_extract(grant_json, '$.oidc') IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM revoked_plids r WHERE r.plid = tokens.plid)
         RETURNING grant_json, secret_id`,
        tokenHash,
        Date.now(),
        maxReads,
      )
      .toArray()[0];
    if (!row) return null;
    return [row.grant_json, row.secret_id ?? (JSON.parse(row.grant_json) as TokenGrant).secretId];
  }

  /**
   * Deletes what has expired, in write order; every token row is counted into the audit before any
   * is deleted (a flush under way counted at its start), and the mark lowered after.
   */
  sweep(now: number): void {
    sweepInOrder(this.sql, "codes", now);
    this.audit.countRedeemed();
    sweepInOrder(this.sql, "tokens", now);
    this.audit.lowerMark();
  }
}

/**
 * Deletes a table's rows that have passed, in the order they were written: every row before the
 * oldest that still lives. No index and no scan of the live rows (they are most of an object's
 * codes and tokens): the rows are read from the oldest, as far as the first live one, then deleted
 * by rowid range. A row that has passed waits for the live ones written before it, at most the
 * longest life a row of the table is given; reads check expiry themselves, so a row waiting here
 * is never taken. Returns the rows read (tested: not the live ones).
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

/**
 * What a code keeps of its id_token's claims (`codes.id_claims`): JSON of the claims its sign-in
 * fixed for an OpenID Connect request's code, "" for any other. NULL (a code kept before the
 * column) is read as the grant gives it.
 */
export function idClaimsOf(grant: CodeGrant): string {
  return grant.oidc ? asciiJson(signInClaims(grant, grant.oidc)) : "";
}

/**
 * A redemption's answer as one string, as the token route receives it (`OneTimeStore.redeemCodeText`):
 * "" a good redemption without claims, the claims' JSON (`{`…) a good one with them, else the
 * refusal's reason. The runtime carries a string across the RPC for 10–15 µs a call less than an
 * object or an array (`investigations/rpc-answer.mjs`).
 */
export function redeemText(r: RedeemResult): string {
  return r.ok ? (r.idClaims ?? "") : r.reason;
}

/** The answer `redeemText` wrote. */
export function redeemResultOf(text: string): RedeemResult {
  if (text === "") return { ok: true };
  return text.charCodeAt(0) === 123 /* { */
    ? { ok: true, idClaims: text }
    : { ok: false, reason: text as RedeemFailure };
}

/** A good redemption's answer with a code's `idClaimsOf`: none for a code of a request without `openid`. */
function claimsAnswer(idClaims: string): RedeemResult {
  return idClaims === "" ? { ok: true } : { ok: true, idClaims };
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
