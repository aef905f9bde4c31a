// The kit's optional Durable Object store (docs/rp-kit.md "Storage"): what KV cannot hold exactly.
// A login's state and its redemption are one row, so the callback's check of the state, its end and
// the claim of its one code exchange are one atomic call; a duplicate callback finds the claim at
// once (no write left to settle, no read-back) and follows its outcome. A plid's session index and
// its end are rows too: a login adds its session and reads the plid's end in one call, and an end
// records itself and lists the sessions in one. An event's `jti` is claimed in one call, so of
// concurrent copies of one event exactly one is acted on. Sessions and sealed identities stay in
// KV (kv.ts), which every /auth/me reads at the edge.
//
// Here are the object (`PhoneLoginStore`), the rule that picks one of its 64 objects (`storeAt`) and
// the kit's LoginStore over it (`DurableLoginStore`, storage.ts). Bound as RP_STORE (the route
// workers, the all-in-one) or given to `createPhoneLogin({ store })`; without it the kit keeps all
// of this in KV, best effort (store.ts). Rows are found by hashes only (of the state, the code, the
// plid, the session id); the pending login holds what KV's state held. Objects are picked by the
// hash's first character: 64 of them.

import { DurableObject } from "cloudflare:workers";
import { sha256 } from "./core/crypto.js";
import { deleteKey, forgetIdentity, KEY, putSession } from "./kv.js";
import {
  bindingHashOf,
  ENDED_TTL_SECONDS,
  MAX_ENDED_SESSIONS,
  NOT_YOURS,
  POLL_MS,
  REDEMPTION_TTL_SECONDS,
  type CallbackLogin,
  type LoginStore,
  type PendingLogin,
  type RedeemOutcome,
  type Redeemed,
  type SessionRecord,
  type StateRefusal,
} from "./storage.js";

/** How a request's claim of a login or redemption went. */
export type ClaimResult =
  /** This request claimed it: it alone does the work, then `settle`s. `pending`: the state's login. */
  | { kind: "first"; pending?: string }
  /** Claimed before by a request with the same proof: follow its outcome (JSON), null while under way. */
  | { kind: "duplicate"; returnTo: string | null; outcome: string | null }
  /** No such state (never made, expired, or claimed by another browser), or a claim with another proof. */
  | { kind: "refused"; reason: "unknown" | "expired" | "mismatch" | "foreign" };

/** Equal strings of hash digests, compared without an early exit. */
function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return d === 0;
}

/** How often an object deletes its expired rows (an alarm, set while it holds any). */
const SWEEP_MS = 10 * 60 * 1000;

