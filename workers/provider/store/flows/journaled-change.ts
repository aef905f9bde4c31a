// The change journal's flow (docs/operations.md "Unfinished changes"): a request's change under a
// journal row (D1 `change_journal`, change-journal.ts), and the sweep that turns a row left behind
// into a `request.unfinished` audit event (the one-time store's audit outbox) before deleting it.

import { appOf, endChange, journaled, type JournalRow, UNFINISHED_AFTER_MS, unfinishedRows } from "../change-journal";
import type { StoreVars } from "../config";
import { auditOnce, type AuditRecord, onceKey, type OneTimeEnv } from "../one-time/index";

type JournalEnv = OneTimeEnv & StoreVars & { DB: D1Database };

/** The event a left row becomes (the app's, when the change named one). */
function unfinishedEvent(r: JournalRow): AuditRecord {
  const detail = { actor: r.actor, worker: r.worker, method: r.method, route: r.route };
  return [r.started_at, "request.unfinished", r.client_id, "unknown", JSON.stringify(detail)];
}

/**
 * Turns the rows older than `graceMs` into `request.unfinished` events, then deletes them; how
 * many it turned. Safe to run at once from many requests and again after a kill.
 */
export async function sweepUnfinished(
  env: JournalEnv,
  now = Date.now(),
  graceMs = UNFINISHED_AFTER_MS,
): Promise<number> {
  const results = await unfinishedRows(env, now - graceMs);
  for (const r of results) {
    await auditOnce(env, r.id, [[await onceKey(`unfinished:${r.id}`), unfinishedEvent(r)]]);
    await endChange(env, r.id);
  }
  return results.length;
}

/**
 * A request's change under the journal (`journaled`), then, after answering, a sweep of the rows
 * left behind: every change sweeps, so a left row waits at most until the next change past its grace.
 */
export async function journaledChange<T>(
  env: JournalEnv,
  rc: {
    worker: string;
    route?: string | undefined;
    params: Record<string, string>;
    waitUntil(p: Promise<unknown>): void;
  },
  actor: string,
  method: string,
  run: () => Promise<T>,
): Promise<T> {
  const route = rc.route ?? "(unmatched)";
  const out = await journaled(env, actor, { worker: rc.worker, method, route, clientId: appOf(route, rc.params) }, run);
  rc.waitUntil(sweepUnfinished(env).catch(() => undefined));
  return out;
}
