// The one-time store: a SQLite-backed Durable Object holding authorization codes, access tokens,
// sign-in transactions and counters (docs/storage.md "Durable Object OneTimeStore",
// docs/architecture.md §6). This file is its RPC surface: each method hands its call to the module
// of the tables it touches (tables/), or to the sign-in state machine (signin-store.ts). Every
// method is synchronous SQL with no await, so each call is atomic: two concurrent redemptions of one
// code cannot both succeed. Callers hash before calling (WebCrypto is async and would open the
// input gate). Which object holds what: keys.ts, by whose rules `storeFor` (below) finds it.
//
// What the object's alarm does, and where its audit outbox is written, reach beyond its tables (the
// directory, D1, the network, R2): the class takes them as handlers, which the module exporting it
// to the workers wires to the flows (store/objects.ts).

import { DurableObject } from "cloudflare:workers";
import { auditConfig, type AuditVars } from "../config";
import { objectName, shardOf } from "./keys";
import { offerText, takeText, untakeText } from "./texts";
import { Schedule } from "./schedule";
import { createTables, holdsAnything } from "./tables/schema";
import { Entries, type Count } from "./tables/entries";
import { Codes, redeemText, type CodeGrant, type RedeemArgs, type RedeemResult, type TokenRead } from "./tables/codes";
import { EndedPlids, type PendingEvent, type UndeliveredEvent } from "./tables/ended-plids";
import { AuditOutbox, type AuditRecord, type OutboxRow } from "./tables/audit-outbox";
import {
  SigninMachine,
  type GatedVerifyRequest,
  type Lang,
  type NumberLimits,
  type OpenRequest,
  type OpenResult,
  type Refusal,
  type ResendRequest,
  type ResendResult,
  type SigninRecord,
  type Step,
  type StepGate,
  type Unsettled,
  type VerifyRequest,
  type VerifyResult,
} from "./signin-store";

/** The object's tables as its alarm reaches them. */
export interface OneTimeRoom {
  readonly codes: Codes;
  readonly entries: Entries;
  readonly ended: EndedPlids;
  readonly audit: AuditOutbox;
  readonly schedule: Schedule;
  /** Whether the object holds anything (the sweep goes on while it does). */
  holdsAnything(): boolean;
}

/** What the object does beyond its tables, given by the module that exports it (store/objects.ts). */
export interface OneTimeHandlers {
  /** The alarm: due events sent, the audit outbox written, what expired swept, the next alarm set. */
  alarm(room: OneTimeRoom): Promise<void>;
  /** Writes a batch of the audit outbox to the trail under the object's name (`bucket`: the hosting worker's AUDIT binding). */
  archive(bucket: R2Bucket | undefined, object: string, firstSeq: number, rows: OutboxRow[]): Promise<void>;
}

/** A worker's binding of the store. */
export type OneTimeEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

export class OneTimeStore extends DurableObject {
  /** The audit trail's bucket (the hosting worker's AUDIT binding), read at each write. */
  private bucket: R2Bucket | undefined;
  private readonly room: OneTimeRoom;
  private readonly codes: Codes;
  private readonly entries: Entries;
  private readonly ended: EndedPlids;
  private readonly audit: AuditOutbox;
  private readonly signin: SigninMachine;

  constructor(
    ctx: DurableObjectState,
    env: unknown,
    private readonly handlers: OneTimeHandlers,
  ) {
    super(ctx, env as never);
    const sql = ctx.storage.sql;
    createTables(sql);
    this.bucket = (env as { AUDIT?: R2Bucket }).AUDIT;
    const schedule = new Schedule(ctx.storage, auditConfig(env as AuditVars).flushMs);
    this.entries = new Entries(sql, schedule);
    this.ended = new EndedPlids(sql, schedule);
    this.audit = new AuditOutbox(sql, schedule, (rows, firstSeq) =>
      this.handlers.archive(this.bucket, this.audit.label(ctx.id.name, ctx.id.toString()), firstSeq, rows),
    );
    this.codes = new Codes(sql, this.entries, this.ended, this.audit, schedule);
    const entries = this.entries;
    this.signin = new SigninMachine(
      {
        get: (key) => entries.get(key),
        put: (key, value, ttlMs) => entries.put(key, value, ttlMs),
        delete: (key) => entries.delete(key),
      },
      {
        hit: (k, w, by) => entries.hit(k, w, by),
        peek: (...keys) => entries.peek(keys),
        clear: (...keys) => entries.clear(keys),
      },
    );
    this.room = {
      codes: this.codes,
      entries: this.entries,
      ended: this.ended,
      audit: this.audit,
      schedule,
      holdsAnything: () => holdsAnything(sql),
    };
  }

