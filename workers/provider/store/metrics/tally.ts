// The counts the audit trail does not record (docs/operations.md "Metrics", "approximate"): first
// pages, identify and code outcomes, user/me reads, the carrier API's outcomes, and latencies as
// histograms of fixed buckets. Each isolate sums them in memory per minute, series and app, and
// sends the sums to the metrics store at most once per `METRICS_FLUSH_SECONDS` (60) in a call no
// request waits for (`waitUntil`), named so that a send retried after a lost answer counts once.
// What an isolate held when it was evicted, or a send that failed three times, is lost: these
// series are approximate, and never feed the "roll-up equals the trail" invariant.

import { keptInIsolate, metricsSeconds } from "../config";
import { randomToken } from "../../../core/crypto";
import type { MetricsStore } from "./metrics-store";
import { metricsStore } from "./reach";
import { bucketOf, type Point } from "./series";

export interface TallyEnv {
  METRICS?: DurableObjectNamespace<MetricsStore>;
  METRICS_FLUSH_SECONDS?: string;
}

/** Where a count is made: the request's `waitUntil`. */
interface Waits {
  waitUntil(p: Promise<unknown>): void;
}

const MINUTE_MS = 60_000;
/** Tries of a batch before its counts are given up. */
const TRIES = 3;

/** This isolate's sums not yet sent, by `minute|series|app`. */
const sums = new Map<string, Point>();
/** Batches whose send failed, sent again under the same name. */
const unsent: { name: string; points: Point[]; tries: number }[] = [];
let sentAt = 0;
let isolate = "";
let seq = 0;

/** `METRICS_FLUSH_SECONDS` in ms, read once per env object (an isolate's requests share it). */
let flushOf = new WeakMap<object, number>();

keptInIsolate(() => {
  sums.clear();
  unsent.length = 0;
  sentAt = 0;
  isolate = "";
  seq = 0;
  flushOf = new WeakMap();
});

/**
 * A malformed value is logged once and the default kept: a count must never fail the sign-in step
 * or the user/me read that makes it.
 */
function flushMs(env: TallyEnv): number {
  let ms = flushOf.get(env);
  if (ms === undefined) flushOf.set(env, (ms = metricsSeconds(env, "METRICS_FLUSH_SECONDS", 60, 0)));
  return ms;
}

/** Counts `n` of a series for an app (null: none), and sends the isolate's sums when due. */
export function tally(env: TallyEnv, w: Waits, series: string, client: string | null, n = 1): void {
  if (!env.METRICS) return; // a worker without the binding counts nothing
  const now = Date.now();
  const minute = now - (now % MINUTE_MS);
  const key = `${minute}|${series}|${client ?? ""}`;
  const p = sums.get(key);
  if (p) p[3] += n;
  else sums.set(key, [minute, series, client, n]);
  if (now - sentAt >= flushMs(env)) {
    sentAt = now;
    w.waitUntil(send(env as Required<Pick<TallyEnv, "METRICS">>));
  }
}

/** Counts a latency in its bucket (global: latencies are not kept per app). */
export function timing(env: TallyEnv, w: Waits, what: string, ms: number): void {
  tally(env, w, bucketOf(what, ms), null);
}

async function send(env: Required<Pick<TallyEnv, "METRICS">>): Promise<void> {
  // randomness is not allowed at an isolate's start: the isolate's name comes with its first send
  if (isolate === "") isolate = randomToken(8);
  if (sums.size > 0) unsent.push({ name: `tally-${isolate}-${seq++}`, points: [...sums.values()], tries: 0 });
  sums.clear();
  const batches = unsent.splice(0);
  const store = metricsStore(env);
  for (const b of batches) {
    try {
      await store.apply(b.name, b.points);
    } catch {
      if (++b.tries < TRIES) unsent.push(b);
    }
  }
}
