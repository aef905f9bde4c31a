// How directory rows are written over the shards, for an import (the admin API's, a chunk at a time,
// and its run's commit) and for a carrier-API sign-in's one row, and how a person is removed
// (docs/account.md "A subscriber is a person", docs/storage.md "Changes across shards"). A
// subscriber is a person, identified by `ci`:
// - the same `ci` at the same number (another name or carrier) is an update: id, plids and consent kept;
// - the same `ci` under a new number is the person who changed number: they take the number (plids
//   kept), and the old one is freed;
// - a number held by another `ci` (not moving elsewhere in this import), or by a registered test
//   number, passed to another person: the previous holder is removed, every link of every app ended
//   as a disconnect is (codes and tokens end, an event `number_reassigned`, audited), and the new
//   person starts with nothing.
// A row's `ci` is never written once the row exists, and a test number's code never: a row holds one
// person for its life. The rows go to their numbers' shards in parallel; each number passes to its
// new holder in one step of its shard, only while the holder is still the one decided against (a
// write landing in between, a test number registered or another removal, makes the row be decided
// again), and the parts in other shards (the new ci's index, a move's old number, the displaced
// person's removal) are jobs queued in that same step. A row's ci is leased in its ci's shard from
// its decision until its index entry is written: an import and a sign-in (or two sign-ins) naming
// one ci decide it one after the other, so neither makes a second person of it.

import {
  subscriberRowAtNumber,
  type DirectoryEnv,
  dirAt,
  ciShard,
  dirShards,
  groupBy,
  homeOfId,
  numberShard,
  type SubscriberInput,
  type SubscriberFields,
  type SubscriberRow,
  type Claim,
  type NumberHolder,
} from "../directory/index";
import { finishAllJobs, runJob, runJobs, type JobEnv, type ShardJobs } from "./directory-jobs";
import { noteSignals } from "./sim-signals";

/** How an import changed the directory. */
export interface ImportCounts {
  inserted: number;
  updated: number;
  /** Numbers that passed to another person (another `ci`): the previous person's logins ended. */
  reassigned: number;
  /** People whose stored risk signals the rows changed (store/directory/risk.ts); a dry run counts none. */
  signals: number;
}

/** Rounds of deciding again the rows whose number changed hands between the decision and the write. */
const MAX_ROUNDS = 5;

type Row = SubscriberFields & { seq: number };

/** People by id, read at their homes (one call per home). */
async function peopleById(env: DirectoryEnv, ids: readonly number[]): Promise<Map<number, SubscriberRow>> {
  const out = new Map<number, SubscriberRow>();
  await Promise.all(
    [...groupBy([...new Set(ids)], homeOfId)].map(async ([home, list]) => {
      for (const p of await dirAt(env, home).people(list)) out.set(p.id, p);
    }),
  );
  return out;
}

/** How long a ci stays leased to a writer that died holding it. */
const CI_LEASE_MS = 60_000;

/** A ci is being decided by another writer for longer than this one waits (the caller retries later). */
export class DirectoryBusy extends Error {}

/** How long an import holds the import lease: far longer than one request of ADMIN_MAX_IMPORT_ROWS takes. */
const LEASE_MS = 120_000;
/** The longest pause between two tries of a waiting import for the lease (one call to shard 0 each). */
const LEASE_POLL_MS = 40;
/** How long an import waits for another to finish before it is refused (the caller retries). */
const LEASE_WAIT_MS = 60_000;

/** Another import holds the lease; `until` is when it ends unless renewed (epoch ms). */
export class ImportBusy extends Error {
  constructor(readonly until: number) {
    super("another import is running");
  }
}

/**
 * Runs `work` holding the directory's import lease (in shard 0): imports, their commits and the
 * sign-ins that pass a number to another person run one at a time; another waits for it, up to
 * `waitMs`. An import takes it before reading its body, so requests waiting their turn hold no
 * parsed rows (an isolate's memory is 128 MB).
 */
export async function underLease<T>(env: JobEnv, work: () => Promise<T>, waitMs = LEASE_WAIT_MS): Promise<T> {
  const lease = crypto.randomUUID();
  const lock = dirAt(env, 0);
  const waitUntil = Date.now() + waitMs;
  // polled often: the next chunk of a file, sent while this one is written, starts soon after it
  for (
    let wait = 10;
    !(await lock.takeImportLease(lease, Date.now() + LEASE_MS));
    wait = Math.min(wait * 2, LEASE_POLL_MS)
  ) {
    if (Date.now() > waitUntil) throw new ImportBusy((await lock.importLeaseUntil()) ?? Date.now());
    await new Promise((r) => setTimeout(r, wait));
  }
  try {
    return await work();
  } finally {
    await lock.dropImportLease(lease).catch(() => undefined);
  }
}

