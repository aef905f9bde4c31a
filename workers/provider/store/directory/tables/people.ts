// People and numbers (tables `people`, `numbers`, `meta`; docs/storage.md "Directory shards",
// "Changes across shards"): the people at home in this shard, who holds each number hashing here
// (keys.ts `numberShard`), the id sequence, the counters and the import lease.
//
// Invariants:
// - a number answers for at most one person, and only while that person's row names it too: an
//   entry an unfinished move left behind answers nothing (`stale`);
// - an id is never given twice: `sequence × SHARD_SLOTS + shard`, from a sequence that only grows;
// - a row holds one person for its life: its ci and its kind (a directory person, a test number)
//   are never written once it exists;
// - a number passes to another person only while its entry still names the holder the decision
//   was made against, in one step that also queues the previous holder's removal (jobs.ts): the
//   number is never free in between for another writer to take;
// - a person whose removal from a number is queued here does not take that number back;
// - a person is deleted only while their row names the number being removed and no link is left,
//   with their grants and passkeys, in one step;
// - the counters (`people`, `test_numbers`) change in the same step as each insert and delete
//   (triggers); review test numbers are counted through their own index;
// - one import holds the import lease at a time (kept in shard 0's `meta`).

import { SHARD_SLOTS } from "../../config";
import { homeOfId, numberShard } from "../keys";
import { linkRow, rowsIn, type EndableLink, type LinkRow, type SubscriberFields, type SubscriberRow } from "./common";
import type { CiIndex } from "./ci-index";
import type { Grants } from "./grants";
import { JOB_GRACE_MS, type DirectoryJob, type Jobs, type QueuedJob } from "./jobs";
import type { Links } from "./links";
import type { Passkeys } from "./passkeys";
import { applySignal, riskFrom, riskUntil, type SimSignal } from "../risk";

/** Who answers for a number, as its shard knows: nobody, a person at home here, or an id whose home is elsewhere. */
export type NumberHolder =
  | { at: "none" }
  /** `link`: the person's link to the client asked about, read in the same call (absent: not asked). */
  | { at: "here"; person: SubscriberRow; link?: LinkRow | null }
  | { at: "away"; id: number }
  /** An entry of a person at home here whose row no longer names the number (a move not yet finished, or done). */
  | { at: "stale"; id: number };

/** One import row at its number's shard: what the shard did, or what it found for the caller to decide. */
export type NumberImport = { seq: number; done: "updated"; id: number } | { seq: number; holder: NumberHolder };

/** The write a caller decided for a number, applied only while the number's holder is still `expect`. */
export interface Claim {
  seq: number;
  phone: string;
  /** The holder the decision was made against (null: nobody). */
  expect: number | null;
  /** The person who takes the number; null: a new person with `fields`. */
  person: number | null;
  fields: SubscriberFields;
  /** The holder is displaced (removed, their logins ended); false when they are moving elsewhere in the same import. */
  displace: boolean;
  /** Where the new person's ci is indexed (this shard: written now; else a job). */
  ciShard: number;
  /** A person at home elsewhere, already moved there to this number: the number they left, freed by a job. */
  leaves: string | null;
}

export type ClaimResult = { seq: number; ok: false } | { seq: number; ok: true; id: number };

/** A test number's own fields: its code's hash, the clients it signs in for and until when (review numbers). */
export type TestFields = { otpHash: string | null; clients: string | null; expiresAt: number | null };

