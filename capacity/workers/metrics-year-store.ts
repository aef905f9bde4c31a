// The metrics store with the year bench's methods (`node capacity/metrics-year.mjs`, docs/capacity.md
// "Metrics at national volume"): a year of roll-up rows at national volume written inside the object
// through the product's `Rollups.merge`, each row as `apply` leaves it (metrics-year-model.ts draws
// the counts); the audit batches' names of the last 2 days, as the flushes leave them; its size as
// stored with each table's rows; and its reads and upkeep repeated, for the process's CPU
// (performance.now() does not advance in workerd). The metrics year's bundle (metrics-year-entry.ts)
// exports it as `MetricsStore`, a subclass of the product's class. Never deployed.

import { judge, type AlertEnv } from "../../workers/provider/store/flows/alerts";
import { MetricsStore } from "../../workers/provider/store/objects";
import type { Counts } from "../../workers/provider/store/metrics/tables/counts";
import { ALL_APPS, HOUR_MS, KEEP, MINUTE_MS, type Step } from "../../workers/provider/store/metrics/tables/rollups";
import { ALL_SERIES, dayCounts, minutesOf, type Day, type YearSpec } from "./metrics-year-model";
import { rng } from "./rng";

/** The tiers a day's rows go to. */
export type Tier = "days" | "hours" | "minutes";

/** The app key of the per-minute rows (rollups.ts: all apps only). */
const GLOBAL = 0;
/** The one-time store's objects whose flushes name the batches (production's ONE_TIME_SHARDS). */
const FLUSHERS = 64;
/** Audit events of a sign-in, about (success, code redeemed, SMS attempt; consent and failures now and then). */
const EVENTS_PER_SIGNIN = 3;

export interface YearStats {
  /** The database's bytes as stored (SQLite databaseSize: whole pages, free ones included). */
  bytes: number;
  /** Each table's rows and the bytes of its variable column (the packed counts; a batch's or a series' name). */
  tables: Record<string, { rows: number; payloadBytes: number }>;
}

export class MetricsYear extends MetricsStore {
  /**
   * No alarm: the audit flushes of the run's own requests (the apps' registration, the console's
   * sign-in) would start the alerts' minute in the middle of the pages' CPU; its reads are measured
   * on their own (judgeRepeated, clientsWithRepeated, pruneAt).
   */
  override async alarm(): Promise<void> {}

  /** Writes `tier`'s rows of each of `days` (days since 1970), a transaction a day; the rows written. */
  yearRows(spec: YearSpec, days: number[], tier: Tier): number {
    const rollups = this.room.rollups;
    // the series are named first, as the first batches name them; then the apps
    const series = ALL_SERIES.map((s) => rollups.seriesId(s));
    const w: Writer = {
      all: rollups.appId(ALL_APPS),
      apps: spec.apps.map((a) => rollups.appId(a)),
      rows: 0,
      put(step, app, t, c) {
        const counts: Counts = new Map();
        c.forEach((n, i) => n > 0 && counts.set(series[i]!, n));
        if (counts.size === 0) return;
        rollups.merge(step, app, t, counts);
        w.rows++;
      },
    };
    const closedHour = Math.floor(spec.now / HOUR_MS);
    for (const day of days)
      this.ctx.storage.transactionSync(() => {
        const hours = Math.max(0, Math.min(24, closedHour - day * 24));
        WRITE[tier](w, day, hours, dayCounts(spec, day), spec.now);
      });
    return w.rows;
  }

