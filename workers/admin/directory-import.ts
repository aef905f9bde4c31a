// A directory import over the shards (docs/account.md "A subscriber is a person", docs/storage.md
// "Changes across shards"): the import lease, so imports run one at a time, and the commit of an
// import run. How each row is decided and written is the store's (directory-write.ts), which a
// carrier-API sign-in uses for its one row.

import { dirAt } from "../provider/store/directory/directory-shard";
import { dirShards } from "../provider/store/directory/keys";
import { finishAllJobs, runJobs, type JobEnv } from "../provider/store/flows/directory-jobs";
import { applyRows, underLease, type ImportCounts } from "../provider/store/flows/directory-write";
import type { SubscriberInput } from "../provider/store/directory/rows";

export { ImportBusy, underLease, type ImportCounts } from "../provider/store/flows/directory-write";

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
  const { ids: _, ...counts } = await applyRows(env, input, { dryRun, run });
  return counts;
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

/** How long a run's commit totals are kept. */
const RUN_RETAIN_MS = 30 * 86_400_000;

/**
 * Adds one commit's removals to its run's totals (D1 `import_runs`) and returns the run's totals:
 * every removal its commits made, and what the last one left to the alarms.
 */
export async function recordCommit(
  env: { DB: D1Database },
  run: string,
  removed: number,
  left: number,
): Promise<{ removed: number; left: number }> {
  const now = Date.now();
  const [, row] = await env.DB.batch<{ removed: number; left_over: number }>([
    env.DB.prepare("DELETE FROM import_runs WHERE committed_at < ?").bind(now - RUN_RETAIN_MS),
    env.DB.prepare(
      `INSERT INTO import_runs (run, removed, left_over, committed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (run) DO UPDATE SET removed = removed + excluded.removed,
         left_over = CASE WHEN excluded.removed + excluded.left_over = 0 THEN left_over ELSE excluded.left_over END,
         committed_at = excluded.committed_at
       RETURNING removed, left_over`,
    ).bind(run, removed, left, now),
  ]);
  const r = row!.results[0]!;
  return { removed: r.removed, left: r.left_over };
}