export class People {
  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
    private readonly ciIndex: CiIndex,
    private readonly links: Links,
    private readonly grants: Grants,
    private readonly jobs: Jobs,
    private readonly passkeys: Passkeys,
  ) {}

  /**
   * Who holds `phone` (this shard answers for it). A person at home here counts only while their row
   * names the number; with `clientId`, they come with their link to that client (one statement,
   * which reads `links` too).
   */
  holder(shard: number, phone: string, clientId?: string): NumberHolder {
    const r = this.sql
      .exec<{ holder_id: number; link_plid: string | null; link_items: number | null; link_at: number | null }>(
        `SELECT n.id AS holder_id, p.*, l.plid AS link_plid, l.items AS link_items, l.consented_at AS link_at
         FROM numbers n LEFT JOIN people p ON p.id = n.id LEFT JOIN links l ON l.subscriber_id = p.id AND l.client_id = ?2
         WHERE n.phone = ?1`,
        phone,
        clientId ?? null,
      )
      .toArray()[0];
    if (!r) return { at: "none" };
    const { holder_id: id, link_plid: plid, link_items: items, link_at: consentedAt, ...row } = r;
    const person = row as unknown as SubscriberRow;
    const h = this.holderOf(shard, phone, id, person.id === id ? person : null);
    if (h.at !== "here" || clientId === undefined) return h;
    return { ...h, link: plid === null ? null : linkRow({ plid, items: items!, consented_at: consentedAt! }) };
  }

  /** A person at home here, or null. */
  subscriber(id: number): SubscriberRow | null {
    return this.sql.exec<SubscriberRow>("SELECT * FROM people WHERE id = ?", id).toArray()[0] ?? null;
  }

  /** People at home here, by id. */
  people(ids: readonly number[]): SubscriberRow[] {
    return rowsIn<SubscriberRow>(this.sql, "SELECT * FROM people WHERE id", ids);
  }

  /** The ci of each of these people at home here. */
  cisOf(ids: readonly number[]): { id: number; ci: string }[] {
    return rowsIn<{ id: number; ci: string }>(this.sql, "SELECT id, ci FROM people WHERE id", ids);
  }

  /**
   * The import's first pass over the rows whose numbers this shard answers for: a number held by
   * the same directory person (same ci) at home here is updated now (id, plids and consent kept);
   * for every other row the holder is returned, for the caller to decide with what other shards hold.
   */
  importAtNumbers(
    shard: number,
    rows: readonly (SubscriberFields & { seq: number })[],
    dryRun: boolean,
  ): NumberImport[] {
    const out: NumberImport[] = [];
    // the rows' entries in one statement (an import's numbers are mostly new: nothing to read after)
    const entries = this.numberEntries(rows.map((r) => r.phone));
    for (const r of rows) {
      const h = this.holderOf(shard, r.phone, entries.get(r.phone) ?? null);
      if (h.at === "here" && h.person.ci === r.ci && h.person.test_clients === null) {
        if (!dryRun) this.writeFields(h.person.id, r);
        out.push({ seq: r.seq, done: "updated", id: h.person.id });
      } else out.push({ seq: r.seq, holder: h });
    }
    return out;
  }

  /** Updates a person's directory fields and number, only while their ci is `ci`; false when not. */
  updateSubscriber(id: number, fields: SubscriberFields): { done: boolean; previousPhone: string | null } {
    const p = this.subscriber(id);
    if (!p || p.ci !== fields.ci) return { done: false, previousPhone: null };
    this.writeFields(id, fields);
    return { done: true, previousPhone: p.phone };
  }

  /**
   * Applies decided claims, each only while its number's holder is still the one it was decided
   * against: the number passes to the person (a new one made here), a displaced holder's removal
   * and every other shard's part are queued as jobs in the same transaction; returns the jobs.
   */
  claim(
    shard: number,
    shards: number,
    claims: readonly Claim[],
    run: string | null,
    lease: string | null,
  ): { results: ClaimResult[]; jobs: QueuedJob[] } {
    const results: ClaimResult[] = [];
    const jobs: QueuedJob[] = [];
    const now = Date.now();
    this.storage.transactionSync(() => {
      // ids for the new people, taken from the sequence at once (the id of a claim found stale
      // is left unused: ids need only never be given twice)
      const fresh = claims.filter((c) => c.person === null).length;
      let seq = fresh > 0 ? this.takeSequence(fresh) : 0;
      const indexJobs: DirectoryJob[] = [];
      // The claims' number entries, read in one statement and kept as this step writes them; a
      // number this step frees is read again. New people (an import's common case) are written
      // together: their rows, their numbers and the ci entries indexed here, a statement each, before
      // any other write of this step and at its end.
      const entries = this.numberEntries(claims.map((c) => c.phone));
      const freed = new Set<string>();
      const holderNow = (phone: string): number | null =>
        freed.has(phone)
          ? (this.sql.exec<{ id: number }>("SELECT id FROM numbers WHERE phone = ?", phone).toArray()[0]?.id ?? null)
          : (entries.get(phone) ?? null);
      const born: (SubscriberFields & { id: number })[] = [];
      const indexedHere: { ci: string; id: number }[] = [];
      const writeBorn = () => {
        if (born.length) this.insertPeople(born, now);
        if (indexedHere.length) this.ciIndex.indexMany(indexedHere);
        born.length = 0;
        indexedHere.length = 0;
      };
      for (const c of claims) {
        if (holderNow(c.phone) !== c.expect) {
          results.push({ seq: c.seq, ok: false });
          continue;
        }
        let id: number;
        if (c.person === null) {
          id = seq++ * SHARD_SLOTS + shard;
          born.push({ ...c.fields, id });
          entries.set(c.phone, id);
          freed.delete(c.phone);
          // indexed here now, or by a job that carries the writer's lease: should the job fail, the
          // lease holds the ci until the job, run later, indexes it (the writer ends the others)
          if (c.ciShard === shard) indexedHere.push({ ci: c.fields.ci, id });
          else indexJobs.push({ kind: "index_ci", ci: c.fields.ci, id, ...(lease ? { lease } : {}) });
        } else {
          writeBorn();
          id = c.person;
          // A person whose removal from this number is queued here (displaced by an earlier write,
          // its removal running or held for an import run) does not take it back: the removal would
          // still find their row naming it and delete them under their own number entry. Decided
          // again by the caller once the removal is done.
          if (this.jobs.removalQueued(id, c.phone)) {
            results.push({ seq: c.seq, ok: false });
            continue;
          }
          if (homeOfId(id) === shard) {
            const moved = this.updateSubscriber(id, c.fields);
            if (!moved.done) {
              // gone since the decision (removed meanwhile): decided again by the caller
              results.push({ seq: c.seq, ok: false });
              continue;
            }
            const prev = moved.previousPhone!;
            if (prev === c.phone) {
              // already there
            } else if (numberShard(prev, shards) === shard) {
              this.release(prev, id);
              freed.add(prev);
            } else jobs.push(this.jobs.queue({ kind: "release", phone: prev, id }, now));
          } else if (c.leaves !== null && c.leaves !== c.phone)
            jobs.push(this.jobs.queue({ kind: "release", phone: c.leaves, id }, now));
          this.sql.exec("INSERT OR REPLACE INTO numbers (phone, id) VALUES (?, ?)", c.phone, id);
          entries.set(c.phone, id);
          freed.delete(c.phone);
        }
        // Within an import run the displaced holder's removal waits for the run's commit: a later
        // chunk of the same file may name them at another number (they moved), and then they stay.
        if (c.expect !== null && c.displace) {
          const removal: DirectoryJob = { kind: "remove", id: c.expect, phone: c.phone, reason: "number_reassigned" };
          if (run === null) jobs.push(this.jobs.queue(removal, now));
          else this.jobs.queue(removal, now, run);
        }
        results.push({ seq: c.seq, ok: true, id });
      }
      writeBorn();
      jobs.push(...this.jobs.queueMany(indexJobs, now));
    });
    if (jobs.length || run !== null) this.jobs.wake(now + JOB_GRACE_MS);
    return { results, jobs };
  }

  /** Frees `phone` while `id` holds it (a person who moved away, or one being removed). */
  release(phone: string, id: number): void {
    this.sql.exec("DELETE FROM numbers WHERE phone = ? AND id = ?", phone, id);
  }

  /**
   * Starts the removal of the person holding `phone`, only while `id` still does: the number is
   * freed and the removal queued in one step. The job, or null when `id` no longer holds it.
   */
  startRemoval(phone: string, id: number, reason: "number_reassigned" | "subscriber_removed"): QueuedJob | null {
    let job: QueuedJob | null = null;
    this.storage.transactionSync(() => {
      const cur = this.sql.exec<{ id: number }>("SELECT id FROM numbers WHERE phone = ?", phone).toArray()[0];
      if (cur?.id !== id) return;
      this.sql.exec("DELETE FROM numbers WHERE phone = ?", phone);
      job = this.jobs.queue({ kind: "remove", id, phone, reason }, Date.now());
    });
    if (job) this.jobs.wake(Date.now() + JOB_GRACE_MS);
    return job;
  }

  /**
   * Deletes a person at home here with their grants, only while their row still names `phone` (a
   * person who moved to another number meanwhile stays) and once no link is left: links made since
   * the caller ended them (a consent landing meanwhile) come back to be ended first.
   */
  removeSubscriberRow(id: number, phone: string): { removed: boolean; links: EndableLink[] } {
    let out: { removed: boolean; links: EndableLink[] } = { removed: false, links: [] };
    this.storage.transactionSync(() => {
      const p = this.subscriber(id);
      if (!p || p.phone !== phone) return;
      const links = this.links.of(id, null);
      if (links.length) {
        out = { removed: false, links };
        return;
      }
      this.grants.endOfSubscriber(id);
      this.passkeys.endOfSubscriber(id);
      this.sql.exec("DELETE FROM people WHERE id = ?", id);
      out = { removed: true, links: [] };
    });
    return out;
  }

  /** Inserts people of the dev seed whose numbers are free (operator changes to seed rows are kept). */
  seed(
    shard: number,
    rows: readonly (SubscriberFields & { testOtpHash: string | null; ciShard: number })[],
  ): { ci: string; id: number; ciShard: number }[] {
    const out: { ci: string; id: number; ciShard: number }[] = [];
    const now = Date.now();
    this.storage.transactionSync(() => {
      for (const r of rows) {
        if (this.sql.exec("SELECT 1 FROM numbers WHERE phone = ?", r.phone).toArray().length) continue;
        const id = this.insertSubscriber(shard, r, { otpHash: r.testOtpHash, clients: null, expiresAt: null }, now);
        this.sql.exec("INSERT INTO numbers (phone, id) VALUES (?, ?)", r.phone, id);
        out.push({ ci: r.ci, id, ciShard: r.ciShard });
      }
    });
    return out;
  }

  /**
   * Registers a test number at `phone`, only while the number's entry is still `expect`: the same
   * test persona (`update`: the holder `expect`, same ci) updated in place, or a new person. A new
   * person replacing a holder (another persona) takes the number in this same step, and the
   * previous one's removal (their logins end) is queued: the number is never free in between, for
   * another writer to take. The person's id and that job, or null when the holder changed.
   */
  putTestNumber(
    shard: number,
    expect: number | null,
    update: boolean,
    fields: SubscriberFields,
    test: { otpHash: string; clients: string; expiresAt: number },
  ): { id: number; jobs: QueuedJob[] } | null {
    let out: { id: number; jobs: QueuedJob[] } | null = null;
    const now = Date.now();
    this.storage.transactionSync(() => {
      const cur = this.sql.exec<{ id: number }>("SELECT id FROM numbers WHERE phone = ?", fields.phone).toArray()[0];
      if ((cur?.id ?? null) !== expect) return;
      if (update && expect !== null) {
        const p = this.subscriber(expect);
        if (!p || p.test_clients === null || p.ci !== fields.ci || p.phone !== fields.phone) return;
        this.writeFields(expect, fields);
        this.sql.exec(
          "UPDATE people SET test_otp_hash = ?, test_clients = ?, test_expires_at = ? WHERE id = ?",
          test.otpHash,
          test.clients,
          test.expiresAt,
          expect,
        );
        out = { id: expect, jobs: [] };
        return;
      }
      const id = this.insertSubscriber(shard, fields, test, now);
      this.sql.exec("INSERT OR REPLACE INTO numbers (phone, id) VALUES (?, ?)", fields.phone, id);
      const jobs =
        expect === null
          ? []
          : [this.jobs.queue({ kind: "remove", id: expect, phone: fields.phone, reason: "subscriber_removed" }, now)];
      out = { id, jobs };
    });
    if (out && (out as { jobs: QueuedJob[] }).jobs.length) this.jobs.wake(now + JOB_GRACE_MS);
    return out;
  }

  /**
   * Records the carrier's risk signals of people at home here (an import's rows, a carrier-API
   * answer), each only while the row is still that person (same ci); test numbers take none. A
   * value already stored changes nothing. A change that opens a risk window newer than the stored
   * one, while it is still open at `now` (`windowMs`), cancels the person's passkeys not yet
   * usable and queues the event to their apps, in the same step: once per change.
   */
  noteSims(
    items: readonly { id: number; ci: string; sim: SimSignal }[],
    windowMs: number,
  ): { results: { id: number; changed: boolean; riskFrom: number | null }[]; jobs: QueuedJob[] } {
    const results: { id: number; changed: boolean; riskFrom: number | null }[] = [];
    const jobs: QueuedJob[] = [];
    const now = Date.now();
    this.storage.transactionSync(() => {
      for (const { id, ci, sim } of items) {
        const p = this.subscriber(id);
        if (!p || p.ci !== ci || p.test_otp_hash !== null || p.test_clients !== null) continue;
        const next = applySignal(p, sim);
        const before = riskFrom(p);
        if (
          next.sim_changed_at === p.sim_changed_at &&
          next.sim_change_kind === p.sim_change_kind &&
          next.ported_at === p.ported_at
        ) {
          results.push({ id, changed: false, riskFrom: before });
          continue;
        }
        this.sql.exec(
          "UPDATE people SET sim_changed_at = ?, sim_change_kind = ?, ported_at = ? WHERE id = ?",
          next.sim_changed_at,
          next.sim_change_kind,
          next.ported_at,
          id,
        );
        const after = riskFrom({ ...p, ...next });
        if (after !== null && (before === null || after > before) && riskUntil(after, windowMs, now) !== null) {
          this.passkeys.cancelPending(id, now);
          jobs.push(this.jobs.queue({ kind: "credential_change", id, at: after }, now));
        }
        results.push({ id, changed: true, riskFrom: after });
      }
    });
    if (jobs.length) this.jobs.wake(now + JOB_GRACE_MS);
    return { results, jobs };
  }

  /** Registered test numbers here with a number after `after`, by number, at most `limit`. */
  testNumbers(after: string, limit: number): SubscriberRow[] {
    return this.sql
      .exec<SubscriberRow>(
        "SELECT * FROM people WHERE test_clients IS NOT NULL AND phone > ? ORDER BY phone LIMIT ?",
        after,
        limit,
      )
      .toArray();
  }

  /**
   * The shard's counters, kept by triggers in the same step as each write (never a COUNT over the
   * table): people and fixed-code numbers; review test numbers are counted through their own index.
   */
  counts(): { people: number; testNumbers: number; reviewNumbers: number } {
    const m = new Map(
      this.sql
        .exec<{ key: string; value: number }>("SELECT key, value FROM meta")
        .toArray()
        .map((r) => [r.key, r.value]),
    );
    const reviewNumbers = this.sql
      .exec<{ n: number }>("SELECT count(*) AS n FROM people WHERE test_clients IS NOT NULL")
      .one().n;
    return { people: m.get("people") ?? 0, testNumbers: m.get("test_numbers") ?? 0, reviewNumbers };
  }

  /**
   * Takes the directory's import lease for `holder` until `until` (imports run one at a time: two
   * imports interleaving over the same numbers would give a directory neither order gives); true
   * when taken or already held by `holder`. Held by another, unexpired: false.
   */
  takeImportLease(holder: string, until: number): boolean {
    const now = Date.now();
    const cur = this.sql
      .exec<{ key: string; value: number }>("SELECT key, value FROM meta WHERE key LIKE 'import:%'")
      .toArray()[0];
    if (cur && cur.key !== `import:${holder}` && cur.value > now) return false;
    this.sql.exec("DELETE FROM meta WHERE key LIKE 'import:%'");
    this.sql.exec("INSERT INTO meta (key, value) VALUES (?, ?)", `import:${holder}`, until);
    return true;
  }

  /** When the import lease held now ends (epoch ms), or null when none is held. */
  importLeaseUntil(): number | null {
    const now = Date.now();
    const cur = this.sql
      .exec<{ value: number }>("SELECT value FROM meta WHERE key LIKE 'import:%' AND value > ?", now)
      .toArray()[0];
    return cur?.value ?? null;
  }

  dropImportLease(holder: string): void {
    this.sql.exec("DELETE FROM meta WHERE key = ?", `import:${holder}`);
  }

  /** The holder of `phone` from its entry's `id` (null: none); `known`, the person's row when already read. */
  private holderOf(shard: number, phone: string, id: number | null, known?: SubscriberRow | null): NumberHolder {
    if (id === null) return { at: "none" };
    if (homeOfId(id) !== shard) return { at: "away", id };
    const p = known === undefined ? this.subscriber(id) : known;
    return p && p.phone === phone ? { at: "here", person: p } : { at: "stale", id };
  }

  /** The entries of these numbers held here: the holder's id by number. */
  private numberEntries(phones: readonly string[]): Map<string, number> {
    return new Map(
      this.sql
        .exec<{
          phone: string;
          id: number;
        }>("SELECT phone, id FROM numbers WHERE phone IN (SELECT value FROM json_each(?))", JSON.stringify(phones))
        .toArray()
        .map((e) => [e.phone, e.id]),
    );
  }

  /** Writes new directory people (no test number) here with their numbers, in one statement each. */
  private insertPeople(people: readonly (SubscriberFields & { id: number })[], now: number): void {
    const rows = JSON.stringify(people);
    this.sql.exec(
      `INSERT INTO people (id, ci, telco, phone, name, gender, birth, foreign_cd, test_otp_hash, test_clients, test_expires_at, created_at)
       SELECT value ->> '$.id', value ->> '$.ci', value ->> '$.telco', value ->> '$.phone', value ->> '$.name',
         value ->> '$.gender', value ->> '$.birth', value ->> '$.foreign', NULL, NULL, NULL, ?
       FROM json_each(?)`,
      now,
      rows,
    );
    this.sql.exec(
      "INSERT OR REPLACE INTO numbers (phone, id) SELECT value ->> '$.phone', value ->> '$.id' FROM json_each(?)",
      rows,
    );
  }

  /** Writes a new person here: their id, from the sequence (`seq`, or the next value). */
  insertSubscriber(
    shard: number,
    f: SubscriberFields,
    test: TestFields | null,
    now: number,
    seq: number = this.takeSequence(1),
  ): number {
    const id = seq * SHARD_SLOTS + shard;
    this.sql.exec(
      `INSERT INTO people (id, ci, telco, phone, name, gender, birth, foreign_cd, test_otp_hash, test_clients, test_expires_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      f.ci,
      f.telco,
      f.phone,
      f.name,
      f.gender,
      f.birth,
      f.foreign,
      test?.otpHash ?? null,
      test?.clients ?? null,
      test?.expiresAt ?? null,
      now,
    );
    return id;
  }

  private writeFields(id: number, f: SubscriberFields): void {
    this.sql.exec(
      "UPDATE people SET telco = ?, phone = ?, name = ?, gender = ?, birth = ?, foreign_cd = ? WHERE id = ?",
      f.telco,
      f.phone,
      f.name,
      f.gender,
      f.birth,
      f.foreign,
      id,
    );
  }

  /** The first of `k` new values of the id sequence (it only grows, so an id is never given twice). */
  private takeSequence(k: number): number {
    const last = this.sql
      .exec<{ value: number }>("UPDATE meta SET value = value + ? WHERE key = 'sequence' RETURNING value", k)
      .one().value;
    return last - k + 1;
  }
}
