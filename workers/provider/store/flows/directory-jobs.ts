// The steps of a directory change that span shards (docs/storage.md "Changes across shards"). The
// step that starts a change (a number claimed, a removal started) queues the others in its own
// shard in the same transaction; its caller then runs them at once and marks them done, and a
// caller that died leaves them to that shard's alarm. Every step is idempotent and conditional on
// what it changes still being as the change found it, so running one twice, or late, is harmless:
// a number is freed only while the person it names still holds it, a ci unindexed only while it
// names the removed person, a person removed only while their row still names the number.

import {
  dirAt,
  ciShard,
  dirShards,
  groupBy,
  homeOfId,
  numberShard,
  type DirectoryJob,
  type Jobs,
  type QueuedJob,
} from "../directory/index";
import { endRows, tellCredentialChange, type StoresEnv } from "./end-plids";

/** What a job reaches: the shards, and for a removal the one-time store and D1 (end-plids.ts). */
export type JobEnv = StoresEnv;

/**
 * Sends a passkey's "now usable" SMS to `phone` (passkey-notices.ts; store/objects.ts hands it to
 * the shards' alarms): false when no sender took it.
 */
export type PasskeyNotify = (env: JobEnv, phone: string, lang: "ko" | "en") => Promise<boolean>;

/** Test hook: runs before each step of a job (a fault injected there leaves the job to its retry). */
export const jobHooks: { beforeStep?: (job: DirectoryJob, step: string) => Promise<void> } = {};

async function step(job: DirectoryJob, name: string): Promise<void> {
  if (jobHooks.beforeStep) await jobHooks.beforeStep(job, name);
}

/** Runs one job to its end; "removed" when a removal took the person (not moved or gone meanwhile). */
export async function runJob(
  env: JobEnv,
  job: DirectoryJob,
  keepLeases = false,
  notify?: PasskeyNotify,
): Promise<"removed" | undefined> {
  const n = dirShards(env);
  switch (job.kind) {
    case "index_ci": {
      // only while the person is there (a job run late, after the person was removed, indexes
      // nothing); an entry that outlives its person anyway is never followed: the import reads
      // each entry's person and checks the ci
      await step(job, "index");
      const p = await dirAt(env, homeOfId(job.id)).subscriber(job.id);
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
        const person = await home.subscriber(job.id);
        if (!person || person.phone !== job.phone) return undefined;
        await step(job, "end_links");
        await endRows(env, await home.linksOf(job.id, null), job.reason);
        await step(job, "unindex");
        await dirAt(env, ciShard(person.ci, n)).unindexCi(person.ci, job.id);
        await step(job, "delete");
        if ((await home.removeSubscriberRow(job.id, job.phone)).removed) return "removed";
      }
      throw new Error("remove: links kept being made");
    }
    case "credential_change":
      // the person's apps that take it are told of the change once (the event's jti derives from it)
      await step(job, "tell");
      await tellCredentialChange(env, job.id, job.at);
      return undefined;
    case "passkey_usable": {
      // at the passkey's usable time, while it is still there: its person told once (a send that
      // fails is tried again by the next alarm); a passkey cancelled or ended meanwhile tells nobody
      await step(job, "notify");
      const home = dirAt(env, job.home);
      const n = await home.passkeyNotice(job.credentialId);
      if (n.state === "gone") return undefined;
      if (n.state !== "tell" || !notify) throw new Error("passkey notice: not due here");
      if (!(await notify(env, n.person.phone, job.lang))) throw new Error("passkey notice: not sent");
      await home.passkeyTold(job.credentialId);
      return undefined;
    }
  }
}

/** Jobs one shard queued (its claim's or removal's step returned them). */
export interface ShardJobs {
  shard: number;
  jobs: readonly QueuedJob[];
}

/**
 * Runs jobs that shards queued, then marks them done in the shards that queued them. A job that
 * fails stays queued for its shard's alarm (the caller's answer does not depend on it: what it
 * finishes is already decided). The ci index jobs, one per new person of an import, run in
 * batches: one read of their people per home shard, one write of the entries per ci shard, each
 * entry only while its person is there with that ci (as `runJob` does one at a time), and the
 * writer's ci leases on them dropped in that same write unless `keepLeases` (the writer that queued
 * them still decides its other rows and ends its leases itself); the other jobs run one by one.
 * Returns how many removals took their person, how many jobs failed, and those jobs.
 */
