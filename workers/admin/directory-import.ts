// A directory import over the shards (docs/account.md "A subscriber is a person", docs/storage.md
// "Changes across shards"): the import lease, so imports run one at a time, and the commit of an
// import run. How each row is decided and written is the store's (directory-write.ts), which a
// carrier-API sign-in uses for its one row.

import { dirAt, dirShards } from "../provider/store/directory";
import { finishAllJobs, runJobs, type JobEnv } from "../provider/store/directory-jobs";
import { applyRows, underLease, type ImportCounts } from "../provider/store/directory-write";
import type { SubscriberInput } from "../provider/store/directory-rows";

export { ImportBusy, underLease, type ImportCounts } from "../provider/store/directory-write";

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
