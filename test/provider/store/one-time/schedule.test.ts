// The one-time store's alarm schedule (workers/provider/store/one-time/schedule.ts): decisions made
// in one step (a write that needs a sweep, an audit event that needs a flush) are taken one after
// the other, so the earliest wins. Before, both read "no alarm" and the sweep's minute could
// overwrite a flush due in a second (the metrics then lagged up to a minute behind a short
// AUDIT_FLUSH_SECONDS).
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { env } from "../../../support/env";
import { randomToken } from "../../../../workers/core/crypto";
import { Schedule, SWEEP_MS } from "../../../../workers/provider/store/one-time/schedule";

const fresh = () => env.ONE_TIME.get(env.ONE_TIME.idFromName(`schedule-${randomToken(6)}`));

describe("the alarm schedule", () => {
  for (const order of ["flush, then sweep", "sweep, then flush"]) {
    it(`a flush due in a second and a sweep asked in the same step: the alarm is the flush's (${order})`, async () => {
      const at = await runInDurableObject(fresh(), async (_o, state) => {
        await state.storage.deleteAlarm();
        const s = new Schedule(state.storage, 1000);
        const now = Date.now();
        if (order === "flush, then sweep") {
          s.flushSoon();
          s.sweepSoon();
        } else {
          s.sweepSoon();
          s.flushSoon();
        }
        // the decisions settle in storage's order
        for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
        const alarm = await state.storage.getAlarm();
        await state.storage.deleteAlarm();
        return { alarm, now };
      });
      expect(at.alarm).not.toBeNull();
      expect(at.alarm! - at.now).toBeLessThanOrEqual(1000 + 50);
      expect(at.alarm! - at.now).toBeLessThan(SWEEP_MS);
    });
  }
});