export async function runJobs(
  env: JobEnv,
  queued: readonly ShardJobs[],
  keepLeases = false,
): Promise<{ removed: number; failed: number; left: QueuedJob[] }> {
  const n = dirShards(env);
  const done = new Map<number, Set<number>>();
  let removed = 0;
  const finished = (shard: number, id: number) => {
    const d = done.get(shard);
    if (d) d.add(id);
    else done.set(shard, new Set([id]));
  };
  type Index = { shard: number; id: number; ci: string; person: number; lease: string | undefined };
  const index: Index[] = [];
  const others: { shard: number; q: QueuedJob }[] = [];
  for (const { shard, jobs } of queued)
    for (const q of jobs) {
      if (q.job.kind === "index_ci")
        index.push({ shard, id: q.id, ci: q.job.ci, person: q.job.id, lease: q.job.lease ?? undefined });
      else others.push({ shard, q });
    }
  if (index.length + others.length === 0) return { removed: 0, failed: 0, left: [] };
  // the test hook, when set, runs before each entry's step (no await a row otherwise)
  const ready: Index[] = jobHooks.beforeStep ? [] : index;
  if (jobHooks.beforeStep)
    for (const j of index) {
      try {
        await step({ kind: "index_ci", ci: j.ci, id: j.person, lease: j.lease }, "index");
        ready.push(j);
      } catch {
        // left to the alarm
      }
    }
  // only while the person is there with this ci: read at their homes, one call per home
  const present = new Set<number>();
  const checked = new Set<number>();
  await Promise.all(
    [...groupBy(ready, (j) => homeOfId(j.person))].map(async ([home, list]) => {
      try {
        const ci = new Map((await dirAt(env, home).cisOf(list.map((j) => j.person))).map((p) => [p.id, p.ci]));
        for (const j of list) {
          checked.add(j.id);
          if (ci.get(j.person) === j.ci) present.add(j.id);
        }
      } catch {
        // left to the alarm
      }
    }),
  );
  await Promise.all([
    ...[
      ...groupBy(
        ready.filter((j) => checked.has(j.id)),
        (j) => ciShard(j.ci, n),
      ),
    ].map(async ([s, list]) => {
      const write = list.filter((j) => present.has(j.id)).map((j) => ({ ci: j.ci, id: j.person }));
      const drop = keepLeases ? [] : list.flatMap((j) => (j.lease ? [{ ci: j.ci, holder: j.lease }] : []));
      try {
        if (write.length || drop.length) await dirAt(env, s).indexCis(write, drop);
        for (const j of list) finished(j.shard, j.id);
      } catch {
        // left to the alarm
      }
    }),
    ...others.map(async ({ shard, q }) => {
      try {
        if ((await runJob(env, q.job)) === "removed") removed++;
        finished(shard, q.id);
      } catch {
        // left to the alarm
      }
    }),
  ]);
  await Promise.all([...done].map(([shard, ids]) => dirAt(env, shard).jobsDone([...ids])));
  const left = queued.flatMap(({ shard, jobs }) => jobs.filter((q) => !done.get(shard)?.has(q.id)));
  return { removed, failed: left.length, left };
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
        if ((await runJobs(env, [{ shard: s, jobs }])).failed) return false;
      }
    }),
  );
  return results.every(Boolean);
}

/** A shard's alarm: its due jobs run, then the alarm set again to the next one's time. */
export async function runQueuedJobs(env: JobEnv, jobs: Jobs, notify?: PasskeyNotify): Promise<void> {
  const due = jobs.due(100);
  const done: number[] = [];
  for (const j of due) {
    try {
      await runJob(env, j.job, false, notify);
      done.push(j.id);
    } catch {
      // tried again at the next alarm
    }
  }
  jobs.done(done);
  jobs.rearm();
}
