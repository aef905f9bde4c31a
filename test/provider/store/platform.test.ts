// The one-time store's audit outbox (core/one-time-store.ts): a redemption's audit row waits in the
// object and is shipped to D1 by a short timer; when that write fails, the sweep alarm must exist
// to retry it, or the row waits for an unrelated write on the same shard (maybe forever).
import { runInDurableObject } from "cloudflare:test";
import { env } from "../../support/env";
import { expect, it } from "vitest";
import { AUDIT_FLUSH_MS } from "../../../workers/provider/store/one-time-store";
import { redeemArgs } from "../../support/helpers";

it("a failed audit flush after a redemption leaves a sweep alarm to retry it, even on a shard with nothing else stored", async () => {
  const stub = env.ONE_TIME.get(env.ONE_TIME.idFromName("platform-outbox-retry"));
  // D1 refuses the batched insert (this file's storage is its own).
  await env.DB.exec("ALTER TABLE audit_events RENAME TO audit_events_away");
  const result = await stub.redeemCode(
    ...redeemArgs({
      codeHash: "x".repeat(43),
      clientId: "demo-client",
      verifierChallenge: null,
      redirectUri: null,
      tokenHash: "y".repeat(43),
      tokenTtlMs: 600_000,
      secretId: "s",
    }),
  );
  expect(result).toEqual({ ok: false, reason: "unknown" });
  await new Promise((r) => setTimeout(r, AUDIT_FLUSH_MS + 400)); // the flush timer ran and failed
  const { alarm, left } = await runInDurableObject(stub, async (_o, state) => ({
    alarm: await state.storage.getAlarm(),
    left: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM audit_outbox").one().n,
  }));
  expect(left).toBe(1);
  expect(alarm).not.toBeNull();
  await env.DB.exec("ALTER TABLE audit_events_away RENAME TO audit_events");
});
