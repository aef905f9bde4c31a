// Signed events to apps (docs/events.md): when a plid ends by anything but the app itself, the
// app's events_uri receives an RFC 8417 security event token (HS256 under its client secret),
// pushed per RFC 8935, durably and at least once; operators see what is undelivered.
import { env } from "../../../support/env";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin } from "../../../support/admin";
import {
  bodyText,
  basic,
  call,
  DEMO,
  FORM,
  form,
  HONG,
  KIM,
  LEE,
  mintFor,
  SMITH,
  tokenFor,
  userMe,
} from "../../../support/helpers";
import { providerConfig } from "../../../../workers/provider/config";
import { storeAt } from "../../../../workers/provider/store/one-time/one-time-store";
import { storeForPlid } from "../../../support/store";
import { newEvent, nextAttemptAt, RETRY_FOR_MS } from "../../../../workers/provider/store/one-time/tables/ended-plids";
import { PLID_DELETED } from "../../../../workers/provider/store/flows/events";
import { revokePlids } from "../../../../workers/provider/store/flows/end-plids";
import { ciOf, importRows } from "../../../support/directory";
import { auditEvents } from "../../../support/audit";
import { hs256Valid } from "../../../support/helpers";

const person = (phone: string, n: number) => ({
  telcoCd: "S",
  phoneNo: phone,
  name: "이벤트",
  gender: "M",
  birth: "1988-02-03",
  foreign: "L",
  ci: ciOf(n),
});

afterEach(() => {
  vi.restoreAllMocks();
});

interface Sent {
  url: string;
  headers: Headers;
  body: string;
}

/** Stands in for the apps' receivers: answers each delivery with the status `answer` gives now. */
function receivers(answer: () => number | "down") {
  const sent: Sent[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    const a = answer();
    if (a === "down") throw new TypeError("connection refused");
    sent.push({ url: req.url, headers: req.headers, body: await bodyText(req) });
    return new Response(null, { status: a });
  });
  return sent;
}

const b64urlJson = (part: string) =>
  JSON.parse(
    new TextDecoder().decode(Uint8Array.from(atob(part.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0))),
  );

async function pending(): Promise<Record<string, unknown>[]> {
  const res = await admin("GET", "/admin/events");
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: Record<string, unknown>[] }).events;
}

