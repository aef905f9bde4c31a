// The metrics store (docs/storage.md "Durable Object MetricsStore"): one object, `metrics`, holding
// the roll-ups of the audited steps. The one-time store's flush hands it each batch of the audit
// outbox right after the batch reached the trail, named as the trail names it, so a retried flush
// adds nothing twice and every closed hour's roll-up equals the trail's count. No request waits
// on it: the flush runs in the one-time store's alarm. A daily alarm drops what each tier outlives.

import { DurableObject } from "cloudflare:workers";
import type { Point } from "./series";
import { createTables, DAY_MS, Rollups, type Step } from "./tables/rollups";

export type { Step } from "./tables/rollups";

export class MetricsStore extends DurableObject {
  private readonly rollups: Rollups;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    createTables(ctx.storage.sql);
    this.rollups = new Rollups(ctx.storage.sql, ctx.storage);
  }

  /** Adds a batch's points once; false when it was added before. */
  async apply(batch: string, points: Point[]): Promise<boolean> {
    const applied = this.rollups.apply(batch, points, Date.now());
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + DAY_MS);
    return applied;
  }

  /** `[t, series, n]` rows of [from, to) at `step`, for an app (`""`: all apps), of some series or all. */
  read(step: Step, from: number, to: number, client: string, series: string[] | null): [number, string, number][] {
    return this.rollups.read(step, from, to, client, series);
  }

  override async alarm(): Promise<void> {
    this.rollups.prune(Date.now());
    await this.ctx.storage.setAlarm(Date.now() + DAY_MS);
  }
}

/** A worker's binding of the metrics store. */
export type MetricsEnv = { METRICS: DurableObjectNamespace<MetricsStore> };

/** The one metrics object. */
export function metricsStore(env: MetricsEnv): DurableObjectStub<MetricsStore> {
  return env.METRICS.get(env.METRICS.idFromName("metrics"));
}
