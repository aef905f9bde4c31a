// One directory shard: a SQLite-backed Durable Object holding the people whose home it is, with
// their links and automatic-login grants, and the number and ci index entries that hash to it
// (docs/storage.md "Directory shards"; which key goes where: keys.ts). This file is its RPC
// surface: each method hands its call to the module of the tables it touches (tables/). Every
// method is synchronous SQL with no await, so each call is one atomic step. A change that spans
// shards (an import moving a person, a removal) is a sequence of such steps, each idempotent; the
// step that starts it records the rest in `jobs` in the same transaction, and the alarm finishes
// what a caller that died left: the class takes the alarm as a handler, which the module exporting
// it to the workers wires to the flows (store/objects.ts, store/flows/directory-jobs.ts).

import { DurableObject } from "cloudflare:workers";
import { shardName } from "./keys";
import type { SimSignal } from "./risk";
import { createTables } from "./tables/schema";
import type { EndableLink, LinkRow, SubscriberFields, SubscriberRow } from "./tables/common";
import { CiIndex } from "./tables/ci-index";
import { Grants } from "./tables/grants";
import { Jobs, type QueuedJob } from "./tables/jobs";
import { Links, type ConnectionRow } from "./tables/links";
import { People, type Claim, type ClaimResult, type NumberHolder, type NumberImport } from "./tables/people";
import { Adoption, type LegacyLink, type AdoptedSubscriber } from "./tables/adoption";
import { Passkeys, type AddResult, type NewPasskey, type PasskeyRow, type UseResult } from "./tables/passkeys";

/** What the shard's alarm does beyond its tables, given by the module that exports it (store/objects.ts). */
export interface DirectoryHandlers {
  /** The alarm: the due jobs run (each reaches other shards, and the one-time store), the next alarm set. */
  alarm(jobs: Jobs): Promise<void>;
}

/** A worker's binding of the shards. */
export type DirectoryBinding = { DIRECTORY: DurableObjectNamespace<DirectoryShard> };

export class DirectoryShard extends DurableObject {
  private readonly peopleAndNumbers: People;
  private readonly ciIndex: CiIndex;
  private readonly links: Links;
  private readonly grants: Grants;
  private readonly jobs: Jobs;
  private readonly adoption: Adoption;
  private readonly passkeys: Passkeys;

  constructor(
    ctx: DurableObjectState,
    env: unknown,
    private readonly handlers: DirectoryHandlers,
  ) {
    super(ctx, env as never);
    const sql = ctx.storage.sql;
    createTables(sql);
    this.jobs = new Jobs(sql, ctx.storage);
    this.grants = new Grants(sql);
    this.ciIndex = new CiIndex(sql, ctx.storage);
    this.links = new Links(sql, ctx.storage, this.grants);
    this.passkeys = new Passkeys(sql, ctx.storage);
    this.peopleAndNumbers = new People(
      sql,
      ctx.storage,
      this.ciIndex,
      this.links,
      this.grants,
      this.jobs,
      this.passkeys,
    );
    this.adoption = new Adoption(sql, ctx.storage, this.peopleAndNumbers, this.links);
  }

  // ---- people and numbers (tables/people.ts)

  /**
   * Who holds `phone` (this shard answers for it). A person at home here counts only while their row
   * names the number; with `clientId`, they come with their link to that client (one call).
   */
  holder(shard: number, phone: string, clientId?: string): NumberHolder {
    return this.peopleAndNumbers.holder(shard, phone, clientId);
  }

  /** A person at home here, or null. */
  subscriber(id: number): SubscriberRow | null {
    return this.peopleAndNumbers.subscriber(id);
  }

  /** People at home here, by id (the import's and the remover's batched reads). */
  people(ids: readonly number[]): SubscriberRow[] {
    return this.peopleAndNumbers.people(ids);
  }

  /** The ci of each of these people at home here (the ci index jobs' check: no other column crosses). */
  cisOf(ids: readonly number[]): { id: number; ci: string }[] {
    return this.peopleAndNumbers.cisOf(ids);
  }

