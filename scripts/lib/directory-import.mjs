// `directory import` (docs/operations.md "Importing a large file"): a CSV or NDJSON file of any size
// streamed in chunks of rows, each one `POST /admin/directory/import` (the server takes at most
// ADMIN_MAX_IMPORT_ROWS rows and ADMIN_MAX_IMPORT_BYTES per request: workers/admin/config.ts), a
// few in flight at once; the acknowledged prefix of the file is recorded in a state file after
// every chunk, so an interrupted import resumes where it stopped. A JSON array is sent whole.
// Nothing of a row's content is printed or stored: rows are named by their number in the file.
import { Buffer, isUtf8 } from "node:buffer";
import { createHash, randomUUID } from "node:crypto";
import {
  closeSync,
  createReadStream,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, extname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CliError, ServiceError, UsageError } from "./errors.mjs";
import { Progress } from "./progress.mjs";
import { CsvSplitter, NdjsonSplitter, RecordError } from "./records.mjs";

/** The server's default row and byte limits per request (ADMIN_MAX_IMPORT_ROWS, ADMIN_MAX_IMPORT_BYTES). */
export const SERVER_MAX_ROWS = 10_000;
export const SERVER_MAX_BYTES = 5 * 1024 * 1024;
export const DEFAULT_CHUNK_ROWS = 5_000;
export const DEFAULT_PARALLEL = 4;
/** Rejected rows listed in the report (as the server lists per request); the count is always whole. */
const MAX_LISTED = 1000;
const MAX_IGNORED_COLUMNS = 100;
/** The longest record: a directory row is a few hundred bytes; more is an unclosed quote or not a directory file. */
const MAX_RECORD_BYTES = 1 << 20;
const IDENTITY_HEAD_BYTES = 64 * 1024;
const READ_BUFFER_BYTES = 1 << 20;
/** A failed chunk is sent again this many times, after 1, 2, 4 and 8 s (ADMIN_CLI_RETRY_MS sets the first wait). */
const RETRIES = 4;
const REQUEST_TIMEOUT_MS = 300_000;
const STATE_VERSION = 1;
const UTF8_REPLACEMENT = Buffer.from("\uFFFD");
const NOT_UTF8 = "row is not UTF-8 text";

const FORMATS = /** @type {const} */ (["csv", "ndjson", "json"]);
const BY_EXTENSION = new Map([
  [".csv", "csv"],
  [".ndjson", "ndjson"],
  [".jsonl", "ndjson"],
  [".json", "json"],
]);

/**
 * @typedef {{ received: number; inserted: number; updated: number; reassigned: number; rejected_count: number }} Totals
 * @typedef {{ row: number; reason: string }} Rejection
 * @typedef {{ totals: Totals; rejected: Rejection[]; ignored: string[] }} Counts
 * @typedef {(method: string, path: string, body?: unknown, type?: string, signal?: AbortSignal) => Promise<any>} Api
 * @typedef {{
 *   file: string; format: "csv" | "ndjson" | "json"; dryRun: boolean; chunkRows: number; chunkBytes: number;
 *   parallel: number; statePath: string; restart: boolean; quiet: boolean;
 * }} Job
 * @typedef {{ api: Api; origin: string; env: Record<string, string | undefined>; err: { write(s: string): unknown; isTTY?: boolean } }} Context
 */

/** The format named by --format, else by the file's extension. */
export function formatOf(file, given) {
  const format = given ?? BY_EXTENSION.get(extname(file).toLowerCase());
  if (!FORMATS.includes(/** @type {any} */ (format))) {
    throw new UsageError(
      given === undefined
        ? "cannot tell the format from the file name: add --format csv|ndjson|json"
        : "--format must be csv, ndjson or json",
    );
  }
  return /** @type {Job["format"]} */ (format);
}

/** A whole-number option within bounds, or its default. */
export function intOption(value, name, fallback, min, max) {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return Number(value);
}

/** Imports the job's file; returns the report (the server's report summed over the chunks). */
export async function importFile(/** @type {Job} */ job, /** @type {Context} */ ctx) {
  let st;
  try {
    st = statSync(job.file);
  } catch (e) {
    const err = /** @type {NodeJS.ErrnoException} */ (e);
    throw new UsageError(`cannot read ${job.file}: ${err.code ?? err.message}`);
  }
  if (!st.isFile()) throw new UsageError(`${job.file} is not a file`);
  return job.format === "json" ? importJsonArray(job, ctx, st.size) : importStream(job, ctx);
}