  // ---- codes and tokens (tables/codes.ts)

  /**
   * Stores a new authorization code (by hash) for `ttlMs`. With `firstReport` (an automatic-login
   * opt-in), the grant's first report becomes pending, in this same object: the plid's. The
   * sign-in's `audit` events ride along: any object's outbox will do, and this call is made anyway.
   */
  putCode(
    codeHash: string,
    grant: CodeGrant,
    challenge: string | null,
    ttlMs: number,
    firstReport?: { key: string; ttlMs: number },
    audit?: readonly AuditRecord[],
  ): void {
    this.codes.put(codeHash, grant, challenge, ttlMs, firstReport, audit);
  }

  /**
   * Redeems a code atomically and stores the access token issued from it. A foreign client or a
   * PKCE failure does not consume the code (docs/architecture.md §4.7); a reused code revokes the
   * token issued from it (RFC 6749 §4.1.2).
   */
  redeemCode(...args: RedeemArgs): RedeemResult {
    return this.codes.redeem(...args);
  }

  /**
   * `redeemCode`, answered as one string (tables/codes.ts `redeemText`): what the token route calls.
   * `redeemCode` stays for a token worker of the release before, which a deploy runs beside this
   * object's worker for a while (the object's worker is deployed first).
   */
  redeemCodeText(...args: RedeemArgs): string {
    return redeemText(this.codes.redeem(...args));
  }

  /**
   * One read of an access token: null when unknown, expired, revoked, its plid ended, or already
   * read `maxReads` times (the reference allows one `/v1/user/me` read per token). Under an
   * automatic-login grant, the read takes the grant's pending first report, in the same call.
   */
  readToken(tokenHash: string, maxReads: number): TokenRead | null {
    return this.codes.read(tokenHash, maxReads);
  }

  /** One OpenID Connect UserInfo read of an access token, counted apart (docs/oidc.md "UserInfo"). */
  readUserInfo(tokenHash: string, maxReads: number): [grantJson: string, secretId: string] | null {
    return this.codes.readInfo(tokenHash, maxReads);
  }

  // ---- the audit outbox (tables/audit-outbox.ts)

  /** Appends audit events of the service's workers (one-time/audit.ts), written to R2 with this object's own. */
  appendAudit(records: readonly AuditRecord[]): void {
    this.audit.append(records);
  }

  /**
   * Appends each audit event whose key (an entry, kept `ttlMs`) no call has written yet, and marks
   * it, in one step: a step run again (a job after a kill before it was marked done, or twice at
   * once) audits nothing twice (one-time/audit.ts `auditOnce`). Returns how many it appended.
   */
  appendAuditOnce(keyed: readonly (readonly [key: string, record: AuditRecord])[], ttlMs: number): number {
    const fresh: AuditRecord[] = [];
    for (const [key, record] of keyed) {
      if (this.entries.get(key) !== null) continue; // written already (or earlier in this call)
      this.entries.put(key, "1", ttlMs);
      fresh.push(record);
    }
    if (fresh.length > 0) this.audit.append(fresh); // none new: no outbox write, no flush to arm
    return fresh.length;
  }

  /** Writes the audit outbox to R2 (store/audit-archive.ts); returns how many rows moved. */
  flushAudit(): Promise<number> {
    return this.audit.flush();
  }

  // ---- ended plids and their events (tables/ended-plids.ts)