  /** The import's first pass over the rows whose numbers this shard answers for. */
  importAtNumbers(
    shard: number,
    rows: readonly (SubscriberFields & { seq: number })[],
    dryRun: boolean,
  ): NumberImport[] {
    return this.peopleAndNumbers.importAtNumbers(shard, rows, dryRun);
  }

  /** Updates a person's directory fields and number, only while their ci is `ci`; false when not. */
  updateSubscriber(id: number, fields: SubscriberFields): { done: boolean; previousPhone: string | null } {
    return this.peopleAndNumbers.updateSubscriber(id, fields);
  }

  /** Applies decided claims, each only while its number's holder is still the one it was decided against. */
  claim(
    shard: number,
    shards: number,
    claims: readonly Claim[],
    run: string | null = null,
    lease: string | null = null,
  ): { results: ClaimResult[]; jobs: QueuedJob[] } {
    return this.peopleAndNumbers.claim(shard, shards, claims, run, lease);
  }

  /** Frees `phone` while `id` holds it (a person who moved away, or one being removed). */
  release(phone: string, id: number): void {
    this.peopleAndNumbers.release(phone, id);
  }

  /** Starts the removal of the person holding `phone`, only while `id` still does; the job, or null. */
  startRemoval(phone: string, id: number, reason: "number_reassigned" | "subscriber_removed"): QueuedJob | null {
    return this.peopleAndNumbers.startRemoval(phone, id, reason);
  }

  /** Deletes a person at home here with their grants, only while their row names `phone` and no link is left. */
  removeSubscriberRow(id: number, phone: string): { removed: boolean; links: EndableLink[] } {
    return this.peopleAndNumbers.removeSubscriberRow(id, phone);
  }

  /** Records the carrier's risk signals of people at home here (people.ts `noteSims`); the events' jobs. */
  noteSims(
    items: readonly { id: number; ci: string; sim: SimSignal }[],
    windowMs: number,
  ): { results: { id: number; changed: boolean; riskFrom: number | null }[]; jobs: QueuedJob[] } {
    return this.peopleAndNumbers.noteSims(items, windowMs);
  }

  /** Inserts people of the dev seed whose numbers are free (operator changes to seed rows are kept). */
  seed(
    shard: number,
    rows: readonly (SubscriberFields & { testOtpHash: string | null; ciShard: number })[],
  ): { ci: string; id: number; ciShard: number }[] {
    return this.peopleAndNumbers.seed(shard, rows);
  }

  /** The shard's counters: people, fixed-code numbers, review test numbers, jobs waiting. */
  counts(): { people: number; testNumbers: number; reviewNumbers: number; jobs: number } {
    return { ...this.peopleAndNumbers.counts(), jobs: this.jobs.pending() };
  }

  /** Takes the directory's import lease for `holder` until `until`; false while another holds it. */
  takeImportLease(holder: string, until: number): boolean {
    return this.peopleAndNumbers.takeImportLease(holder, until);
  }

  /** When the import lease held now ends (epoch ms), or null when none is held. */
  importLeaseUntil(): number | null {
    return this.peopleAndNumbers.importLeaseUntil();
  }

  dropImportLease(holder: string): void {
    this.peopleAndNumbers.dropImportLease(holder);
  }

  // ---- test numbers (registered for app review: always at home in their number's shard)

  /** Registers a test number at `phone`, only while the number's entry is still `expect`. */
  putTestNumber(
    shard: number,
    expect: number | null,
    update: boolean,
    fields: SubscriberFields,
    test: { otpHash: string; clients: string; expiresAt: number },
  ): { id: number; jobs: QueuedJob[] } | null {
    return this.peopleAndNumbers.putTestNumber(shard, expect, update, fields, test);
  }

  /** Registered test numbers here with a number after `after`, by number, at most `limit`. */
  testNumbers(after: string, limit: number): SubscriberRow[] {
    return this.peopleAndNumbers.testNumbers(after, limit);
  }

