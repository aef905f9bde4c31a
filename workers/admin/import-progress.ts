// An import run's progress through its file (docs/operations.md "Importing a large file", "From the
// browser"). The console's import sends each chunk with the file's SHA-256 and size and where the
// chunk sits in the file (`from_row`, `to_byte`); the server keeps the prefix of the file applied,
// the run's counts and the first 1,000 rejected rows' numbers and reasons (never their content), so
// a person who closed the tab chooses the same file again and resumes
// (`GET /admin/directory/import/runs`). This module checks what the caller sends; the rows are D1
// `import_progress`, in workers/provider/store/import-runs.ts. The import itself is
// workers/admin/directory.ts.

import { ApiError, E } from "../core/errors";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import type { AdminEnv } from "./config";
import { advanceProgress, MAX_KEPT_REJECTIONS, newestOpenRun, runFile } from "../provider/store/import-runs";
import type { Rejected } from "./directory-input";

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
  const row = await runFile(env, run);
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
  const { recorded, counts: r } = await advanceProgress(
    env,
    run,
    place,
    format,
    {
      received: chunk.received,
      inserted: chunk.inserted,
      updated: chunk.updated,
      reassigned: chunk.reassigned,
      rejectedCount: chunk.rejected.length,
      rejected,
    },
    actor,
    now,
  );
  return {
    recorded,
    rows_done: r?.rows_done ?? 0,
    bytes_done: r?.bytes_done ?? 0,
    inserted: r?.inserted ?? 0,
    updated: r?.updated ?? 0,
    reassigned: r?.reassigned ?? 0,
    rejected_count: r?.rejected_count ?? 0,
  };
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
  const r = await newestOpenRun(env, fileHash, fileSize);
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