  /**
   * Ends plids: none of their codes redeems and none of their tokens reads from now on, whenever
   * issued. Kept for `retainMs` (longer than a code and its token can live). `events` for the apps
   * are recorded in this same step, and sent by this object's alarm (docs/events.md).
   */
  revokePlids(plids: readonly string[], retainMs: number, events: readonly PendingEvent[] = []): void {
    this.ended.end(plids, retainMs, events);
  }

  /** The app's events held while it was paused go now (its Shared Signals stream enabled again). */
  wakeEvents(clientId: string): number {
    return this.ended.wake(clientId);
  }

  /** The events not yet delivered (never the plid: the operator sees client, reason and tries). */
  pendingEvents(): UndeliveredEvent[] {
    return this.ended.undelivered();
  }

  // ---- entries and counters (tables/entries.ts)

  /** Stores a value under `key` for `ttlMs`, replacing any earlier value. */
  putEntry(key: string, value: string, ttlMs: number): void {
    this.entries.put(key, value, ttlMs);
  }

  /** The live value under `key`, or null. */
  getEntry(key: string): string | null {
    return this.entries.get(key);
  }

  /** Removes the value under `key`; true when there was a live one (exactly one caller wins). */
  takeEntry(key: string): boolean {
    return this.entries.take(key);
  }

  /** Replaces the live value under `key` only while it is `expected` (exactly one of concurrent swappers wins). */
  swapEntry(key: string, expected: string, value: string): boolean {
    return this.entries.swap(key, expected, value);
  }

  /** Fixed-window counter: adds `by` to `key`; the new count and when the window ends. */
  hit(key: string, windowMs: number, by = 1): Count {
    return this.entries.hit(key, windowMs, by);
  }

  /** The live count of `key` (0 when absent or its window ended). */
  peek(key: string): Count {
    return this.entries.peek([key])[0]!;
  }

  /** Removes a counter (a success resets a consecutive-failure count). */
  clear(key: string): void {
    this.entries.clear([key]);
  }

  // ---- a text's phrase (texts.ts; docs/signin.md "A text the person sends")

  offerText(key: string, value: string, ttlMs: number, phoneKey: string, limits: NumberLimits): Refusal | null {
    return offerText(this.entries, key, value, ttlMs, phoneKey, limits);
  }

  takeText(key: string, expected: string, value: string, phoneKey: string, limits: NumberLimits): boolean {
    return takeText(this.entries, key, expected, value, phoneKey, limits);
  }

  untakeText(key: string, taken: string, value: string, phoneKey: string, limits: NumberLimits): void {
    untakeText(this.entries, key, taken, value, phoneKey, limits);
  }

  // ---- sign-in transactions (signin-store.ts; docs/signin.md "State machine"): one call per step

  signinCreate(key: string, record: SigninRecord): void {
    this.signin.create(key, record);
  }

  signinGet(key: string): SigninRecord | null {
    return this.signin.get(key);
  }

  /** A transaction's record read with one count of a limit here (a first page's step 1 and its network's limit). */
  signinGetHit(key: string, counter: string, windowMs: number): { record: SigninRecord | null; hit: Count } {
    return { record: this.signin.get(key), hit: this.entries.hit(counter, windowMs) };
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

  // ---- the alarm (store/flows/one-time-alarm.ts, through the handlers)

  override alarm(): Promise<void> {
    return this.handlers.alarm(this.room);
  }
}

/** Each shard's object id, by shard number (hashed once per isolate). */
const idCache: DurableObjectId[] = [];

function stubAt(env: OneTimeEnv, shard: number): DurableObjectStub<OneTimeStore> {
  const id = (idCache[shard] ??= env.ONE_TIME.idFromName(objectName(shard)));
  return env.ONE_TIME.get(id);
}

/** The object of one shard (the admin API lists every object's undelivered events). */
export function storeAt(env: OneTimeEnv, shard: number): DurableObjectStub<OneTimeStore> {
  return stubAt(env, shard);
}

/** The object holding a random base64url value: a code, a token, a transaction id (keys.ts `shardOf`). */
export function storeFor(env: OneTimeEnv, value: string, shards: number): DurableObjectStub<OneTimeStore> {
  return stubAt(env, shardOf(value, shards));
}
