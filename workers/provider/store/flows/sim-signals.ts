// The carrier's risk signals written to the directory (store/directory/risk.ts): from a carrier
// API's answer at sign-in (signin/carrier.ts) or an import's optional columns
// (workers/admin/directory-input.ts). Each person's signals are written in their home shard in one
// step that, for a change opening a risk window, cancels their pending passkeys and queues the
// event to their apps; the events then go at once (a job this caller does not finish is the
// shard's alarm's).

import { dirAt, groupBy, homeOfId, hasSignal, type SimSignal } from "../directory/index";
import { storeConfig } from "../config";
import { runJobs, type JobEnv, type ShardJobs } from "./directory-jobs";

/** One person's signals, written only while the person at `id` still has this ci. */
export interface SignalWrite {
  id: number;
  ci: string;
  sim: SimSignal;
}

/**
 * Writes signals; returns each person's risk start after the write (absent: the person was gone
 * or is a test number) and how many changed. The events of a new risk window are sent before it
 * returns, or left to the shard's alarm.
 */
export async function noteSignals(
  env: JobEnv,
  writes: readonly SignalWrite[],
): Promise<{ riskFrom: Map<number, number | null>; changed: number }> {
  const windowMs = storeConfig(env).riskWindowMs;
  const riskFrom = new Map<number, number | null>();
  let changed = 0;
  const queued: ShardJobs[] = [];
  await Promise.all(
    [
      ...groupBy(
        writes.filter((w) => hasSignal(w.sim)),
        (w) => homeOfId(w.id),
      ),
    ].map(async ([home, list]) => {
      const { results, jobs } = await dirAt(env, home).noteSims(list, windowMs);
      for (const r of results) {
        riskFrom.set(r.id, r.riskFrom);
        if (r.changed) changed++;
      }
      if (jobs.length) queued.push({ shard: home, jobs });
    }),
  );
  if (queued.length) await runJobs(env, queued);
  return { riskFrom, changed };
}
