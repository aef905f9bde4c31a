// The metrics store (docs/storage.md "Durable Object MetricsStore"): one object, `metrics`, holding
// the roll-ups of the audited steps and the alerts' state. The one-time store's flush hands it each
// batch of the audit outbox right after the batch reached the trail, named as the trail names it,
// so a retried flush adds nothing twice and every closed hour's roll-up equals the trail's count.
// No request waits on it: the flush runs in the one-time store's alarm. Once fed, its alarm runs
// every minute (ALERT_EVALUATE_SECONDS): the alerts are evaluated from the roll-ups (flows/alerts.ts, a cost that does not
// grow with traffic), their webhook messages sent, and once a day each tier's old rows dropped.

import { DurableObject } from "cloudflare:workers";
import { metricsSeconds } from "../config";
import { writeDataPoints } from "./analytics";
import type { Point } from "./series";
import { Alerts, createAlertTables, type AlertState } from "./tables/alerts";
import { createTables, DAY_MS, Rollups, type Step } from "./tables/rollups";

export type { Step } from "./tables/rollups";
export type { AlertState } from "./tables/alerts";

/** What the alarm reaches: the roll-ups to read and the alerts' tables. */
export interface MetricsRoom {
  readonly rollups: Rollups;
  readonly alerts: Alerts;
}

/** What the object does beyond its tables, given by the module that exports it (store/objects.ts). */
export interface MetricsHandlers {
  /** The minute's evaluation of the alerts and delivery of their messages. */
  alarm(room: MetricsRoom): Promise<void>;
}

export class MetricsStore extends DurableObject {
  protected readonly room: MetricsRoom;
  private readonly analytics: AnalyticsEngineDataset | undefined;
  /** How often the alarm judges the alerts (`ALERT_EVALUATE_SECONDS`, 60). */
  private readonly everyMs: number;
  private prunedAt = 0;

  constructor(
    ctx: DurableObjectState,
    env: unknown,
    private readonly handlers: MetricsHandlers = { alarm: async () => {} },
  ) {
    super(ctx, env as never);
    createTables(ctx.storage.sql);
    createAlertTables(ctx.storage.sql);
    this.room = { rollups: new Rollups(ctx.storage.sql, ctx.storage), alerts: new Alerts(ctx.storage.sql) };
    this.analytics = (env as { METRICS_AE?: AnalyticsEngineDataset }).METRICS_AE;
    this.everyMs = metricsSeconds(env as object, "ALERT_EVALUATE_SECONDS", 60, 1);
  }

  /**
   * Adds a batch's points once; false when it was added before. Starts the minute's alarm. Where
   * the Analytics Engine binding `METRICS_AE` is configured, the batch's points go there too.
   */
  async apply(batch: string, points: Point[]): Promise<boolean> {
    const applied = this.room.rollups.apply(batch, points, Date.now());
    if (applied && this.analytics) {
      // the dataset is a copy for dashboards: its failure never fails the roll-up (which is done)
      try {
        writeDataPoints(this.analytics, points);
      } catch (err) {
        console.log(
          JSON.stringify({
            worker: "metrics",
            cause: `METRICS_AE: ${err instanceof Error ? err.message : String(err)}`,
          }),
        );
      }
    }
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + this.everyMs);
    return applied;
  }

  /** `[t, series, n]` rows of [from, to) at `step`, for an app (`""`: all apps), of some series or all. */
  read(step: Step, from: number, to: number, client: string, series: string[] | null): [number, string, number][] {
    return this.room.rollups.read(step, from, to, client, series);
  }

  /** Every rule's state (the console shows the firing ones). */
  alerts(): AlertState[] {
    return this.room.alerts.states();
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    try {
      await this.handlers.alarm(this.room);
    } finally {
      if (now - this.prunedAt >= DAY_MS) {
        this.room.rollups.prune(now);
        this.prunedAt = now;
      }
      await this.ctx.storage.setAlarm(Date.now() + this.everyMs);
    }
  }
}
