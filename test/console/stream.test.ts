// An app's Shared Signals stream on its page in the operations console (docs/events.md "Shared
// Signals"), through HTTP in workerd: any operator sees its status, delivery method, receiver host
// (never the Authorization header), the types it delivers, what waits to be polled and its last
// delivery attempts, in Korean and English; an editor pauses and resumes it through the store
// function of the app's own `POST /ssf/status`, audited with `operator:<id>`; a viewer gets no
// button and is refused (403), and nothing changes.
import { describe, expect, it } from "vitest";
import { createLocalJWKSet, jwtVerify } from "jose";
import { admin } from "../support/admin";
import { auditEvents } from "../support/audit";
import { ciOf, importRows, lastCode } from "../support/directory";
import { basic, call } from "../support/helpers";
import { alertText, Browser, type Page } from "../support/signin";

const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
const AUTH_HEADER = "Bearer ops-receiver-secret-91";

interface Person {
  telco: string;
  name: string;
  phone: string;
}

let seq = 0;
/** A new person of the directory with an ordinary number (codes go to the dev SMS outbox). */
async function person(): Promise<Person> {
  seq++;
  const phone = `0108${String(Date.now() % 10000).padStart(4, "0")}${String(seq).padStart(3, "0")}`.slice(0, 11);
  const p = { telco: "K", name: "운영자", phone };
  await importRows([
    { telcoCd: "K", phoneNo: phone, name: p.name, gender: "F", birth: "1988-02-03", foreign: "L", ci: ciOf(160 + seq) },
  ]);
  return p;
}

/** An operator of `role`, signed in to /console. */
async function operator(role: string): Promise<{ b: Browser; home: Page }> {
  const who = await person();
  const res = await admin("POST", "/admin/operators", { json: { phone: who.phone, role } });
  expect(res.status, await res.clone().text()).toBe(201);
  const b = new Browser();
  const p1 = await b.page(await b.fetch("/console"));
  const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  expect(p2.form?.step, alertText(p2.html)).toBe("verify");
  const p3 = await b.submit(p2, { otp: await lastCode(who.phone) });
  expect(p3.status, alertText(p3.html)).toBe(303);
  return { b, home: await b.page(await b.fetch(p3.res.headers.get("Location")!)) };
}

const csrfOf = (p: Page) => /<meta name="csrf" content="([^"]+)">/.exec(p.html)![1]!;

function post(b: Browser, path: string, fields: Record<string, string>): Promise<Response> {
  return b.fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
}

/** An app registered through the admin API, with a stream it made with its own credentials. */
async function appWith(delivery: Record<string, unknown>) {
  const res = await admin("POST", "/admin/clients", {
    json: { name: "Ops Shop", redirect_uris: ["https://ops-shop.example/cb"] },
  });
  expect(res.status).toBe(201);
  const made = (await res.json()) as { client_id: string; client_secret: string };
  const auth = basic(made.client_id, made.client_secret);
  const s = await call("/ssf/stream", {
    method: "POST",
    headers: { Authorization: auth, "Content-Type": "application/json" },
    body: JSON.stringify({ delivery, events_requested: [`${CAEP}credential-change`, `${RISC}identifier-recycled`] }),
  });
  expect(s.status, await s.clone().text()).toBe(201);
  return { id: made.client_id, auth, streamId: ((await s.json()) as { stream_id: string }).stream_id };
}

/** What waits on the app's poll stream (RFC 8936), each SET verified with the published JWKS. */
async function polled(app: { id: string; auth: string; streamId: string }) {
  const keys = createLocalJWKSet((await (await call("/oauth2/jwks")).json()) as { keys: [] });
  const r = await call(`/ssf/poll/${app.streamId}`, {
    method: "POST",
    headers: { Authorization: app.auth, "Content-Type": "application/json" },
    body: JSON.stringify({ returnImmediately: true }),
  });
  expect(r.status).toBe(200);
  const sets = ((await r.json()) as { sets: Record<string, string> }).sets;
  const out = [];
  for (const t of Object.values(sets)) {
    const { payload } = await jwtVerify(t, keys, {
      algorithms: ["ES256"],
      issuer: "http://localhost:8787",
      audience: app.id,
      typ: "secevent+jwt",
    });
    out.push(payload);
  }
  return out;
}

const STREAM_UPDATED = "https://schemas.openid.net/secevent/ssf/event-type/stream-updated";

async function ssfStatus(auth: string, streamId: string) {
  const r = await call(`/ssf/status?stream_id=${streamId}`, { headers: { Authorization: auth } });
  return (await r.json()) as { status: string; reason?: string };
}

