// The change journal (D1 `change_journal`, migrations/0022_change_journal.sql; docs/operations.md
// "Unfinished changes"). An operator's or developer's change is written to its own store (D1, a
// Durable Object), then its audit event to the audit outbox: two stores, so a worker killed
// between them, or a failed append, would leave a change no event names. The journal closes that
// gap: a row naming the actor and the route is written before the change's handler runs and
// deleted once the handler has answered (done, or refused with a 4xx before changing anything). A
// row older than `UNFINISHED_AFTER_MS` is a request that never answered; the sweep turns it into a
// `request.unfinished` event (outcome "unknown": the change may or may not have been made) with
// who made it.
//
// Invariants:
// - every change that reached its store has its own audit event, or a `request.unfinished` event
//   naming its actor, route and start, once the sweep has run past the grace;
// - a request that answered leaves no row, so it never gets a `request.unfinished` event (unless it
//   ran longer than the grace: then both, and the trail says so);
// - a row becomes one event however many sweeps run at once or again after a kill (`auditOnce`
//   under the row's id, in the object the id places it in), and leaves the journal only after it.
// - no secret or personal data: the route is the template (`/admin/directory/:phone`), never the path.
//
// The rows' statements are here; the sweep, which writes the events to the one-time store, and the
// request's change under a row with its sweep after it (`journaledChange`) are
// flows/journaled-change.ts.

import { randomToken } from "../../core/crypto";
import { ApiError } from "../../core/errors";

type JournalEnv = { DB: D1Database };

/** How long a change may run before its row counts as unfinished (a directory import's batch runs seconds). */
export const UNFINISHED_AFTER_MS = 10 * 60_000;

/** Rows one sweep turns into events, oldest first (the rest wait for the next). */
export const SWEEP_BATCH = 20;

/** The request a change runs in: the worker, method and route template. */
export interface ChangeContext {
  worker: string;
  method: string;
  route: string;
  /** The app the change is made to, when its route names one. */
  clientId?: string | undefined;
}

export interface JournalRow {
  id: string;
  actor: string;
  worker: string;
  method: string;
  route: string;
  client_id: string | null;
  started_at: number;
}

/** Writes the journal row of a change about to run; its id. */
export async function beginChange(env: JournalEnv, actor: string, c: ChangeContext, now = Date.now()): Promise<string> {
  const id = randomToken(16);
  await env.DB.prepare(
    "INSERT INTO change_journal (id, actor, worker, method, route, client_id, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(id, actor, c.worker, c.method, c.route, c.clientId ?? null, now)
    .run();
  return id;
}

/** Deletes a change's row: its handler has answered. */
export async function endChange(env: JournalEnv, id: string): Promise<void> {
  await env.DB.prepare("DELETE FROM change_journal WHERE id = ?").bind(id).run();
}

/**
 * `endChange` for a handler that has answered: a failed delete does not turn its answer into an
 * error (the change is made and audited); the row left becomes a `request.unfinished` event too.
 */
const forget = (env: JournalEnv, id: string) => endChange(env, id).catch(() => undefined);

/**
 * Runs a change under a journal row: the row is deleted when `run` answers, or throws a refusal
 * (an ApiError below 500: the handlers refuse before they change anything). Any other failure
 * leaves the row for the sweep, as a kill would.
 */
export async function journaled<T>(
  env: JournalEnv,
  actor: string,
  c: ChangeContext,
  run: () => Promise<T>,
): Promise<T> {
  const id = await beginChange(env, actor, c);
  let out: T;
  try {
    out = await run();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) await forget(env, id);
    throw err;
  }
  await forget(env, id);
  return out;
}

/** A route's `:id` that names an app (`/admin/clients/:id`, `/console/apps/:id`, `/developers/api/apps/:id`, …). */
const APP_ROUTE = /\/(?:clients|apps)\/:id(?:\/|$)/;
const CLIENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;

/** The app a change's route names, if any (never anything but a client id: no number, no person). */
export function appOf(route: string, params: Record<string, string>): string | undefined {
  const id = params.id;
  return APP_ROUTE.test(route) && id !== undefined && CLIENT_ID.test(id) ? id : undefined;
}

/** The rows started before `before`, oldest first, at most `limit`. */
export async function unfinishedRows(env: JournalEnv, before: number, limit = SWEEP_BATCH): Promise<JournalRow[]> {
  const { results } = await env.DB.prepare(
    "SELECT id, actor, worker, method, route, client_id, started_at FROM change_journal WHERE started_at < ? ORDER BY started_at LIMIT ?",
  )
    .bind(before, limit)
    .all<JournalRow>();
  return results;
}

/** The rows of changes in flight or left behind (operators' view, tests). */
export async function journalRows(env: JournalEnv): Promise<JournalRow[]> {
  const { results } = await env.DB.prepare("SELECT * FROM change_journal ORDER BY started_at").all<JournalRow>();
  return results;
}
