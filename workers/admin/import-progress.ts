// An import run's progress through its file (D1 `import_progress`; docs/operations.md "Importing a
// large file", "From the browser"). The console's import sends each chunk with the file's SHA-256
// and size and where the chunk sits in the file (`from_row`, `to_byte`); the server keeps the prefix
// of the file applied, the run's counts and the first 1,000 rejected rows' numbers and reasons (never
// their content), so a person who closed the tab chooses the same file again and resumes
// (`GET /admin/directory/import/runs`). The import itself is workers/admin/directory.ts.

import { ApiError, E } from "../core/errors";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import type { AdminEnv } from "./config";
import type { Rejected } from "./directory-input";

/** At most this many rejected rows are kept per run; `rejected_count` has the total. */
export const MAX_KEPT_REJECTIONS = 1000;

/** Rows not updated for this long are dropped (by the next commit). */
const PROGRESS_RETAIN_MS = 30 * 86_400_000;

/** Where a chunk sits in its file, as the caller sends it with the chunk. */
export interface ChunkPlace {
  fileHash: string;
  fileSize: number;
  /** The file's rows before this chunk (0-based count). */
  fromRow: number;
  /** The file's byte offset after this chunk. */
  toByte: number;
}

/** A run's progress as the import's answer carries it (`progress`). */
export interface ProgressAnswer {
  /** Whether this chunk advanced the run (false: sent again, or not the next one). */
  recorded: boolean;
  rows_done: number;
  bytes_done: number;
  inserted: number;
  updated: number;
  reassigned: number;
  rejected_count: number;
}

interface Row {
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
  rejected: string;
  started_by: string;
  started_at: number;
  updated_at: number;
  committed_at: number | null;
}

const PLACE_PARAMS = ["file_hash", "file_size", "from_row", "to_byte"] as const;
const HEX_SHA256 = /^[0-9a-f]{64}$/;
const COUNT = /^(0|[1-9][0-9]{0,15})$/;

function fileHashParam(v: string): string {
  if (!HEX_SHA256.test(v))
    throw E.invalidBecause("file_hash", "must be the file's SHA-256 as 64 lower-case hex digits");
  return v;
}

function countParam(name: string, v: string, min: number): number {
  const n = COUNT.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw E.invalidBecause(name, `must be a whole number${min > 0 ? ` of at least ${min}` : ""}, in digits`);
  return n;
}

/**
 * The chunk's place in its file (`file_hash`, `file_size`, `from_row`, `to_byte`), or null when none
 * is given. All four or none; only in an import run (`run`), never in a dry run.
 */
export function chunkPlace(url: URL, run: string | null, dryRun: boolean): ChunkPlace | null {
  const given = PLACE_PARAMS.filter((p) => url.searchParams.has(p));
  if (given.length === 0) return null;
  const missing = PLACE_PARAMS.find((p) => !url.searchParams.has(p));
  if (missing)
    throw E.invalidBecause(missing, "file_hash, file_size, from_row and to_byte go together: send all four or none");
  if (dryRun) throw E.invalidBecause(given[0]!, "a dry run records no progress: send it without the file's place");
  if (run === null) throw E.invalidBecause(given[0]!, "progress is kept for an import run: send run too");
  const p = (name: string) => url.searchParams.get(name)!;
  const place = {
    fileHash: fileHashParam(p("file_hash")),
    fileSize: countParam("file_size", p("file_size"), 1),
    fromRow: countParam("from_row", p("from_row"), 0),
    toByte: countParam("to_byte", p("to_byte"), 1),
  };
  if (place.toByte > place.fileSize) throw E.invalidBecause("to_byte", "must be at most file_size");
  return place;
}

/** A 409: the run was started with another file (or format) than this chunk's. */
function anotherFile(what: string): ApiError {
  return new ApiError("invalid_request", `The value of run is not valid: this run is another ${what}.`, {
    status: 409,
    cause: `import run of another ${what}`,
  });
}

