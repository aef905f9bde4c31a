// A one-time-store object's alarm, and where its audit outbox is written (docs/storage.md "Durable
// Object OneTimeStore", "R2"). The alarm reaches beyond the object's tables: it sends due events
// to apps (D1 clients, the network: events.ts), writes the audit outbox to R2 (audit-archive.ts),
// and before it forgets an ended plid makes sure no link in the directory still holds it. The
// exporting module hands these to the object as its handlers (store/objects.ts).

import { ConfigError } from "../../../core/config";
import { archive, objectLabel, type OutboxRow } from "../audit-archive";
import type { StoreVars } from "../config";
import { dirAt, type DirectoryShard, dirShards, groupBy, plidHome } from "../directory/index";
import { type OneTimeRoom, SWEEP_MS, type EndedPlids } from "../one-time/index";
import { type MetricsStore, metricsStore, pointsOf } from "../metrics/index";
import { deliverDue, type EventVars } from "./events";

/** What the alarm reads of the hosting worker's env (each part is skipped where its binding is missing). */
export type OneTimeAlarmEnv = Partial<{
  DB: D1Database;
  SEAL_KEY: string;
  DIRECTORY: DurableObjectNamespace<DirectoryShard>;
  METRICS: DurableObjectNamespace<MetricsStore>;
}> &
  EventVars &
  StoreVars;

/**
 * Sends due events, writes the audit outbox to R2, deletes what has expired; sets the next alarm
 * while anything is left, and within the flush interval while audit events wait (also after a
 * failed flush: the retry).
 */
export async function oneTimeAlarm(env: OneTimeAlarmEnv, room: OneTimeRoom): Promise<void> {
  room.schedule.fired();
  const nextEvent = await deliverDue(env, room).catch(() => Date.now() + SWEEP_MS);
  await room.audit.flush().catch(() => {});
  const now = Date.now();
  room.codes.sweep(now);
  room.entries.sweep(now);
  await forgetEndedPlids(env, room.ended, now);
  room.ended.dropUndelivered(now);
  const sweep = room.holdsAnything() ? now + SWEEP_MS : null;
  const auditWaits = room.audit.waits();
  let at = nextEvent !== null && (sweep === null || nextEvent < sweep) ? Math.max(nextEvent, now + 100) : sweep;
  if (auditWaits && (at === null || now + room.schedule.flushMs < at)) at = now + room.schedule.flushMs;
  room.schedule.next(at, auditWaits);
}

/**
 * Drops the ends whose retention is over, once their links are surely gone from the directory: an
 * end whose link deletion failed after the revocation (a shard's error, the caller gone) would
 * otherwise bring the plid back to life when its end is forgotten. A plid is never given again, so
 * a link still holding one is a leftover and goes now, with its automatic-login grants; a failure
 * keeps the ends for the next sweep.
 */
async function forgetEndedPlids(env: OneTimeAlarmEnv, ended: EndedPlids, now: number): Promise<void> {
  const plids = ended.expired(now);
  if (plids.length === 0) return;
  if (env.DIRECTORY) {
    const dir = env as OneTimeAlarmEnv & { DIRECTORY: DurableObjectNamespace<DirectoryShard> };
    const n = dirShards(dir);
    try {
      await Promise.all(
        [...groupBy(plids, (p) => plidHome(p, n))].map(async ([s, list]) => {
          // plids moved from the single database: their links are at the home the named shard keeps
          const missing = await dirAt(dir, s).deleteLinksByPlid(list);
          if (missing.length === 0) return;
          const forwards = await dirAt(dir, s).plidForwards(missing);
          await Promise.all(forwards.map((f) => dirAt(dir, f.home).deleteLinksByPlid([f.plid])));
        }),
      );
    } catch {
      return;
    }
  }
  ended.forget(plids);
}

/**
 * Test hooks: before a batch's roll-up, and after it (a fault injected there fails the flush, which
 * is retried: after the roll-up, the retry must be the same batch).
 */
export const rollupHooks: { beforeApply?: () => Promise<void>; afterApply?: () => Promise<void> } = {};

/**
 * Writes a batch of an object's audit outbox to R2 under the object's name (audit-archive.ts), then
 * adds it to the metrics' roll-ups (metrics/); the hosting worker must bind the bucket and METRICS.
 */
export async function archiveOutbox(
  env: OneTimeAlarmEnv,
  bucket: R2Bucket | undefined,
  object: string,
  firstSeq: number,
  rows: OutboxRow[],
): Promise<void> {
  if (!bucket) throw new ConfigError("AUDIT", "must bind an R2 bucket in the worker hosting the one-time store");
  if (!env.METRICS) throw new ConfigError("METRICS", "must be bound in the worker hosting the one-time store");
  const label = objectLabel(object);
  await archive(bucket, label, firstSeq, rows);
  // then the batch's roll-up, under the trail's own name for it: a retried flush (this write
  // failed, or the outbox's step after it) writes the same object again and adds nothing twice
  if (rollupHooks.beforeApply) await rollupHooks.beforeApply();
  await metricsStore({ METRICS: env.METRICS }).apply(`${label}-${firstSeq}`, pointsOf(rows));
  if (rollupHooks.afterApply) await rollupHooks.afterApply();
}
