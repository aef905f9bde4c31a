// The steps of changes across shards left to run (table `jobs`; docs/storage.md "Changes across
// shards"). A change starts with one atomic step in one shard that decides it and queues here, in
// the same transaction, what other shards must do; its caller runs them at once and marks them
// done (store/flows/directory-jobs.ts), and one it did not finish is run by this shard's alarm.
//
// Invariants:
// - a job is queued in the same transaction as the step that decides it;
// - a job its caller has not finished within JOB_GRACE_MS is the alarm's; each due job is pushed
//   back JOB_RETRY_MS while it runs, so a job that fails is tried again a minute later;
// - a removal held for an import run waits for the run's commit (`releaseRun`), or RUN_HOLD_MS;
// - a job is done only once its caller (or the alarm) ran it to its end: every job is idempotent.

/** A cross-shard step left to finish (store/flows/directory-jobs.ts runs it; each is idempotent). */
export type DirectoryJob =
  /** `lease`: the writer's ci lease, dropped once the entry is written (or the person is gone). */
  | { kind: "index_ci"; ci: string; id: number; lease?: string }
  | { kind: "release"; phone: string; id: number }
  | { kind: "remove"; id: number; phone: string; reason: "number_reassigned" | "subscriber_removed" }
  /** A passkey made with an SMS proof became usable: its person is told by SMS (passkeys.ts). */
  | { kind: "passkey_usable"; credentialId: string; home: number; lang: "ko" | "en" }
  /** A person-kind SIM change or a port opened the risk window at `at`: their apps that take it are told (risk.ts). */
  | { kind: "credential_change"; id: number; at: number };

export interface QueuedJob {
  id: number;
  job: DirectoryJob;
}

/** A job its caller has not finished within this is the alarm's. */
export const JOB_GRACE_MS = 30_000;
/** A displacement held for an import run that never commits runs after this anyway. */
export const RUN_HOLD_MS = 24 * 3600_000;
const JOB_RETRY_MS = 60_000;

export class Jobs {
  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
  ) {}

  /** Queues a job (held for `run` when given: an import run's displacement). */
  queue(job: DirectoryJob, now: number, run: string | null = null): QueuedJob {
    const id = this.sql
      .exec<{ id: number }>(
        "INSERT INTO jobs (job, created_at, next_at, run) VALUES (?, ?, ?, ?) RETURNING id",
        JSON.stringify(job),
        now,
        now + (run === null ? JOB_GRACE_MS : RUN_HOLD_MS),
        run,
      )
      .one().id;
    return { id, job };
  }

  /** Queues a job that is due at `at` (a notice for a later time), not before. */
  queueAt(job: DirectoryJob, at: number): QueuedJob {
    const id = this.sql
      .exec<{ id: number }>(
        "INSERT INTO jobs (job, created_at, next_at) VALUES (?, ?, ?) RETURNING id",
        JSON.stringify(job),
        Date.now(),
        at,
      )
      .one().id;
    return { id, job };
  }

  /** Queues many jobs in one statement (an import's ci index entries: one job each). */
  queueMany(list: readonly DirectoryJob[], now: number): QueuedJob[] {
    if (list.length === 0) return [];
    const texts = list.map((j) => JSON.stringify(j));
    const byText = new Map(texts.map((t, i) => [t, list[i]!]));
    return this.sql
      .exec<{ id: number; job: string }>(
        "INSERT INTO jobs (job, created_at, next_at) SELECT value, ?, ? FROM json_each(?) RETURNING id, job",
        now,
        now + JOB_GRACE_MS,
        JSON.stringify(texts),
      )
      .toArray()
      .map((r) => ({ id: r.id, job: byText.get(r.job)! }));
  }

  /** Whether the removal of person `id` from `phone` waits here. */
  removalQueued(id: number, phone: string): boolean {
    return (
      this.sql
        .exec(
          `SELECT 1 FROM jobs WHERE job ->> '$.kind' = 'remove' AND job ->> '$.id' = ? AND job ->> '$.phone' = ? LIMIT 1`,
          id,
          phone,
        )
        .toArray().length > 0
    );
  }

  /** Marks jobs finished by their caller. */
  done(ids: readonly number[]): void {
    if (ids.length) this.sql.exec("DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?))", JSON.stringify(ids));
  }

  /**
   * Jobs due (their caller has had its grace), oldest first; each is pushed back while it runs.
   * With `all` (an import finishing every change first, flows/directory-jobs.ts `finishAllJobs`):
   * every job not held for an import run, due or not, but no passkey notice, due or not. A notice
   * changes nothing an import decides on, and only the shard's alarm can send it: an import that
   * took a due one it cannot run would fail for as long as the alarm had not run it yet.
   */
  due(limit: number, all = false): QueuedJob[] {
    const now = Date.now();
    const rows = this.sql
      .exec<{
        id: number;
        job: string;
      }>(
        "SELECT id, job FROM jobs WHERE CASE WHEN ?2 THEN (next_at <= ?1 OR run IS NULL) AND job ->> '$.kind' <> 'passkey_usable' ELSE next_at <= ?1 END ORDER BY id LIMIT ?3",
        now,
        all ? 1 : 0,
        limit,
      )
      .toArray();
    for (const r of rows)
      this.sql.exec("UPDATE jobs SET attempts = attempts + 1, next_at = ? WHERE id = ?", now + JOB_RETRY_MS, r.id);
    return rows.map((r) => ({ id: r.id, job: JSON.parse(r.job) as DirectoryJob }));
  }

  /** The jobs held for an import run, released to run now (the run's commit). */
  releaseRun(run: string): QueuedJob[] {
    return this.sql
      .exec<{
        id: number;
        job: string;
      }>("UPDATE jobs SET run = NULL, next_at = ? WHERE run = ? RETURNING id, job", Date.now() + JOB_GRACE_MS, run)
      .toArray()
      .map((r) => ({ id: r.id, job: JSON.parse(r.job) as DirectoryJob }));
  }

  /** How many jobs wait (the operator's view of cross-shard work in flight; a notice for later is not). */
  pending(): number {
    return this.sql
      .exec<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE job ->> '$.kind' <> 'passkey_usable'")
      .one().n;
  }

  /** Makes sure the alarm fires no later than `at` (the jobs' caller has had its grace). */
  wake(at: number): void {
    void this.storage
      .getAlarm()
      .then((cur) => {
        if (cur === null || cur > at) return this.storage.setAlarm(at);
      })
      .catch(() => {});
  }

  /** After the alarm's pass: the alarm again at the next job's time, while any waits. */
  rearm(): void {
    const next = this.sql.exec<{ at: number | null }>("SELECT min(next_at) AS at FROM jobs").one().at;
    if (next !== null) this.wake(Math.max(next, Date.now() + 1000));
  }
}
