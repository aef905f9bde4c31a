// Reading the audit trail back from R2 (keys and format: workers/provider/store/audit-archive.ts):
// recent events newest first, a page at a time, and a time range oldest first as a stream. Both
// walk the key tree (year, month, day, hour: one R2 list call per level visited), so empty hours
// cost nothing and a request's work does not grow with the archive; nothing older than the
// retention window is returned.

import {
  AUDIT_PREFIX,
  auditLine,
  compareEvents,
  compareIds,
  hourOf,
  hourOfPrefix,
  hourPrefix,
  parseAuditLine,
  spanOf,
  type AuditEvent,
  type AuditSpan,
} from "../provider/store/audit-archive";

/** R2 calls (lists and reads) one page may spend before it answers with a cursor to go on from. */
export const MAX_R2_CALLS_PER_PAGE = 60;
/** Objects a page reads at once (a Worker has six connections open at a time). */
const PARALLEL_READS = 6;

/**
 * Where a page ends: the next page holds the events older than this. With an `id`, events of the
 * same millisecond ordered before it are older too; without one, only earlier milliseconds are.
 */
export interface AuditCursor {
  at: number;
  id: string | null;
}

export interface AuditQuery {
  limit: number;
  /** The previous page's cursor. */
  before?: AuditCursor;
  /** An exact type, or a prefix ending in ".". */
  type?: string;
  clientId?: string;
  /** Who made the change (`detail.actor`): `operator:<id>`, `token:<name>` or `developer:<id>`. */
  actor?: string;
}

/** The wire form of a cursor (`next_before`): opaque to callers. */
export function formatCursor(c: AuditCursor): string {
  return c.id === null ? String(c.at) : `${c.at}.${c.id}`;
}

/** A cursor from its wire form, or null when it is not one. */
export function parseCursor(text: string): AuditCursor | null {
  const m = /^(\d{1,15})(?:\.([A-Za-z0-9_-]{1,100}))?$/.exec(text);
  return m ? { at: Number(m[1]), id: m[2] ?? null } : null;
}

/** Whether `e` comes after the cursor, in the newest-first order of the list. */
function olderThan(e: AuditEvent, c: AuditCursor): boolean {
  return e.at < c.at || (e.at === c.at && c.id !== null && compareIds(e.id, c.id) < 0);
}

/** The tighter of two cursors (the one that leaves fewer events to come). */
function tighter(a: AuditCursor | null, b: AuditCursor): AuditCursor {
  if (a === null || b.at < a.at) return b;
  if (a.at < b.at) return a;
  if (a.id === null) return a;
  if (b.id === null) return b;
  return compareIds(a.id, b.id) <= 0 ? a : b;
}

/** R2 list options with `include`, which the project's workers-types entry point does not declare. */
type ListOptions = R2ListOptions & { include?: ("httpMetadata" | "customMetadata")[] };

interface Calls {
  n: number;
}

/** The prefixes one level below `prefix` (`audit/2026/` → `audit/2026/05/`, ...). */
async function childPrefixes(bucket: R2Bucket, prefix: string, calls: Calls): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    calls.n++;
    const r = await bucket.list({ prefix, delimiter: "/", ...(cursor ? { cursor } : {}) });
    out.push(...r.delimitedPrefixes);
    cursor = r.truncated ? r.cursor : undefined;
  } while (cursor);
  return out.sort();
}

const LEVEL = [/^\d{4}\/$/, /^\d{2}\/$/, /^\d{2}\/$/, /^\d{2}\/$/];

/**
 * The hours from `lo` to `hi` (any times within them) that hold objects, walking the key tree
 * lazily: a level is listed only when the walk reaches it.
 */
async function* hoursWithObjects(
  bucket: R2Bucket,
  lo: number,
  hi: number,
  order: "asc" | "desc",
  calls: Calls,
): AsyncGenerator<number> {
  const loKey = hourPrefix(lo);
  const hiKey = hourPrefix(hi);
  async function* walk(prefix: string, depth: number): AsyncGenerator<number> {
    if (depth === LEVEL.length) {
      const hour = hourOfPrefix(prefix);
      if (hour !== null) yield hour;
      return;
    }
    const kids = (await childPrefixes(bucket, prefix, calls)).filter(
      (k) =>
        LEVEL[depth]!.test(k.slice(prefix.length)) && k >= loKey.slice(0, k.length) && k <= hiKey.slice(0, k.length),
    );
    if (order === "desc") kids.reverse();
    for (const k of kids) yield* walk(k, depth + 1);
  }
  if (lo <= hi) yield* walk(AUDIT_PREFIX, 0);
}

