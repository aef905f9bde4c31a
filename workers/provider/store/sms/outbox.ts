// The dev outbox (`SMS_SENDER=outbox`, DEV_MODE only): messages kept for the all-in-one worker's
// page `/dev/outbox`, in D1 `sms_outbox` (workers/provider/store/sms-outbox.ts).

import { keepOutboxMessage } from "../sms-outbox";
import type { SmsSender } from "./sender";

/** The dev outbox: D1 table `sms_outbox`, pruned on write. */
export function outboxSender(env: { DB: D1Database }): SmsSender {
  return {
    async send(m) {
      await keepOutboxMessage(env, m.to, m.text);
    },
  };
}
