// The audit trail as tests read it: every one-time-store object's outbox written to R2 at once,
// then the events read back from the bucket, oldest first, in the row shape of their lines
// (`detail` as JSON text, `at` in milliseconds).

import { env } from "./env";
import { MAX_SHARDS } from "../../workers/provider/store/config";
import { storeAt } from "../../workers/provider/store/one-time/one-time-store";
import { AUDIT_PREFIX, compareEvents, parseAuditLine } from "../../workers/provider/store/audit-archive";

export interface AuditRow {
  id: string;
  at: number;
  type: string;
  client_id: string | null;
  outcome: string;
  detail: string | null;
}

/**
 * Flushes the audit outbox of every object events go to (`shard-<n>`, any ONE_TIME_SHARDS
 * setting); an object of another name is flushed by its own `flushAudit()`.
 */
export async function flushAudit(): Promise<void> {
  await Promise.all(Array.from({ length: MAX_SHARDS }, (_, i) => storeAt(env, i).flushAudit()));
}

/** Every R2 object key of the audit trail. */
export async function auditKeys(): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const r = await env.AUDIT.list({ prefix: AUDIT_PREFIX, ...(cursor ? { cursor } : {}) });
    keys.push(...r.objects.map((o) => o.key));
    cursor = r.truncated ? r.cursor : undefined;
  } while (cursor);
  return keys;
}

/**
 * The audit events in R2 after a flush, oldest first: `type` exact or a prefix ending in ".",
 * `clientId`, `since` (ms); `object`: only those the object of that name wrote.
 */
export async function auditEvents(
  filter: { type?: string; clientId?: string | null; since?: number; object?: string } = {},
): Promise<AuditRow[]> {
  await flushAudit();
  const events = [];
  const keys = await auditKeys();
  const own = (k: string) =>
    filter.object === undefined || /^(.*)-\d+\.ndjson$/.exec(k.slice(k.lastIndexOf("/") + 1))?.[1] === filter.object;
  for (const key of keys.filter(own)) {
    const text = (await (await env.AUDIT.get(key))!.text()).trimEnd();
    for (const line of text.split("\n")) events.push(parseAuditLine(line)!);
  }
  const { type, clientId, since } = filter;
  return events
    .filter(
      (e) =>
        (type === undefined || (type.endsWith(".") ? e.type.startsWith(type) : e.type === type)) &&
        (clientId === undefined || e.clientId === clientId) &&
        (since === undefined || e.at >= since),
    )
    .sort(compareEvents)
    .map((e) => ({
      id: e.id,
      at: e.at,
      type: e.type,
      client_id: e.clientId,
      outcome: e.outcome,
      detail: e.detail === null ? null : JSON.stringify(e.detail),
    }));
}

/** The newest audit event of a type (after a flush), or undefined. */
export async function lastAuditEvent(type: string): Promise<AuditRow | undefined> {
  return (await auditEvents({ type })).at(-1);
}