describe("the event (RFC 8417 SET, pushed per RFC 8935)", () => {
  it("subscriber removal: POST application/secevent+jwt, HS256 under the client secret, exactly the documented claims, no personal data", async () => {
    const sent = receivers(() => 202);
    const { plid } = await mintFor(SMITH.phone);
    const t0 = Math.floor(Date.now() / 1000);
    expect((await admin("DELETE", `/admin/directory/${SMITH.phone}`)).status).toBe(200);
    await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 5000, interval: 25 });
    const e = sent[0]!;
    expect(e.url).toBe("http://localhost:8787/auth/events");
    expect(e.headers.get("Content-Type")).toBe("application/secevent+jwt");
    expect(e.headers.get("Accept")).toBe("application/json");
    const [h, p] = e.body.split(".");
    expect(b64urlJson(h!)).toEqual({ alg: "HS256", typ: "secevent+jwt" });
    expect(await hs256Valid(e.body, "demoSecret0123456789abcdefABCDEF")).toBe(true);
    expect(await hs256Valid(e.body, "limitedSecret0123456789abcdefABC")).toBe(false);
    const claims = b64urlJson(p!);
    expect(Object.keys(claims).sort()).toEqual(["aud", "events", "iat", "iss", "jti"]);
    expect(claims.iss).toBe("http://localhost:8787");
    expect(claims.aud).toBe("demo-client");
    expect(claims.iat).toBeGreaterThanOrEqual(t0);
    expect(claims.iat).toBeLessThanOrEqual(t0 + 5);
    expect(typeof claims.jti).toBe("string");
    expect(claims.events).toEqual({ "urn:phone-login:event:plid-deleted": { plid, reason: "subscriber_removed" } });
    for (const pii of [SMITH.name, SMITH.phone, SMITH.ci, SMITH.birth])
      expect(JSON.stringify(claims)).not.toContain(pii);
    expect(await pending()).toEqual([]);
    const audit = await vi.waitFor(
      async () => {
        const [r] = await auditEvents({ type: "event.delivered" });
        expect(r).toBeDefined();
        return r!;
      },
      { timeout: 5000, interval: 50 },
    );
    expect(audit.client_id).toBe("demo-client");
    expect(JSON.parse(audit.detail!)).toEqual({ reason: "subscriber_removed", outcome: "delivered", attempts: 1 });
    expect(audit.detail).not.toContain(plid);
  });

  it("the app's own disconnect sends nothing (it asked for it); a client without events_uri gets nothing", async () => {
    const sent = receivers(() => 202);
    const { token, plid } = await tokenFor(KIM.phone);
    const res = await call("/v1/user/disconnect", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
      body: form({ plid }),
    });
    expect(res.status).toBe(200);
    await res.body?.cancel();
    expect((await userMe(token)).status).toBe(401);
    // limited-client registered no events_uri: its links end on removal, silently
    await mintFor(LEE.phone, {
      client: {
        clientId: "limited-client",
        redirectUris: ["https://limited.example/cb"],
        items: ["gender", "agegroup"],
      },
    });
    expect((await admin("DELETE", `/admin/directory/${LEE.phone}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(sent).toEqual([]);
    expect(await pending()).toEqual([]);
  });
});

describe("delivery: durable, at least once, retried with backoff for at least 24 hours", () => {
  it("a receiver that is down keeps the event (listed for the operator without the plid) until it comes back", async () => {
    let state: number | "down" = "down";
    const sent = receivers(() => state);
    const { plid } = await mintFor(HONG.phone);
    expect((await admin("DELETE", `/admin/directory/${HONG.phone}`)).status).toBe(200);
    const stub = storeForPlid(env, plid, providerConfig(env).oneTimeShards);
    const first = await vi.waitFor(
      async () => {
        const list = await pending();
        expect(list[0]?.attempts).toBe(1);
        return list;
      },
      { timeout: 5000, interval: 50 },
    );
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({
      client_id: "demo-client",
      reason: "subscriber_removed",
      last_outcome: "unreachable",
    });
    expect(Date.parse(first[0]!.next_try as string)).toBeGreaterThan(Date.now());
    expect(JSON.stringify(first)).not.toContain(plid);

    // The backoff elapses with the receiver answering 503: refused, tried again later.
    state = 503;
    const elapse = () =>
      runInDurableObject(stub, (_o, s) => {
        s.storage.sql.exec("UPDATE event_outbox SET next_at = ?", Date.now() - 1);
      });
    await elapse();
    await runDurableObjectAlarm(stub);
    expect((await pending())[0]).toMatchObject({ attempts: 2, last_outcome: "refused" });
    expect(sent).toHaveLength(1);

    // Back up: 202 acknowledges; nothing is left, and the app got the same event id each time.
    state = 202;
    await elapse();
    await runDurableObjectAlarm(stub);
    expect(await pending()).toEqual([]);
    expect(sent).toHaveLength(2);
    expect(b64urlJson(sent[0]!.body.split(".")[1]!).jti).toBe(b64urlJson(sent[1]!.body.split(".")[1]!).jti);
    const outcomes = await vi.waitFor(
      async () => {
        const r = (await auditEvents({ type: "event." })).map((x) => x.type);
        expect(r).toContain("event.delivered");
        return r;
      },
      { timeout: 5000, interval: 50 },
    );
    expect(outcomes.filter((t) => t === "event.failed")).toHaveLength(2);
  });

  it("a disabled app still hears its plids end: the event is sent whatever the client's status", async () => {
    const sent = receivers(() => 202);
    const phone = "01055500071";
    await importRows([person(phone, 71)]);
    const { plid } = await mintFor(phone);
    expect((await admin("POST", `/admin/clients/${DEMO.clientId}/disable`)).status).toBe(200);
    try {
      expect((await admin("DELETE", `/admin/directory/${phone}`)).status).toBe(200);
      await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 5000, interval: 25 });
      const claims = b64urlJson(sent[0]!.body.split(".")[1]!);
      expect(claims.events).toEqual({ [PLID_DELETED]: { plid, reason: "subscriber_removed" } });
    } finally {
      expect((await admin("POST", `/admin/clients/${DEMO.clientId}/enable`)).status).toBe(200);
    }
  });

  it("an events_uri removed while an event waits keeps it (listed, retried), and it goes out once the address is back", async () => {
    let state: number | "down" = "down";
    const sent = receivers(() => state);
    const phone = "01055500072";
    await importRows([person(phone, 72)]);
    const { plid } = await mintFor(phone);
    expect((await admin("DELETE", `/admin/directory/${phone}`)).status).toBe(200);
    const stub = storeForPlid(env, plid, providerConfig(env).oneTimeShards);
    await vi.waitFor(async () => expect((await pending())[0]?.attempts).toBe(1), { timeout: 5000, interval: 50 });
    const uri = (await (await admin("GET", `/admin/clients/${DEMO.clientId}`)).json()) as { events_uri: string };
    const setUri = async (v: string | null) =>
      expect((await admin("PATCH", `/admin/clients/${DEMO.clientId}`, { json: { events_uri: v } })).status).toBe(200);
    const elapse = async () => {
      await runInDurableObject(stub, (_o, st) => {
        st.storage.sql.exec("UPDATE event_outbox SET next_at = ?", Date.now() - 1);
      });
      await runDurableObjectAlarm(stub);
    };
    state = 202;
    await setUri(null);
    try {
      await elapse();
      expect(await pending()).toHaveLength(1);
      expect(sent).toHaveLength(0);
    } finally {
      await setUri(uri.events_uri);
    }
    await elapse();
    expect(await pending()).toEqual([]);
    expect(sent).toHaveLength(1);
    expect(b64urlJson(sent[0]!.body.split(".")[1]!).events[PLID_DELETED].plid).toBe(plid);
  });

  it("the operator's list shows an event whichever ONE_TIME_SHARDS the worker that recorded it had", async () => {
    receivers(() => "down");
    const plid = `${crypto.randomUUID().slice(0, -2)}1f`; // shard 31 under 32 shards, 15 under 16
    const e = newEvent(DEMO.clientId, plid, "user_terminated");
    await revokePlids(env, [plid], 32, 600_000, [e]);
    try {
      await vi.waitFor(async () => expect((await pending()).map((x) => x.id)).toContain(e.jti), {
        timeout: 5000,
        interval: 50,
      });
    } finally {
      await runInDurableObject(storeAt(env, 31), (_o, st) => {
        st.storage.sql.exec("DELETE FROM event_outbox WHERE jti = ?", e.jti);
      });
    }
  });

  it("the backoff schedule covers at least 24 hours before an event is abandoned", () => {
    const created = 0;
    let at = created;
    let attempts = 0;
    for (;;) {
      attempts++;
      const next = nextAttemptAt(attempts, created, at);
      if (next === null) break;
      expect(next).toBeGreaterThan(at);
      at = next;
    }
    expect(at - created).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(RETRY_FOR_MS).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(attempts).toBeLessThan(100);
  });
});