  // ---- the ci index (tables/ci-index.ts)

  /** The directory people indexed here by ci (never a registered test number). */
  idsByCi(cis: readonly string[]): { ci: string; id: number }[] {
    return this.ciIndex.idsByCi(cis);
  }

  /** `idsByCi` for the cis `holder` may decide now, leased to it until `until`; the others `busy`. */
  leaseCis(cis: readonly string[], holder: string, until: number): { ci: string; id: number | null; busy: boolean }[] {
    return this.ciIndex.lease(cis, holder, until);
  }

  /** Drops `holder`'s leases of these cis. */
  dropCiLeases(cis: readonly string[], holder: string): void {
    this.ciIndex.dropLeases(cis, holder);
  }

  /** Indexes a directory person's ci here (an import's new person whose ci hashes to this shard). */
  indexCi(ci: string, id: number): void {
    this.ciIndex.index(ci, id);
  }

  /** `indexCi` for many, in one step, dropping the writers' leases on these cis (`leases`) in it. */
  indexCis(
    entries: readonly { ci: string; id: number }[],
    leases: readonly { ci: string; holder: string }[] = [],
  ): void {
    this.ciIndex.indexMany(entries, leases);
  }

  /** Drops a removed person's ci entry, only while it still names them. */
  unindexCi(ci: string, id: number): void {
    this.ciIndex.unindex(ci, id);
  }

  // ---- links (tables/links.ts): one plid per (client, person)

  findLink(subscriberId: number, clientId: string): LinkRow | null {
    return this.links.find(subscriberId, clientId);
  }

  /**
   * Records consent: keeps the existing plid, or links with `newPlid`. Null when the person is
   * gone (removed, or their number reassigned) or the client deleted since the sign-in began.
   */
  recordConsent(subscriberId: number, clientId: string, items: number, newPlid: string): string | null {
    return this.links.recordConsent(
      this.peopleAndNumbers.subscriber(subscriberId),
      subscriberId,
      clientId,
      items,
      newPlid,
    );
  }

  /**
   * A sign-in's consent in one call: `recordConsent`, the link's login recorded, and the person
   * the code will carry (the link and the person live here, the person's home). Null when the
   * person is gone or the client deleted.
   */
  consentLogin(
    subscriberId: number,
    clientId: string,
    items: number,
    newPlid: string,
  ): { plid: string; person: SubscriberRow } | null {
    return this.links.consentLogin(
      this.peopleAndNumbers.subscriber(subscriberId),
      subscriberId,
      clientId,
      items,
      newPlid,
    );
  }

  linkExists(clientId: string, plid: string): boolean {
    return this.links.exists(clientId, plid);
  }

  /** Records a login of the link; false when no such link is here. */
  touchLink(clientId: string, plid: string): boolean {
    return this.links.touch(clientId, plid);
  }

  /** Where a plid moved from the single database has its link (none: a plid that names its home). */
  plidForwards(plids: readonly string[]): { plid: string; home: number }[] {
    return this.links.plidForwards(plids);
  }

  /** The person's links with the latest live grant of each (their /account page). */
  connections(subscriberId: number): ConnectionRow[] {
    return this.links.connections(subscriberId);
  }

  /** The links of a person (every client, or one). */
  linksOf(subscriberId: number, clientId: string | null): EndableLink[] {
    return this.links.of(subscriberId, clientId);
  }

  /** The client's link of this plid, or null. */
  linkByPlid(clientId: string, plid: string): EndableLink | null {
    return this.links.byPlid(clientId, plid);
  }

  /** Deletes links (by client and plid) with their person's grants for that client. */
  deleteLinks(links: readonly EndableLink[]): void {
    this.links.delete(links);
  }

  /** Deletes the links holding these plids (ends whose deletion failed) with their grants; the plids not found here. */
  deleteLinksByPlid(plids: readonly string[]): string[] {
    return this.links.deleteByPlid(plids);
  }