/** Refuses (409) a chunk whose run was started with another file or format; before the chunk is applied. */
export async function checkRunFile(env: AdminEnv, run: string, place: ChunkPlace, format: string): Promise<void> {
  const row = await env.DB.prepare("SELECT file_hash, file_size, format FROM import_progress WHERE run = ?")
    .bind(run)
    .first<Pick<Row, "file_hash" | "file_size" | "format">>();
  if (row === null) return;
  if (row.file_hash !== place.fileHash || row.file_size !== place.fileSize) throw anotherFile("file's");
  if (row.format !== format) throw anotherFile("format's");
}

/** A rejection of a chunk (rows from 1) as a rejection of the file: "repeats row N" names a row of the chunk too. */
export function fileRejection(r: Rejected, fromRow: number): Rejected {
  return {
    row: r.row + fromRow,
    reason: r.reason.replace(/\brepeats row (\d+)$/, (_m, n: string) => `repeats row ${Number(n) + fromRow}`),
  };
}

/**
 * Records an applied chunk, in one statement: only a chunk that starts where the run's applied
 * prefix ends (`from_row` = `rows_done`, or 0 for a run without a row yet) advances it and adds its
 * counts and rejected rows. A chunk sent again, or one ahead of a missing one, changes nothing. The
 * run's row after it is the answer's `progress`.
 */
export async function recordProgress(
  env: AdminEnv,
  run: string,
  place: ChunkPlace,
  format: string,
  chunk: { received: number; inserted: number; updated: number; reassigned: number; rejected: Rejected[] },
  actor: string,
): Promise<ProgressAnswer> {
  const now = Date.now();
  const rejected = chunk.rejected.slice(0, MAX_KEPT_REJECTIONS).map((r) => fileRejection(r, place.fromRow));
  const [write, read] = await env.DB.batch<Row>([
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
      chunk.rejected.length,
      JSON.stringify(rejected),
      actor,
      now,
    ),
    env.DB.prepare(
      `SELECT rows_done, bytes_done, inserted, updated, reassigned, rejected_count FROM import_progress WHERE run = ?`,
    ).bind(run),
  ]);
  const r = read!.results[0];
  return {
    recorded: (write!.meta.changes ?? 0) > 0,
    rows_done: r?.rows_done ?? 0,
    bytes_done: r?.bytes_done ?? 0,
    inserted: r?.inserted ?? 0,
    updated: r?.updated ?? 0,
    reassigned: r?.reassigned ?? 0,
    rejected_count: r?.rejected_count ?? 0,
  };
}

/** The run's commit: its progress is done (the run is no longer offered to resume); old rows go. */
export async function markCommitted(env: AdminEnv, run: string): Promise<void> {
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare("UPDATE import_progress SET committed_at = ? WHERE run = ? AND committed_at IS NULL").bind(now, run),
    env.DB.prepare("DELETE FROM import_progress WHERE updated_at < ?").bind(now - PROGRESS_RETAIN_MS),
  ]);
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * `GET /admin/directory/import/runs?file_hash=H&file_size=S`: the newest uncommitted run of that
 * file, to resume, or 404.
 */
export async function findRun(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const q = rc.url.searchParams;
  const hash = q.get("file_hash");
  const size = q.get("file_size");
  if (hash === null) throw E.missing("file_hash");
  if (size === null) throw E.missing("file_size");
  const fileHash = fileHashParam(hash);
  const fileSize = countParam("file_size", size, 1);
  const r = await env.DB.prepare(
    `SELECT * FROM import_progress WHERE file_hash = ? AND file_size = ? AND committed_at IS NULL
     ORDER BY started_at DESC, updated_at DESC LIMIT 1`,
  )
    .bind(fileHash, fileSize)
    .first<Row>();
  if (r === null) throw E.noSuch("import run");
  return json({
    run: r.run,
    file_hash: r.file_hash,
    file_size: r.file_size,
    format: r.format,
    rows_done: r.rows_done,
    bytes_done: r.bytes_done,
    inserted: r.inserted,
    updated: r.updated,
    reassigned: r.reassigned,
    rejected_count: r.rejected_count,
    rejected: JSON.parse(r.rejected) as Rejected[],
    started_by: r.started_by,
    started_at: iso(r.started_at),
    updated_at: iso(r.updated_at),
  });
}
