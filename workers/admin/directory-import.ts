// A directory import over the shards (docs/account.md "A subscriber is a person", docs/storage.md
// "Changes across shards"). A subscriber is a person, identified by `ci`:
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
// person's removal) are jobs queued in that same step.

import { dirAt, dirShards, type DirectoryEnv } from "../provider/store/directory";
import { ciShard, groupBy, homeOfId, numberShard } from "../provider/store/directory-keys";
import type { Claim, NumberHolder, PersonFields, PersonRow } from "../provider/store/directory-shard";
import { finishAllJobs, runJobs, type JobEnv, type ShardJobs } from "../provider/store/directory-jobs";
import type { Subscriber } from "../provider/store/directory";

/** One validated directory row, in the table's terms. */
export type SubscriberInput = Omit<Subscriber, "id">;

/** How an import changed the directory. */
export interface ImportCounts {
  inserted: number;
  updated: number;
  /** Numbers that passed to another person (another `ci`): the previous person's logins ended. */
  reassigned: number;
}

/** Rounds of deciding again the rows whose number changed hands between the decision and the write. */
const MAX_ROUNDS = 5;

type Row = PersonFields & { seq: number };

/** People by id, read at their homes (one call per home). */
async function peopleById(env: DirectoryEnv, ids: readonly number[]): Promise<Map<number, PersonRow>> {
  const out = new Map<number, PersonRow>();
  await Promise.all(
    [...groupBy([...new Set(ids)], homeOfId)].map(async ([home, list]) => {
      for (const p of await dirAt(env, home).people(list)) out.set(p.id, p);
    }),
  );
  return out;
}

/** The directory person (not a registered test number) of each ci, where the index has one. */
async function peopleByCi(env: DirectoryEnv, rows: readonly Row[], n: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  await Promise.all(
    [...groupBy(rows, (r) => ciShard(r.ci, n))].map(async ([s, list]) => {
      for (const e of await dirAt(env, s).idsByCi(list.map((r) => r.ci))) out.set(e.ci, e.id);
    }),
  );
  return out;
}

/** How long an import holds the lease: far longer than one request of ADMIN_MAX_IMPORT_ROWS takes. */
const LEASE_MS = 120_000;
/** How long an import waits for another to finish before it is refused (the caller retries). */
const LEASE_WAIT_MS = 60_000;

export class ImportBusy extends Error {}

/**
 * Applies the rows to the directory (with `dryRun`, only counts what it would do). The caller
 * holds the import lease (`underLease`): imports run one at a time.
 */
export async function importDirectory(
  env: JobEnv,
  input: readonly SubscriberInput[],
  dryRun: boolean,
  run: string | null = null,
): Promise<ImportCounts> {
  // What earlier changes left unfinished (a job whose caller died) is finished first: the
  // decision reads the ci index and the numbers, which such a job would leave behind.
  if (!(await finishAllJobs(env))) throw new Error("import: the directory has changes that keep failing");
  return applyRows(env, input, dryRun, run);
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
 * Runs `work` holding the directory's import lease (in shard 0): imports and commits run one at a
 * time; another waits for it, up to LEASE_WAIT_MS. An import takes it before reading its body, so
 * requests waiting their turn hold no parsed rows (an isolate's memory is 128 MB).
 */
export async function underLease<T>(env: JobEnv, work: () => Promise<T>): Promise<T> {
  const lease = crypto.randomUUID();
  const lock = dirAt(env, 0);
  const waitUntil = Date.now() + LEASE_WAIT_MS;
  for (let wait = 20; !(await lock.takeImportLease(lease, Date.now() + LEASE_MS)); wait = Math.min(wait * 2, 500)) {
    if (Date.now() > waitUntil) throw new ImportBusy("another import is running");
    await new Promise((r) => setTimeout(r, wait));
  }
  try {
    return await work();
  } finally {
    await lock.dropImportLease(lease).catch(() => undefined);
  }
}

async function applyRows(
  env: JobEnv,
  input: readonly SubscriberInput[],
  dryRun: boolean,
  run: string | null,
): Promise<ImportCounts> {
  const n = dirShards(env);
  const counts: ImportCounts = { inserted: 0, updated: 0, reassigned: 0 };
  // every person named by the import: a holder among them is moving, not displaced
  const named = new Set(input.map((r) => r.ci));
  let pending: Row[] = input.map((r, seq) => ({ ...r, seq }));
  for (let round = 0; pending.length > 0; round++) {
    if (round === MAX_ROUNDS) throw new Error(`import: ${pending.length} rows kept changing hands`);
    // 1. At each number's shard: the same person at home there is updated at once (the common case).
    const holders = new Map<number, NumberHolder>();
    await Promise.all(
      [...groupBy(pending, (r) => numberShard(r.phone, n))].map(async ([s, rows]) => {
        for (const o of await dirAt(env, s).importAtNumbers(s, rows, dryRun)) {
          if ("done" in o) counts.updated++;
          else holders.set(o.seq, o.holder);
        }
      }),
    );
    const rest = pending.filter((r) => holders.has(r.seq));
    if (rest.length === 0) break;

    // 2. What the other shards hold: holders at home elsewhere, and each row's person by ci.
    const byCi = await peopleByCi(env, rest, n);
    const away = rest.flatMap((r) => {
      const h = holders.get(r.seq)!;
      return h.at === "away" ? [h.id] : [];
    });
    const people = await peopleById(env, [...away, ...byCi.values()]);

    // 3. Decide each row.
    const decided: (Claim & { kind: keyof ImportCounts })[] = [];
    for (const r of rest) {
      const h = holders.get(r.seq)!;
      const expect = h.at === "none" ? null : h.at === "here" ? h.person.id : h.id;
      const held = h.at === "here" ? h.person : h.at === "away" ? people.get(h.id) : undefined;
      const holder = held && held.phone === r.phone ? held : null;
      const fields: PersonFields = {
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

    // 4. A person at home in another shard than the number's takes the number in their own row
    // first (only while it is still theirs, same ci); then each number's shard applies its claims
    // in one step, and the jobs they queued run now. A person gone meanwhile is decided again.
    const retry = new Set<number>();
    const queued: ShardJobs[] = [];
    await Promise.all(
      decided.map(async (d) => {
        if (d.person === null || homeOfId(d.person) === numberShard(d.phone, n)) return;
        const moved = await dirAt(env, homeOfId(d.person)).updatePerson(d.person, d.fields);
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
        );
        const bySeq = new Map(claims.map((c) => [c.seq, c]));
        for (const res of results) {
          if (!res.ok) {
            retry.add(res.seq);
            continue;
          }
          const c = bySeq.get(res.seq)!;
          counts[c.kind]++;
          if (c.displace) counts.reassigned++;
        }
        queued.push({ shard: s, jobs });
      }),
    );
    // what the claims queued in other shards, run now (the ci index entries in batches)
    await runJobs(env, queued);
    pending = rest.filter((r) => retry.has(r.seq));
  }
  return counts;
}