/** A single-row write found that it passes the number to another person: it must hold the import lease. */
class Displaces extends Error {}

/** A writer's ci leases: the cis it took, by ci shard, dropped when it is done. */
interface CiLeases {
  holder: string;
  waitMs: number;
  taken: Map<number, Set<string>>;
  /** Cis of new people whose index job failed: the job ends their lease when it runs. */
  keep: Set<string>;
}

/**
 * The directory person (not a registered test number) of each ci, where the index has one. With
 * `lease`, each ci is leased to the writer first, waiting up to its `waitMs` for another writer's.
 */
async function peopleByCi(
  env: DirectoryEnv,
  rows: readonly Row[],
  n: number,
  lease: CiLeases | null,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (lease === null) {
    await Promise.all(
      [...groupBy(rows, (r) => ciShard(r.ci, n))].map(async ([s, list]) => {
        for (const e of await dirAt(env, s).idsByCi(list.map((r) => r.ci))) out.set(e.ci, e.id);
      }),
    );
    return out;
  }
  const giveUp = Date.now() + lease.waitMs;
  let want = rows.map((r) => r.ci);
  for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
    const busy: string[] = [];
    await Promise.all(
      [...groupBy(want, (ci) => ciShard(ci, n))].map(async ([s, cis]) => {
        const until = Date.now() + CI_LEASE_MS;
        for (const e of await dirAt(env, s).leaseCis(cis, lease.holder, until)) {
          if (e.busy) {
            busy.push(e.ci);
            continue;
          }
          const taken = lease.taken.get(s) ?? new Set<string>();
          lease.taken.set(s, taken.add(e.ci));
          if (e.id !== null) out.set(e.ci, e.id);
        }
      }),
    );
    if (busy.length === 0) return out;
    if (Date.now() + wait > giveUp) throw new DirectoryBusy(`${busy.length} cis are being written by another writer`);
    await new Promise((r) => setTimeout(r, wait));
    want = busy;
  }
}

/** What `applyRows` did: the counts, and each written row's person id by its index in the input. */
export interface Applied extends Omit<ImportCounts, "signals"> {
  ids: Map<number, number>;
}

export interface ApplyOptions {
  /** Only count what would be done. */
  dryRun?: boolean;
  /** The import run whose displacements wait for its commit (docs/storage.md "Import runs"). */
  run?: string | null;
  /** How long to wait for another writer's ci lease before giving up with DirectoryBusy. */
  ciWaitMs?: number;
  /** False: a row that would pass its number to another person throws Displaces before writing. */
  displaces?: boolean;
}

/** An import waits this long for a sign-in's lease on one of its cis (a sign-in holds it for a few calls). */
const IMPORT_CI_WAIT_MS = 30_000;

/**
 * Writes one person as an import row is written, without the import lease (a carrier-API sign-in):
 * it touches one number (and the number a moving person leaves), each only while it is still as
 * decided, and its ci under a ci lease. Their id. Throws DirectoryBusy when the ci stays leased.
 */
export async function writeSubscriber(env: JobEnv, row: SubscriberInput, ciWaitMs: number): Promise<number> {
  let applied: Applied;
  try {
    applied = await applyRows(env, [row], { ciWaitMs, displaces: false });
  } catch (err) {
    if (!(err instanceof Displaces)) throw err;
    // The number passes to another person (a reassignment): that runs as an import does, one at a
    // time. An import's earlier row may have updated this number's holder in place, and displacing
    // them in the middle of it would give a directory neither order gives. The import lease is
    // taken before any ci lease, in the order an import takes them.
    try {
      applied = await underLease(env, () => applyRows(env, [row], { ciWaitMs }), ciWaitMs);
    } catch (e) {
      throw e instanceof ImportBusy ? new DirectoryBusy("an import is running") : e;
    }
  }
  const { ids } = applied;
  const id = ids.get(0);
  if (id === undefined) throw new Error("writeSubscriber: the row was not written");
  return id;
}

/**
 * Decides and writes rows (one of each number and of each ci). The import's caller holds the import
 * lease; a single row needs none.
 */
