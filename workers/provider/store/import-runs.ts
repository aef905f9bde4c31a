// An import run in D1 (docs/storage.md "D1"; docs/operations.md "Importing a large file"): its
// progress through its file (`import_progress`: the prefix of the file applied, the run's counts and
// its first rejected rows' numbers and reasons, never their content) and its commits' totals
// (`import_runs`: what every commit of the run removed, and what the last one left to the shards'
// alarms, so a commit sent again reports the run's true removals). The import itself, and the
// checks of what its caller sends, are workers/admin/directory.ts and workers/admin/import-progress.ts.

type DbEnv = { DB: D1Database };

/** At most this many rejected rows are kept per run; `rejected_count` has the total. */
export const MAX_KEPT_REJECTIONS = 1000;

/** Progress rows not updated for this long are dropped (by the next commit). */
const PROGRESS_RETAIN_MS = 30 * 86_400_000;

/** How long a run's commit totals are kept. */
const RUN_RETAIN_MS = 30 * 86_400_000;

/** A rejected row of the file (rows from 1) and why. */
export interface RunRejection {
  row: number;
  reason: string;
}

/** A run's row of `import_progress`. */
export interface ProgressRow {
  run: string;
  file_hash: string;
  file_size: number;
  format: string;
  rows_done: number;
  bytes_done: number;
  inserted: number;
  updated: number;
  reassigned: number;
  rejected_count: number;
  /** JSON array of `RunRejection`, at most `MAX_KEPT_REJECTIONS`. */
  rejected: string;
  started_by: string;
  started_at: number;
  updated_at: number;
  committed_at: number | null;
}

/** A run's counts after a chunk. */
export type ProgressCounts = Pick<
  ProgressRow,
  "rows_done" | "bytes_done" | "inserted" | "updated" | "reassigned" | "rejected_count"
>;

/** The file (hash, size) and format a run was started with, or null for a run without progress yet. */
export async function runFile(
  env: DbEnv,
  run: string,
): Promise<Pick<ProgressRow, "file_hash" | "file_size" | "format"> | null> {
  return env.DB.prepare("SELECT file_hash, file_size, format FROM import_progress WHERE run = ?")
    .bind(run)
    .first<Pick<ProgressRow, "file_hash" | "file_size" | "format">>();
}

/**
 * Records an applied chunk, in one statement: only a chunk that starts where the run's applied
 * prefix ends (`fromRow` = `rows_done`, or 0 for a run without a row yet) advances it and adds its
 * counts and rejected rows (`rejected`: at most `MAX_KEPT_REJECTIONS`, as rows of the file;
 * `rejectedCount`: all of them). A chunk sent again, or one ahead of a missing one, changes
 * nothing. Whether it advanced the run, and the run's counts after it (none for a run without a row).
 */
export async function advanceProgress(
  env: DbEnv,
  run: string,
  place: { fileHash: string; fileSize: number; fromRow: number; toByte: number },
  format: string,
  chunk: {
    received: number;
    inserted: number;
    updated: number;
    reassigned: number;
    rejectedCount: number;
    rejected: RunRejection[];
  },
  actor: string,
  now: number,
): Promise<{ recorded: boolean; counts: ProgressCounts | undefined }> {
  const [write, read] = await env.DB.batch<ProgressCounts>([
    env.DB.prepare(
      `INSERT INTO import_progress (run, file_hash, file_size, format, rows_done, bytes_done, inserted, updated,
         reassigned, rejected_count, rejected, started_by, started_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5 + ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14
       WHERE ?5 = 0 OR EXISTS (SELECT 1 FROM import_progress WHERE run = ?1)
       ON CONFLICT (run) DO UPDATE SET
         rows_done = excluded.rows_done,
         bytes_done = excluded.bytes_done,
         inserted = inserted + excluded.inserted,
         updated = updated + excluded.updated,
         reassigned = reassigned + excluded.reassigned,
         rejected_count = rejected_count + excluded.rejected_count,
         rejected = CASE
           WHEN excluded.rejected = '[]' OR json_array_length(rejected) >= ${MAX_KEPT_REJECTIONS} THEN rejected
           WHEN rejected = '[]' THEN excluded.rejected
           ELSE (SELECT json_group_array(json(value))
                 FROM json_each(substr(rejected, 1, length(rejected) - 1) || ',' || substr(excluded.rejected, 2))
                 WHERE key < ${MAX_KEPT_REJECTIONS})
         END,
         updated_at = excluded.updated_at
       WHERE import_progress.rows_done = ?5 AND import_progress.file_hash = excluded.file_hash
         AND import_progress.file_size = excluded.file_size AND import_progress.format = excluded.format
         AND import_progress.committed_at IS NULL`,
    ).bind(
      run,
      place.fileHash,
      place.fileSize,
      format,
      place.fromRow,
      chunk.received,
      place.toByte,
      chunk.inserted,
      chunk.updated,
      chunk.reassigned,
      chunk.rejectedCount,
      JSON.stringify(chunk.rejected),
      actor,
      now,
    ),
    env.DB.prepare(
      `SELECT rows_done, bytes_done, inserted, updated, reassigned, rejected_count FROM import_progress WHERE run = ?`,
    ).bind(run),
  ]);
  return { recorded: (write!.meta.changes ?? 0) > 0, counts: read!.results[0] };
}

/** The run's commit: its progress is done (the run is no longer offered to resume); old rows go. */
export async function endProgress(env: DbEnv, run: string): Promise<void> {
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare("UPDATE import_progress SET committed_at = ? WHERE run = ? AND committed_at IS NULL").bind(now, run),
    env.DB.prepare("DELETE FROM import_progress WHERE updated_at < ?").bind(now - PROGRESS_RETAIN_MS),
  ]);
}

/** The newest uncommitted run of a file (its SHA-256 and size), to resume, or null. */
export async function newestOpenRun(env: DbEnv, fileHash: string, fileSize: number): Promise<ProgressRow | null> {
  return env.DB.prepare(
    `SELECT * FROM import_progress WHERE file_hash = ? AND file_size = ? AND committed_at IS NULL
     ORDER BY started_at DESC, updated_at DESC LIMIT 1`,
  )
    .bind(fileHash, fileSize)
    .first<ProgressRow>();
}

/**
 * Adds one commit's removals to its run's totals (`import_runs`) and returns the run's totals:
 * every removal its commits made, and what the last one left to the alarms.
 */
export async function recordCommit(
  env: DbEnv,
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