  /** The audit batches applied in the last 2 days (what `applied` keeps): one a minute per flushing object. */
  yearBatches(spec: YearSpec): number {
    const sql = this.ctx.storage.sql;
    const last = Math.floor(spec.now / MINUTE_MS);
    const born = last - 365 * 1440; // a year of each object's events before
    const perMinute = (spec.perDay * EVENTS_PER_SIGNIN) / FLUSHERS / 1440;
    let rows = 0;
    this.ctx.storage.transactionSync(() => {
      for (let m = last - KEEP.batch / MINUTE_MS; m < last; m++)
        for (let o = 0; o < FLUSHERS; o++, rows++)
          // a batch is named by its object and first sequence number
          sql.exec(
            "INSERT INTO applied (batch, at) VALUES (?, ?)",
            `shard-${o}-${Math.round((m - born) * perMinute)}`,
            m * MINUTE_MS + o * 900,
          );
    });
    return rows;
  }

  yearStats(): YearStats {
    const sql = this.ctx.storage.sql;
    const table = (name: string, column: string) => {
      const r = sql.exec(`SELECT count(*) AS n, coalesce(sum(length(${column})), 0) AS b FROM ${name}`).one();
      return { rows: r.n as number, payloadBytes: r.b as number };
    };
    return {
      bytes: this.room.rollups.bytes(),
      tables: {
        minutes: table("minutes", "counts"),
        hours: table("hours", "counts"),
        days: table("days", "counts"),
        applied: table("applied", "batch"),
        names: table("names", "name"),
      },
    };
  }

  /** `read` `k` times over (without the answer's way out); the rows of one. */
  readRepeated(step: Step, from: number, to: number, client: string, series: string[] | null, k: number): number {
    let rows = 0;
    for (let i = 0; i < k; i++) rows = this.read(step, from, to, client, series).length;
    return rows;
  }

  /** The alarm's minute's judgement of every rule (flows/alerts.ts), `k` times over; the rules judged. */
  async judgeRepeated(now: number, k: number): Promise<number> {
    let rules = 0;
    for (let i = 0; i < k; i++) rules = (await judge(this.room, this.env as AlertEnv, now)).length;
    return rules;
  }

  /** Of which the search for apps with failing events, `k` times over; the apps found. */
  clientsWithRepeated(from: number, k: number): number {
    let apps = 0;
    for (let i = 0; i < k; i++) apps = this.room.rollups.clientsWith("event.failed", from).length;
    return apps;
  }

  /** The alarm's daily drop of what each tier outlives. */
  pruneAt(now: number): void {
    this.room.rollups.prune(now);
  }
}

/** Where a day's rows go: the apps' ids, the row writer (zero counts left out) and the rows written. */
interface Writer {
  all: number;
  apps: number[];
  rows: number;
  put(step: Step, app: number, t: number, counts: Float64Array): void;
}

/** A tier's rows of a day's first `hours` hours (the closed ones). */
const WRITE: Record<Tier, (w: Writer, day: number, hours: number, d: Day, now: number) => void> = {
  hours(w, day, hours, d) {
    for (let h = 0; h < hours; h++) {
      d.apps.forEach((appHours, a) => w.put("1h", w.apps[a]!, day * 24 + h, appHours[h]!));
      w.put("1h", w.all, day * 24 + h, d.all[h]!);
    }
  },
  days(w, day, hours, d) {
    d.apps.forEach((appHours, a) => w.put("1d", w.apps[a]!, day, sum(appHours.slice(0, hours))));
    w.put("1d", w.all, day, sum(d.all.slice(0, hours)));
  },
  // all apps' hours spread over their minutes, those the tier keeps
  minutes(w, day, hours, d, now) {
    const first = Math.floor((now - KEEP.minute) / MINUTE_MS);
    const r = rng(day * 7919 + 2);
    for (let h = 0; h < hours; h++)
      minutesOf(r, d.all[h]!).forEach((c, m) => {
        const t = (day * 24 + h) * 60 + m;
        if (t >= first) w.put("1m", GLOBAL, t, c);
      });
  },
};

function sum(rows: Float64Array[]): Float64Array {
  const out = new Float64Array(rows[0]?.length ?? 0);
  for (const r of rows) for (let i = 0; i < r.length; i++) out[i]! += r[i]!;
  return out;
}
