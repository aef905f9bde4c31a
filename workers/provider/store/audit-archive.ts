// The audit trail in R2 (binding AUDIT, docs/storage.md "R2"): the one place that knows its keys
// and its line format. One-time-store objects write their audit outbox here in batches (`archive`);
// the admin API reads it back (workers/admin/audit-store.ts). Objects are keyed by the UTC hour of
// their events, so a reader walks hours and a lifecycle rule on the prefix enforces retention:
//
//   audit/YYYY/MM/DD/HH/<object>-<first seq>.ndjson
//
// one JSON object a line, oldest first: {"id","at","type","client_id","outcome","detail"}. An
// event's id is `<object>-<seq>`: the one-time-store object's name and its own audit sequence
// number, so ids are unique across objects and name nothing of a person.

/** What every audit object key starts with (the lifecycle rule's prefix). */
export const AUDIT_PREFIX = "audit/";
export const HOUR_MS = 3_600_000;

/** An audit event as stored: never personal data, codes or tokens. */
export interface AuditEvent {
  /** `<object>-<seq>`: unique across the archive. */
  id: string;
  at: number;
  type: string;
  clientId: string | null;
  outcome: string;
  detail: Record<string, unknown> | null;
}

/** An outbox row of a one-time-store object, as its flush reads it (`detail`: JSON text). */
export type OutboxRow = {
  at: number;
  type: string;
  client_id: string | null;
  outcome: string;
  detail: string | null;
};

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** The start of the UTC hour holding `ms`. */
export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/** `audit/YYYY/MM/DD/HH/`: the prefix of the objects holding events of that UTC hour. */
export function hourPrefix(ms: number): string {
  const d = new Date(ms);
  return `${AUDIT_PREFIX}${pad(d.getUTCFullYear(), 4)}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${pad(d.getUTCHours())}/`;
}

/** The hour an `audit/YYYY/MM/DD/HH/` prefix names, or null for anything else. */
export function hourOfPrefix(prefix: string): number | null {
  const m = /^audit\/(\d{4})\/(\d{2})\/(\d{2})\/(\d{2})\/$/.exec(prefix);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]));
  return hourPrefix(ms) === prefix ? ms : null;
}

/** A one-time-store object's name (or id) as it appears in keys and event ids. */
export function objectLabel(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
}

/** An event in the archive's (and the admin API's) wire names. */
export function wireEvent(e: AuditEvent) {
  return {
    id: e.id,
    at: new Date(e.at).toISOString(),
    type: e.type,
    client_id: e.clientId,
    outcome: e.outcome,
    detail: e.detail,
  };
}

/** One NDJSON line (with its newline) of an event, in the archive's wire names. */
export function auditLine(e: AuditEvent): string {
  return JSON.stringify(wireEvent(e)) + "\n";
}

/** An event from one NDJSON line, or null for a line that is not one (a reader skips it). */
export function parseAuditLine(line: string): AuditEvent | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  const at = typeof o.at === "string" ? Date.parse(o.at) : NaN;
  if (typeof o.id !== "string" || Number.isNaN(at) || typeof o.type !== "string" || typeof o.outcome !== "string")
    return null;
  const clientId = typeof o.client_id === "string" ? o.client_id : null;
  const detail = typeof o.detail === "object" && o.detail !== null ? (o.detail as Record<string, unknown>) : null;
  return { id: o.id, at, type: o.type, clientId, outcome: o.outcome, detail };
}

/**
 * Orders ids: those of one object by their sequence number, others by text (only events of the same
 * millisecond need it).
 */
export function compareIds(a: string, b: string): number {
  const i = a.lastIndexOf("-");
  const j = b.lastIndexOf("-");
  if (i > 0 && i === j && a.slice(0, i) === b.slice(0, j)) {
    const d = Number(a.slice(i + 1)) - Number(b.slice(j + 1));
    if (d) return d;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Oldest first: by time, then id. */
export function compareEvents(a: { at: number; id: string }, b: { at: number; id: string }): number {
  return a.at - b.at || compareIds(a.id, b.id);
}

/** What an audit object's custom metadata holds: its events' first and last times (ms), its count. */
export interface AuditSpan {
  key: string;
  first: number;
  last: number;
}

/** The span of a listed object; one without metadata (written by hand) may hold any time of its hour. */
export function spanOf(o: R2Object, hour: number): AuditSpan {
  const num = (v: string | undefined, dflt: number) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : dflt);
  return {
    key: o.key,
    first: num(o.customMetadata?.first, hour),
    last: num(o.customMetadata?.last, hour + HOUR_MS - 1),
  };
}

/**
 * Writes outbox rows to the archive: one object per UTC hour of their events (a batch spanning an
 * hour boundary becomes two), each sorted oldest first. The rows' ids are `<object>-<seq>`, `seq`
 * counting from `firstSeq` in the rows' order, and each object's key is named by its first seq:
 * a retry of a batch that failed halfway (the same rows in the same order, perhaps with more after
 * them) writes the same keys again, so no event is archived twice.
 */
export async function archive(
  bucket: R2Bucket,
  object: string,
  firstSeq: number,
  rows: readonly OutboxRow[],
): Promise<void> {
  const hours = new Map<number, { seq: number; events: AuditEvent[] }>();
  rows.forEach((r, i) => {
    const hour = hourOf(r.at);
    let h = hours.get(hour);
    if (!h) hours.set(hour, (h = { seq: firstSeq + i, events: [] }));
    h.events.push({
      id: `${object}-${firstSeq + i}`,
      at: r.at,
      type: r.type,
      clientId: r.client_id,
      outcome: r.outcome,
      detail: parseDetail(r.detail),
    });
  });
  await Promise.all(
    [...hours].map(([hour, { seq, events }]) => {
      events.sort(compareEvents);
      return bucket.put(`${hourPrefix(hour)}${object}-${seq}.ndjson`, events.map(auditLine).join(""), {
        httpMetadata: { contentType: "application/x-ndjson; charset=utf-8" },
        customMetadata: {
          first: String(events[0]!.at),
          last: String(events[events.length - 1]!.at),
          count: String(events.length),
        },
      });
    }),
  );
}

/** A detail as the outbox holds it (JSON text); text that is not a JSON object is kept as `{text}`. */
function parseDetail(detail: string | null): Record<string, unknown> | null {
  if (detail === null) return null;
  try {
    const v = JSON.parse(detail) as unknown;
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* kept as text below */
  }
  return { text: detail };
}
