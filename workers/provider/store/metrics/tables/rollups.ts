// The roll-ups' tables (docs/storage.md "Durable Object MetricsStore"): global counts per minute
// (kept 14 days), per app and for all apps per hour (400 days) and per day (5 years), and the batches
// already applied, so a batch sent again (its flush retried) is counted once.
//
// A row is one step (one minute, or one app's hour or day) with all its series packed in a blob of
// varint pairs (counts.ts), the series and apps named by small integers (`names`): a year at
// national volume, 1,000 apps with some twenty series an hour, is 8.8 million hourly rows of some
// 77 bytes as stored, where a row per series would be 175 million (docs/capacity.md "Metrics at
// national volume").

import type { Point } from "../series";
import { addInto, decodeCounts, encodeCounts, type Counts } from "./counts";

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/**
 * How long each tier is kept; an applied batch's name only as long as its flush may be retried
 * (the outbox deletes a batch right after its roll-up: a retry comes within the next alarms).
 */
export const KEEP = { minute: 14 * DAY_MS, hour: 400 * DAY_MS, day: 5 * 366 * DAY_MS, batch: 2 * DAY_MS };

/** The key of all apps together in the hourly and daily tables. */
export const ALL_APPS = "";

export type Step = "1m" | "1h" | "1d";
const UNIT: Record<Step, number> = { "1m": MINUTE_MS, "1h": HOUR_MS, "1d": DAY_MS };
const TABLE: Record<Step, string> = { "1m": "minutes", "1h": "hours", "1d": "days" };
/** The app key of the per-minute rows (global only). */
const GLOBAL = 0;