export async function applyRows(
  env: JobEnv,
  input: readonly SubscriberInput[],
  opts: ApplyOptions = {},
): Promise<Applied> {
  const dryRun = opts.dryRun ?? false;
  const lease: CiLeases | null = dryRun
    ? null
    : { holder: crypto.randomUUID(), waitMs: opts.ciWaitMs ?? IMPORT_CI_WAIT_MS, taken: new Map(), keep: new Set() };
  try {
    return await decideAndWrite(env, input, dryRun, opts.run ?? null, lease, opts.displaces ?? true);
  } finally {
    // The leases end when the writer is done with every row (a row decided again may still lean on
    // another row's ci: a holder named elsewhere in the same import is moving, not displaced). A
    // new person whose index job failed keeps theirs until the job, run later, indexes them.
    if (lease)
      await Promise.all(
        [...lease.taken].map(([s, cis]) => {
          const end = [...cis].filter((ci) => !lease.keep.has(ci));
          return end.length ? dirAt(env, s).dropCiLeases(end, lease.holder) : undefined;
        }),
      ).catch(() => undefined);
  }
}

async function decideAndWrite(
  env: JobEnv,
  input: readonly SubscriberInput[],
  dryRun: boolean,
  run: string | null,
  lease: CiLeases | null,
  displaces: boolean,
): Promise<Applied> {
  const n = dirShards(env);
  const counts: Applied = { inserted: 0, updated: 0, reassigned: 0, ids: new Map() };
  // every person named by the import: a holder among them is moving, not displaced
  const named = new Set(input.map((r) => r.ci));
  let pending: Row[] = input.map((r, seq) => ({ ...r, seq }));
  for (let round = 0; pending.length > 0; round++) {
    if (round === MAX_ROUNDS) throw new DirectoryBusy(`import: ${pending.length} rows kept changing hands`);
    // a row decided again waits a moment for what changed it to finish (a removal running)
    if (round > 0) await new Promise((r) => setTimeout(r, 20 * 2 ** round));
    // 1. At each number's shard: the same person at home there is updated at once (the common case).
    const holders = new Map<number, NumberHolder>();
    await Promise.all(
      [...groupBy(pending, (r) => numberShard(r.phone, n))].map(async ([s, rows]) => {
        for (const o of await dirAt(env, s).importAtNumbers(s, rows, dryRun)) {
          if ("done" in o) {
            counts.updated++;
            counts.ids.set(o.seq, o.id);
          } else holders.set(o.seq, o.holder);
        }
      }),
    );
    const rest = pending.filter((r) => holders.has(r.seq));
    if (rest.length === 0) break;

    // 2. What the other shards hold: holders at home elsewhere, and each row's person by ci.
    const byCi = await peopleByCi(env, rest, n, lease);
    const away = rest.flatMap((r) => {
      const h = holders.get(r.seq)!;
      return h.at === "away" ? [h.id] : [];
    });
    const people = await peopleById(env, [...away, ...byCi.values()]);

    // 3. Decide each row.
    const decided: (Claim & { kind: "inserted" | "updated" })[] = [];
    for (const r of rest) {
      const h = holders.get(r.seq)!;
      const expect = h.at === "none" ? null : h.at === "here" ? h.person.id : h.id;
      const held = h.at === "here" ? h.person : h.at === "away" ? people.get(h.id) : undefined;
      const holder = held && held.phone === r.phone ? held : null;
      const fields: SubscriberFields = {
        telco: r.telco,
        phone: r.phone,
        name: r.name,
        gender: r.gender,
        birth: r.birth,
        foreign: r.foreign,
        ci: r.ci,
      };
      const base = { seq: r.seq, phone: r.phone, expect, fields, ciShard: ciShard(r.ci, n), leaves: null };
      if (holder && holder.ci === r.ci && holder.test_clients === null) {
        decided.push({ ...base, person: holder.id, displace: false, kind: "updated" });
        continue;
      }
      const id = byCi.get(r.ci);
      const found = id === undefined ? undefined : people.get(id);
      const person = found && found.ci === r.ci && found.test_clients === null ? found : null;
      const moving = holder !== null && holder.test_clients === null && named.has(holder.ci);
      const displace = holder !== null && holder.id !== person?.id && !moving;
      decided.push({ ...base, person: person?.id ?? null, displace, kind: person ? "updated" : "inserted" });
    }
    if (dryRun) {
      for (const d of decided) {
        counts[d.kind]++;
        if (d.displace) counts.reassigned++;
      }
      break;
    }

    if (!displaces && decided.some((d) => d.displace)) throw new Displaces();

    // 4. A person at home in another shard than the number's takes the number in their own row
    // first (only while it is still theirs, same ci); then each number's shard applies its claims
    // in one step, and the jobs they queued run now. A person gone meanwhile is decided again.
    const retry = new Set<number>();
    const queued: ShardJobs[] = [];
    await Promise.all(
      decided.map(async (d) => {
        if (d.person === null || homeOfId(d.person) === numberShard(d.phone, n)) return;
        const moved = await dirAt(env, homeOfId(d.person)).updateSubscriber(d.person, d.fields);
        if (!moved.done) retry.add(d.seq);
        else d.leaves = moved.previousPhone;
      }),
    );
    await Promise.all(
      [
        ...groupBy(
          decided.filter((d) => !retry.has(d.seq)),
          (d) => numberShard(d.phone, n),
        ),
      ].map(async ([s, claims]) => {
        const { results, jobs } = await dirAt(env, s).claim(
          s,
          n,
          claims.map(({ kind: _, ...c }) => c),
          run,
          lease?.holder ?? null,
        );
        const bySeq = new Map(claims.map((c) => [c.seq, c]));
        for (const res of results) {
          if (!res.ok) {
            retry.add(res.seq);
            continue;
          }
          const c = bySeq.get(res.seq)!;
          counts[c.kind]++;
          counts.ids.set(res.seq, res.id);
          if (c.displace) counts.reassigned++;
        }
        queued.push({ shard: s, jobs });
      }),
    );
    // what the claims queued in other shards, run now (the ci index entries in batches); a new
    // person whose index job failed keeps the writer's lease on their ci until the job runs
    for (const j of (await runJobs(env, queued, true)).left)
      if (j.job.kind === "index_ci" && j.job.lease) lease?.keep.add(j.job.ci);
    pending = rest.filter((r) => retry.has(r.seq));
  }
  return counts;
}

