// One directory shard: a SQLite-backed Durable Object holding the people whose home it is, with
// their links and automatic-login grants, and the number and ci index entries that hash to it
// (docs/storage.md "Directory shards"; which key goes where: directory-keys.ts). Every method is
// synchronous SQL with no await, so each call is one atomic step. A change that spans shards (an
// import moving a person, a removal) is a sequence of such steps, each idempotent; the step that
// starts it records the rest in `jobs` in the same transaction, and the alarm finishes what a
// caller that died left (directory-jobs.ts).

import { DurableObject } from "cloudflare:workers";
import type { IdentityItem } from "../../../core/spec";
import { homeOfId, maskItems, numberShard, SHARD_SLOTS } from "./keys";
import { runQueuedJobs } from "../flows/directory-jobs";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS people (
  id              INTEGER PRIMARY KEY,   -- sequence × SHARD_SLOTS + this shard: never given twice
  ci              TEXT NOT NULL,
  telco           TEXT NOT NULL,
  phone           TEXT NOT NULL,         -- the number they hold (its entry in numbers may be in another shard)
  name            TEXT NOT NULL,
  gender          TEXT NOT NULL,
  birth           TEXT NOT NULL,
  foreign_cd      TEXT NOT NULL,
  test_otp_hash   TEXT,                  -- test numbers: SHA-256 of the fixed code
  test_clients    TEXT,                  -- registered review test numbers: JSON array of client ids
  test_expires_at INTEGER,
  created_at      INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS numbers (phone TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS by_ci (ci TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
-- who is deciding a ci's person now (an import's rows, a carrier-API sign-in): one writer per ci
CREATE TABLE IF NOT EXISTS ci_leases (ci TEXT PRIMARY KEY, holder TEXT NOT NULL, until INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS links (
  subscriber_id INTEGER NOT NULL,
  client_id     TEXT NOT NULL,
  plid          TEXT NOT NULL UNIQUE,
  items         INTEGER NOT NULL,        -- consented items, one bit each in IDENTITY_ITEMS order
  consented_at  INTEGER NOT NULL,
  linked_at     INTEGER NOT NULL,
  last_login_at INTEGER,
  PRIMARY KEY (subscriber_id, client_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_by_client ON links (client_id);
CREATE TABLE IF NOT EXISTS grants (
  device_hash   TEXT NOT NULL,
  client_id     TEXT NOT NULL,
  subscriber_id INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  PRIMARY KEY (device_hash, client_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grants_by_subscriber ON grants (subscriber_id, client_id);
CREATE INDEX IF NOT EXISTS grants_by_expiry ON grants (expires_at);
-- plids made before the directory was sharded (moved from the single database): their first hex
-- digits do not name their person's home, so the shard they name keeps where their link is
CREATE TABLE IF NOT EXISTS plid_homes (plid TEXT PRIMARY KEY, home INTEGER NOT NULL) WITHOUT ROWID;
-- clients deleted: a consent (or a link moved in) for one is refused here; written by the
-- deletion's first sweep of this shard's links, in the same step (takeClientLinks)
CREATE TABLE IF NOT EXISTS ended_clients (client_id TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('sequence', 0), ('people', 0), ('test_numbers', 0);
CREATE TABLE IF NOT EXISTS jobs (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  job        TEXT NOT NULL,              -- JSON of a DirectoryJob
  created_at INTEGER NOT NULL,
  attempts   INTEGER NOT NULL DEFAULT 0,
  next_at    INTEGER NOT NULL,
  run        TEXT                        -- held for an import run until it commits (or RUN_HOLD_MS)
);
-- a claim checks for a queued removal of the person it gives a number to (an import run may hold
-- thousands); only removals are indexed
CREATE INDEX IF NOT EXISTS jobs_removals ON jobs (job ->> '$.id') WHERE job ->> '$.kind' = 'remove';
-- registered review test numbers (few): listed and counted through this index, never a scan of people
CREATE INDEX IF NOT EXISTS people_review ON people (phone) WHERE test_clients IS NOT NULL;
CREATE TRIGGER IF NOT EXISTS people_counted AFTER INSERT ON people BEGIN
  UPDATE meta SET value = value + 1 WHERE key = 'people';
  UPDATE meta SET value = value + 1 WHERE key = 'test_numbers' AND NEW.test_otp_hash IS NOT NULL;
END;
CREATE TRIGGER IF NOT EXISTS people_uncounted AFTER DELETE ON people BEGIN
  UPDATE meta SET value = value - 1 WHERE key = 'people';
  UPDATE meta SET value = value - 1 WHERE key = 'test_numbers' AND OLD.test_otp_hash IS NOT NULL;
END;
`;

/** A person's row as the shard returns it. */
export type PersonRow = {
  id: number;
  ci: string;
  telco: "S" | "K" | "L";
  phone: string;
  name: string;
  gender: "M" | "F";
  birth: string;
  foreign_cd: "L" | "F";
  test_otp_hash: string | null;
  test_clients: string | null;
  test_expires_at: number | null;
  created_at: number;
};

/** The directory fields an import or a registration writes. */
export interface PersonFields {
  telco: string;
  phone: string;
  name: string;
  gender: string;
  birth: string;
  foreign: string;
  ci: string;
}

/** Who answers for a number, as its shard knows: nobody, a person at home here, or an id whose home is elsewhere. */
export type NumberHolder =
  | { at: "none" }
  /** `link`: the person's link to the client asked about, read in the same call (absent: not asked). */
  | { at: "here"; person: PersonRow; link?: LinkRow | null }
  | { at: "away"; id: number }
  /** An entry of a person at home here whose row no longer names the number (a move not yet finished, or done). */
  | { at: "stale"; id: number };

/** A link as stored: its items decoded. */
export interface LinkRow {
  plid: string;
  items: IdentityItem[];
  consentedAt: number;
}

/** A link's columns as stored, decoded. */
function linkRow(r: { plid: string; items: number; consented_at: number }): LinkRow {
  return { plid: r.plid, items: maskItems(r.items), consentedAt: r.consented_at };
}

export type EndableLink = {
  client_id: string;
  plid: string;
  subscriber_id: number;
};

/** A cross-shard step left to finish (directory-jobs.ts runs it; each is idempotent). */
export type DirectoryJob =
  /** `lease`: the writer's ci lease, dropped once the entry is written (or the person is gone). */
  | { kind: "index_ci"; ci: string; id: number; lease?: string }
  | { kind: "release"; phone: string; id: number }
  | { kind: "remove"; id: number; phone: string; reason: "number_reassigned" | "subscriber_removed" };

export interface QueuedJob {
  id: number;
  job: DirectoryJob;
}

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
  fields: PersonFields;
  /** The holder is displaced (removed, their logins ended); false when they are moving elsewhere in the same import. */
  displace: boolean;
  /** Where the new person's ci is indexed (this shard: written now; else a job). */
  ciShard: number;
  /** A person at home elsewhere, already moved there to this number: the number they left, freed by a job. */
  leaves: string | null;
}

export type ClaimResult = { seq: number; ok: false } | { seq: number; ok: true; id: number };

/** Expired grants deleted per opt-in: nothing else removes a grant whose device never returns. */
const GRANT_PURGE_BATCH = 50;
/** A job its caller has not finished within this is the alarm's. */
export const JOB_GRACE_MS = 30_000;
/** A displacement held for an import run that never commits runs after this anyway. */
export const RUN_HOLD_MS = 24 * 3600_000;
const JOB_RETRY_MS = 60_000;

export class DirectoryShard extends DurableObject {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    this.sql = ctx.storage.sql;
    this.sql.exec(SCHEMA);
  }

  // ---- people and numbers

  /**
   * Who holds `phone` (this shard answers for it). A person at home here counts only while their row
   * names the number; with `clientId`, they come with their link to that client (one call).
   */
  holder(shard: number, phone: string, clientId?: string): NumberHolder {
    // the number's entry, its person and their link in one statement (holderOf's rules, below)
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
    const person = row as unknown as PersonRow;
    const h = this.holderOf(shard, phone, id, person.id === id ? person : null);
    if (h.at !== "here" || clientId === undefined) return h;
    return { ...h, link: plid === null ? null : linkRow({ plid, items: items!, consented_at: consentedAt! }) };
  }

  /** A person at home here, or null. */
  person(id: number): PersonRow | null {
    return this.personRow(id);
  }

  /** People at home here, by id (the import's and the remover's batched reads). */
  people(ids: readonly number[]): PersonRow[] {
    return this.rowsIn<PersonRow>("SELECT * FROM people WHERE id", ids);
  }

  /** The directory people indexed here by ci (never a registered test number). */
  idsByCi(cis: readonly string[]): { ci: string; id: number }[] {
    return this.rowsIn<{ ci: string; id: number }>("SELECT ci, id FROM by_ci WHERE ci", cis);
  }

  /**
   * `idsByCi` for the cis `holder` may decide now: each ci not leased by another holder until later
   * is leased to `holder` until `until` and its person returned; the others come back `busy`. Two
   * writers of one ci (an import and a carrier-API sign-in, or two sign-ins) thus decide it one
   * after the other: neither makes a second person of a ci the other has not indexed yet.
   */
  leaseCis(cis: readonly string[], holder: string, until: number): { ci: string; id: number | null; busy: boolean }[] {
    const now = Date.now();
    const out: { ci: string; id: number | null; busy: boolean }[] = [];
    this.ctx.storage.transactionSync(() => {
      const held = new Map(
        this.rowsIn<{ ci: string; holder: string; until: number }>(
          "SELECT ci, holder, until FROM ci_leases WHERE ci",
          cis,
        ).map((r) => [r.ci, r]),
      );
      const ids = new Map(this.idsByCi(cis).map((r) => [r.ci, r.id]));
      const free: string[] = [];
      for (const ci of cis) {
        const l = held.get(ci);
        if (l && l.holder !== holder && l.until > now) out.push({ ci, id: null, busy: true });
        else {
          free.push(ci);
          out.push({ ci, id: ids.get(ci) ?? null, busy: false });
        }
      }
      this.sql.exec(
        "INSERT OR REPLACE INTO ci_leases (ci, holder, until) SELECT value, ?, ? FROM json_each(?)",
        holder,
        until,
        JSON.stringify(free),
      );
      this.sql.exec("DELETE FROM ci_leases WHERE ci IN (SELECT ci FROM ci_leases WHERE until <= ? LIMIT 50)", now);
    });
    return out;
  }

  /** Drops `holder`'s leases of these cis. */
  dropCiLeases(cis: readonly string[], holder: string): void {
    this.sql.exec(
      "DELETE FROM ci_leases WHERE holder = ? AND ci IN (SELECT value FROM json_each(?))",
      holder,
      JSON.stringify(cis),
    );
  }

  /**
   * The import's first pass over the rows whose numbers this shard answers for: a number held by
   * the same directory person (same ci) at home here is updated now (id, plids and consent kept);
   * for every other row the holder is returned, for the caller to decide with what other shards hold.
   */
  importAtNumbers(shard: number, rows: readonly (PersonFields & { seq: number })[], dryRun: boolean): NumberImport[] {
    const out: NumberImport[] = [];
    // the rows' entries in one statement (an import's numbers are mostly new: nothing to read after)
    const entries = new Map(
      this.sql
        .exec<{
          phone: string;
          id: number;
        }>(
          "SELECT phone, id FROM numbers WHERE phone IN (SELECT value FROM json_each(?))",
          JSON.stringify(rows.map((r) => r.phone)),
        )
        .toArray()
        .map((e) => [e.phone, e.id]),
    );
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
  updatePerson(id: number, fields: PersonFields): { done: boolean; previousPhone: string | null } {
    const p = this.personRow(id);
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
    run: string | null = null,
    lease: string | null = null,
  ): { results: ClaimResult[]; jobs: QueuedJob[] } {
    const results: ClaimResult[] = [];
    const jobs: QueuedJob[] = [];
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      // ids for the new people, taken from the sequence at once (the id of a claim found stale
      // is left unused: ids need only never be given twice)
      const fresh = claims.filter((c) => c.person === null).length;
      let seq = fresh > 0 ? this.takeSequence(fresh) : 0;
      const indexJobs: DirectoryJob[] = [];
      for (const c of claims) {
        const cur = this.sql.exec<{ id: number }>("SELECT id FROM numbers WHERE phone = ?", c.phone).toArray()[0];
        if ((cur?.id ?? null) !== c.expect) {
          results.push({ seq: c.seq, ok: false });
          continue;
        }
        let id: number;
        if (c.person === null) {
          id = this.insertPerson(shard, c.fields, null, now, seq++);
          // indexed here now, or by a job that carries the writer's lease: should the job fail, the
          // lease holds the ci until the job, run later, indexes it (the writer ends the others)
          if (c.ciShard === shard) this.indexCis([{ ci: c.fields.ci, id }]);
          else indexJobs.push({ kind: "index_ci", ci: c.fields.ci, id, ...(lease ? { lease } : {}) });
        } else {
          id = c.person;
          // A person whose removal from this number is queued here (displaced by an earlier write,
          // its removal running or held for an import run) does not take it back: the removal would
          // still find their row naming it and delete them under their own number entry. Decided
          // again by the caller once the removal is done.
          if (this.removalQueued(id, c.phone)) {
            results.push({ seq: c.seq, ok: false });
            continue;
          }
          if (homeOfId(id) === shard) {
            const moved = this.updatePerson(id, c.fields);
            if (!moved.done) {
              // gone since the decision (removed meanwhile): decided again by the caller
              results.push({ seq: c.seq, ok: false });
              continue;
            }
            const prev = moved.previousPhone!;
            if (prev === c.phone) {
              // already there
            } else if (numberShard(prev, shards) === shard) this.release(prev, id);
            else jobs.push(this.queue({ kind: "release", phone: prev, id }, now));
          } else if (c.leaves !== null && c.leaves !== c.phone)
            jobs.push(this.queue({ kind: "release", phone: c.leaves, id }, now));
        }
        this.sql.exec("INSERT OR REPLACE INTO numbers (phone, id) VALUES (?, ?)", c.phone, id);
        // Within an import run the displaced holder's removal waits for the run's commit: a later
        // chunk of the same file may name them at another number (they moved), and then they stay.
        if (c.expect !== null && c.displace) {
          const removal: DirectoryJob = { kind: "remove", id: c.expect, phone: c.phone, reason: "number_reassigned" };
          if (run === null) jobs.push(this.queue(removal, now));
          else this.queue(removal, now, run);
        }
        results.push({ seq: c.seq, ok: true, id });
      }
      jobs.push(...this.queueMany(indexJobs, now));
    });
    if (jobs.length || run !== null) this.armAlarm(now + JOB_GRACE_MS);
    return { results, jobs };
  }

  /** Whether the removal of person `id` from `phone` waits in this shard's jobs. */
  private removalQueued(id: number, phone: string): boolean {
    return (
      this.sql
        .exec(
          `SELECT 1 FROM jobs WHERE job ->> '$.kind' = 'remove' AND job ->> '$.id' = ? AND job ->> '$.phone' = ? LIMIT 1`,
          id,
          phone,
        )
        .toArray().length > 0
    );
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
    this.ctx.storage.transactionSync(() => {
      const cur = this.sql.exec<{ id: number }>("SELECT id FROM numbers WHERE phone = ?", phone).toArray()[0];
      if (cur?.id !== id) return;
      this.sql.exec("DELETE FROM numbers WHERE phone = ?", phone);
      job = this.queue({ kind: "remove", id, phone, reason }, Date.now());
    });
    if (job) this.armAlarm(Date.now() + JOB_GRACE_MS);
    return job;
  }

  /**
   * Deletes a person at home here with their grants, only while their row still names `phone` (a
   * person who moved to another number meanwhile stays) and once no link is left: links made since
   * the caller ended them (a consent landing meanwhile) come back to be ended first.
   */
  removePerson(id: number, phone: string): { removed: boolean; links: EndableLink[] } {
    let out: { removed: boolean; links: EndableLink[] } = { removed: false, links: [] };
    this.ctx.storage.transactionSync(() => {
      const p = this.personRow(id);
      if (!p || p.phone !== phone) return;
      const links = this.linksOf(id, null);
      if (links.length) {
        out = { removed: false, links };
        return;
      }
      this.sql.exec("DELETE FROM grants WHERE subscriber_id = ?", id);
      this.sql.exec("DELETE FROM people WHERE id = ?", id);
      out = { removed: true, links: [] };
    });
    return out;
  }

  /** Indexes a directory person's ci here (an import's new person whose ci hashes to this shard). */
  indexCi(ci: string, id: number): void {
    this.sql.exec("INSERT OR REPLACE INTO by_ci (ci, id) VALUES (?, ?)", ci, id);
  }

  /** `indexCi` for many, in one step, dropping the writers' leases on these cis (`leases`) in it. */
  indexCis(
    entries: readonly { ci: string; id: number }[],
    leases: readonly { ci: string; holder: string }[] = [],
  ): void {
    this.ctx.storage.transactionSync(() => {
      if (entries.length)
        this.sql.exec(
          "INSERT OR REPLACE INTO by_ci (ci, id) SELECT value ->> '$.ci', value ->> '$.id' FROM json_each(?)",
          JSON.stringify(entries),
        );
      if (leases.length)
        this.sql.exec(
          `DELETE FROM ci_leases WHERE (ci, holder) IN
             (SELECT value ->> '$.ci', value ->> '$.holder' FROM json_each(?))`,
          JSON.stringify(leases),
        );
    });
  }

  /** Drops a removed person's ci entry, only while it still names them. */
  unindexCi(ci: string, id: number): void {
    this.sql.exec("DELETE FROM by_ci WHERE ci = ? AND id = ?", ci, id);
  }

  /** Inserts people of the dev seed whose numbers are free (operator changes to seed rows are kept). */
  seed(
    shard: number,
    rows: readonly (PersonFields & { testOtpHash: string | null; ciShard: number })[],
  ): { ci: string; id: number; ciShard: number }[] {
    const out: { ci: string; id: number; ciShard: number }[] = [];
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      for (const r of rows) {
        if (this.sql.exec("SELECT 1 FROM numbers WHERE phone = ?", r.phone).toArray().length) continue;
        const id = this.insertPerson(shard, r, { otpHash: r.testOtpHash, clients: null, expiresAt: null }, now);
        this.sql.exec("INSERT INTO numbers (phone, id) VALUES (?, ?)", r.phone, id);
        out.push({ ci: r.ci, id, ciShard: r.ciShard });
      }
    });
    return out;
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

  // ---- the move from a single database (workers/admin/migrate/migrate.ts): idempotent, so a move resumes

  /**
   * People of the single database whose numbers this shard answers for, written as they were (a
   * number already held here keeps its holder: moved before, or imported since). Their ids here,
   * by their single-database id.
   */
  adoptPeople(
    shard: number,
    rows: readonly (PersonFields & {
      legacyId: number;
      testOtpHash: string | null;
      testClients: string | null;
      testExpiresAt: number | null;
      createdAt: number;
    })[],
  ): { legacyId: number; id: number; ci: string; indexed: boolean }[] {
    const out: { legacyId: number; id: number; ci: string; indexed: boolean }[] = [];
    this.ctx.storage.transactionSync(() => {
      for (const r of rows) {
        const cur = this.sql.exec<{ id: number }>("SELECT id FROM numbers WHERE phone = ?", r.phone).toArray()[0];
        if (cur) {
          const p = homeOfId(cur.id) === shard ? this.personRow(cur.id) : null;
          if (p && p.ci === r.ci)
            out.push({ legacyId: r.legacyId, id: cur.id, ci: r.ci, indexed: p.test_clients === null });
          continue;
        }
        const id = this.insertPerson(
          shard,
          r,
          { otpHash: r.testOtpHash, clients: r.testClients, expiresAt: r.testExpiresAt },
          r.createdAt,
        );
        this.sql.exec("INSERT INTO numbers (phone, id) VALUES (?, ?)", r.phone, id);
        out.push({ legacyId: r.legacyId, id, ci: r.ci, indexed: r.testClients === null });
      }
    });
    return out;
  }

  /** Links of the single database for people at home here, plids kept (one already here is left as it is). */
  adoptLinks(
    links: readonly {
      subscriberId: number;
      clientId: string;
      plid: string;
      items: number;
      consentedAt: number;
      linkedAt: number;
      lastLoginAt: number | null;
    }[],
  ): void {
    this.ctx.storage.transactionSync(() => {
      for (const l of links)
        if (!this.clientEnded(l.clientId))
          this.sql.exec(
            `INSERT OR IGNORE INTO links (subscriber_id, client_id, plid, items, consented_at, linked_at, last_login_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
            l.subscriberId,
            l.clientId,
            l.plid,
            l.items,
            l.consentedAt,
            l.linkedAt,
            l.lastLoginAt,
          );
    });
  }

  /** Records where moved plids that name this shard have their links. */
  adoptPlidHomes(entries: readonly { plid: string; home: number }[]): void {
    for (const e of entries)
      this.sql.exec("INSERT OR REPLACE INTO plid_homes (plid, home) VALUES (?, ?)", e.plid, e.home);
  }

  // ---- test numbers (registered for app review: always at home in their number's shard)

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
    fields: PersonFields,
    test: { otpHash: string; clients: string; expiresAt: number },
  ): { id: number; jobs: QueuedJob[] } | null {
    let out: { id: number; jobs: QueuedJob[] } | null = null;
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      const cur = this.sql.exec<{ id: number }>("SELECT id FROM numbers WHERE phone = ?", fields.phone).toArray()[0];
      if ((cur?.id ?? null) !== expect) return;
      if (update && expect !== null) {
        const p = this.personRow(expect);
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
      const id = this.insertPerson(shard, fields, test, now);
      this.sql.exec("INSERT OR REPLACE INTO numbers (phone, id) VALUES (?, ?)", fields.phone, id);
      const jobs =
        expect === null
          ? []
          : [this.queue({ kind: "remove", id: expect, phone: fields.phone, reason: "subscriber_removed" }, now)];
      out = { id, jobs };
    });
    if (out && (out as { jobs: QueuedJob[] }).jobs.length) this.armAlarm(now + JOB_GRACE_MS);
    return out;
  }

  /** Registered test numbers here with a number after `after`, by number, at most `limit`. */
  testNumbers(after: string, limit: number): PersonRow[] {
    return this.sql
      .exec<PersonRow>(
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
  counts(): { people: number; testNumbers: number; reviewNumbers: number; jobs: number } {
    const m = new Map(
      this.sql
        .exec<{ key: string; value: number }>("SELECT key, value FROM meta")
        .toArray()
        .map((r) => [r.key, r.value]),
    );
    const reviewNumbers = this.sql
      .exec<{ n: number }>("SELECT count(*) AS n FROM people WHERE test_clients IS NOT NULL")
      .one().n;
    return {
      people: m.get("people") ?? 0,
      testNumbers: m.get("test_numbers") ?? 0,
      reviewNumbers,
      jobs: this.pendingJobs(),
    };
  }

  // ---- links (docs/storage.md): one plid per (client, person)

  findLink(subscriberId: number, clientId: string): LinkRow | null {
    const r = this.sql
      .exec<{ plid: string; items: number; consented_at: number }>(
        "SELECT plid, items, consented_at FROM links WHERE subscriber_id = ? AND client_id = ?",
        subscriberId,
        clientId,
      )
      .toArray()[0];
    return r ? linkRow(r) : null;
  }

  /**
   * Records consent: keeps the existing plid, or links with `newPlid`. Null when the person is
   * gone (removed, or their number reassigned) or the client deleted since the sign-in began.
   */
  recordConsent(subscriberId: number, clientId: string, items: number, newPlid: string): string | null {
    return this.personRow(subscriberId) ? this.link(subscriberId, clientId, items, newPlid, false) : null;
  }

  /** Whether the client was deleted (its links here taken, and none written since). */
  private clientEnded(clientId: string): boolean {
    return this.sql.exec("SELECT 1 FROM ended_clients WHERE client_id = ?", clientId).toArray().length > 0;
  }

  /**
   * The link written (or its consent renewed) for a person at home here, with its last login now
   * when `login` (a sign-in's consent); null for a deleted client.
   */
  private link(subscriberId: number, clientId: string, items: number, newPlid: string, login: boolean): string | null {
    if (this.clientEnded(clientId)) return null;
    const now = Date.now();
    return (
      this.sql
        .exec<{ plid: string }>(
          `INSERT INTO links (subscriber_id, client_id, plid, items, consented_at, linked_at, last_login_at)
           VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)
           ON CONFLICT (subscriber_id, client_id) DO UPDATE SET items = excluded.items, consented_at = excluded.consented_at,
             last_login_at = coalesce(excluded.last_login_at, last_login_at)
           RETURNING plid`,
          subscriberId,
          clientId,
          newPlid,
          items,
          now,
          login ? now : null,
        )
        .toArray()[0]?.plid ?? null
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
  ): { plid: string; person: PersonRow } | null {
    const person = this.personRow(subscriberId);
    const plid = person ? this.link(subscriberId, clientId, items, newPlid, true) : null;
    return plid === null ? null : { plid, person: person! };
  }

  linkExists(clientId: string, plid: string): boolean {
    return this.sql.exec("SELECT 1 FROM links WHERE plid = ? AND client_id = ?", plid, clientId).toArray().length > 0;
  }

  /** Records a login of the link; false when no such link is here. */
  touchLink(clientId: string, plid: string): boolean {
    return (
      this.sql
        .exec(
          "UPDATE links SET last_login_at = ? WHERE plid = ? AND client_id = ? RETURNING 1",
          Date.now(),
          plid,
          clientId,
        )
        .toArray().length > 0
    );
  }

  /** Where a plid moved from the single database has its link (null: a plid that names its home). */
  plidForwards(plids: readonly string[]): { plid: string; home: number }[] {
    return this.rowsIn<{ plid: string; home: number }>("SELECT plid, home FROM plid_homes WHERE plid", plids);
  }

  /** The person's links with the latest live grant of each (their /account page). */
  connections(subscriberId: number): {
    client_id: string;
    items: number;
    connected_at: number;
    last_login_at: number | null;
    auto_until: number | null;
  }[] {
    return this.sql
      .exec<{
        client_id: string;
        items: number;
        connected_at: number;
        last_login_at: number | null;
        auto_until: number | null;
      }>(
        `SELECT l.client_id, l.items, l.linked_at AS connected_at, l.last_login_at,
           (SELECT max(g.expires_at) FROM grants g WHERE g.subscriber_id = l.subscriber_id AND g.client_id = l.client_id
             AND g.expires_at > ?) AS auto_until
         FROM links l WHERE l.subscriber_id = ?`,
        Date.now(),
        subscriberId,
      )
      .toArray();
  }

  /** The links of a person (every client, or one). */
  linksOf(subscriberId: number, clientId: string | null): EndableLink[] {
    return this.sql
      .exec<EndableLink>(
        "SELECT client_id, plid, subscriber_id FROM links WHERE subscriber_id = ? AND (?2 IS NULL OR client_id = ?2)",
        subscriberId,
        clientId,
      )
      .toArray();
  }

  /** The client's link of this plid, or null. */
  linkByPlid(clientId: string, plid: string): EndableLink | null {
    return (
      this.sql
        .exec<EndableLink>(
          "SELECT client_id, plid, subscriber_id FROM links WHERE plid = ? AND client_id = ?",
          plid,
          clientId,
        )
        .toArray()[0] ?? null
    );
  }

  /** Deletes links (by client and plid) with their person's grants for that client. */
  deleteLinks(links: readonly EndableLink[]): void {
    this.ctx.storage.transactionSync(() => {
      for (const l of links) {
        this.sql.exec("DELETE FROM grants WHERE subscriber_id = ? AND client_id = ?", l.subscriber_id, l.client_id);
        this.sql.exec("DELETE FROM links WHERE plid = ? AND client_id = ?", l.plid, l.client_id);
      }
    });
  }

  /** Deletes the links holding these plids (ends whose deletion failed) with their grants; the plids not found here. */
  deleteLinksByPlid(plids: readonly string[]): string[] {
    const list = JSON.stringify(plids);
    const here = new Set(
      this.sql
        .exec<{ plid: string }>("SELECT plid FROM links WHERE plid IN (SELECT value FROM json_each(?))", list)
        .toArray()
        .map((r) => r.plid),
    );
    this.ctx.storage.transactionSync(() => {
      this.sql.exec(
        `DELETE FROM grants WHERE EXISTS (SELECT 1 FROM links l WHERE l.plid IN (SELECT value FROM json_each(?))
           AND l.client_id = grants.client_id AND l.subscriber_id = grants.subscriber_id)`,
        list,
      );
      this.sql.exec("DELETE FROM links WHERE plid IN (SELECT value FROM json_each(?))", list);
    });
    return plids.filter((p) => !here.has(p));
  }

  /**
   * Deletes up to `limit` of a client's links with their grants (a deleted client); the plids
   * deleted. The client's end is recorded in the same step: from the first call on, no consent for
   * it links here, so the calls that follow take every link there will ever be.
   */
  takeClientLinks(clientId: string, limit: number): string[] {
    let plids: string[] = [];
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("INSERT OR IGNORE INTO ended_clients (client_id, at) VALUES (?, ?)", clientId, Date.now());
      plids = this.sql
        .exec<{ plid: string }>(
          `DELETE FROM links WHERE (subscriber_id, client_id) IN
             (SELECT subscriber_id, client_id FROM links WHERE client_id = ?1 LIMIT ?2) RETURNING plid`,
          clientId,
          limit,
        )
        .toArray()
        .map((r) => r.plid);
      if (plids.length < limit) this.sql.exec("DELETE FROM grants WHERE client_id = ?", clientId);
    });
    return plids;
  }

  // ---- automatic-login grants: (device, client) → person; a device's grants live in its id's shard

  putGrant(deviceHash: string, clientId: string, subscriberId: number, expiresAt: number): void {
    const now = Date.now();
    this.sql.exec(
      `INSERT INTO grants (device_hash, client_id, subscriber_id, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (device_hash, client_id) DO UPDATE SET subscriber_id = excluded.subscriber_id, expires_at = excluded.expires_at`,
      deviceHash,
      clientId,
      subscriberId,
      expiresAt,
    );
    this.sql.exec(
      "DELETE FROM grants WHERE (device_hash, client_id) IN (SELECT device_hash, client_id FROM grants WHERE expires_at <= ? LIMIT ?)",
      now,
      GRANT_PURGE_BATCH,
    );
  }

  /** The person's grants on `oldHash` move to `newHash` (both here); whatever else is on `oldHash` ends. */
  replaceDevice(oldHash: string, newHash: string, subscriberId: number): void {
    this.sql.exec(
      "UPDATE grants SET device_hash = ? WHERE device_hash = ? AND subscriber_id = ?",
      newHash,
      oldHash,
      subscriberId,
    );
    this.sql.exec("DELETE FROM grants WHERE device_hash = ?", oldHash);
  }

  /** Every grant on the device that is not `subscriberId`'s ends, for every client. */
  endOthersOnDevice(deviceHash: string, subscriberId: number): void {
    this.sql.exec("DELETE FROM grants WHERE device_hash = ? AND subscriber_id <> ?", deviceHash, subscriberId);
  }

  /** `endOthersOnDevice`, then the person's own live grant of (device, client): its expiry, or null. */
  keepOwnGrant(deviceHash: string, subscriberId: number, clientId: string): number | null {
    this.endOthersOnDevice(deviceHash, subscriberId);
    return (
      this.sql
        .exec<{ expires_at: number }>(
          "SELECT expires_at FROM grants WHERE device_hash = ? AND client_id = ? AND subscriber_id = ? AND expires_at > ?",
          deviceHash,
          clientId,
          subscriberId,
          Date.now(),
        )
        .toArray()[0]?.expires_at ?? null
    );
  }

  /** The live grant of (device, client): its person and expiry, or null. */
  findGrant(deviceHash: string, clientId: string): { subscriberId: number; expiresAt: number } | null {
    const r = this.sql
      .exec<{ subscriber_id: number; expires_at: number }>(
        "SELECT subscriber_id, expires_at FROM grants WHERE device_hash = ? AND client_id = ? AND expires_at > ?",
        deviceHash,
        clientId,
        Date.now(),
      )
      .toArray()[0];
    return r ? { subscriberId: r.subscriber_id, expiresAt: r.expires_at } : null;
  }

  deleteGrant(deviceHash: string, clientId: string): void {
    this.sql.exec("DELETE FROM grants WHERE device_hash = ? AND client_id = ?", deviceHash, clientId);
  }

  /** Ends every grant of the person for the client (every device); how many. */
  endAutoLogin(clientId: string, subscriberId: number): number {
    return this.sql
      .exec("DELETE FROM grants WHERE subscriber_id = ? AND client_id = ? RETURNING 1", subscriberId, clientId)
      .toArray().length;
  }

  // ---- jobs

  /** Marks jobs finished by their caller. */
  jobsDone(ids: readonly number[]): void {
    if (ids.length) this.sql.exec("DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?))", JSON.stringify(ids));
  }

  /**
   * Jobs due (their caller has had its grace), or with `all` every job not held for an import run,
   * oldest first; each is pushed back while it runs.
   */
  dueJobs(limit: number, all = false): QueuedJob[] {
    const now = Date.now();
    const rows = this.sql
      .exec<{
        id: number;
        job: string;
      }>(
        "SELECT id, job FROM jobs WHERE next_at <= ?1 OR (?2 AND run IS NULL) ORDER BY id LIMIT ?3",
        now,
        all ? 1 : 0,
        limit,
      )
      .toArray();
    for (const r of rows)
      this.sql.exec("UPDATE jobs SET attempts = attempts + 1, next_at = ? WHERE id = ?", now + JOB_RETRY_MS, r.id);
    return rows.map((r) => ({ id: r.id, job: JSON.parse(r.job) as DirectoryJob }));
  }

  /** The jobs held for an import run, released to run now (the run's commit). */
  releaseRun(run: string): QueuedJob[] {
    return this.sql
      .exec<{
        id: number;
        job: string;
      }>("UPDATE jobs SET run = NULL, next_at = ? WHERE run = ? RETURNING id, job", Date.now() + JOB_GRACE_MS, run)
      .toArray()
      .map((r) => ({ id: r.id, job: JSON.parse(r.job) as DirectoryJob }));
  }

  /** How many jobs wait (the operator's view of cross-shard work in flight). */
  pendingJobs(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs").one().n;
  }

  override async alarm(): Promise<void> {
    await runQueuedJobs(this.env as never, this);
    const next = this.sql.exec<{ at: number | null }>("SELECT min(next_at) AS at FROM jobs").one().at;
    if (next !== null) this.armAlarm(Math.max(next, Date.now() + 1000));
  }

  // ---- private

  /** Rows of `select` (ending in the key column) whose key is one of `values`, bound as one JSON parameter. */
  private rowsIn<T extends Record<string, SqlStorageValue>>(select: string, values: readonly unknown[]): T[] {
    return this.sql.exec<T>(`${select} IN (SELECT value FROM json_each(?))`, JSON.stringify(values)).toArray();
  }

  /** Who holds `phone`, given its entry's id here (null: none). */
  /** The holder of `phone` from its entry's `id`; `known`, the person's row when already read. */
  private holderOf(shard: number, phone: string, id: number | null, known?: PersonRow | null): NumberHolder {
    if (id === null) return { at: "none" };
    if (homeOfId(id) !== shard) return { at: "away", id };
    const p = known === undefined ? this.personRow(id) : known;
    return p && p.phone === phone ? { at: "here", person: p } : { at: "stale", id };
  }

  private personRow(id: number): PersonRow | null {
    return this.sql.exec<PersonRow>("SELECT * FROM people WHERE id = ?", id).toArray()[0] ?? null;
  }

  private insertPerson(
    shard: number,
    f: PersonFields,
    test: { otpHash: string | null; clients: string | null; expiresAt: number | null } | null,
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

  private writeFields(id: number, f: PersonFields): void {
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

  /** Queues many jobs in one statement (an import's ci index entries: one job each). */
  private queueMany(list: readonly DirectoryJob[], now: number): QueuedJob[] {
    if (list.length === 0) return [];
    const texts = list.map((j) => JSON.stringify(j));
    const byText = new Map(texts.map((t, i) => [t, list[i]!]));
    return this.sql
      .exec<{ id: number; job: string }>(
        "INSERT INTO jobs (job, created_at, next_at) SELECT value, ?, ? FROM json_each(?) RETURNING id, job",
        now,
        now + JOB_GRACE_MS,
        JSON.stringify(texts),
      )
      .toArray()
      .map((r) => ({ id: r.id, job: byText.get(r.job)! }));
  }

  private queue(job: DirectoryJob, now: number, run: string | null = null): QueuedJob {
    const id = this.sql
      .exec<{ id: number }>(
        "INSERT INTO jobs (job, created_at, next_at, run) VALUES (?, ?, ?, ?) RETURNING id",
        JSON.stringify(job),
        now,
        now + (run === null ? JOB_GRACE_MS : RUN_HOLD_MS),
        run,
      )
      .one().id;
    return { id, job };
  }

  private armAlarm(at: number): void {
    void this.ctx.storage
      .getAlarm()
      .then((cur) => {
        if (cur === null || cur > at) return this.ctx.storage.setAlarm(at);
      })
      .catch(() => {});
  }
}