export class PhoneLoginStore extends DurableObject<unknown> {
  private sweepSet = false;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    // `pending`: the state's login (JSON) until it is claimed; `proof`, `return_to`: the claim;
    // `outcome`: the claimer's result (JSON), for its duplicates.
    sql.exec(`CREATE TABLE IF NOT EXISTS logins (
      key TEXT PRIMARY KEY, pending TEXT, proof TEXT, return_to TEXT, outcome TEXT, expires INTEGER NOT NULL
    ) WITHOUT ROWID`);
    sql.exec(`CREATE TABLE IF NOT EXISTS plid_sessions (
      plid TEXT NOT NULL, session TEXT NOT NULL, expires INTEGER NOT NULL, PRIMARY KEY (plid, session)
    ) WITHOUT ROWID`);
    sql.exec(
      `CREATE TABLE IF NOT EXISTS plid_ends (plid TEXT PRIMARY KEY, at INTEGER NOT NULL, expires INTEGER NOT NULL) WITHOUT ROWID`,
    );
    sql.exec(`CREATE TABLE IF NOT EXISTS event_jtis (jti TEXT PRIMARY KEY, expires INTEGER NOT NULL) WITHOUT ROWID`);
  }

  /** Deletes the expired rows, once per SWEEP_MS while any are kept. */
  override async alarm(): Promise<void> {
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    for (const table of ["logins", "plid_sessions", "plid_ends", "event_jtis"])
      sql.exec(`DELETE FROM ${table} WHERE expires <= ?`, now);
    // whether any row is left: one row read, not a count of them all
    const left = sql
      .exec<{ n: number }>(
        `SELECT EXISTS (SELECT 1 FROM logins) OR EXISTS (SELECT 1 FROM plid_sessions) OR EXISTS (SELECT 1 FROM plid_ends)
           OR EXISTS (SELECT 1 FROM event_jtis) AS n`,
      )
      .one().n;
    this.sweepSet = left !== 0;
    if (this.sweepSet) await this.ctx.storage.setAlarm(now + SWEEP_MS);
  }

  private async sweepLater(): Promise<void> {
    if (this.sweepSet) return;
    this.sweepSet = true;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + SWEEP_MS);
  }

  /** A new login's state (/auth/login): `key` the state's hash, `pending` its PendingLogin JSON. */
  async putState(key: string, pending: string, expires: number): Promise<void> {
    this.ctx.storage.sql.exec(
      "INSERT OR REPLACE INTO logins (key, pending, expires) VALUES (?, ?, ?)",
      key,
      pending,
      expires,
    );
    await this.sweepLater();
  }

  /**
   * A callback's claim of its login, in one step: the state exists, is not older than `createdAfter`
   * and is bound to `bindingHash` (the browser's cookie, hashed; null when it sent none); then it is
   * ended and its one code exchange claimed by this request, kept until `claimExpires` for the
   * duplicates. A state claimed already answers its duplicates (the same binding) with the claim.
   * A refused callback changes nothing.
   */
  claimState(key: string, bindingHash: string | null, createdAfter: number, claimExpires: number): ClaimResult {
    const sql = this.ctx.storage.sql;
    const row = sql
      .exec<{ pending: string | null; proof: string | null; return_to: string | null; outcome: string | null }>(
        "SELECT pending, proof, return_to, outcome FROM logins WHERE key = ? AND expires > ?",
        key,
        Date.now(),
      )
      .toArray()[0];
    if (!row) return { kind: "refused", reason: "unknown" };
    if (row.pending === null) {
      if (bindingHash === null || row.proof === null || !sameDigest(bindingHash, row.proof))
        return { kind: "refused", reason: "unknown" };
      return { kind: "duplicate", returnTo: row.return_to, outcome: row.outcome };
    }
    const pending = JSON.parse(row.pending) as { bindingHash: string; created: number; returnTo: string };
    if (pending.created < createdAfter) return { kind: "refused", reason: "expired" };
    if (bindingHash === null || !sameDigest(bindingHash, pending.bindingHash))
      return { kind: "refused", reason: "mismatch" };
    sql.exec(
      "UPDATE logins SET pending = NULL, proof = ?, return_to = ?, expires = ? WHERE key = ?",
      pending.bindingHash,
      pending.returnTo,
      claimExpires,
      key,
    );
    return { kind: "first", pending: row.pending };
  }

  /**
   * A redemption with no state (a native app's /auth/token: `key` a hash of its code): the first
   * request claims it with its `proof` (the verifier's hash); a later one with the same proof
   * follows it, one with another is refused.
   */
  async claim(key: string, proof: string, expires: number): Promise<ClaimResult> {
    const sql = this.ctx.storage.sql;
    const row = sql
      .exec<{ proof: string | null; return_to: string | null; outcome: string | null }>(
        "SELECT proof, return_to, outcome FROM logins WHERE key = ? AND expires > ?",
        key,
        Date.now(),
      )
      .toArray()[0];
    if (row) {
      return row.proof !== null && sameDigest(proof, row.proof)
        ? { kind: "duplicate", returnTo: row.return_to, outcome: row.outcome }
        : { kind: "refused", reason: "foreign" };
    }
    sql.exec("INSERT OR REPLACE INTO logins (key, proof, expires) VALUES (?, ?, ?)", key, proof, expires);
    await this.sweepLater();
    return { kind: "first" };
  }

  /** Ends a claimed login with nothing to follow (an error callback): later callbacks find no state. */
  forget(key: string): void {
    this.ctx.storage.sql.exec("DELETE FROM logins WHERE key = ?", key);
  }

  /** The claimer's outcome (JSON), for its duplicates. */
  settle(key: string, outcome: string): void {
    this.ctx.storage.sql.exec("UPDATE logins SET outcome = ? WHERE key = ?", outcome, key);
  }

  /** A claim's outcome: null while under way, undefined when the claim is gone (expired). */
  outcome(key: string): string | null | undefined {
    const row = this.ctx.storage.sql
      .exec<{ outcome: string | null }>("SELECT outcome FROM logins WHERE key = ? AND expires > ?", key, Date.now())
      .toArray()[0];
    return row ? row.outcome : undefined;
  }

  /**
   * A login's session in its plid's index, and the plid's end if it came at or after `startedAt`
   * (the login began before it: the caller ends the session), in one step.
   */
  async indexSession(plid: string, session: string, expires: number, startedAt: number): Promise<number | null> {
    const sql = this.ctx.storage.sql;
    sql.exec("INSERT OR REPLACE INTO plid_sessions (plid, session, expires) VALUES (?, ?, ?)", plid, session, expires);
    await this.sweepLater();
    const end = sql
      .exec<{ at: number }>("SELECT at FROM plid_ends WHERE plid = ? AND expires > ?", plid, Date.now())
      .toArray()[0];
    return end !== undefined && end.at >= startedAt ? end.at : null;
  }

  /**
   * A plid's end (a disconnect, an event), recorded at `at` unless a later one is, with up to
   * `limit` of its sessions' hashes to delete. The index keeps them, so a retry finds them again.
   */
  async endPlid(plid: string, at: number, expires: number, limit: number): Promise<string[]> {
    const sql = this.ctx.storage.sql;
    sql.exec(
      `INSERT INTO plid_ends (plid, at, expires) VALUES (?, ?, ?)
       ON CONFLICT (plid) DO UPDATE SET at = MAX(at, excluded.at), expires = MAX(expires, excluded.expires)`,
      plid,
      at,
      expires,
    );
    await this.sweepLater();
    return sql
      .exec<{ session: string }>(
        "SELECT session FROM plid_sessions WHERE plid = ? AND expires > ? LIMIT ?",
        plid,
        Date.now(),
        limit,
      )
      .toArray()
      .map((r) => r.session);
  }

  /**
   * An event's claim of its `jti` (`key`, its hash) until `expires`: true for the one request that
   * acts on the event, false while another holds it or once it was acted on (a replay).
   */
  async claimJti(key: string, expires: number): Promise<boolean> {
    const sql = this.ctx.storage.sql;
    const held = sql
      .exec<{ n: number }>("SELECT count(*) AS n FROM event_jtis WHERE jti = ? AND expires > ?", key, Date.now())
      .one().n;
    if (held > 0) return false;
    sql.exec("INSERT OR REPLACE INTO event_jtis (jti, expires) VALUES (?, ?)", key, expires);
    await this.sweepLater();
    return true;
  }

  /** Gives up a claim whose event could not be acted on: the service's retry of it is accepted. */
  releaseJti(key: string): void {
    this.ctx.storage.sql.exec("DELETE FROM event_jtis WHERE jti = ?", key);
  }
}

