// GET /admin/audit: audit events newest first, a page at a time; GET /admin/audit/export: a time
// range as NDJSON, oldest first. Both read the R2 archive (docs/operations.md "Audit").

import { MAX_SHARDS } from "../provider/store/config";
import { sweepUnfinished } from "../provider/store/flows/journaled-change";
import { storeAt } from "../provider/store/one-time/index";
import { wireEvent } from "../provider/store/audit-archive";
import { exportAudit, formatCursor, listAudit, parseCursor, type AuditCursor } from "./audit-store";
import { adminConfig, type AdminEnv } from "./config";
import { E } from "../core/errors";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { service } from "./access";

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
/** The longest range one export request streams; the CLI asks for a longer one a day at a time. */
export const MAX_EXPORT_MS = 86_400_000;

function intParam(q: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
    throw E.invalidBecause(name, `must be a whole number from ${min} to ${max}`);
  return Number(v);
}

function textParam(q: URLSearchParams, name: string, shape: RegExp): string | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  if (!shape.test(v)) throw E.invalidBecause(name, "has characters an id never has");
  return v;
}

function cursorParam(q: URLSearchParams, name: string): AuditCursor | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const c = parseCursor(v);
  if (!c) throw E.invalidBecause(name, "must be the next_before of a previous page");
  return c;
}

/** An ISO 8601 date (UTC midnight) or date and time with its offset (`Z`, `+09:00`). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** An ISO 8601 time query parameter (as the audit and metrics APIs take it), or undefined. */
export function timeParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const ms = ISO_TIME.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms))
    throw E.invalidBecause(
      name,
      "must be an ISO 8601 date, or a date and time with its offset (2026-05-01T09:00:00+09:00)",
    );
  return ms;
}

/**
 * `limit` (1-500, default 50), `before` (the previous page's `next_before`), `type` (exact, or a
 * prefix ending in "." such as `client.`), `client_id`, `actor` (`operator:<id>`, `token:<name>`, `developer:<id>`),
 * `since` and `until` (ISO 8601 times: events in [since, until); `before` wins over `until`).
 */
export const listEvents = service<
  URLSearchParams,
  { events: ReturnType<typeof wireEvent>[]; next_before: string | null }
>("viewer", "GET", async (env, { rc }, query) => {
  // a read of the trail (the API's, the console's page) also sweeps the changes left unfinished
  rc.waitUntil(sweepUnfinished(env).catch(() => undefined));
  const now = Date.now();
  const since = timeParam(query, "since");
  const until = timeParam(query, "until");
  if (since !== undefined && until !== undefined && until <= since)
    throw E.invalidBecause("until", "must be later than since");
  const q = {
    limit: intParam(query, "limit", 1, MAX_LIMIT) ?? DEFAULT_LIMIT,
    before: cursorParam(query, "before") ?? (until === undefined ? undefined : { at: until, id: null }),
    type: textParam(query, "type", /^[a-z][a-z._]{0,63}$/),
    clientId: textParam(query, "client_id", /^[A-Za-z0-9._~-]{1,128}$/),
    actor: textParam(query, "actor", /^(?:operator|token|developer):[A-Za-z0-9_-]{1,40}$/),
  };
  // nothing older than `since` is read: the scan stops there as it stops at the retention
  const retention = adminConfig(env).auditRetentionMs;
  const page = await listAudit(env.AUDIT, q, now, since === undefined ? retention : Math.min(retention, now - since));
  return {
    events: page.events.map(wireEvent),
    next_before: page.next === null ? null : formatCursor(page.next),
  };
});

/**
 * `from` (required) and `to` (default now): ISO 8601 times, at most a day apart. The events within
 * [from, to) and the retention window, oldest first, one JSON object a line, streamed.
 */
export const exportEvents = service<URLSearchParams, { ndjson: ReadableStream | string }>(
  "viewer",
  "GET",
  async (env, _caller, query) => {
    const now = Date.now();
    const from = timeParam(query, "from");
    if (from === undefined) throw E.missing("from");
    const to = timeParam(query, "to") ?? now;
    if (to <= from) throw E.invalidBecause("to", "must be later than from");
    if (to - from > MAX_EXPORT_MS) throw E.invalidBecause("to", "must be at most 24 hours after from");
    const start = Math.max(from, now - adminConfig(env).auditRetentionMs);
    return { ndjson: start < to ? exportAudit(env.AUDIT, start, to) : "" };
  },
);

/** The NDJSON of an export as its answer (the API's; the console's adds a download's name). */
export function ndjsonResponse(body: ReadableStream | string): Response {
  return new Response(body, {
    headers: {
      "Content-Type": "application/x-ndjson; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

/**
 * GET /admin/events: signed events to apps not yet delivered, from every store object (docs/events.md):
 * client, reason, attempts, next try (null once the retries ended), never the plid.
 */
export async function pendingEvents(_req: Request, env: AdminEnv): Promise<Response> {
  // every object any ONE_TIME_SHARDS setting may use: the worker that recorded an event may have
  // had more shards than this one (or the setting was lowered since)
  const lists = await Promise.all(Array.from({ length: MAX_SHARDS }, (_, i) => storeAt(env, i).pendingEvents()));
  const events = lists
    .flat()
    .sort((a, b) => a.createdAt - b.createdAt)
    .map((e) => ({
      id: e.jti,
      client_id: e.clientId,
      reason: e.reason,
      attempts: e.attempts,
      next_try: e.nextAt === null ? null : new Date(e.nextAt).toISOString(),
      created_at: new Date(e.createdAt).toISOString(),
      last_outcome: e.lastOutcome,
    }));
  return json({ events });
}
