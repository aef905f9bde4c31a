// An import run's commit totals (D1 `import_runs`, docs/storage.md "D1"): what every commit of a run
// removed, and what the last one left to the shards' alarms, so a commit sent again reports the
// run's true removals. The import and its commit are the store's flows
// (workers/provider/store/flows/directory-write.ts).

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
