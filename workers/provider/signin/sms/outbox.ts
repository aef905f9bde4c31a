// The dev outbox (`SMS_SENDER=outbox`, DEV_MODE only): messages kept in the D1 table `sms_outbox`
// for the all-in-one worker's page `/dev/outbox`, the last 200 of the last hour.

import type { SmsSender } from "./sender";

const OUTBOX_KEEP_MS = 3600_000;
const OUTBOX_KEEP_ROWS = 200;

/** The dev outbox: D1 table `sms_outbox`, pruned on write. */
export function outboxSender(env: { DB: D1Database }): SmsSender {
  return {
    async send(m) {
      const now = Date.now();
      await env.DB.batch([
        env.DB.prepare("INSERT INTO sms_outbox (at, phone, body) VALUES (?, ?, ?)").bind(now, m.to, m.text),
        env.DB.prepare("DELETE FROM sms_outbox WHERE at < ? OR id <= (SELECT max(id) FROM sms_outbox) - ?").bind(
          now - OUTBOX_KEEP_MS,
          OUTBOX_KEEP_ROWS,
        ),
      ]);
    },
  };
}

export interface OutboxRow {
  id: number;
  at: number;
  phone: string;
  body: string;
}

/** The newest outbox messages (dev page, tests). */
export async function readOutbox(env: { DB: D1Database }, limit = 50): Promise<OutboxRow[]> {
  const r = await env.DB.prepare("SELECT id, at, phone, body FROM sms_outbox ORDER BY id DESC LIMIT ?")
    .bind(limit)
    .all<OutboxRow>();
  return r.results;
}
