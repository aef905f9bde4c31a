// An app's events in the developer console (docs/events.md "Deliveries and pausing") through HTTP
// in workerd, the app's receiver stood in for by a fetch stub that answers, refuses, times out or is
// down:
// - a test event goes only to an app that takes the `test` type, signed as every event, at most 3 a
//   minute even when the clicks race, and its outcome is listed by status class;
// - the last 100 attempts are listed, never a plid or a timing;
// - a delivery failing for 24 hours pauses the app's events: later events wait untried, the owner is
//   told; resumed by its owner, they are delivered; past 7 days a waiting event is undelivered;
// - an editor resumes the events of an app no developer owns, and not those of an owned one.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "../support/env";
import { admin } from "../support/admin";
import { auditEvents } from "../support/audit";
import { bodyText, hs256Valid } from "../support/helpers";
import { api, createApp, developer, SHOP } from "../support/developers";
import { providerConfig } from "../../workers/provider/config";
import { storeForPlid } from "../support/store";
import { newEvent } from "../../workers/provider/store/one-time/tables/ended-plids";
import { revokePlids } from "../../workers/provider/store/flows/end-plids";
import { PLID_DELETED, TEST_EVENT } from "../../workers/provider/store/flows/events";

afterEach(() => {
  vi.restoreAllMocks();
});

const HOOK = "https://hooks.shop.example/events";
const P = "0105";

/** The app's receiver: each delivery answered as `answer` says now. */
function receiver(answer: () => number | "down" | "slow") {
  const sent: string[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (!req.url.startsWith(HOOK)) return real(input, init);
    const a = answer();
    if (a === "down") throw new TypeError("connection refused");
    if (a === "slow") throw new DOMException("The operation timed out.", "TimeoutError");
    sent.push(await bodyText(req));
    return new Response(null, { status: a });
  });
  return sent;
}