  /** Deletes up to `limit` of a client's links with their grants (a deleted client), recording its end; the plids. */
  takeClientLinks(clientId: string, limit: number): string[] {
    return this.links.takeClientLinks(clientId, limit);
  }

  // ---- automatic-login grants (tables/grants.ts): (device, client) → person, in its device id's shard

  putGrant(deviceHash: string, clientId: string, subscriberId: number, expiresAt: number): void {
    this.grants.put(deviceHash, clientId, subscriberId, expiresAt);
  }

  /** The person's grants on `oldHash` move to `newHash` (both here); whatever else is on `oldHash` ends. */
  replaceDevice(oldHash: string, newHash: string, subscriberId: number): void {
    this.grants.replaceDevice(oldHash, newHash, subscriberId);
  }

  /** Every grant on the device that is not `subscriberId`'s ends, for every client. */
  endOthersOnDevice(deviceHash: string, subscriberId: number): void {
    this.grants.endOthersOnDevice(deviceHash, subscriberId);
  }

  /** `endOthersOnDevice`, then the person's own live grant of (device, client): its expiry, or null. */
  keepOwnGrant(deviceHash: string, subscriberId: number, clientId: string): number | null {
    return this.grants.keepOwn(deviceHash, subscriberId, clientId);
  }

  /** The live grant of (device, client): its person and expiry, or null. */
  findGrant(deviceHash: string, clientId: string): { subscriberId: number; expiresAt: number } | null {
    return this.grants.find(deviceHash, clientId);
  }

  deleteGrant(deviceHash: string, clientId: string): void {
    this.grants.delete(deviceHash, clientId);
  }

  /** Ends every grant of the person for the client (every device); how many. */
  endAutoLogin(clientId: string, subscriberId: number): number {
    return this.grants.endAutoLogin(clientId, subscriberId);
  }

  // ---- passkeys (tables/passkeys.ts): the person's WebAuthn credentials, at their home

  /** The person's user handle (made from `fresh` at their first enrolment); null when they are not here. */
  passkeyHandle(subscriberId: number, fresh: string): string | null {
    return this.passkeys.handle(subscriberId, fresh);
  }

  /**
   * What an enrolment page needs, in one call: the person (null when not here), and unless they are a
   * test number their user handle (made from `fresh` at their first enrolment) and passkeys.
   */
  passkeyEnrolment(
    subscriberId: number,
    fresh: string,
  ): { person: SubscriberRow | null; handle: string | null; passkeys: PasskeyRow[] } {
    const person = this.peopleAndNumbers.subscriber(subscriberId);
    if (!person || person.test_otp_hash !== null || person.test_clients !== null)
      return { person, handle: null, passkeys: [] };
    return { person, handle: this.passkeys.handle(subscriberId, fresh), passkeys: this.passkeys.of(subscriberId) };
  }

  /** The person's passkeys, newest first. */
  passkeysOf(subscriberId: number): PasskeyRow[] {
    return this.passkeys.of(subscriberId);
  }

  /** A passkey by credential id while `handle` is its person's, with when their number was last confirmed. */
  findPasskey(credentialId: string, handle: string): { passkey: PasskeyRow; confirmedAt: number } | null {
    return this.passkeys.find(credentialId, handle);
  }

  /**
   * Writes a verified enrolment with its checks in one step; an SMS-proven one queues the "now
   * usable" notice for its `usableAt` in the same step.
   */
  addPasskey(p: NewPasskey, home: number, lang: "ko" | "en"): AddResult {
    let out: AddResult = { ok: false, reason: "gone" };
    this.ctx.storage.transactionSync(() => {
      out = this.passkeys.add(p);
      if (out.ok && p.madeWith === "sms") {
        this.jobs.queueAt({ kind: "passkey_usable", credentialId: p.credentialId, home, lang }, p.usableAt);
        this.jobs.wake(p.usableAt);
      }
    });
    return out;
  }

