// Entries and counters (tables `entries`, `counters`; docs/storage.md "Durable Object
// OneTimeStore"): short-lived values and fixed-window counters under their callers' keys
// (one-time/keys.ts): sign-in records, /account sessions and a grant's pending first report; a
// number's attempts, sends and locks, a network's limits.
//
// Invariants:
// - a value lives until `expires_at` and a count until `window_end`: every read checks the time
//   itself, so a row the sweep has not reached yet is never taken;
// - taking a value deletes it only while it lives, and says whether it did: of concurrent takers
//   exactly one wins; a swap from one value to another is the same for concurrent swappers;
// - a counter's window starts at its first hit and lasts `windowMs`; a hit after it starts again;
// - values and counts are rewritten with new lives, so write order says nothing of their expiry:
//   the sweep follows the expiry indexes (`entries_expiry`, `counters_expiry`) to the rows that
//   passed, reading none that still live.

import type { Schedule } from "../schedule";

export type Count = { count: number; windowEnd: number };

export class Entries {
  constructor(
    private readonly sql: SqlStorage,
    private readonly schedule: Schedule,
  ) {}

  /** Stores a value under `key` for `ttlMs`, replacing any earlier value. */
  put(key: string, value: string, ttlMs: number): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO entries (key, value, expires_at) VALUES (?, ?, ?)",
      key,
      value,
      Date.now() + ttlMs,
    );
    this.schedule.sweepSoon();
  }

  /** The live value under `key`, or null. */
  get(key: string): string | null {
    const row = this.sql
      .exec<{ value: string }>("SELECT value FROM entries WHERE key = ? AND expires_at > ?", key, Date.now())
      .toArray()[0];
    return row ? row.value : null;
  }

  /** Removes the value under `key`; true when there was a live one (exactly one caller wins). */
  take(key: string): boolean {
    return this.sql.exec("DELETE FROM entries WHERE key = ? AND expires_at > ?", key, Date.now()).rowsWritten > 0;
  }

  /**
   * Replaces the live value under `key` with `value` only while it is `expected`, keeping its life;
   * true when it did: of concurrent swaps from one value exactly one wins.
   */
  swap(key: string, expected: string, value: string): boolean {
    return (
      this.sql.exec(
        "UPDATE entries SET value = ? WHERE key = ? AND value = ? AND expires_at > ?",
        value,
        key,
        expected,
        Date.now(),
      ).rowsWritten > 0
    );
  }

  /** `take` as a token read does it, in the read's own call: whether a live value was there at `now`. */
  takeAt(key: string, now: number): boolean {
    return (
      this.sql.exec("DELETE FROM entries WHERE key = ? AND expires_at > ? RETURNING key", key, now).toArray().length > 0
    );
  }

  /** Removes the value under `key`, live or not. */
  delete(key: string): void {
    this.sql.exec("DELETE FROM entries WHERE key = ?", key);
  }

  /**
   * Fixed-window counter: adds `by` to `key` and returns the new count and when the window ends.
   * The window starts at the first hit and lasts `windowMs`.
   */
  hit(key: string, windowMs: number, by = 1): Count {
    const now = Date.now();
    const row = this.sql
      .exec<{ count: number; window_end: number }>(
        `INSERT INTO counters (key, count, window_end) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET
           count = CASE WHEN window_end <= ? THEN excluded.count ELSE count + excluded.count END,
           window_end = CASE WHEN window_end <= ? THEN excluded.window_end ELSE window_end END
         RETURNING count, window_end`,
        key,
        by,
        now + windowMs,
        now,
        now,
      )
      .toArray()[0]!;
    this.schedule.sweepSoon();
    return { count: row.count, windowEnd: row.window_end };
  }

  /** The live counts of `keys` in their order (0 when absent or the window ended), in one statement. */
  peek(keys: readonly string[]): Count[] {
    const rows = this.sql
      .exec<{ key: string; count: number; window_end: number }>(
        `SELECT key, count, window_end FROM counters WHERE key IN (${keys.map(() => "?").join(", ")}) AND window_end > ?`,
        ...keys,
        Date.now(),
      )
      .toArray();
    return keys.map((k) => {
      const row = rows.find((r) => r.key === k);
      return row ? { count: row.count, windowEnd: row.window_end } : { count: 0, windowEnd: 0 };
    });
  }

  /** Removes counters (a success resets a consecutive-failure count). */
  clear(keys: readonly string[]): void {
    this.sql.exec(`DELETE FROM counters WHERE key IN (${keys.map(() => "?").join(", ")})`, ...keys);
  }

  /** Deletes what passed (`sweepByExpiry`). */
  sweep(now: number): void {
    sweepByExpiry(this.sql, now);
  }
}

/**
 * Deletes the entries and counters that have passed, found by the index of their expiry: it reads
 * the rows it deletes, not the sign-ins still under way. Returns the rows read (tested).
 */
export function sweepByExpiry(sql: SqlStorage, now: number): number {
  return (
    sql.exec("DELETE FROM entries WHERE expires_at <= ?", now).rowsRead +
    sql.exec("DELETE FROM counters WHERE window_end <= ?", now).rowsRead
  );
}
