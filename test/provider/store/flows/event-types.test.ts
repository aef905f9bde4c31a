// An app is sent only the event types it takes (docs/events.md "Registering"): an app whose
// `event_types` leaves out plid-deleted gets no event when a plid of it ends, and an event waiting
// when the app stops taking its type is dropped, not sent.
import { env } from "../../../support/env";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin } from "../../../support/admin";
import { DEMO, mintFor } from "../../../support/helpers";
import { providerConfig } from "../../../../workers/provider/config";
import { storeForPlid } from "../../../support/store";
import { ciOf, importRows } from "../../../support/directory";
import { auditEvents } from "../../../support/audit";

afterEach(() => {
  vi.restoreAllMocks();
});

const person = (phone: string, n: number) => ({
  telcoCd: "S",
  phoneNo: phone,
  name: "구독",
  gender: "F",
  birth: "1990-04-05",
  foreign: "L",
  ci: ciOf(n),
});

/** Stands in for the apps' receivers; every delivery's URL is kept. */
function receivers(answer: () => number | "down"): string[] {
  const sent: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    const a = answer();
    if (a === "down") throw new TypeError("connection refused");
    sent.push(req.url);
    return new Response(null, { status: a });
  });
  return sent;
}

async function pending(): Promise<{ client_id: string; attempts: number }[]> {
  return ((await (await admin("GET", "/admin/events")).json()) as { events: { client_id: string; attempts: number }[] })
    .events;
}

async function setTypes(types: string[]): Promise<void> {
  const res = await admin("PATCH", `/admin/clients/${DEMO.clientId}`, { json: { event_types: types } });
  expect(res.status, await res.clone().text()).toBe(200);
}

describe("event delivery follows the app's event_types", () => {
  it("an app that does not take plid-deleted is sent nothing when a plid of it ends (the end is audited without an event)", async () => {
    const sent = receivers(() => 202);
    const phone = "01055500081";
    await importRows([person(phone, 81)]);
    await mintFor(phone);
    await setTypes([]);
    try {
      const since = Date.now();
      expect((await admin("DELETE", `/admin/directory/${phone}`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      expect(sent).toEqual([]);
      expect(await pending()).toEqual([]);
      const ended = await auditEvents({ type: "plid.ended", clientId: DEMO.clientId, since });
      expect(ended.map((e) => JSON.parse(e.detail!))).toEqual([{ reason: "subscriber_removed", event: false }]);
    } finally {
      await setTypes(["plid-deleted"]);
    }
    // taking the type again, the next end is sent
    const again = "01055500082";
    await importRows([person(again, 82)]);
    await mintFor(again);
    expect((await admin("DELETE", `/admin/directory/${again}`)).status).toBe(200);
    await vi.waitFor(() => expect(sent).toEqual(["http://localhost:8787/auth/events"]), {
      timeout: 5000,
      interval: 25,
    });
  });

  it("an event waiting when the app stops taking its type is dropped at its next try, not sent (event.dropped, not_subscribed)", async () => {
    let state: number | "down" = "down";
    const sent = receivers(() => state);
    const phone = "01055500083";
    await importRows([person(phone, 83)]);
    const { plid } = await mintFor(phone);
    expect((await admin("DELETE", `/admin/directory/${phone}`)).status).toBe(200);
    // waiting after its first try, which the receiver refused (recorded is not yet tried)
    await vi.waitFor(async () => expect((await pending()).map((e) => e.attempts)).toEqual([1]), {
      timeout: 5000,
      interval: 50,
    });
    await setTypes([]);
    try {
      state = 202;
      const stub = storeForPlid(env, plid, providerConfig(env).oneTimeShards);
      await runInDurableObject(stub, (_o, st) => {
        st.storage.sql.exec("UPDATE event_outbox SET next_at = ?", Date.now() - 1);
      });
      await runDurableObjectAlarm(stub);
      expect(await pending()).toEqual([]);
      expect(sent).toEqual([]);
      const dropped = await vi.waitFor(
        async () => {
          const [r] = await auditEvents({ type: "event.dropped", clientId: DEMO.clientId });
          expect(r).toBeDefined();
          return r!;
        },
        { timeout: 5000, interval: 50 },
      );
      expect(JSON.parse(dropped.detail!)).toEqual({
        reason: "subscriber_removed",
        outcome: "not_subscribed",
        attempts: 2,
      });
    } finally {
      await setTypes(["plid-deleted"]);
    }
  });
});