/**
 * A dry run, a single request, or a chunk of an import run: the chunks of one file carry one `run`
 * id, and the service holds the removals of the people they displace until the run's commit
 * (a later chunk may name them at another number: they moved, and keep their logins).
 */
const importPath = (dryRun, run = null) =>
  "/admin/directory/import" + (dryRun ? "?dry_run=true" : run ? `?run=${encodeURIComponent(run)}` : "");

// ---------------------------------------------------------------- a JSON array: one request

async function importJsonArray(/** @type {Job} */ job, /** @type {Context} */ ctx, size) {
  const convert =
    `a JSON array is sent whole, in one request: convert it to NDJSON (one object per line), which is sent in chunks:\n` +
    `  jq -c '(.subscribers? // .)[]' ${job.file} > ${job.file.replace(/\.json$/i, "")}.ndjson`;
  if (size > job.chunkBytes)
    throw new CliError(`${job.file} has ${size} bytes, more than one request takes (${job.chunkBytes}); ${convert}`, 1);
  const text = readFileSync(job.file, "utf8");
  let rows;
  try {
    const doc = JSON.parse(text);
    rows = Array.isArray(doc) ? doc.length : doc?.subscribers?.length;
  } catch {
    // not JSON: the service says so
  }
  if (typeof rows === "number" && rows > SERVER_MAX_ROWS)
    throw new CliError(`${job.file} has ${rows} rows, more than one request takes (${SERVER_MAX_ROWS}); ${convert}`, 1);
  const r = await ctx.api("POST", importPath(job.dryRun), text, "application/json");
  return { ...r, format: "json", chunks: 1, resumed_at_row: null };
}

// ---------------------------------------------------------------- CSV and NDJSON: streamed in chunks

/** What identifies the file a state belongs to: its size, its modification time and a hash of its start. */
function fileIdentity(file) {
  const st = statSync(file);
  const head = Buffer.alloc(Math.min(IDENTITY_HEAD_BYTES, st.size));
  const fd = openSync(file, "r");
  try {
    let n = 0;
    while (n < head.length) {
      const got = readSync(fd, head, n, head.length - n, n);
      if (got === 0) break;
      n += got;
    }
  } finally {
    closeSync(fd);
  }
  return { size: st.size, mtime_ms: st.mtimeMs, head_sha256: createHash("sha256").update(head).digest("hex") };
}

const zeroTotals = () => ({ received: 0, inserted: 0, updated: 0, reassigned: 0, rejected_count: 0 });

/**
 * The state of this job: a fresh one, or the one an interrupted run left (checked to be of the same
 * file, format, mode and service).
 */
function openState(/** @type {Job} */ job, /** @type {Context} */ ctx, identity, bodyStart) {
  if (job.restart) rmSync(job.statePath, { force: true });
  const fresh = {
    version: STATE_VERSION,
    file: { name: basename(job.file), ...identity },
    format: job.format,
    dry_run: job.dryRun,
    service: ctx.origin,
    offset: bodyStart,
    rows_done: 0,
    run: job.dryRun ? null : `cli-${randomUUID()}`,
    totals: zeroTotals(),
    rejected: /** @type {Rejection[]} */ ([]),
    ignored_columns: /** @type {string[]} */ ([]),
  };
  if (!existsSync(job.statePath)) return { state: fresh, resumed: false };
  const refuse = (why) =>
    new CliError(
      `${job.statePath} ${why}.\n` +
        `--restart imports the file from its first row (rows already imported are updated in place: safe), ` +
        `or --state PATH keeps the state elsewhere.`,
      2,
    );
  let s;
  try {
    s = JSON.parse(readFileSync(job.statePath, "utf8"));
  } catch {
    throw refuse("is not a state file of this command (not JSON)");
  }
  if (s?.version !== STATE_VERSION || !s.file || !s.totals || !Array.isArray(s.rejected))
    throw refuse("is not a state file of this command");
  if (
    s.file.size !== identity.size ||
    s.file.mtime_ms !== identity.mtime_ms ||
    s.file.head_sha256 !== identity.head_sha256
  )
    throw refuse(
      `is the state of another file, or of this file before it changed (its size, modification time or first 64 KiB differ)`,
    );
  if (s.format !== job.format) throw refuse(`is the state of a ${s.format} import; this one reads ${job.format}`);
  if (s.dry_run !== job.dryRun)
    throw refuse(
      s.dry_run ? "is the state of a dry run; this is an import" : "is the state of an import; this is a dry run",
    );
  if (s.service !== ctx.origin) throw refuse(`is the state of an import into ${s.service}, not ${ctx.origin}`);
  if (
    !Number.isSafeInteger(s.offset) ||
    s.offset < bodyStart ||
    s.offset > identity.size ||
    !Number.isSafeInteger(s.rows_done)
  )
    throw refuse("is damaged (its offset or row count is out of range)");
  if (!job.dryRun && typeof s.run !== "string") s.run = `cli-${randomUUID()}`;
  return { state: s, resumed: true };
}