export function createTables(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS applied (batch TEXT PRIMARY KEY, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS names (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (kind, name));
CREATE TABLE IF NOT EXISTS minutes (app INTEGER NOT NULL, t INTEGER NOT NULL, counts BLOB NOT NULL, PRIMARY KEY (app, t)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hours (app INTEGER NOT NULL, t INTEGER NOT NULL, counts BLOB NOT NULL, PRIMARY KEY (app, t)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS days (app INTEGER NOT NULL, t INTEGER NOT NULL, counts BLOB NOT NULL, PRIMARY KEY (app, t)) WITHOUT ROWID;`);
}

export class Rollups {
  /** name → id and id → name, of series and of apps (read once, then kept). */
  private readonly ids = { series: new Map<string, number>(), app: new Map<string, number>() };
  private readonly byId = new Map<number, string>();

  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
  ) {
    for (const r of sql.exec("SELECT id, kind, name FROM names")) {
      this.ids[r.kind as "series" | "app"].set(r.name as string, r.id as number);
      this.byId.set(r.id as number, r.name as string);
    }
    this.migrateRowPerSeries();
  }

  private idOf(kind: "series" | "app", name: string): number {
    let id = this.ids[kind].get(name);
    if (id === undefined) {
      id = this.sql.exec("INSERT INTO names (kind, name) VALUES (?, ?) RETURNING id", kind, name).one().id as number;
      this.ids[kind].set(name, id);
      this.byId.set(id, name);
    }
    return id;
  }

  /** Adds a batch's points in one transaction; false when the batch was applied already. */
  apply(batch: string, points: readonly Point[], now: number): boolean {
    return this.storage.transactionSync(() => {
      if (this.sql.exec("SELECT 1 FROM applied WHERE batch = ?", batch).toArray().length > 0) return false;
      this.sql.exec("INSERT INTO applied (batch, at) VALUES (?, ?)", batch, now);
      const rows = new Map<string, [step: Step, app: number, t: number, counts: Counts]>();
      const add = (step: Step, app: number, t: number, series: number, n: number) => {
        const key = `${step}|${app}|${t}`;
        let row = rows.get(key);
        if (!row) rows.set(key, (row = [step, app, t, new Map()]));
        row[3].set(series, (row[3].get(series) ?? 0) + n);
      };
      const all = this.idOf("app", ALL_APPS);
      for (const [minute, name, client, n] of points) {
        const series = this.idOf("series", name);
        add("1m", GLOBAL, Math.floor(minute / MINUTE_MS), series, n);
        const apps = client === null || client === ALL_APPS ? [all] : [all, this.idOf("app", client)];
        for (const app of apps) {
          add("1h", app, Math.floor(minute / HOUR_MS), series, n);
          add("1d", app, Math.floor(minute / DAY_MS), series, n);
        }
      }
      for (const [step, app, t, counts] of rows.values()) this.merge(step, app, t, counts);
      return true;
    });
  }

  /** Adds counts to a row (its step's table, app and time in steps since the epoch). */
  merge(step: Step, app: number, t: number, counts: Counts): void {
    const table = TABLE[step];
    const old = this.sql.exec(`SELECT counts FROM ${table} WHERE app = ? AND t = ?`, app, t).toArray()[0];
    const sum = old ? addInto(decodeCounts(old.counts as ArrayBuffer), counts) : counts;
    this.sql.exec(
      `INSERT INTO ${table} (app, t, counts) VALUES (?, ?, ?) ON CONFLICT (app, t) DO UPDATE SET counts = excluded.counts`,
      app,
      t,
      encodeCounts(sum),
    );
  }

  /** The id an app's rows are kept under (the bench writes rows as `apply` would). */
  appId(client: string): number {
    return this.idOf("app", client);
  }

  /** The id a series is packed under. */
  seriesId(name: string): number {
    return this.idOf("series", name);
  }

  /** The counts of [from, to) at `step` for one app (or all), of the named series (or every one). */
  read(
    step: Step,
    from: number,
    to: number,
    client: string,
    series: readonly string[] | null,
  ): [number, string, number][] {
    const app = step === "1m" ? GLOBAL : this.ids.app.get(client);
    if (app === undefined) return [];
    const only =
      series === null
        ? null
        : new Set(series.map((s) => this.ids.series.get(s)).filter((id): id is number => id !== undefined));
    if (only !== null && only.size === 0) return [];
    const unit = UNIT[step];
    const out: [number, string, number][] = [];
    const rows = this.sql.exec(
      `SELECT t, counts FROM ${TABLE[step]} WHERE app = ? AND t >= ? AND t < ? ORDER BY t`,
      app,
      Math.ceil(from / unit),
      Math.ceil(to / unit),
    );
    for (const r of rows)
      for (const [id, n] of decodeCounts(r.counts as ArrayBuffer))
        if (only === null || only.has(id)) out.push([(r.t as number) * unit, this.byId.get(id)!, n]);
    return out;
  }

  /** The apps with a count of `series` in an hour from `from` on. */
  clientsWith(series: string, from: number): string[] {
    const id = this.ids.series.get(series);
    const all = this.ids.app.get(ALL_APPS);
    if (id === undefined) return [];
    // a seek per app on the table's key (app, t), not a scan of a year of hours (570 ms of CPU a
    // minute at national volume): a few rows each, a thousand apps in some 10 ms
    const out: string[] = [];
    const since = Math.floor(from / HOUR_MS);
    for (const [client, app] of this.ids.app) {
      if (app === all) continue;
      for (const r of this.sql.exec("SELECT counts FROM hours WHERE app = ? AND t >= ?", app, since))
        if (decodeCounts(r.counts as ArrayBuffer).has(id)) {
          out.push(client);
          break;
        }
    }
    return out;
  }

  /**
   * Each app's total, and all apps' (under `ALL_APPS`), of the series `match` accepts, from `from`
   * (on an hour) to now: the hours up to the next UTC midnight, then the days (the day holding now is
   * the count so far). The SMS budgets' day in Korea, from 15:00 UTC, is at most 9 hours and one day
   * row an app: a seek per app on the tables' key (app, t), whatever the traffic. Apps with none are
   * left out.
   */
  totalsSince(match: (series: string) => boolean, from: number): Map<string, number> {
    const ids = new Set([...this.ids.series].filter(([name]) => match(name)).map(([, id]) => id));
    const out = new Map<string, number>();
    if (ids.size === 0) return out;
    const firstHour = Math.floor(from / HOUR_MS);
    const firstDay = Math.ceil(from / DAY_MS);
    const hoursTo = (firstDay * DAY_MS) / HOUR_MS;
    for (const [client, app] of this.ids.app) {
      let n = 0;
      const add = (rows: Iterable<Record<string, SqlStorageValue>>) => {
        for (const r of rows) for (const [id, c] of decodeCounts(r.counts as ArrayBuffer)) if (ids.has(id)) n += c;
      };
      add(this.sql.exec("SELECT counts FROM hours WHERE app = ? AND t >= ? AND t < ?", app, firstHour, hoursTo));
      add(this.sql.exec("SELECT counts FROM days WHERE app = ? AND t >= ?", app, firstDay));
      if (n > 0) out.set(client, n);
    }
    return out;
  }

  /** Drops what is older than each tier keeps: by app on each table's key (app, t), never a scan of all rows. */
  prune(now: number): void {
    this.sql.exec("DELETE FROM minutes WHERE app = ? AND t < ?", GLOBAL, Math.floor((now - KEEP.minute) / MINUTE_MS));
    for (const app of this.ids.app.values()) {
      this.sql.exec("DELETE FROM hours WHERE app = ? AND t < ?", app, Math.floor((now - KEEP.hour) / HOUR_MS));
      this.sql.exec("DELETE FROM days WHERE app = ? AND t < ?", app, Math.floor((now - KEEP.day) / DAY_MS));
    }
    this.sql.exec("DELETE FROM applied WHERE at < ?", now - KEEP.batch);
  }

  /** The stored bytes of the object's database (the bench's measure). */
  bytes(): number {
    return this.sql.databaseSize;
  }

  /** The first layout kept a row per series (per_minute, per_hour, per_day): folded in once, then dropped. */
  private migrateRowPerSeries(): void {
    const old = this.sql
      .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('per_minute', 'per_hour', 'per_day')")
      .toArray()
      .map((r) => r.name as string);
    if (old.length === 0) return;
    this.storage.transactionSync(() => {
      for (const table of old) {
        const step: Step = table === "per_minute" ? "1m" : table === "per_hour" ? "1h" : "1d";
        const rows = new Map<string, [number, number, Counts]>();
        const select = step === "1m" ? "SELECT t, '' AS client, series, n FROM per_minute" : `SELECT * FROM ${table}`;
        for (const r of this.sql.exec(select)) {
          const app = step === "1m" ? GLOBAL : this.idOf("app", r.client as string);
          const t = Math.floor((r.t as number) / UNIT[step]);
          const key = `${app}|${t}`;
          let row = rows.get(key);
          if (!row) rows.set(key, (row = [app, t, new Map()]));
          const s = this.idOf("series", r.series as string);
          row[2].set(s, (row[2].get(s) ?? 0) + (r.n as number));
        }
        for (const [app, t, counts] of rows.values()) this.merge(step, app, t, counts);
        this.sql.exec(`DROP TABLE ${table}`);
      }
    });
  }
}