/** The objects of one hour with the span of their events. */
async function objectsOf(bucket: R2Bucket, hour: number, calls: Calls): Promise<AuditSpan[]> {
  const out: AuditSpan[] = [];
  let cursor: string | undefined;
  do {
    calls.n++;
    const options: ListOptions = {
      prefix: hourPrefix(hour),
      include: ["customMetadata"],
      ...(cursor ? { cursor } : {}),
    };
    const r = await bucket.list(options);
    for (const o of r.objects) out.push(spanOf(o, hour));
    cursor = r.truncated ? r.cursor : undefined;
  } while (cursor);
  return out;
}

/** Every event of one object (gone, e.g. expired meanwhile: none). */
async function readObject(bucket: R2Bucket, key: string): Promise<AuditEvent[]> {
  const o = await bucket.get(key);
  if (!o) return [];
  const out: AuditEvent[] = [];
  for (const line of (await o.text()).split("\n")) {
    const e = line ? parseAuditLine(line) : null;
    if (e) out.push(e);
  }
  return out;
}

function matcher(q: { type?: string; clientId?: string; actor?: string }): (e: AuditEvent) => boolean {
  const { type, clientId, actor } = q;
  const typeOk =
    type === undefined
      ? () => true
      : type.endsWith(".")
        ? (t: string) => t.startsWith(type)
        : (t: string) => t === type;
  return (e) =>
    typeOk(e.type) &&
    (clientId === undefined || e.clientId === clientId) &&
    (actor === undefined || e.detail?.actor === actor);
}

/**
 * Newest first, at most `limit` events, none older than `now - retentionMs`. `next` continues
 * (null: nothing older is left). A page stops early, perhaps with no events, once it has spent
 * MAX_R2_CALLS_PER_PAGE calls: a filter matching few events over busy hours reads many objects.
 */
export async function listAudit(
  bucket: R2Bucket,
  q: AuditQuery,
  now: number,
  retentionMs: number,
): Promise<{ events: AuditEvent[]; next: AuditCursor | null }> {
  const cutoff = now - retentionMs;
  const calls: Calls = { n: 0 };
  const matches = matcher(q);
  const start = q.before ?? null;
  const out: AuditEvent[] = [];
  // every matching event before `pos` (newer) is in `out`; the next page starts there
  let pos: AuditCursor | null = start;
  const keep = (e: AuditEvent) => e.at >= cutoff && (start === null || olderThan(e, start)) && matches(e);
  // A page may stop for its budget only once it moved: a cursor that stays put would loop forever.
  const moved = () => out.length > 0 || (pos !== null && pos !== start);
  const over = () => calls.n >= MAX_R2_CALLS_PER_PAGE && moved();
  const hi = start === null ? now : Math.min(start.at, now);
  if (hi < cutoff) return { events: [], next: null };
  for await (const hour of hoursWithObjects(bucket, cutoff, hi, "desc", calls)) {
    if (over()) return { events: out, next: pos };
    const bound = start === null ? Infinity : start.at;
    // newest first by their last event; an object holding only events after the cursor is skipped
    const spans = (await objectsOf(bucket, hour, calls))
      .filter((s) => s.first <= bound && s.last >= cutoff)
      .map((s) => ({ ...s, last: Math.min(s.last, bound) }))
      .sort((a, b) => b.last - a.last || (a.key < b.key ? 1 : -1));
    const pending: AuditEvent[] = [];
    let i = 0;
    for (;;) {
      // an event is final once no unread object can hold a newer one
      const unread = i < spans.length ? spans[i]!.last : -Infinity;
      pending.sort((a, b) => compareEvents(b, a));
      while (pending.length > 0 && pending[0]!.at > unread) {
        const e = pending.shift()!;
        out.push(e);
        pos = { at: e.at, id: e.id };
        if (out.length === q.limit) return { events: out, next: pos };
      }
      if (i === spans.length) break;
      // everything newer than the unread objects' newest event is done
      pos = tighter(pos, { at: unread + 1, id: null });
      if (over()) return { events: out, next: pos };
      const batch = spans.slice(i, i + Math.max(1, Math.min(PARALLEL_READS, MAX_R2_CALLS_PER_PAGE - calls.n)));
      i += batch.length;
      calls.n += batch.length;
      for (const events of await Promise.all(batch.map((s) => readObject(bucket, s.key))))
        for (const e of events) if (keep(e)) pending.push(e);
    }
    pos = tighter(pos, { at: hour, id: null });
  }
  return { events: out, next: null };
}