function saveState(path, state) {
  // whole or not at all: a run killed while writing leaves the previous state
  try {
    writeFileSync(path + ".tmp", JSON.stringify({ ...state, updated_at: new Date().toISOString() }, null, 2) + "\n");
    renameSync(path + ".tmp", path);
  } catch (e) {
    const err = /** @type {NodeJS.ErrnoException} */ (e);
    throw new CliError(
      `cannot write the state file ${path}: ${err.code ?? err.message} (--state PATH puts it elsewhere)`,
      1,
    );
  }
}

/** The CSV header: the file's first record (the server's first row of every chunk). */
async function readHeader(file) {
  const splitter = new CsvSplitter({ maxRecordBytes: MAX_RECORD_BYTES });
  const stream = createReadStream(file, { highWaterMark: 64 * 1024 });
  try {
    for await (const buf of stream) {
      const [first] = splitter.push(buf);
      if (first) return first;
    }
    return splitter.finish()[0];
  } finally {
    stream.destroy();
  }
}

/**
 * A run of records sent as one request. `sent` holds the file row of each row sent, in order, so
 * the server's row n is the file's `sent[n - 1]`; `local` holds rows refused here (not sendable).
 */
class Chunk {
  constructor(seq, start, firstRow) {
    this.seq = seq;
    this.start = start;
    this.end = start;
    this.firstRow = firstRow;
    this.lastRow = firstRow - 1;
    /** @type {Buffer[]} */
    this.parts = [];
    this.bytes = 0;
    /** @type {number[]} */
    this.sent = [];
    /** @type {Rejection[]} */
    this.local = [];
  }

  get rows() {
    return this.lastRow - this.firstRow + 1;
  }
}

const LF_BYTES = Buffer.from("\n");
const COMMA_BYTES = Buffer.from(",");

/** The chunks of the file from `offset` (a record boundary after `row` rows), read as a stream. */
async function* chunksOf(/** @type {Job} */ job, header, offset, row) {
  const csv = job.format === "csv";
  // a chunk's fixed bytes: the header line and its LF, or the array's brackets
  const overhead = csv ? header.length + 1 : 2;
  const maxRecordBytes = Math.min(MAX_RECORD_BYTES, job.chunkBytes - overhead - 1);
  if (maxRecordBytes < 1) throw new UsageError("--chunk-bytes is too small for the header line");
  const splitter = csv
    ? new CsvSplitter({ offset, row, maxRecordBytes })
    : new NdjsonSplitter({ offset, row, maxRecordBytes });
  let seq = 0;
  let chunk = new Chunk(seq, offset, row + 1);
  /** @param {import("./records.mjs").FileRecord} rec */
  const add = (rec) => {
    const bytes = rec.bytes;
    const reason = rowProblem(bytes, csv);
    if (reason === undefined) {
      chunk.parts.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
      chunk.bytes += bytes.length + 1; // its LF, or its comma
      chunk.sent.push(rec.row);
    } else chunk.local.push({ row: rec.row, reason });
    chunk.lastRow = rec.row;
    chunk.end = rec.end;
  };
  const full = (rec) => chunk.rows >= job.chunkRows || overhead + chunk.bytes + rec.bytes.length + 1 > job.chunkBytes;
  const stream = createReadStream(job.file, { start: offset, highWaterMark: READ_BUFFER_BYTES });
  try {
    for await (const buf of stream) {
      for (const rec of splitter.push(buf)) {
        if (chunk.rows > 0 && full(rec)) {
          yield chunk;
          chunk = new Chunk(++seq, chunk.end, chunk.lastRow + 1);
        }
        add(rec);
      }
    }
    for (const rec of splitter.finish()) {
      if (chunk.rows > 0 && full(rec)) {
        yield chunk;
        chunk = new Chunk(++seq, chunk.end, chunk.lastRow + 1);
      }
      add(rec);
    }
  } finally {
    stream.destroy();
  }
  if (chunk.rows > 0) yield chunk;
}

