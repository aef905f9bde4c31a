// The Durable Object classes as the workers export them (wrangler.toml's class names): each room's
// class with what it does beyond its own tables wired to the flows. The one-time store's alarm sends
// events, writes the audit outbox to R2 and checks the directory before it forgets an end
// (flows/one-time-alarm.ts); a directory shard's alarm runs the jobs its changes left
// (flows/directory-jobs.ts), a passkey's "now usable" SMS among them (flows/passkey-notices.ts, through
// the store's SMS senders, store/sms/); the metrics store's alarm judges the alerts (flows/alerts.ts).
// The workers that host the objects (authorize, and the all-in-one) export these and set nothing.

import { OneTimeStore as OneTimeRoom } from "./one-time/one-time-store";
import { DirectoryShard as DirectoryRoom } from "./directory/directory-shard";
import { archiveOutbox, oneTimeAlarm, type OneTimeAlarmEnv } from "./flows/one-time-alarm";
import { runQueuedJobs, type JobEnv } from "./flows/directory-jobs";
import { alertsAlarm, type AlertEnv } from "./flows/alerts";
import { MetricsStore as MetricsRoom } from "./metrics/metrics-store";

import { usableNotice } from "./flows/passkey-notices";

export { GuardStore } from "./guard/guard-store";

export class OneTimeStore extends OneTimeRoom {
  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env, {
      alarm: (room) => oneTimeAlarm(env as OneTimeAlarmEnv, room),
      archive: (bucket, id, firstSeq, rows) => archiveOutbox(env as OneTimeAlarmEnv, bucket, id, firstSeq, rows),
    });
  }
}

export class MetricsStore extends MetricsRoom {
  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env, { alarm: (room) => alertsAlarm(env as AlertEnv, room) });
  }
}

export class DirectoryShard extends DirectoryRoom {
  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env, { alarm: (jobs) => runQueuedJobs(env as JobEnv, jobs, usableNotice) });
  }
}
