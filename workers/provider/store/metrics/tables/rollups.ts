// The roll-ups' tables (docs/storage.md "Durable Object MetricsStore"): global counts per minute
// (kept 14 days), per app and for all apps per hour (400 days) and per day (5 years), and the batches
// already applied, so a batch sent again (its flush retried) is counted once.

import type { Point } from "../series";

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const KEEP = { minute: 14 * DAY_MS, hour: 400 * DAY_MS, day: 5 * 366 * DAY_MS, batch: 30 * DAY_MS };

/** The key of all apps together in the hourly and daily tables. */
export const ALL_APPS = "";

export type Step = "1m" | "1h" | "1d";

export function createTables(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS applied (batch TEXT PRIMARY KEY, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS per_minute (t INTEGER NOT NULL, series TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (t, series)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS per_hour (t INTEGER NOT NULL, client TEXT NOT NULL, series TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (client, t, series)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS per_hour_series ON per_hour (series, t);
CREATE TABLE IF NOT EXISTS per_day (t INTEGER NOT NULL, client TEXT NOT NULL, series TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (client, t, series)) WITHOUT ROWID;`);
}

export class Rollups {
  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
  ) {}

  /** Adds a batch's points in one transaction; false when the batch was applied already. */
  apply(batch: string, points: readonly Point[], now: number): boolean {
    return this.storage.transactionSync(() => {
      if (this.sql.exec("SELECT 1 FROM applied WHERE batch = ?", batch).toArray().length > 0) return false;
      this.sql.exec("INSERT INTO applied (batch, at) VALUES (?, ?)", batch, now);
      for (const [minute, series, client, n] of points) {
        this.sql.exec(
          "INSERT INTO per_minute (t, series, n) VALUES (?, ?, ?) ON CONFLICT (t, series) DO UPDATE SET n = n + excluded.n",
          minute,
          series,
          n,
        );
        const hour = minute - (minute % HOUR_MS);
        const day = minute - (minute % DAY_MS);
        for (const c of client === null || client === ALL_APPS ? [ALL_APPS] : [ALL_APPS, client]) {
          this.sql.exec(
            "INSERT INTO per_hour (t, client, series, n) VALUES (?, ?, ?, ?) ON CONFLICT (client, t, series) DO UPDATE SET n = n + excluded.n",
            hour,
            c,
            series,
            n,
          );
          this.sql.exec(
            "INSERT INTO per_day (t, client, series, n) VALUES (?, ?, ?, ?) ON CONFLICT (client, t, series) DO UPDATE SET n = n + excluded.n",
            day,
            c,
            series,
            n,
          );
        }
      }
      return true;
    });
  }

  /** The counts of [from, to) at `step` for one app (or all), of the named series (or every one). */
  read(
    step: Step,
    from: number,
    to: number,
    client: string,
    series: readonly string[] | null,
  ): [number, string, number][] {
    const only = series === null ? "" : ` AND series IN (${series.map(() => "?").join(",")})`;
    const args = series ?? [];
    const rows =
      step === "1m"
        ? this.sql.exec(
            `SELECT t, series, n FROM per_minute WHERE t >= ? AND t < ?${only} ORDER BY t`,
            from,
            to,
            ...args,
          )
        : this.sql.exec(
            `SELECT t, series, n FROM ${step === "1h" ? "per_hour" : "per_day"} WHERE client = ? AND t >= ? AND t < ?${only} ORDER BY t`,
            client,
            from,
            to,
            ...args,
          );
    return rows.toArray().map((r) => [r.t as number, r.series as string, r.n as number]);
  }

  /** The apps with a count of `series` in an hour from `from` on. */
  clientsWith(series: string, from: number): string[] {
    return this.sql
      .exec("SELECT DISTINCT client FROM per_hour WHERE series = ? AND t >= ? AND client <> ?", series, from, ALL_APPS)
      .toArray()
      .map((r) => r.client as string);
  }

  /** Drops what is older than each tier keeps. */
  prune(now: number): void {
    this.sql.exec("DELETE FROM per_minute WHERE t < ?", now - KEEP.minute);
    this.sql.exec("DELETE FROM per_hour WHERE t < ?", now - KEEP.hour);
    this.sql.exec("DELETE FROM per_day WHERE t < ?", now - KEEP.day);
    this.sql.exec("DELETE FROM applied WHERE at < ?", now - KEEP.batch);
  }
}