/** Why a row cannot be sent at all (the server refuses a whole request that is not UTF-8), or undefined. */
function rowProblem(/** @type {Uint8Array} */ bytes, csv) {
  // a U+FFFD in the text is how the server sees bytes that are not UTF-8 (workers/core/http.ts readBodyText)
  if (!isUtf8(bytes) || Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).includes(UTF8_REPLACEMENT))
    return NOT_UTF8;
  if (csv) return undefined;
  try {
    JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8"));
  } catch {
    return "row is not JSON";
  }
  return undefined;
}

/** The request body of a chunk: the header line and the rows (CSV), or a JSON array of the lines. */
function bodyOf(/** @type {Chunk} */ chunk, header, csv) {
  const pieces = [];
  if (csv) {
    pieces.push(header, LF_BYTES);
    for (const p of chunk.parts) pieces.push(p, LF_BYTES);
  } else {
    pieces.push(Buffer.from("["));
    chunk.parts.forEach((p, i) => pieces.push(...(i ? [COMMA_BYTES, p] : [p])));
    pieces.push(Buffer.from("]"));
  }
  return Buffer.concat(pieces);
}

/** A chunk's answer in the file's terms: its rows renumbered as rows of the file, the local refusals added. */
function countsOf(/** @type {Chunk} */ chunk, r) {
  const fileRow = (n) => chunk.sent[n - 1] ?? n;
  const fromServer = r.rejected.map((/** @type {Rejection} */ x) => ({
    row: fileRow(x.row),
    // "phoneNo repeats row N" and "ci repeats row N" name a row of the same request
    reason: String(x.reason).replace(/\brepeats row (\d+)$/, (_m, n) => `repeats row ${fileRow(Number(n))}`),
  }));
  const rejected = [...fromServer, ...chunk.local].sort((a, b) => a.row - b.row);
  return {
    totals: {
      received: r.received + chunk.local.length,
      inserted: r.inserted,
      updated: r.updated,
      reassigned: r.reassigned,
      rejected_count: r.rejected_count + chunk.local.length,
    },
    rejected,
    ignored: r.ignored_columns,
  };
}

function checkAnswer(/** @type {Chunk} */ chunk, r) {
  const numbers = ["received", "inserted", "updated", "reassigned", "rejected_count"];
  if (
    !r ||
    numbers.some((k) => typeof r[k] !== "number") ||
    !Array.isArray(r.rejected) ||
    !Array.isArray(r.ignored_columns)
  )
    throw new ServiceError(`unexpected answer to rows ${chunk.firstRow}-${chunk.lastRow} (not an import report)`);
  // The server must have seen the rows the CLI split: else the rows' numbers would be wrong.
  if (r.received !== chunk.sent.length)
    throw new ServiceError(
      `the service read ${r.received} rows where rows ${chunk.firstRow}-${chunk.lastRow} sent ${chunk.sent.length}; import stopped`,
    );
}

const retryable = (e) => e instanceof ServiceError && (e.status === undefined || e.status >= 500 || e.status === 429);

/** What a retried refusal waited for, in words: the import lease and how long, or the service's message. */
function busyReason(/** @type {ServiceError} */ e) {
  if (e.busy === "import-lease")
    return `another import holds the directory's import lease (one that was stopped keeps it up to 120 s after it took it); it ends in about ${e.retryAfter ?? "?"} s`;
  if (e.busy === "sign-ins") return "sign-ins are writing people of these rows";
  return `${e.message}${e.status ? ` (HTTP ${e.status})` : ""}`;
}

