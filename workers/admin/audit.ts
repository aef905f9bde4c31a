// GET /admin/audit: audit events newest first, a page at a time, read from the R2 archive
// (docs/operations.md "Audit").

import { MAX_SHARDS } from "../provider/store/config";
import { storeAt } from "../provider/store/one-time-store";
import type { AuditEvent } from "../provider/store/audit-archive";
import { formatCursor, listAudit, parseCursor, type AuditCursor } from "./audit-store";
import { adminConfig, type AdminEnv } from "./config";
import { E } from "../core/errors";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
function intParam(url: URL, name: string, min: number, max: number): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === "") return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
    throw E.invalidBecause(name, `must be a whole number from ${min} to ${max}`);
  return Number(v);
}

function textParam(url: URL, name: string, shape: RegExp): string | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === "") return undefined;
  if (!shape.test(v)) throw E.invalidBecause(name, "has characters an id never has");
  return v;
}

function cursorParam(url: URL, name: string): AuditCursor | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === "") return undefined;
  const c = parseCursor(v);
  if (!c) throw E.invalidBecause(name, "must be the next_before of a previous page");
  return c;
}

function wireEvent(e: AuditEvent) {
  return {
    id: e.id,
    at: new Date(e.at).toISOString(),
    type: e.type,
    client_id: e.clientId,
    outcome: e.outcome,
    detail: e.detail,
  };
}

/**
 * `limit` (1-500, default 50), `before` (the previous page's `next_before`), `type` (exact, or a
 * prefix ending in "." such as `client.`), `client_id`.
 */
export async function listEvents(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const url = rc.url;
  const q = {
    limit: intParam(url, "limit", 1, MAX_LIMIT) ?? DEFAULT_LIMIT,
    before: cursorParam(url, "before"),
    type: textParam(url, "type", /^[a-z][a-z._]{0,63}$/),
    clientId: textParam(url, "client_id", /^[A-Za-z0-9._~-]{1,128}$/),
  };
  const page = await listAudit(env.AUDIT, q, Date.now(), adminConfig(env).auditRetentionMs);
  return json({
    events: page.events.map(wireEvent),
    next_before: page.next === null ? null : formatCursor(page.next),
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
