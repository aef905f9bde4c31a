// The audit outbox (tables `audit_outbox`, `audit_mark`; docs/storage.md "R2"): audit events wait
// here and go to the trail in R2 in batches, AUDIT_FLUSH_SECONDS (60 s) after the first event of a
// batch, by the object's alarm, or at once when the outbox holds AUDIT_FLUSH_ROWS rows, so a busy
// service writes a few objects a minute per object, not one per event. The write itself is the
// flows' (store/flows/one-time-alarm.ts): this object only hands it the rows.
//
// A good redemption's record is its token row (client, issue time), written by the redemption's
// own statement; each flush counts the token rows above a mark and writes one `code.redeemed` event
// per client with the count and the window's first and last redemption: an outbox row for each was
// about a fifth of the token route's CPU (docs/benchmarks.md). Refusals, which carry their reason,
// stay one event each.
//
// Invariants:
// - an event is written into the outbox in the same synchronous step as what it records;
// - rows leave the outbox only after the trail accepted them, and in the same step the object's
//   sequence number (`audit_seq`, which never goes back) moves past them, so a retry names the
//   rows (and the trail's objects) as the failed try did: no event is archived twice;
// - a retry writes exactly the rows of the try it repeats (`inflight_last`, set before the first
//   write), not more appended since: the roll-ups count a batch by its name, once;
// - the object writes under one name (`label`), however it was woken;
// - every token row is counted once: the mark moves past the rows in the step that counts them,
//   and the sweep lowers it when it deleted the highest rows (`lowerMark`);
// - one flush at a time; after a failed one the threshold waits an interval before trying again.

import type { Schedule } from "../schedule";

/**
 * An event as `appendAudit` takes it (positional values cross the RPC for less): its time, type,
 * client, outcome and detail as JSON text.
 */
export type AuditRecord = [at: number, type: string, clientId: string | null, outcome: string, detail: string | null];

/** An outbox row as a flush hands it to the trail (`detail`: JSON text). */
export type OutboxRow = {
  at: number;
  type: string;
  client_id: string | null;
  outcome: string;
  detail: string | null;
};

/** Writes a batch to the trail; `firstSeq` is the sequence number of its first row. */
export type WriteBatch = (rows: OutboxRow[], firstSeq: number) => Promise<void>;

/** Rows an outbox flushes at once (and the count at which it does not wait for the alarm). */
export const AUDIT_FLUSH_ROWS = 1000;
/** Audit events a statement appends: 5 bound values each, and a statement binds at most 100. */
const AUDIT_APPEND_ROWS = 20;

export class AuditOutbox {
  /** Rows in the outbox, once counted (the flush threshold). */
  private rows: number | null = null;
  private flushing: Promise<number> | null = null;
  /** When a flush last failed: the threshold waits an interval before trying the trail again. */
  private failedAt = 0;

  constructor(
    private readonly sql: SqlStorage,
    private readonly schedule: Schedule,
    private readonly write: WriteBatch,
  ) {}

  /** Appends events of the service's workers (one-time/audit.ts); a statement per AUDIT_APPEND_ROWS. */
  append(records: readonly AuditRecord[]): void {
    for (let i = 0; i < records.length; i += AUDIT_APPEND_ROWS) {
      const rows = records.slice(i, i + AUDIT_APPEND_ROWS);
      this.sql.exec(
        `INSERT INTO audit_outbox (at, type, client_id, outcome, detail) VALUES ${rows.map(() => "(?, ?, ?, ?, ?)").join(", ")}`,
        ...rows.flat(),
      );
    }
    this.recorded(records.length);
  }

  /** A refused redemption's event, with its reason. */
  refused(clientId: string, reason: string): void {
    this.sql.exec(
      "INSERT INTO audit_outbox (at, type, client_id, outcome, detail) VALUES (?, ?, ?, ?, ?)",
      Date.now(),
      "code.refused",
      clientId,
      "refused",
      JSON.stringify({ reason }),
    );
    this.recorded(1);
  }

  /** A good redemption: its token row is its record, counted by the next flush. */
  redeemed(): void {
    this.schedule.flushSoon();
  }

  /** One event of the object's own (an event's delivery). */
  later(type: string, clientId: string, outcome: "ok" | "refused", detail: Record<string, unknown>): void {
    this.sql.exec(
      "INSERT INTO audit_outbox (at, type, client_id, outcome, detail) VALUES (?, ?, ?, ?, ?)",
      Date.now(),
      type,
      clientId,
      outcome,
      JSON.stringify(detail),
    );
    this.recorded(1);
  }