/** The 64 objects' ids, derived once per namespace and isolate (an id is a value; a stub is per request). */
const ids = new WeakMap<DurableObjectNamespace<PhoneLoginStore>, Map<string, DurableObjectId>>();

/** The object that holds rows of `hash` (a base64url digest): one of 64, by its first character. */
export function storeAt(ns: DurableObjectNamespace<PhoneLoginStore>, hash: string): DurableObjectStub<PhoneLoginStore> {
  let known = ids.get(ns);
  if (!known) ids.set(ns, (known = new Map()));
  const name = `rp:${hash.charAt(0)}`;
  let id = known.get(name);
  if (!id) known.set(name, (id = ns.idFromName(name)));
  return ns.get(id);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How long the store keeps a claim for its duplicates: as KV keeps one, or as long as they may wait. */
const claimExpiry = (waitMs: number) => Date.now() + Math.max(REDEMPTION_TTL_SECONDS * 1000, waitMs);

/**
 * A claim made in the store (`claimState`, `claim`) carried out: the first request does `work` and
 * settles its outcome for the duplicates; a duplicate follows that outcome until `deadline`.
 */
async function followClaim(
  stub: DurableObjectStub<PhoneLoginStore>,
  keyHash: string,
  claim: Exclude<ClaimResult, { kind: "refused" }>,
  deadline: number,
  work: () => Promise<RedeemOutcome>,
): Promise<Redeemed> {
  if (claim.kind === "duplicate") {
    let outcome = claim.outcome;
    while (outcome === null && Date.now() < deadline) {
      await sleep(POLL_MS);
      const now = await stub.outcome(keyHash);
      if (now === undefined) break;
      outcome = now;
    }
    return {
      outcome: outcome !== null ? (JSON.parse(outcome) as RedeemOutcome) : { kind: "failed", failure: "upstream" },
      first: false,
    };
  }
  let outcome: RedeemOutcome = { kind: "failed", failure: "upstream" };
  try {
    outcome = await work();
    return { outcome, first: true };
  } finally {
    // for duplicates only: a failed write leaves them to time out, never this login
    await stub.settle(keyHash, JSON.stringify(outcome)).catch(() => {});
  }
}

/** The kit's LoginStore over its Durable Object store, with sessions and identities in `kv`. */
export class DurableLoginStore implements LoginStore {
  constructor(
    private readonly ns: DurableObjectNamespace<PhoneLoginStore>,
    private readonly kv: KVNamespace,
  ) {}

  async putState(state: string, pending: PendingLogin, ttlSeconds: number): Promise<void> {
    const hash = await sha256(state);
    return storeAt(this.ns, hash).putState(hash, JSON.stringify(pending), Date.now() + ttlSeconds * 1000);
  }

  /** The state checked, ended and its exchange claimed in one call (`claimState`); a duplicate of the same browser finds the claim. */
  async claimCallback(
    stateHash: string,
    bindingCookie: string | undefined,
    stateTtlSeconds: number,
    waitMs: number,
  ): Promise<CallbackLogin | StateRefusal> {
    const bindingHash = await bindingHashOf(bindingCookie);
    const stub = storeAt(this.ns, stateHash);
    const now = Date.now();
    const result = await stub.claimState(stateHash, bindingHash, now - stateTtlSeconds * 1000, claimExpiry(waitMs));
    if (result.kind === "refused") return result.reason === "foreign" ? "unknown" : result.reason;
    const pending = result.kind === "first" ? (JSON.parse(result.pending!) as PendingLogin) : null;
    return {
      pending,
      bindingHash: bindingHash!,
      returnTo: pending ? pending.returnTo : (result.kind === "duplicate" && result.returnTo) || "/",
      // ended with nothing to follow; a duplicate leaves the claim to its first request
      cancel: () => (result.kind === "first" ? stub.forget(stateHash) : Promise.resolve()),
      redeem: (work) => followClaim(stub, stateHash, result, Date.now() + waitMs, work),
    };
  }

  async redeemCode(
    keyHash: string,
    proofHash: string,
    waitMs: number,
    work: () => Promise<RedeemOutcome>,
  ): Promise<Redeemed> {
    const stub = storeAt(this.ns, keyHash);
    const got = await stub.claim(keyHash, proofHash, claimExpiry(waitMs));
    if (got.kind === "refused") return NOT_YOURS;
    return followClaim(stub, keyHash, got, Date.now() + waitMs, work);
  }

  /** The session first, then its index entry with the read of the plid's end, in one call. */
  async createLoginSession(
    record: SessionRecord,
    ttlSeconds: number,
    id: string,
    startedAt: number,
  ): Promise<number | null> {
    const [hash, plidHash] = await Promise.all([sha256(id), sha256(record.plid)]);
    await putSession(this.kv, hash, record, ttlSeconds);
    return storeAt(this.ns, plidHash).indexSession(plidHash, hash, Date.now() + ttlSeconds * 1000, startedAt);
  }

  /** The end recorded and the sessions listed in one call, then the sessions and the identity deleted. */
  async endPlid(plid: string): Promise<number> {
    const plidHash = await sha256(plid);
    const now = Date.now();
    const stub = storeAt(this.ns, plidHash);
    const hashes = await stub.endPlid(plidHash, now, now + ENDED_TTL_SECONDS * 1000, MAX_ENDED_SESSIONS);
    await Promise.all([...hashes.map((h) => deleteKey(this.kv, KEY.session(h))), forgetIdentity(this.kv, plid)]);
    return hashes.length;
  }

  /** One call, so exactly one of concurrent copies of an event is acted on. */
  async claimJti(jti: string, ttlSeconds: number): Promise<boolean> {
    const hash = await sha256(jti);
    return storeAt(this.ns, hash).claimJti(hash, Date.now() + ttlSeconds * 1000);
  }

  /** The claim stays until it expires. */
  async jtiActedOn(): Promise<void> {}

  async releaseJti(jti: string): Promise<void> {
    const hash = await sha256(jti);
    await storeAt(this.ns, hash).releaseJti(hash);
  }
}