/** Events of one object, oldest first, read as a stream (never the whole object at once). */
async function* streamObject(bucket: R2Bucket, key: string): AsyncGenerator<AuditEvent> {
  const o = await bucket.get(key);
  if (!o) return;
  const reader = o.body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const lines = (rest + value).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        const e = line ? parseAuditLine(line) : null;
        if (e) yield e;
      }
    }
    const e = rest ? parseAuditLine(rest) : null;
    if (e) yield e;
  } finally {
    reader.releaseLock();
  }
}

/**
 * The events of one hour's objects within [from, to), oldest first: a merge of the objects (each
 * sorted), opening an object only when the merge reaches its first event, so only the objects
 * whose times overlap are open at once.
 */
async function* mergeHour(bucket: R2Bucket, spans: AuditSpan[], from: number, to: number): AsyncGenerator<AuditEvent> {
  spans.sort((a, b) => a.first - b.first || (a.key < b.key ? -1 : 1));
  const open: { head: AuditEvent; rest: AsyncGenerator<AuditEvent> }[] = [];
  const advance = async (rest: AsyncGenerator<AuditEvent>): Promise<AuditEvent | null> => {
    for (;;) {
      const { value, done } = await rest.next();
      if (done) return null;
      if (value.at >= to) {
        await rest.return(undefined);
        return null;
      }
      if (value.at >= from) return value;
    }
  };
  let i = 0;
  try {
    for (;;) {
      let min = open.reduce<(typeof open)[number] | undefined>(
        (m, o) => (m === undefined || compareEvents(o.head, m.head) < 0 ? o : m),
        undefined,
      );
      while (i < spans.length && (min === undefined || spans[i]!.first <= min.head.at)) {
        const rest = streamObject(bucket, spans[i++]!.key);
        const head = await advance(rest);
        if (head === null) continue;
        const o = { head, rest };
        open.push(o);
        if (min === undefined || compareEvents(head, min.head) < 0) min = o;
      }
      if (min === undefined) return;
      yield min.head;
      const next = await advance(min.rest);
      if (next === null) open.splice(open.indexOf(min), 1);
      else min.head = next;
    }
  } finally {
    await Promise.all(open.map((o) => o.rest.return(undefined)));
  }
}

/** The events within [from, to), oldest first, hour by hour. */
async function* eventsBetween(bucket: R2Bucket, from: number, to: number): AsyncGenerator<AuditEvent> {
  const calls: Calls = { n: 0 };
  for await (const hour of hoursWithObjects(bucket, hourOf(from), to - 1, "asc", calls)) {
    const spans = (await objectsOf(bucket, hour, calls)).filter((s) => s.last >= from && s.first < to);
    yield* mergeHour(bucket, spans, from, to);
  }
}

/** Lines a stream chunk carries (a few tens of KiB). */
const LINES_PER_CHUNK = 200;

/**
 * The events within [from, to) as an NDJSON stream, oldest first, read object by object as the
 * stream is consumed (never the whole range in memory). The caller clamps `from` to retention.
 */
export function exportAudit(bucket: R2Bucket, from: number, to: number): ReadableStream<Uint8Array> {
  const events = eventsBetween(bucket, from, to);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = "";
      for (let n = 0; n < LINES_PER_CHUNK; n++) {
        const { value, done } = await events.next();
        if (done) {
          if (text) controller.enqueue(encoder.encode(text));
          controller.close();
          return;
        }
        text += auditLine(value);
      }
      controller.enqueue(encoder.encode(text));
    },
    async cancel() {
      await events.return(undefined);
    },
  });
}