describe("the operations console: an app's stream", () => {
  it("a viewer sees status, delivery, host and events, never the Authorization header, and cannot pause (403)", async () => {
    const app = await appWith({
      method: "urn:ietf:rfc:8935",
      endpoint_url: "https://ops-hooks.example/ssf/in?t=1",
      authorization_header: AUTH_HEADER,
    });
    const { b } = await operator("viewer");
    const ko = await b.page(await b.fetch(`/console/apps/${app.id}`));
    expect(ko.status).toBe(200);
    expect(ko.html).toContain("<h2>Shared Signals 스트림</h2>");
    expect(ko.html).toContain('<dd id="stream-status">사용 중</dd>');
    expect(ko.html).toContain("<dd>푸시 (RFC 8935)</dd>");
    expect(ko.html).toContain('<dd class="mono">ops-hooks.example</dd>');
    expect(ko.html).toContain("<code>credential-change</code> <code>identifier-recycled</code>");
    expect(ko.html).toContain("스트림으로 전달한 이벤트가 아직 없습니다.");
    expect(ko.html).not.toContain("스트림 일시 중지");
    const en = await b.page(await b.fetch(`/console/apps/${app.id}?lang=en`));
    expect(en.html).toContain('<dd id="stream-status">Enabled</dd>');
    expect(en.html).toContain("No event delivered on the stream yet.");
    for (const page of [ko.html, en.html]) {
      expect(page).not.toContain("ops-receiver-secret");
      expect(page).not.toContain("/ssf/in");
    }
    const refused = await post(b, `/console/apps/${app.id}/stream/pause`, { csrf: csrfOf(en), lang: "en" });
    expect(refused.status).toBe(403);
    expect((await ssfStatus(app.auth, app.streamId)).status).toBe("enabled");
    expect(await auditEvents({ type: "ssf.stream_paused", clientId: app.id })).toEqual([]);
    // the admin API answers the same view to a viewer's role
    const j = (await (await admin("GET", `/admin/clients/${app.id}/stream`)).json()) as {
      stream: Record<string, unknown>;
    };
    expect(j.stream).toMatchObject({ status: "enabled", method: "push", endpoint_host: "ops-hooks.example" });
    expect(JSON.stringify(j)).not.toContain("ops-receiver-secret");
  });

  it("an editor pauses and resumes a poll stream as POST /ssf/status does, the app polls stream-updated each time, audited with operator:<id>", async () => {
    const app = await appWith({ method: "urn:ietf:rfc:8936" });
    const { b, home } = await operator("editor");
    const page = await b.page(await b.fetch(`/console/apps/${app.id}?lang=en`));
    expect(page.html).toContain("<dd>Poll (RFC 8936)</dd>");
    expect(page.html).toContain("<dt>SETs waiting to be polled</dt><dd>0</dd>");
    const paused = await b.page(
      await post(b, `/console/apps/${app.id}/stream/pause`, { csrf: csrfOf(home), lang: "en" }),
    );
    expect(paused.status).toBe(200);
    expect(paused.html).toContain("Stream paused: its events are kept until it is resumed, up to 7 days.");
    expect(paused.html).toContain('<dd id="stream-status">Paused</dd>');
    expect(await ssfStatus(app.auth, app.streamId)).toMatchObject({
      status: "paused",
      reason: "Paused by the service's operator",
    });
    const resumed = await b.page(
      await post(b, `/console/apps/${app.id}/stream/resume`, { csrf: csrfOf(paused), lang: "ko" }),
    );
    expect(resumed.html).toContain("스트림을 다시 시작했습니다.");
    expect((await ssfStatus(app.auth, app.streamId)).status).toBe("enabled");
    // SSF 1.0 §8.1.5: the app is told of each change the transmitter made, on the stream itself
    const updates = await polled(app);
    expect(updates).toHaveLength(2);
    const byStatus = Object.fromEntries(
      updates.map((u) => [(u.events as Record<string, { status: string }>)[STREAM_UPDATED]!.status, u]),
    );
    expect(byStatus.paused!.events).toEqual({
      [STREAM_UPDATED]: { status: "paused", reason: "Paused by the service's operator" },
    });
    expect(byStatus.enabled!.events).toEqual({ [STREAM_UPDATED]: { status: "enabled" } });
    for (const u of updates) expect(u.sub_id).toEqual({ format: "opaque", id: app.streamId });
    // resuming an enabled stream: a clear refusal on the page, nothing changed
    const twice = await b.page(
      await post(b, `/console/apps/${app.id}/stream/resume`, { csrf: csrfOf(resumed), lang: "en" }),
    );
    expect(twice.status).toBe(400);
    const ops = (await (await admin("GET", "/admin/operators")).json()) as { operators: { id: string }[] };
    const [p] = await auditEvents({ type: "ssf.stream_paused", clientId: app.id });
    const [r] = await auditEvents({ type: "ssf.stream_resumed", clientId: app.id });
    const actor = JSON.parse(p!.detail!).actor as string;
    expect(actor).toMatch(/^operator:op_/);
    expect(ops.operators.map((o) => `operator:${o.id}`)).toContain(actor);
    expect(JSON.parse(r!.detail!).actor).toBe(actor);
    expect(await auditEvents({ type: "ssf.stream_resumed", clientId: app.id })).toHaveLength(1);
  });

  it("an app without a stream says so; pausing it is 404", async () => {
    const res = await admin("POST", "/admin/clients", {
      json: { name: "No Stream", redirect_uris: ["https://nostream.example/cb"] },
    });
    const { client_id: id } = (await res.json()) as { client_id: string };
    const { b, home } = await operator("editor");
    const page = await b.page(await b.fetch(`/console/apps/${id}?lang=en`));
    expect(page.html).toContain("No Shared Signals stream.");
    const r = await b.page(await post(b, `/console/apps/${id}/stream/pause`, { csrf: csrfOf(home), lang: "en" }));
    expect(r.status).toBe(404);
  });
});
