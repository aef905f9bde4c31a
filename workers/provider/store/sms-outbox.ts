// The dev SMS outbox (D1 `sms_outbox`; `SMS_SENDER=outbox`, DEV_MODE only): the messages the
// outbox sender (workers/provider/store/sms/outbox.ts) keeps for the all-in-one worker's
// page `/dev/outbox`, the last 200 of the last hour.

type DbEnv = { DB: D1Database };

const OUTBOX_KEEP_MS = 3600_000;
const OUTBOX_KEEP_ROWS = 200;

export interface OutboxRow {
  id: number;
  at: number;
  phone: string;
  body: string;
}

/** Keeps a message, and drops those older than an hour or beyond the last 200. */
export async function keepOutboxMessage(env: DbEnv, phone: string, body: string, now = Date.now()): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("INSERT INTO sms_outbox (at, phone, body) VALUES (?, ?, ?)").bind(now, phone, body),
    env.DB.prepare("DELETE FROM sms_outbox WHERE at < ? OR id <= (SELECT max(id) FROM sms_outbox) - ?").bind(
      now - OUTBOX_KEEP_MS,
      OUTBOX_KEEP_ROWS,
    ),
  ]);
}

/** The newest outbox messages (dev page, tests). */
export async function readOutbox(env: DbEnv, limit = 50): Promise<OutboxRow[]> {
  const r = await env.DB.prepare("SELECT id, at, phone, body FROM sms_outbox ORDER BY id DESC LIMIT ?")
    .bind(limit)
    .all<OutboxRow>();
  return r.results;
}