/**
 * An import's rows applied to the directory (with `dryRun`, only counted). The caller holds the
 * import lease (`underLease`): imports run one at a time. What earlier changes left unfinished (a
 * job whose caller died) is finished first: the decision reads the ci index and the numbers, which
 * such a job would leave behind.
 */
export async function importDirectory(
  env: JobEnv,
  input: readonly SubscriberInput[],
  dryRun: boolean,
  run: string | null = null,
): Promise<ImportCounts> {
  if (!(await finishAllJobs(env))) throw new Error("import: the directory has changes that keep failing");
  const { ids, ...counts } = await applyRows(env, input, { dryRun, run });
  // the rows' risk signals, once their people are written (a row without them leaves what is stored)
  const writes = dryRun
    ? []
    : input.flatMap((r, seq) => {
        const id = ids.get(seq);
        return r.sim && id !== undefined ? [{ id, ci: r.ci, sim: r.sim }] : [];
      });
  const signals = writes.length ? (await noteSignals(env, writes)).changed : 0;
  return { ...counts, signals };
}

/**
 * Ends an import run (a file sent in several requests with the same `run`): the removals of the
 * holders its chunks displaced, held until now, run (docs/storage.md "Import runs"). A displaced
 * person whom a later chunk moved to another number is not removed. Idempotent: a second commit
 * finds nothing held. Returns how many people were removed, and how many removals are left to the
 * shards' alarms (they failed now).
 */
export async function commitRun(env: JobEnv, run: string): Promise<{ removed: number; left: number }> {
  return underLease(env, async () => {
    const results = await Promise.all(
      Array.from({ length: dirShards(env) }, async (_, s) =>
        runJobs(env, [{ shard: s, jobs: await dirAt(env, s).releaseRun(run) }]),
      ),
    );
    return { removed: results.reduce((n, r) => n + r.removed, 0), left: results.reduce((n, r) => n + r.failed, 0) };
  });
}

/**
 * Removes the person holding `phone` (by the id read, only while they still hold it): the number
 * is freed and the removal queued in one step of its shard, then run (their logins end as
 * disconnects do, reason `subscriber_removed`, then the row goes with anything linked meanwhile).
 * A removal that fails after its first step is finished by that shard's alarm. False when `id`
 * no longer held the number.
 */
export async function removeHolder(env: JobEnv, phone: string, id: number): Promise<boolean> {
  const s = numberShard(phone, dirShards(env));
  const shard = dirAt(env, s);
  const job = await shard.startRemoval(phone, id, "subscriber_removed");
  if (!job) return false;
  await runJob(env, job.job);
  await shard.jobsDone([job.id]);
  return true;
}

/** Removes the subscriber at `phone`; the removed id, or null. */
export async function deleteSubscriber(env: JobEnv, phone: string): Promise<number | null> {
  const p = await subscriberRowAtNumber(env, phone);
  if (!p) return null;
  return (await removeHolder(env, phone, p.id)) ? p.id : null;
}
