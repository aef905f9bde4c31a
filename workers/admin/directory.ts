// /admin/directory: the embedded carrier directory (docs/operations.md "Import formats").
// Import validates every row and reports rejected ones by row number and reason only.

import { actorOf, auditBy, callerOf, service } from "./access";
import { adminConfig } from "./config";
import { endProgress, recordCommit } from "../provider/store/import-runs";
import { checkRunFile, chunkPlace, recordProgress } from "./import-progress";
import { countSubscribers } from "../provider/store/directory/index";
import {
  commitRun,
  deleteSubscriber,
  DirectoryBusy,
  ImportBusy,
  importDirectory,
  underLease,
} from "../provider/store/flows/directory-write";
import type { AdminEnv } from "./config";
import { E } from "../core/errors";
import { MOBILE_NUMBER } from "../core/spec";
import { json, mediaType, readBodyText } from "../core/http";
import type { RequestContext } from "../core/router";
import { parseImport } from "./directory-input";

/** At most this many rejected rows are listed; `rejected_count` always has the total. */
const MAX_REPORTED_REJECTIONS = 1000;

function importFormat(req: Request): "csv" | "json" {
  const type = mediaType(req);
  if (type === "text/csv") return "csv";
  if (type === "application/json") return "json";
  throw E.invalidBecause("Content-Type", "send text/csv or application/json");
}

/** An import run's id (`run`): a file sent in several requests, committed once (docs/operations.md). */
function runParam(url: URL): string | null {
  const v = url.searchParams.get("run");
  if (v === null || v === "") return null;
  if (!/^[A-Za-z0-9_-]{8,64}$/.test(v)) throw E.invalidBecause("run", "must be 8 to 64 letters, digits, - or _");
  return v;
}

/** Imports and commits wait for one another; one that waited too long is told to retry (the CLI does). */
/**
 * A busy directory's 429: `Admin-Busy` says what it waits for (the CLI says so), `Retry-After` for
 * how long: an import lease until it ends (a stopped import's lasts up to 120 s after it took it).
 */
function busyToRetry(e: unknown): never {
  if (e instanceof ImportBusy) {
    const err = E.tooMany((e.until - Date.now()) / 1000, "import: another import is running");
    err.headers["Admin-Busy"] = "import-lease";
    throw err;
  }
  // its rows' people kept being written meanwhile (sign-ins confirmed by the carrier API)
  if (e instanceof DirectoryBusy) {
    const err = E.tooMany(5, "import: its people are being written by sign-ins");
    err.headers["Admin-Busy"] = "sign-ins";
    throw err;
  }
  throw e;
}

function dryRunParam(url: URL): boolean {
  const v = url.searchParams.get("dry_run");
  if (v === null || v === "false" || v === "0") return false;
  if (v === "true" || v === "1" || v === "") return true;
  throw E.invalidBecause("dry_run", "must be true or false");
}

/** The directory's counts, as `GET /admin/directory` answers them. */
export interface DirectoryCounts {
  subscribers: number;
  test_numbers: number;
  fixed_code_numbers: number;
  shards: number;
  pending_changes: number;
}

/** Counts only: the directory's content is personal data and is not listed. */
export const summary = service<void, DirectoryCounts>("viewer", "GET", async (env) => {
  const c = await countSubscribers(env);
  return {
    subscribers: c.total,
    // as `test-numbers list` counts them: registered for app review
    test_numbers: c.reviewNumbers,
    // every number with a fixed code: those, and the dev seed's
    fixed_code_numbers: c.testNumbers,
    shards: c.shards,
    pending_changes: c.pendingChanges,
  };
});

export async function importSubscribers(req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const cfg = adminConfig(env);
  const format = importFormat(req);
  const dryRun = dryRunParam(rc.url);
  const run = runParam(rc.url);
  if (run !== null && dryRun) throw E.invalidBecause("run", "a dry run changes nothing, so it has no run to commit");
  // The chunk's place in its file, when the caller keeps the run's progress here (the console does).
  const place = chunkPlace(rc.url, run, dryRun);
  if (place) await checkRunFile(env, run!, place, format);
  // One import at a time, from before its body is read (docs/storage.md "Changes across shards").
  const { parsed, counts } = await underLease(env, async () => {
    const text = await readBodyText(req, cfg.maxImportBytes);
    const parsed = parseImport(format, text, cfg.maxImportRows, Date.now());
    return { parsed, counts: await importDirectory(env, parsed.valid, dryRun, run) };
  }).catch(busyToRetry);
  const { inserted, updated, reassigned, signals } = counts;
  const report = {
    format,
    dry_run: dryRun,
    received: parsed.received,
    inserted,
    updated,
    reassigned,
    signals_changed: signals,
    rejected_count: parsed.rejected.length,
    rejected: parsed.rejected.slice(0, MAX_REPORTED_REJECTIONS),
    ignored_columns: parsed.ignoredColumns,
  };
  if (!dryRun) {
    await auditBy(env, callerOf(rc), "directory.imported", null, parsed.rejected.length ? "refused" : "ok", {
      format,
      received: parsed.received,
      inserted,
      updated,
      reassigned,
      signals,
      rejected: parsed.rejected.length,
    });
  }
  if (!place) return json(report);
  const progress = await recordProgress(
    env,
    run!,
    place,
    format,
    { received: parsed.received, inserted, updated, reassigned, rejected: parsed.rejected },
    actorOf(rc).id,
  );
  return json({ ...report, progress });
}

/**
 * `POST /admin/directory/import/commit?run=ID`: the end of an import run. The people its chunks
 * displaced, and no later chunk moved elsewhere, are removed now (their logins end, events
 * `number_reassigned`).
 */
export async function commitImport(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const run = runParam(rc.url);
  if (run === null) throw E.missing("run");
  const now = await commitRun(env, run).catch(busyToRetry);
  // The run's totals over every commit of it: a commit sent again (its answer lost) reports the
  // removals the first one made too.
  const { removed, left } = await recordCommit(env, run, now.removed, now.left);
  await endProgress(env, run);
  rc.log.event = "directory.import_committed";
  await auditBy(env, callerOf(rc), "directory.import_committed", null, left ? "refused" : "ok", {
    removed: now.removed,
    left,
  });
  return json({ run, removed, left });
}

/** Removes one subscriber: their logins end (events `subscriber_removed`). The phone number is not audited. */
export async function removeSubscriber(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const phone = rc.params.phone!.replace(/[-\s]/g, "");
  if (!MOBILE_NUMBER.test(phone)) throw E.invalidBecause("phone", "must be a mobile number: 01X then 7 or 8 digits");
  const id = await deleteSubscriber(env, phone);
  if (id === null) throw E.noSuch("subscriber");
  await auditBy(env, callerOf(rc), "directory.deleted", null, "ok", { subscriber_id: id });
  return json({ deleted: true });
}
