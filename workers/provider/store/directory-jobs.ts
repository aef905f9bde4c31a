// The steps of a directory change that span shards (docs/storage.md "Changes across shards"). The
// step that starts a change (a number claimed, a removal started) queues the others in its own
// shard in the same transaction; its caller then runs them at once and marks them done, and a
// caller that died leaves them to that shard's alarm. Every step is idempotent and conditional on
// what it changes still being as the change found it, so running one twice, or late, is harmless:
// a number is freed only while the person it names still holds it, a ci unindexed only while it
// names the removed person, a person removed only while their row still names the number.

import type { StoreVars } from "./config";
import { dirAt, dirShards, type DirectoryEnv } from "./directory";
import { ciShard, homeOfId, numberShard } from "./directory-keys";
import type { DirectoryJob, DirectoryShard, QueuedJob } from "./directory-shard";
import { endRows } from "./links";
import type { OneTimeStore } from "./one-time-store";

export type JobEnv = DirectoryEnv & StoreVars & { DB: D1Database; ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/** Test hook: runs before each step of a job (a fault injected there leaves the job to its retry). */
export const jobHooks: { beforeStep?: (job: DirectoryJob, step: string) => Promise<void> } = {};

async function step(job: DirectoryJob, name: string): Promise<void> {
  if (jobHooks.beforeStep) await jobHooks.beforeStep(job, name);
}

/** Runs one job to its end; "removed" when a removal took the person (not moved or gone meanwhile). */
export async function runJob(env: JobEnv, job: DirectoryJob, keepLeases = false): Promise<"removed" | undefined> {
  const n = dirShards(env);
  switch (job.kind) {
    case "index_ci": {
      // only while the person is there (a job run late, after the person was removed, indexes
      // nothing); an entry that outlives its person anyway is never followed: the import reads
      // each entry's person and checks the ci
      await step(job, "index");
      const p = await dirAt(env, homeOfId(job.id)).person(job.id);
      await dirAt(env, ciShard(job.ci, n)).indexCis(
        p?.ci === job.ci ? [{ ci: job.ci, id: job.id }] : [],
        job.lease && !keepLeases ? [{ ci: job.ci, holder: job.lease }] : [],
      );
      return undefined;
    }
    case "release":
      await step(job, "release");
      await dirAt(env, numberShard(job.phone, n)).release(job.phone, job.id);
      return undefined;
    case "remove": {
      // Their logins end first (codes, tokens, events), then their ci leaves the index, then the
      // row goes with their grants, only while it still names the number and no link is left (one
      // made meanwhile is ended on the next pass). A retry starts again from the top.
      const home = dirAt(env, homeOfId(job.id));
      for (let pass = 0; pass < 5; pass++) {
        const person = await home.person(job.id);
        if (!person || person.phone !== job.phone) return undefined;
        await step(job, "end_links");
        await endRows(env, await home.linksOf(job.id, null), job.reason);
        await step(job, "unindex");
        await dirAt(env, ciShard(person.ci, n)).unindexCi(person.ci, job.id);
        await step(job, "delete");
        if ((await home.removePerson(job.id, job.phone)).removed) return "removed";
      }
      throw new Error("remove: links kept being made");
    }
  }
}

/**
 * Runs jobs a shard queued, then marks them done there. A job that fails stays queued for the
 * shard's alarm (the caller's answer does not depend on it: what it finishes is already decided).
 * Returns how many removals took their person, and the jobs that failed.
 */
export async function runJobs(
  env: JobEnv,
  shard: number,
  jobs: readonly QueuedJob[],
  /** The writer that queued them runs them and still decides its other rows: it ends its ci leases itself. */
  keepLeases = false,
): Promise<{ removed: number; failed: number; left: QueuedJob[] }> {
  if (jobs.length === 0) return { removed: 0, failed: 0, left: [] };
  const done: number[] = [];
  let removed = 0;
  // A new person's ci index entries (most of an import's jobs) go in one call per shard: their
  // people read at their homes, then the entries written where each ci hashes.
  const index = jobs.filter((j) => j.job.kind === "index_ci");
  if (index.length) {
    try {
      await indexNewPeople(
        env,
        index.map((j) => j.job as Extract<DirectoryJob, { kind: "index_ci" }>),
        keepLeases,
      );
      done.push(...index.map((j) => j.id));
    } catch {
      // left to the alarm, which runs them one by one
    }
  }
  await Promise.all(
    jobs
      .filter((j) => j.job.kind !== "index_ci")
      .map(async (j) => {
        try {
          if ((await runJob(env, j.job)) === "removed") removed++;
          done.push(j.id);
        } catch {
          // left to the alarm
        }
      }),
  );
  await dirAt(env, shard).jobsDone(done);
  return { removed, failed: jobs.length - done.length, left: jobs.filter((j) => !done.includes(j.id)) };
}

function pushTo<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** `index_ci` jobs in bulk: each entry written only while its person is there with that ci. */
async function indexNewPeople(
  env: JobEnv,
  jobs: readonly Extract<DirectoryJob, { kind: "index_ci" }>[],
  keepLeases: boolean,
): Promise<void> {
  const n = dirShards(env);
  for (const j of jobs) await step(j, "index");
  const byHome = new Map<number, number[]>();
  for (const j of jobs) pushTo(byHome, homeOfId(j.id), j.id);
  const alive = new Map<number, string>();
  await Promise.all(
    [...byHome].map(async ([home, ids]) => {
      for (const p of await dirAt(env, home).people(ids)) alive.set(p.id, p.ci);
    }),
  );
  const byShard = new Map<number, { ci: string; id: number }[]>();
  const leases = new Map<number, { ci: string; holder: string }[]>();
  for (const j of jobs) {
    if (alive.get(j.id) === j.ci) pushTo(byShard, ciShard(j.ci, n), { ci: j.ci, id: j.id });
    if (j.lease && !keepLeases) pushTo(leases, ciShard(j.ci, n), { ci: j.ci, holder: j.lease });
  }
  const shards = new Set([...byShard.keys(), ...leases.keys()]);
  await Promise.all([...shards].map((s) => dirAt(env, s).indexCis(byShard.get(s) ?? [], leases.get(s) ?? [])));
}

/**
 * Runs every job left in every shard (an import starts with it: it decides against the ci index
 * and the numbers, which a job not yet run would leave behind). False when one failed again.
 */
export async function finishAllJobs(env: JobEnv): Promise<boolean> {
  const results = await Promise.all(
    Array.from({ length: dirShards(env) }, async (_, s) => {
      for (;;) {
        const jobs = await dirAt(env, s).dueJobs(100, true);
        if (jobs.length === 0) return true;
        if ((await runJobs(env, s, jobs)).failed) return false;
      }
    }),
  );
  return results.every(Boolean);
}

/** The alarm's pass over a shard's due jobs; whether any are left. */
export async function runQueuedJobs(env: JobEnv, shard: DirectoryShard): Promise<boolean> {
  const due = shard.dueJobs(100);
  const done: number[] = [];
  for (const j of due) {
    try {
      await runJob(env, j.job);
      done.push(j.id);
    } catch {
      // tried again at the next alarm
    }
  }
  shard.jobsDone(done);
  return shard.pendingJobs() > 0;
}
