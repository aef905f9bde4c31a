// An app's Shared Signals stream on its page in the developer console (docs/events.md "Shared
// Signals"), through HTTP in workerd: its status, delivery method and receiver host (never the
// Authorization header, the path or the query), the types it delivers, its last delivery attempts
// with the failures counted, in Korean and English; an owner pauses and resumes it through the
// store function of the app's own `POST /ssf/status` (the app reads the change there), audited with
// who; another team's developer neither sees nor pauses it.
import { runDurableObjectAlarm } from "cloudflare:test";
import { createLocalJWKSet, jwtVerify } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "../support/env";
import { auditEvents } from "../support/audit";
import { basic, bodyText, call } from "../support/helpers";
import { api, createApp, csrfOf, developer, person, post, SHOP, signIn } from "../support/developers";
import { Browser } from "../support/signin";
import { providerConfig } from "../../workers/provider/config";
import { storeForPlid } from "../support/store";
import { newEvent } from "../../workers/provider/store/one-time/tables/ended-plids";
import { revokePlids } from "../../workers/provider/store/flows/end-plids";

afterEach(() => {
  vi.restoreAllMocks();
});

const RECEIVER = "https://hooks.shop.example/ssf/receive?k=q1";
const AUTH_HEADER = "Bearer receiver-secret-7f3a";
const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
const RISC = "https://schemas.openid.net/secevent/risc/event-type/";

/** The app's receiver: answers `status()`; the service's own routes pass through. */
function receiver(status: () => number) {
  const sent: string[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (!req.url.startsWith("https://hooks.shop.example/")) return real(input, init);
    sent.push(await bodyText(req));
    return new Response(null, { status: status() });
  });
  return sent;
}