  /**
   * A verified assertion signs in: its challenge taken once, the passkey usable, its counter
   * advanced; with the person (and, given `clientId`, their link to it) read in the same call.
   */
  usePasskey(
    credentialId: string,
    challenge: string,
    challengeUntil: number,
    counter: number,
    clientId?: string,
  ): UseResult & { person?: SubscriberRow | null; link?: LinkRow | null } {
    const used = this.passkeys.use(credentialId, challenge, challengeUntil, counter);
    if (!used.ok) return used;
    const person = this.peopleAndNumbers.subscriber(used.subscriberId);
    return { ...used, person, link: clientId ? this.links.find(used.subscriberId, clientId) : null };
  }

  /** Takes an enrolment ticket's challenge once, making nothing; false when it was taken before. */
  takePasskeyChallenge(challenge: string, until: number): boolean {
    return this.passkeys.takeOnce(challenge, until);
  }

  /** The carrier confirmed the person's number now. */
  passkeyConfirmed(subscriberId: number, at: number): void {
    this.passkeys.confirmed(subscriberId, at);
  }

  /** Removes one of the person's passkeys; false when it is not theirs. */
  removePasskey(subscriberId: number, credentialId: string): boolean {
    return this.passkeys.remove(subscriberId, credentialId);
  }

  /** Ends every passkey of the person; how many. */
  endPasskeys(subscriberId: number): number {
    return this.passkeys.endAll(subscriberId);
  }

  /** A passkey made with an SMS proof at its usable time: its person to tell (with their number), or why not. */
  passkeyNotice(credentialId: string): { state: "tell"; person: SubscriberRow } | { state: "early" | "gone" } {
    const n = this.passkeys.usableNotice(credentialId);
    if (n.state !== "tell") return n;
    const person = this.peopleAndNumbers.subscriber(n.subscriberId);
    return person ? { state: "tell", person } : { state: "gone" };
  }

  /** The "now usable" SMS of a passkey went out. */
  passkeyTold(credentialId: string): void {
    this.passkeys.told(credentialId);
  }

  // ---- jobs (tables/jobs.ts)

  /** Marks jobs finished by their caller. */
  jobsDone(ids: readonly number[]): void {
    this.jobs.done(ids);
  }

  /** Jobs due (or with `all` every job not held for an import run), oldest first; each pushed back while it runs. */
  dueJobs(limit: number, all = false): QueuedJob[] {
    return this.jobs.due(limit, all);
  }

  /** The jobs held for an import run, released to run now (the run's commit). */
  releaseRun(run: string): QueuedJob[] {
    return this.jobs.releaseRun(run);
  }

  /** How many jobs wait (the operator's view of cross-shard work in flight). */
  pendingJobs(): number {
    return this.jobs.pending();
  }

  override alarm(): Promise<void> {
    return this.handlers.alarm(this.jobs);
  }

  // ---- the move from a single database (tables/adoption.ts; workers/admin/migrate/): idempotent

  /** People of the single database whose numbers this shard answers for; their ids here, by their old id. */
  adoptPeople(
    shard: number,
    rows: readonly AdoptedSubscriber[],
  ): { legacyId: number; id: number; ci: string; indexed: boolean }[] {
    return this.adoption.adoptPeople(shard, rows);
  }

  /** Links of the single database for people at home here, plids kept. */
  adoptLinks(links: readonly LegacyLink[]): void {
    this.adoption.adoptLinks(links);
  }

  /** Records where moved plids that name this shard have their links. */
  adoptPlidHomes(entries: readonly { plid: string; home: number }[]): void {
    this.adoption.adoptPlidHomes(entries);
  }
}

/** Each shard's object id, by shard number (hashed once per isolate). */
const idCache: DurableObjectId[] = [];

/** The object of directory shard `shard` (keys.ts names it). */
export function dirAt(env: DirectoryBinding, shard: number): DurableObjectStub<DirectoryShard> {
  const id = (idCache[shard] ??= env.DIRECTORY.idFromName(shardName(shard)));
  return env.DIRECTORY.get(id);
}