  /** `n` rows were just added: flush now at the threshold, else within the interval. */
  private recorded(n: number): void {
    this.rows =
      this.rows === null
        ? this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM audit_outbox").one().n
        : this.rows + n;
    // kept in the outbox on failure: the alarm armed below retries it
    if (this.rows >= AUDIT_FLUSH_ROWS && this.flushing === null && Date.now() - this.failedAt >= this.schedule.flushMs)
      void this.flush().catch(() => {});
    this.schedule.flushSoon();
  }

  /**
   * Writes the outbox to the trail, up to AUDIT_FLUSH_ROWS rows a batch; returns how many rows
   * moved. One flush at a time: a second call while one runs gets the first's answer.
   */
  flush(): Promise<number> {
    if (this.flushing) return this.flushing;
    // cleared once settled, after the assignment below (the callbacks run later)
    const flushing = this.run().then(
      (moved) => {
        this.flushing = null;
        return moved;
      },
      (e: unknown) => {
        this.flushing = null;
        this.failedAt = Date.now();
        throw e;
      },
    );
    this.flushing = flushing;
    return this.flushing;
  }

  private async run(): Promise<number> {
    this.schedule.flushStarted();
    this.countRedeemed();
    let moved = 0;
    for (;;) {
      const mark = this.sql
        .exec<{ s: number; last: number | null }>("SELECT audit_seq AS s, inflight_last AS last FROM audit_mark")
        .one();
      // a batch whose write was begun (and may have reached the trail and the roll-ups) is written
      // again as it was, whatever was appended since: the same rows under the same name
      const rows = this.sql
        .exec<OutboxRow & { id: number }>(
          mark.last === null
            ? "SELECT id, at, type, client_id, outcome, detail FROM audit_outbox ORDER BY id LIMIT ?"
            : "SELECT id, at, type, client_id, outcome, detail FROM audit_outbox WHERE id <= ? ORDER BY id",
          mark.last === null ? AUDIT_FLUSH_ROWS : mark.last,
        )
        .toArray();
      if (rows.length === 0) {
        this.sql.exec("UPDATE audit_mark SET inflight_last = NULL");
        this.rows = 0;
        return moved;
      }
      const last = rows[rows.length - 1]!.id;
      if (mark.last === null) this.sql.exec("UPDATE audit_mark SET inflight_last = ?", last);
      await this.write(rows, mark.s + 1);
      this.sql.exec("DELETE FROM audit_outbox WHERE id <= ?", last);
      this.sql.exec("UPDATE audit_mark SET audit_seq = audit_seq + ?, inflight_last = NULL", rows.length);
      moved += rows.length;
    }
  }

  /**
   * The tokens issued since the last count become one `code.redeemed` row per client, and the mark
   * moves past them, in one synchronous step (so a failing write loses none of them). Tokens take
   * increasing rowids; the sweep lowers the mark if it ever deletes the highest (`lowerMark`).
   */
  countRedeemed(): void {
    const mark = this.sql.exec<{ m: number }>("SELECT tokens_rowid AS m FROM audit_mark").one().m;
    this.sql.exec(
      `INSERT INTO audit_outbox (at, type, client_id, outcome, detail)
       SELECT min(issued_at), 'code.redeemed', client_id, 'ok', json_object('count', count(*), 'until', max(issued_at))
       FROM tokens WHERE rowid > ? AND client_id IS NOT NULL GROUP BY client_id ORDER BY min(issued_at)`,
      mark,
    );
    this.sql.exec("UPDATE audit_mark SET tokens_rowid = (SELECT coalesce(max(rowid), 0) FROM tokens)");
    this.rows = null; // counted again when next needed
  }

  /** After the sweep deleted token rows: with the highest gone, the next would take a rowid under the mark. */
  lowerMark(): void {
    this.sql.exec(
      "UPDATE audit_mark SET tokens_rowid = min(tokens_rowid, (SELECT coalesce(max(rowid), 0) FROM tokens))",
    );
  }

  /**
   * The object's name in the trail: its name when the runtime gives it (kept), else the kept one,
   * else its id. An object woken by its alarm is not told its name: without the kept one, a batch
   * retried after a restart would be written under another name, twice in the trail.
   */
  label(name: string | undefined, id: string): string {
    const kept = this.sql.exec<{ l: string | null }>("SELECT label AS l FROM audit_mark").one().l;
    if (name === undefined) return kept ?? id;
    if (kept !== name) this.sql.exec("UPDATE audit_mark SET label = ?", name);
    return name;
  }

  /** Whether events wait for the trail: rows in the outbox, or token rows not yet counted. */
  waits(): boolean {
    return (
      this.sql
        .exec<{ n: number }>(
          `SELECT EXISTS (SELECT 1 FROM audit_outbox)
           OR EXISTS (SELECT 1 FROM tokens WHERE rowid > (SELECT tokens_rowid FROM audit_mark)) AS n`,
        )
        .one().n > 0
    );
  }
}