const claims = (token: string) =>
  JSON.parse(atob(token.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/"))) as Record<string, unknown>;

async function appWithEvents(types: string[]) {
  const dev = await developer(P);
  const made = await createApp(dev.b, dev.csrf, { ...SHOP, events_uri: HOOK, event_types: types });
  return { ...dev, made };
}

const events = async (d: Awaited<ReturnType<typeof appWithEvents>>) =>
  (await (await api(d.b, d.csrf, "GET", `/developers/api/apps/${d.made.client_id}/events`)).json()) as {
    paused_since: string | null;
    deliveries: { type: string; class: string; attempt: number; at: string }[];
  };

describe("test events", () => {
  it("go only to an app that takes the test type, signed with its secret; each outcome is listed by class", async () => {
    let answer: number | "down" | "slow" = 202;
    const sent = receiver(() => answer);
    const off = await appWithEvents(["plid-deleted"]);
    const refused = await api(off.b, off.csrf, "POST", `/developers/api/apps/${off.made.client_id}/events/test`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("test");
    expect(sent).toHaveLength(0);

    const d = await appWithEvents(["plid-deleted", "test"]);
    const test = () => api(d.b, d.csrf, "POST", `/developers/api/apps/${d.made.client_id}/events/test`);
    expect(await (await test()).json()).toEqual({ class: "delivered" });
    expect(sent).toHaveLength(1);
    expect(await hs256Valid(sent[0]!, d.made.client_secret)).toBe(true);
    const c = claims(sent[0]!);
    expect(c).toMatchObject({ aud: d.made.client_id, events: { [TEST_EVENT]: {} } });
    expect(TEST_EVENT).toBe("urn:phone-login:event:test");
    answer = 500;
    expect(await (await test()).json()).toEqual({ class: "refused" });
    answer = "slow";
    expect(await (await test()).json()).toEqual({ class: "timed_out" });
    const list = await events(d);
    expect(list.deliveries.map((x) => [x.type, x.class])).toEqual([
      ["test", "timed_out"],
      ["test", "refused"],
      ["test", "delivered"],
    ]);
    expect(JSON.stringify(list)).not.toMatch(/ms|duration|latency/i);
    // a fourth within the minute
    const fourth = await test();
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get("Retry-After")).toBe("60");
  });

  it("at most three a minute however the clicks race", async () => {
    const sent = receiver(() => 202);
    const d = await appWithEvents(["test"]);
    const statuses = await Promise.all(
      Array.from({ length: 8 }, () =>
        api(d.b, d.csrf, "POST", `/developers/api/apps/${d.made.client_id}/events/test`).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    expect(sent).toHaveLength(3);
  });
});

describe("pausing", () => {
  /** An event of the app recorded `ageMs` ago in the plid's one-time-store object. */
  async function eventOf(clientId: string, ageMs: number) {
    const plid = crypto.randomUUID();
    const e = { ...newEvent(clientId, plid, "user_terminated"), createdAt: Date.now() - ageMs };
    await revokePlids(env, [plid], providerConfig(env).oneTimeShards, 600_000, [e]);
    return { e, stub: storeForPlid(env, plid, providerConfig(env).oneTimeShards) };
  }
  const due = (stub: DurableObjectStub) =>
    runInDurableObject(stub, (_o, st) => {
      st.storage.sql.exec("UPDATE event_outbox SET next_at = ?", Date.now() - 1);
    });
  const waiting = (stub: DurableObjectStub, jti: string) =>
    runInDurableObject(
      stub,
      (_o, st) =>
        st.storage.sql
          .exec<{ n: number }>("SELECT count(*) AS n FROM event_outbox WHERE jti = ? AND next_at IS NOT NULL", jti)
          .one().n,
    );

  it("a delivery failing for 24 hours pauses the app's events; later ones wait untried; resumed by the owner, both are delivered", async () => {
    let answer: number | "down" = "down";
    const sent = receiver(() => answer);
    const d = await appWithEvents(["plid-deleted"]);
    const old = await eventOf(d.made.client_id, 24 * 3600_000 + 60_000);
    await vi.waitFor(async () => expect((await events(d)).paused_since).not.toBeNull(), {
      timeout: 5000,
      interval: 50,
    });
    expect((await events(d)).deliveries.map((x) => x.class)).toEqual(["failed"]);
    expect(await waiting(old.stub, old.e.jti)).toBe(1);
    const [paused] = await auditEvents({ type: "event.paused", clientId: d.made.client_id });
    expect(paused).toBeDefined();
    // the owner is told on their next visit
    expect(await (await d.b.fetch("/developers?lang=en")).text()).toContain("are paused");

    // a new event while paused: kept, not tried, even with the receiver back up
    answer = 202;
    const fresh = await eventOf(d.made.client_id, 0);
    await runDurableObjectAlarm(fresh.stub);
    await due(old.stub);
    await runDurableObjectAlarm(old.stub);
    expect(sent).toHaveLength(0);
    expect(await waiting(fresh.stub, fresh.e.jti)).toBe(1);

    // resumed by its owner: each goes at its next look
    const r = await api(d.b, d.csrf, "POST", `/developers/api/apps/${d.made.client_id}/events/resume`);
    expect(r.status).toBe(200);
    expect((await events(d)).paused_since).toBeNull();
    for (const x of [old, fresh]) {
      await due(x.stub);
      await runDurableObjectAlarm(x.stub);
    }
    expect(sent).toHaveLength(2);
    expect(sent.map((t) => (claims(t).events as Record<string, { plid: string }>)[PLID_DELETED]!.plid).sort()).toEqual(
      [old.e.plid, fresh.e.plid].sort(),
    );
    expect((await events(d)).deliveries.map((x) => x.class)).toEqual(["delivered", "delivered", "failed"]);
    expect((await api(d.b, d.csrf, "POST", `/developers/api/apps/${d.made.client_id}/events/resume`)).status).toBe(400);
  });

  it("an event waiting on a paused app for 7 days is listed as undelivered", async () => {
    receiver(() => "down");
    const d = await appWithEvents(["plid-deleted"]);
    const x = await eventOf(d.made.client_id, 7 * 86_400_000 + 60_000);
    await vi.waitFor(async () => expect((await events(d)).paused_since).not.toBeNull(), {
      timeout: 5000,
      interval: 50,
    });
    await due(x.stub);
    await runDurableObjectAlarm(x.stub);
    expect(await waiting(x.stub, x.e.jti)).toBe(0);
    const list = (await (await admin("GET", "/admin/events")).json()) as {
      events: { id: string; next_try: string | null }[];
    };
    expect(list.events.find((e) => e.id === x.e.jti)).toMatchObject({ next_try: null });
  });

  it("an editor resumes the events of an app no developer owns, never an owned one's", async () => {
    const made = (await (
      await admin("POST", "/admin/clients", { json: { name: "Ops", redirect_uris: ["https://ops.example/cb"] } })
    ).json()) as { client_id: string };
    expect((await admin("POST", `/admin/clients/${made.client_id}/events/resume`, { json: {} })).status).toBe(400);
    await env.DB.prepare("UPDATE clients SET events_paused_at = ? WHERE client_id = ?")
      .bind(Date.now(), made.client_id)
      .run();
    const r = await admin("POST", `/admin/clients/${made.client_id}/events/resume`, { json: {} });
    expect(r.status).toBe(200);
    const d = await appWithEvents(["plid-deleted"]);
    await env.DB.prepare("UPDATE clients SET events_paused_at = ? WHERE client_id = ?")
      .bind(Date.now(), d.made.client_id)
      .run();
    expect((await admin("POST", `/admin/clients/${d.made.client_id}/events/resume`, { json: {} })).status).toBe(400);
  });
});