/** A developer's app with a push stream made by the app through the stream API. */
async function appWithStream() {
  const dev = await developer("0106");
  const made = await createApp(dev.b, dev.csrf, SHOP);
  const auth = basic(made.client_id, made.client_secret);
  const res = await call("/ssf/stream", {
    method: "POST",
    headers: { Authorization: auth, "Content-Type": "application/json" },
    body: JSON.stringify({
      delivery: { method: "urn:ietf:rfc:8935", endpoint_url: RECEIVER, authorization_header: AUTH_HEADER },
      events_requested: [`${CAEP}session-revoked`, `${RISC}account-purged`],
    }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const stream = (await res.json()) as { stream_id: string };
  return { ...dev, made, auth, streamId: stream.stream_id };
}

/** A SET verified as a receiver would: the published JWKS, ES256, typ, iss, aud. */
async function verified(token: string, aud: string) {
  const keys = createLocalJWKSet((await (await call("/oauth2/jwks")).json()) as { keys: [] });
  const { payload } = await jwtVerify(token, keys, {
    algorithms: ["ES256"],
    issuer: "http://localhost:8787",
    audience: aud,
    typ: "secevent+jwt",
  });
  return payload;
}

const STREAM_UPDATED = "https://schemas.openid.net/secevent/ssf/event-type/stream-updated";

async function ssfStatus(auth: string, streamId: string) {
  const r = await call(`/ssf/status?stream_id=${streamId}`, { headers: { Authorization: auth } });
  return (await r.json()) as { status: string; reason?: string };
}

describe("the developer console: an app's stream", () => {
  it("shows status, delivery, host and events, the last deliveries with failures; never the Authorization header", async () => {
    let status = 503;
    receiver(() => status);
    const d = await appWithStream();
    const none = await developer("0106");
    const bare = await createApp(none.b, none.csrf, SHOP);
    const empty = await none.b.page(await none.b.fetch(`/developers/apps/${bare.client_id}?lang=en`));
    expect(empty.html).toContain("No Shared Signals stream.");
    // a delivery refused, then one delivered: both listed, one failure counted
    for (const answer of [503, 202]) {
      status = answer;
      const plid = crypto.randomUUID();
      await revokePlids(env, [plid], providerConfig(env).oneTimeShards, 600_000, [
        newEvent(d.made.client_id, plid, "subscriber_removed"),
      ]);
      await runDurableObjectAlarm(storeForPlid(env, plid, providerConfig(env).oneTimeShards));
    }
    const ko = await d.b.page(await d.b.fetch(`/developers/apps/${d.made.client_id}`));
    expect(ko.status).toBe(200);
    expect(ko.html).toContain("<h2>Shared Signals 스트림</h2>");
    expect(ko.html).toContain('<dd id="stream-status">사용 중</dd>');
    expect(ko.html).toContain("<dd>푸시 (RFC 8935)</dd>");
    expect(ko.html).toContain('<dd class="mono">hooks.shop.example</dd>');
    expect(ko.html).toContain("<code>session-revoked</code> <code>account-purged</code>");
    expect(ko.html).toContain("스트림의 최근 전달 시도 (실패 1건)");
    const en = await d.b.page(await d.b.fetch(`/developers/apps/${d.made.client_id}?lang=en`));
    expect(en.html).toContain("<h2>Shared Signals stream</h2>");
    expect(en.html).toContain('<dd id="stream-status">Enabled</dd>');
    expect(en.html).toContain("<dd>Push (RFC 8935)</dd>");
    expect(en.html).toContain("The stream&#39;s last delivery attempts (1 failed)");
    const table = en.html.slice(en.html.indexOf("The stream&#39;s last delivery attempts"));
    expect(table).toMatch(/<td><code>plid-deleted<\/code><\/td><td>Delivered<\/td><td>1<\/td>/);
    expect(table).toMatch(/<td><code>plid-deleted<\/code><\/td><td>Refused<\/td><td>1<\/td>/);
    expect(en.html).toContain("Pause the stream");
    for (const page of [ko.html, en.html]) {
      expect(page).not.toContain(AUTH_HEADER);
      expect(page).not.toContain("receiver-secret");
      expect(page).not.toContain("/ssf/receive");
      expect(page).not.toContain("k=q1");
    }
    // the API answers the same view
    const j = (await (await api(d.b, d.csrf, "GET", `/developers/api/apps/${d.made.client_id}/stream`)).json()) as {
      stream: Record<string, unknown>;
    };
    expect(j.stream).toMatchObject({
      stream_id: d.streamId,
      status: "enabled",
      method: "push",
      endpoint_host: "hooks.shop.example",
      events_delivered: [`${CAEP}session-revoked`, `${RISC}account-purged`],
      waiting: null,
      failures: 1,
    });
    expect(JSON.stringify(j)).not.toContain("receiver-secret");
  });

  it("an owner pauses and resumes it as POST /ssf/status does, the app sent stream-updated each time, each audited with who", async () => {
    const sent = receiver(() => 202);
    const d = await appWithStream();
    const page = await d.b.page(await d.b.fetch(`/developers/apps/${d.made.client_id}?lang=en`));
    const paused = await d.b.page(
      await post(d.b, `/developers/apps/${d.made.client_id}/stream/pause`, { csrf: csrfOf(page), lang: "en" }),
    );
    expect(paused.status).toBe(200);
    expect(paused.html).toContain("Stream paused: its events are kept until it is resumed, up to 7 days.");
    expect(paused.html).toContain('<dd id="stream-status">Paused</dd>');
    expect(paused.html).toContain("Resume the stream");
    expect(await ssfStatus(d.auth, d.streamId)).toMatchObject({
      status: "paused",
      reason: "Paused in the developer console",
    });
    // pausing a paused stream is refused, nothing changed
    const again = await api(d.b, d.csrf, "POST", `/developers/api/apps/${d.made.client_id}/stream/pause`);
    expect(again.status).toBe(400);
    expect(sent).toHaveLength(1);
    const resumed = await d.b.page(
      await post(d.b, `/developers/apps/${d.made.client_id}/stream/resume`, { csrf: csrfOf(paused), lang: "ko" }),
    );
    expect(resumed.html).toContain("스트림을 다시 시작했습니다.");
    expect(resumed.html).toContain('<dd id="stream-status">사용 중</dd>');
    expect((await ssfStatus(d.auth, d.streamId)).status).toBe("enabled");
    // SSF 1.0 §8.1.5: the transmitter changed the status, so the receiver heard of it each time
    expect(sent).toHaveLength(2);
    const [u1, u2] = [await verified(sent[0]!, d.made.client_id), await verified(sent[1]!, d.made.client_id)];
    expect(u1.sub_id).toEqual({ format: "opaque", id: d.streamId });
    expect(u1.events).toEqual({ [STREAM_UPDATED]: { status: "paused", reason: "Paused in the developer console" } });
    expect(u2.sub_id).toEqual({ format: "opaque", id: d.streamId });
    expect(u2.events).toEqual({ [STREAM_UPDATED]: { status: "enabled" } });
    expect(resumed.html).toContain("<code>stream-updated</code>");
    const team = (await (await api(d.b, d.csrf, "GET", `/developers/api/apps/${d.made.client_id}/team`)).json()) as {
      members: { member: string; role: string }[];
    };
    const me = `developer:${team.members.find((m) => m.role === "owner")!.member}`;
    const [p] = await auditEvents({ type: "ssf.stream_paused", clientId: d.made.client_id });
    const [r] = await auditEvents({ type: "ssf.stream_resumed", clientId: d.made.client_id });
    expect(p).toMatchObject({ outcome: "ok" });
    expect(JSON.parse(p!.detail!)).toEqual({ actor: me });
    expect(JSON.parse(r!.detail!)).toEqual({ actor: me });
    expect(me).toMatch(/^developer:dv_/);
  });

  it("a member of the team sees it and cannot pause it (403): owners change it", async () => {
    const d = await appWithStream();
    const mate = await person("0106");
    const inv = await api(d.b, d.csrf, "POST", `/developers/api/apps/${d.made.client_id}/team`, {
      phone: mate.phone,
      role: "member",
    });
    expect(inv.status).toBe(201);
    const b = new Browser();
    const csrf = csrfOf(await signIn(b, mate));
    expect((await api(b, csrf, "POST", `/developers/api/invites/${d.made.client_id}/accept`)).status).toBe(200);
    const page = await b.page(await b.fetch(`/developers/apps/${d.made.client_id}?lang=en`));
    expect(page.html).toContain('<dd id="stream-status">Enabled</dd>');
    expect(page.html).not.toContain("Pause the stream");
    expect((await api(b, csrf, "POST", `/developers/api/apps/${d.made.client_id}/stream/pause`)).status).toBe(403);
    expect((await ssfStatus(d.auth, d.streamId)).status).toBe("enabled");
  });

  it("another team's developer neither sees nor pauses it (404), and nothing changes", async () => {
    const d = await appWithStream();
    const other = await developer("0106");
    const page = await other.b.page(await other.b.fetch(`/developers/apps/${d.made.client_id}`));
    expect(page.status).toBe(404);
    expect(page.html).not.toContain("hooks.shop.example");
    const form = await other.b.page(
      await post(other.b, `/developers/apps/${d.made.client_id}/stream/pause`, { csrf: other.csrf, lang: "ko" }),
    );
    expect(form.status).toBe(404);
    for (const [m, path] of [
      ["GET", "stream"],
      ["POST", "stream/pause"],
      ["POST", "stream/resume"],
    ] as const) {
      const r = await api(other.b, other.csrf, m, `/developers/api/apps/${d.made.client_id}/${path}`);
      expect(r.status).toBe(404);
      expect(await r.text()).not.toContain("hooks.shop.example");
    }
    expect((await ssfStatus(d.auth, d.streamId)).status).toBe("enabled");
    expect(await auditEvents({ type: "ssf.stream_paused", clientId: d.made.client_id })).toEqual([]);
  });
});