/** A refusal's next step, when the chunk's size is what the service refused. */
function limitHint(e) {
  if (!(e instanceof ServiceError)) return "";
  if (e.status === 413) return " (lower --chunk-bytes to the service's ADMIN_MAX_IMPORT_BYTES)";
  if (/ADMIN_MAX_IMPORT_ROWS/.test(e.message)) return " (lower --chunk-size to the service's ADMIN_MAX_IMPORT_ROWS)";
  return "";
}

async function importStream(/** @type {Job} */ job, /** @type {Context} */ ctx) {
  const csv = job.format === "csv";
  const identity = fileIdentity(job.file);
  let header = Buffer.alloc(0);
  let bodyStart = 0;
  if (csv) {
    let first;
    try {
      first = await readHeader(job.file);
    } catch (e) {
      if (e instanceof RecordError)
        throw new CliError(`${job.file}: the header ${e.message.replace(/^row 1 /, "")}`, 1);
      throw e;
    }
    if (!first) throw new CliError(`${job.file} has no header row (and no rows)`, 1);
    if (!isUtf8(first.bytes)) throw new CliError(`${job.file}: the header row is not UTF-8 text`, 1);
    header = Buffer.from(first.bytes);
    bodyStart = first.end;
  }
  const { state, resumed } = openState(job, ctx, identity, bodyStart);
  const startRow = state.rows_done;
  if (resumed) {
    ctx.err.write(
      `resuming at row ${startRow + 1}: rows 1-${startRow} were acknowledged by an earlier run (${job.statePath})\n`,
    );
  }
  saveState(job.statePath, state);

  const progress = new Progress(ctx.err, {
    total: identity.size,
    startBytes: state.offset,
    startRows: startRow,
    quiet: job.quiet,
  });
  if (!job.quiet && !ctx.err.isTTY) {
    ctx.err.write(
      `import: ${job.file}, ${identity.size} bytes, chunks of at most ${job.chunkRows} rows, ${job.parallel} in parallel\n`,
    );
  }
  const stopAfter = Number(ctx.env.ADMIN_CLI_STOP_AFTER_CHUNKS ?? 0);
  const retryMs = Number(ctx.env.ADMIN_CLI_RETRY_MS ?? 1000);
  const doneWhat = job.dryRun ? "checked" : "in";
  const resumeHint = () =>
    state.rows_done > 0
      ? `import stopped: rows 1-${state.rows_done} are ${doneWhat} (state: ${job.statePath}); run the same command again to resume at row ${state.rows_done + 1}`
      : `import stopped before any chunk was acknowledged; nothing to resume`;

  /** Answers that arrived ahead of an earlier chunk's, by chunk number. */
  const waiting = new Map();
  let nextSeq = 0;
  let acked = 0;
  let chunks = 0;
  let rowsDone = startRow;
  let bytesDone = state.offset;

  const ack = (/** @type {Chunk} */ chunk, /** @type {Counts} */ counts) => {
    acked++;
    rowsDone += chunk.rows;
    bytesDone += chunk.end - chunk.start;
    waiting.set(chunk.seq, { chunk, counts });
    // the state holds the prefix of the file every chunk of which is acknowledged
    while (waiting.has(nextSeq)) {
      const { chunk: c, counts: k } = waiting.get(nextSeq);
      waiting.delete(nextSeq++);
      for (const key of Object.keys(state.totals)) state.totals[key] += k.totals[key];
      for (const x of k.rejected) if (state.rejected.length < MAX_LISTED) state.rejected.push(x);
      for (const col of k.ignored)
        if (!state.ignored_columns.includes(col) && state.ignored_columns.length < MAX_IGNORED_COLUMNS)
          state.ignored_columns.push(col);
      state.offset = c.end;
      state.rows_done = c.lastRow;
    }
    saveState(job.statePath, state);
    progress.update(rowsDone, bytesDone);
    // test-only: dies as a killed process would, right after this acknowledgement is recorded
    if (stopAfter > 0 && acked === stopAfter) process.kill(process.pid, "SIGKILL");
  };

  const send = async (/** @type {Chunk} */ chunk) => {
    if (chunk.sent.length === 0) return countsOf(chunk, { ...zeroTotals(), rejected: [], ignored_columns: [] });
    const body = bodyOf(chunk, header, csv);
    chunk.parts = [];
    const type = csv ? "text/csv; charset=utf-8" : "application/json";
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await ctx.api(
          "POST",
          importPath(job.dryRun, state.run),
          body,
          type,
          AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        );
        checkAnswer(chunk, r);
        return countsOf(chunk, r);
      } catch (e) {
        if (!retryable(e) || attempt > RETRIES) throw e;
        const err = /** @type {ServiceError} */ (e);
        const wait = Math.max(retryMs * 2 ** (attempt - 1), (err.retryAfter ?? 0) * 1000);
        progress.note(
          `rows ${chunk.firstRow}-${chunk.lastRow}: ${busyReason(err)}; ` +
            `sending them again in ${wait / 1000} s (retry ${attempt} of ${RETRIES})`,
        );
        await sleep(wait);
      }
    }
  };

  const onInterrupt = () => {
    progress.stop();
    ctx.err.write(`interrupted. ${resumeHint()}\n`);
    process.exit(130);
  };
  process.once("SIGINT", onInterrupt);
  /** @type {unknown} */
  let failure;
  try {
    /** @type {Set<Promise<void>>} */
    const inFlight = new Set();
    try {
      for await (const chunk of chunksOf(job, header, state.offset, state.rows_done)) {
        chunks++;
        const p = send(chunk)
          .then((counts) => ack(chunk, counts))
          .catch((e) => {
            failure ??= e;
          })
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        while (inFlight.size >= job.parallel) await Promise.race(inFlight);
        if (failure) break;
      }
    } catch (e) {
      failure ??= e;
    }
    await Promise.all(inFlight);
  } finally {
    process.removeListener("SIGINT", onInterrupt);
  }

  if (failure) {
    progress.stop();
    if (state.rows_done === 0 && !resumed) rmSync(job.statePath, { force: true });
    if (failure instanceof RecordError) {
      throw new CliError(
        `${job.file}: ${failure.message}; rows 1-${state.rows_done} are ${doneWhat}.\n` +
          `Mend the file and import it again with --restart (a changed file cannot be resumed; rows already imported are updated in place).`,
        1,
      );
    }
    if (failure instanceof ServiceError) {
      const e = failure;
      throw new ServiceError(e.message + limitHint(e), e.status, e.body, resumeHint());
    }
    throw failure;
  }
  if (state.rows_done === 0) {
    rmSync(job.statePath, { force: true });
    throw new CliError(`${job.file} has no rows`, 1);
  }
  progress.update(rowsDone, identity.size);
  progress.done();
  // The run's end: the people its chunks displaced (and no later chunk moved) are removed now. The
  // state is kept until the commit is answered, so a failed commit is sent again by resuming.
  let commit = null;
  if (!job.dryRun) {
    for (let attempt = 1; ; attempt++) {
      try {
        commit = await ctx.api("POST", `/admin/directory/import/commit?run=${encodeURIComponent(state.run)}`);
        break;
      } catch (e) {
        if (!retryable(e) || attempt > RETRIES) {
          const err = /** @type {ServiceError} */ (e);
          throw new ServiceError(
            `every row was sent, but the end of the import (its commit) failed: ${err.message}`,
            err.status,
            err.body,
            resumeHint(),
          );
        }
        const err = /** @type {ServiceError} */ (e);
        const wait = Math.max(retryMs * 2 ** (attempt - 1), (err.retryAfter ?? 0) * 1000);
        progress.note(
          `the commit: ${busyReason(err)}; sending it again in ${wait / 1000} s (retry ${attempt} of ${RETRIES})`,
        );
        await sleep(wait);
      }
    }
  }
  rmSync(job.statePath, { force: true });
  return {
    format: job.format,
    dry_run: job.dryRun,
    ...state.totals,
    ...(commit ? { removed: commit.removed } : {}),
    rejected: state.rejected,
    ignored_columns: state.ignored_columns,
    chunks,
    resumed_at_row: resumed ? startRow + 1 : null,
  };
}
