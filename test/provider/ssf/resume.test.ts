// A Shared Signals stream enabled again after a pause (docs/events.md "Shared Signals"; SSF 1.0
// §8.1.2): "a paused stream delivers nothing and then resumes" — what the pause held is sent as
// soon as the stream is enabled, not at its next look minutes later.
import { env } from "../../support/env";
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin } from "../../support/admin";
import { basic, bodyText, call, DEMO, LEE, mintFor } from "../../support/helpers";
import { providerConfig } from "../../../workers/provider/config";
import { storeForPlid } from "../../support/store";

const PUSH = "urn:ietf:rfc:8935";
const ACCOUNT_PURGED = "https://schemas.openid.net/secevent/risc/event-type/account-purged";
const RECEIVER = "https://receiver.example/ssf/events";
const auth = basic(DEMO.clientId, DEMO.secret);

afterEach(() => {
  vi.restoreAllMocks();
});

const api = (method: string, path: string, body?: unknown) =>
  call(path, {
    method,
    headers: { Authorization: auth, "Content-Type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

describe("a paused stream enabled again", () => {
  it("delivers nothing while paused, and what waited as soon as it is enabled", async () => {
    const sent: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      sent.push(await bodyText(req));
      return new Response(null, { status: 202 });
    });
    const made = await api("POST", "/ssf/stream", {
      delivery: { method: PUSH, endpoint_url: RECEIVER },
      events_requested: [ACCOUNT_PURGED],
    });
    const { stream_id } = (await made.json()) as { stream_id: string };
    expect((await api("POST", "/ssf/status", { stream_id, status: "paused" })).status).toBe(200);
    const { plid } = await mintFor(LEE.phone);
    expect((await admin("DELETE", `/admin/directory/${LEE.phone}`)).status).toBe(200);
    await runDurableObjectAlarm(storeForPlid(env, plid, providerConfig(env).oneTimeShards));
    const outcomes = async () =>
      ((await (await admin("GET", "/admin/events")).json()) as { events: { last_outcome: string; next_try: string }[] })
        .events;
    await vi.waitFor(async () => expect((await outcomes()).map((e) => e.last_outcome)).toEqual(["paused"]), {
      timeout: 15_000,
      interval: 50,
    });
    // held: its next look is minutes away
    expect(Date.parse((await outcomes())[0]!.next_try) - Date.now()).toBeGreaterThan(60_000);
    expect(sent).toEqual([]);
    expect((await api("POST", "/ssf/status", { stream_id, status: "enabled" })).status).toBe(200);
    await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 10_000, interval: 25 });
    expect(await outcomes()).toEqual([]);
  });
});
