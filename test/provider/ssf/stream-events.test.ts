// What only an app with a Shared Signals stream is told (docs/events.md "Shared Signals"): its own
// disconnect, the person turning off automatic login with it, a passkey of the person made or
// removed. Each SET is read from the app's poll stream (RFC 8936) and verified as a receiver written
// from the specs would (the published JWKS, `jose`); a stream that did not request the type gets
// nothing, and an app without a stream gets no event of these (today's behaviour).
import { env } from "../../support/env";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLocalJWKSet, jwtVerify } from "jose";
import { basic, bodyText, call, DEMO, HONG, LIMITED, mintFor } from "../../support/helpers";
import { alertText, Browser, parseForms, signInAll, type Page, type Who } from "../../support/signin";
import { enrolFormOf, newPerson, ORIGIN, postForm, RP_ID, smsOnAccount } from "../../support/passkeys";
import { SoftAuthenticator } from "../../support/authenticator";
import { storeForPlid } from "../../support/store";
import { admin } from "../../support/admin";
import { ciOf, importRows } from "../../support/directory";
import { providerConfig } from "../../../workers/provider/config";
import { subscriberByPhone } from "../../../workers/provider/store/directory/directory";
import { findLink } from "../../../workers/provider/store/directory/links";

const ISS = "http://localhost:8787";
const POLL = "urn:ietf:rfc:8936";
const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
const SESSION_REVOKED = `${CAEP}session-revoked`;
const CREDENTIAL_CHANGE = `${CAEP}credential-change`;
const ACCOUNT_PURGED = `${RISC}account-purged`;
const IDENTIFIER_RECYCLED = `${RISC}identifier-recycled`;

const creds = {
  demo: basic(DEMO.clientId, DEMO.secret),
  limited: basic(LIMITED.clientId, LIMITED.secret),
  oidc: basic("oidc-client", "oidcSecret0123456789abcdefABCDEF"),
};
const OIDC = { clientId: "oidc-client", redirectUris: ["https://oidc.example/cb"], items: ["name" as const] };
const LIMITED_APP = {
  clientId: "limited-client",
  redirectUris: ["https://limited.example/cb"],
  items: ["gender" as const, "agegroup" as const],
};

afterEach(async () => {
  vi.restoreAllMocks();
  for (const auth of [creds.demo, creds.limited, creds.oidc]) {
    for (const s of (await (await api("GET", "/ssf/stream", auth)).json()) as { stream_id: string }[])
      expect((await api("DELETE", `/ssf/stream?stream_id=${s.stream_id}`, auth)).status).toBe(204);
  }
});

async function api(method: string, path: string, auth: string, body?: unknown): Promise<Response> {
  return call(path, {
    method,
    headers: { Authorization: auth, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** An app's poll stream taking `events`: a function that polls it (acknowledging what it got). */
async function pollStream(auth: string, events: string[]) {
  const res = await api("POST", "/ssf/stream", auth, { delivery: { method: POLL }, events_requested: events });
  expect(res.status).toBe(201);
  const s = (await res.json()) as { stream_id: string; delivery: { endpoint_url: string } };
  return async (): Promise<string[]> => {
    const r = await call(s.delivery.endpoint_url, {
      method: "POST",
      headers: { Authorization: auth, "Content-Type": "application/json" },
      body: JSON.stringify({ returnImmediately: true }),
    });
    expect(r.status).toBe(200);
    const sets = ((await r.json()) as { sets: Record<string, string> }).sets;
    if (Object.keys(sets).length)
      await call(s.delivery.endpoint_url, {
        method: "POST",
        headers: { Authorization: auth, "Content-Type": "application/json" },
        body: JSON.stringify({ returnImmediately: true, ack: Object.keys(sets) }),
      });
    return Object.values(sets);
  };
}

/** Polls until `n` SETs came (what came, in order). */
async function received(poll: () => Promise<string[]>, n: number): Promise<string[]> {
  const all: string[] = [];
  await vi.waitFor(
    async () => {
      all.push(...(await poll()));
      expect(all).toHaveLength(n);
    },
    { timeout: 15_000, interval: 100 },
  );
  return all;
}

/** Verifies a SET as a receiver written from the specs: the published key, ES256, typ, iss, aud. */
async function verified(token: string, aud: string) {
  const keys = createLocalJWKSet((await (await call("/oauth2/jwks")).json()) as { keys: [] });
  const { payload, protectedHeader } = await jwtVerify(token, keys, {
    algorithms: ["ES256"],
    issuer: ISS,
    audience: aud,
    typ: "secevent+jwt",
  });
  expect(protectedHeader).toMatchObject({ alg: "ES256", typ: "secevent+jwt", kid: expect.any(String) });
  expect(Object.keys(payload.events as object)).toHaveLength(1);
  return payload as Record<string, unknown> & { events: Record<string, Record<string, unknown>> };
}

/** The outbox events of an app waiting or kept in a plid's one-time object. */
function outboxOf(plid: string, clientId: string): Promise<string[]> {
  return runInDurableObject(storeForPlid(env, plid, providerConfig(env).oneTimeShards), (_o, st) =>
    st.storage.sql
      .exec<{ reason: string }>("SELECT reason FROM event_outbox WHERE client_id = ? AND plid = ?", clientId, plid)
      .toArray()
      .map((r) => r.reason),
  );
}

/** Captures outbound fetches (an app's events_uri); the service's own routes are not fetched. */
function captureFetch() {
  const sent: { url: string; body: string }[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    sent.push({ url: req.url, body: await bodyText(req) });
    return new Response(null, { status: 202 });
  });
  return sent;
}

async function disconnect(auth: string, plid: string): Promise<Response> {
  return call("/v1/user/disconnect", {
    method: "POST",
    headers: { Authorization: auth, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ plid }).toString(),
  });
}

/** Proves `who` on /account (the code from the seed); the dashboard. */
async function proveOnAccount(b: Browser, who: Who): Promise<Page> {
  const p1 = await b.page(await b.fetch("/account"));
  const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  expect(p2.form?.step, alertText(p2.html)).toBe("verify");
  const p3 = await b.submit(p2, { otp: who.code });
  expect(p3.status).toBe(303);
  return b.page(await b.fetch(p3.res.headers.get("Location")!));
}

/** Posts the dashboard's `action` for `clientId`. */
async function act(b: Browser, p: Page, clientId: string, action: string): Promise<Page> {
  const f = parseForms(p.html).find((x) => x.hidden.client_id === clientId)!;
  return b.page(
    await b.fetch("/account", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...f.hidden, action }).toString(),
    }),
  );
}

/** Makes a passkey from the dashboard; `roaming`: as a security key reports it (cross-platform, usb). */
async function makePasskey(b: Browser, p: Page, roaming: boolean): Promise<{ page: Page; id: string }> {
  const e = enrolFormOf(p)!;
  expect(e, alertText(p.html)).toBeDefined();
  const { json, credential } = await new SoftAuthenticator().create({
    rpId: RP_ID,
    origin: ORIGIN,
    challenge: e.options.challenge,
    userHandle: e.options.user.id,
  });
  const reg = JSON.parse(json) as { authenticatorAttachment: string; response: { transports: string[] } };
  if (roaming) {
    reg.authenticatorAttachment = "cross-platform";
    reg.response.transports = ["usb"];
  }
  const page = await postForm(b, e.form, { credential: JSON.stringify(reg) });
  expect(page.status, alertText(page.html)).toBe(200);
  return { page, id: credential.id };
}

/** The dashboard's remove form of passkey `id`. */
async function removePasskey(b: Browser, p: Page, id: string): Promise<Page> {
  const forms = [...p.html.matchAll(/<form\b[\s\S]*?<\/form>/g)].map((m) => m[0]);
  const html = forms.find((f) => f.includes(`value="${id}"`))!;
  const hidden: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) hidden[m[1]!] = m[2]!;
  return postForm(
    b,
    { action: "/account", step: undefined, hidden, names: new Set(Object.keys(hidden)) },
    { action: "passkey_remove" },
  );
}

describe("the app's own disconnect", () => {
  it("CAEP session-revoked (initiating_entity user) and RISC account-purged, one txn, to that app only", async () => {
    const demo = await pollStream(creds.demo, [SESSION_REVOKED, ACCOUNT_PURGED, IDENTIFIER_RECYCLED]);
    const oidc = await pollStream(creds.oidc, [SESSION_REVOKED, ACCOUNT_PURGED, CREDENTIAL_CHANGE]);
    const who = await newPerson();
    const { plid } = await mintFor(who.phone);
    const other = await mintFor(who.phone, { client: OIDC });
    const t0 = Math.floor(Date.now() / 1000);
    expect((await disconnect(creds.demo, plid)).status).toBe(200);
    const [a, b] = await Promise.all((await received(demo, 2)).map((t) => verified(t, "demo-client")));
    const byType = Object.fromEntries([a!, b!].map((x) => [Object.keys(x.events)[0], x]));
    for (const x of [a!, b!]) {
      expect(Object.keys(x).sort()).toEqual(["aud", "events", "iat", "iss", "jti", "sub_id", "txn"]);
      expect(x.sub_id).toEqual({ format: "opaque", id: plid });
      expect(x.iat).toBeGreaterThanOrEqual(t0);
      for (const pii of [who.name, who.phone, who.ci]) expect(JSON.stringify(x)).not.toContain(pii);
    }
    expect(a!.txn).toBe(b!.txn);
    expect(a!.jti).not.toBe(b!.jti);
    const revoked = byType[SESSION_REVOKED]!.events[SESSION_REVOKED]!;
    expect(revoked).toEqual({
      event_timestamp: expect.any(Number),
      initiating_entity: "user",
      reason_admin: { en: "The app disconnected the person" },
    });
    expect(revoked.event_timestamp).toBeGreaterThanOrEqual(t0);
    expect(byType[ACCOUNT_PURGED]!.events).toEqual({ [ACCOUNT_PURGED]: {} });
    // the other app of the person, whose link stays, is told nothing
    expect(await oidc()).toEqual([]);
    expect(await outboxOf(other.plid, "oidc-client")).toEqual([]);
    // a second call finds no link: nothing more
    expect((await disconnect(creds.demo, plid)).status).toBe(400);
    expect(await outboxOf(plid, "demo-client")).toEqual([]);
  });
});

describe("a number passed to another person", () => {
  it("RISC identifier-recycled with session-revoked and account-purged (initiating_entity system), one txn, the old person's plid", async () => {
    const demo = await pollStream(creds.demo, [SESSION_REVOKED, ACCOUNT_PURGED, IDENTIFIER_RECYCLED]);
    const who = await newPerson();
    const { plid } = await mintFor(who.phone);
    // the number's row now carries another person's ci: the old person's links end
    await importRows([
      {
        telcoCd: "K",
        phoneNo: who.phone,
        name: "새주인",
        gender: "M",
        birth: "1991-02-02",
        foreign: "L",
        ci: ciOf(251),
      },
    ]);
    const got = await Promise.all((await received(demo, 3)).map((t) => verified(t, "demo-client")));
    const byType = Object.fromEntries(got.map((x) => [Object.keys(x.events)[0], x]));
    expect(Object.keys(byType).sort()).toEqual([ACCOUNT_PURGED, IDENTIFIER_RECYCLED, SESSION_REVOKED].sort());
    for (const x of got) {
      expect(x.sub_id).toEqual({ format: "opaque", id: plid });
      expect(x.txn).toBe(got[0]!.txn);
      for (const pii of [who.name, who.phone, who.ci, "새주인"]) expect(JSON.stringify(x)).not.toContain(pii);
    }
    expect(byType[IDENTIFIER_RECYCLED]!.events).toEqual({ [IDENTIFIER_RECYCLED]: {} });
    expect(byType[SESSION_REVOKED]!.events[SESSION_REVOKED]).toMatchObject({
      initiating_entity: "system",
      reason_admin: { en: "The phone number now belongs to another person" },
    });
  });
});

describe("automatic login ended on /account", () => {
  it("CAEP session-revoked (initiating_entity user) to the app whose automatic login ended", async () => {
    const demo = await pollStream(creds.demo, [SESSION_REVOKED]);
    const b = new Browser();
    await signInAll(b, HONG, {}, { autoLogin: "Y" });
    const s = (await subscriberByPhone(env, HONG.phone))!;
    const { plid } = (await findLink(env, "demo-client", s.id))!;
    const t0 = Math.floor(Date.now() / 1000);
    const done = await act(b, await proveOnAccount(b, HONG), "demo-client", "end_auto_login");
    expect(done.status).toBe(200);
    const [token] = await received(demo, 1);
    const x = await verified(token!, "demo-client");
    expect(Object.keys(x).sort()).toEqual(["aud", "events", "iat", "iss", "jti", "sub_id"]);
    expect(x.sub_id).toEqual({ format: "opaque", id: plid });
    expect(x.events).toEqual({
      [SESSION_REVOKED]: {
        event_timestamp: expect.any(Number),
        initiating_entity: "user",
        reason_admin: { en: "The person turned off automatic login with this app" },
      },
    });
    expect(x.events[SESSION_REVOKED]!.event_timestamp).toBeGreaterThanOrEqual(t0);
    for (const pii of [HONG.name, HONG.phone]) expect(JSON.stringify(x)).not.toContain(pii);
  });
});

describe("a passkey added or removed", () => {
  it("CAEP credential-change fido2-platform create, then delete, to every stream app of the person; iss_sub for an OIDC app", async () => {
    const demo = await pollStream(creds.demo, [CREDENTIAL_CHANGE]);
    const oidc = await pollStream(creds.oidc, [CREDENTIAL_CHANGE]);
    const who = await newPerson();
    const { plid } = await mintFor(who.phone);
    const o = await mintFor(who.phone, { client: OIDC });
    const b = new Browser();
    const t0 = Math.floor(Date.now() / 1000);
    const made = await makePasskey(b, await smsOnAccount(b, who), false);
    const [d1] = await received(demo, 1);
    const [o1] = await received(oidc, 1);
    const created = {
      credential_type: "fido2-platform",
      change_type: "create",
      event_timestamp: expect.any(Number),
      initiating_entity: "user",
      reason_admin: { en: "The person added a passkey" },
    };
    const x = await verified(d1!, "demo-client");
    expect(Object.keys(x).sort()).toEqual(["aud", "events", "iat", "iss", "jti", "sub_id"]);
    expect(x.sub_id).toEqual({ format: "opaque", id: plid });
    expect(x.events).toEqual({ [CREDENTIAL_CHANGE]: created });
    expect(x.events[CREDENTIAL_CHANGE]!.event_timestamp).toBeGreaterThanOrEqual(t0);
    const y = await verified(o1!, "oidc-client");
    expect(y.sub_id).toEqual({ format: "iss_sub", iss: ISS, sub: o.plid });
    expect(y.events).toEqual({ [CREDENTIAL_CHANGE]: created });
    for (const pii of [who.name, who.phone, who.ci]) expect(JSON.stringify([x, y])).not.toContain(pii);
    // removed (a pending one, cancelled by the SMS proof): delete
    const removed = await removePasskey(b, made.page, made.id);
    expect(removed.status, alertText(removed.html)).toBe(200);
    const z = await verified((await received(demo, 1))[0]!, "demo-client");
    expect(z.events).toEqual({
      [CREDENTIAL_CHANGE]: {
        credential_type: "fido2-platform",
        change_type: "delete",
        event_timestamp: expect.any(Number),
        initiating_entity: "user",
        reason_admin: { en: "The person removed a passkey" },
      },
    });
    expect(z.jti).not.toBe(x.jti);
    expect(z.sub_id).toEqual({ format: "opaque", id: plid });
    expect((await received(oidc, 1)).length).toBe(1);
  });

  it("a security key (cross-platform, usb) is fido2-roaming", async () => {
    const demo = await pollStream(creds.demo, [CREDENTIAL_CHANGE]);
    const who = await newPerson();
    const { plid } = await mintFor(who.phone);
    const b = new Browser();
    const made = await makePasskey(b, await smsOnAccount(b, who), true);
    const x = await verified((await received(demo, 1))[0]!, "demo-client");
    expect(x.sub_id).toEqual({ format: "opaque", id: plid });
    expect(x.events[CREDENTIAL_CHANGE]).toMatchObject({ credential_type: "fido2-roaming", change_type: "create" });
    await removePasskey(b, made.page, made.id);
    const y = await verified((await received(demo, 1))[0]!, "demo-client");
    expect(y.events[CREDENTIAL_CHANGE]).toMatchObject({ credential_type: "fido2-roaming", change_type: "delete" });
  });
});

describe("only what the stream requested", () => {
  it("a stream without session-revoked, account-purged or credential-change is sent none of these changes", async () => {
    // demo takes identifier-recycled only; the OIDC app takes them all, to show the changes were told
    const demo = await pollStream(creds.demo, [IDENTIFIER_RECYCLED]);
    const oidc = await pollStream(creds.oidc, [SESSION_REVOKED, ACCOUNT_PURGED, CREDENTIAL_CHANGE]);
    const who = await newPerson();
    const { plid } = await mintFor(who.phone);
    await mintFor(who.phone, { client: OIDC });
    const b = new Browser();
    await makePasskey(b, await smsOnAccount(b, who), false);
    await received(oidc, 1);
    expect((await disconnect(creds.demo, plid)).status).toBe(200);
    expect(await demo()).toEqual([]);
    expect(await outboxOf(plid, "demo-client")).toEqual([]);
    // automatic login: a stream that takes account-purged only hears nothing of it
    await api("DELETE", `/ssf/stream?stream_id=${await streamId(creds.demo)}`, creds.demo);
    const purgedOnly = await pollStream(creds.demo, [ACCOUNT_PURGED]);
    const h = new Browser();
    await signInAll(h, HONG, {}, { autoLogin: "Y" });
    const s = (await subscriberByPhone(env, HONG.phone))!;
    const link = (await findLink(env, "demo-client", s.id))!;
    expect((await act(h, await proveOnAccount(h, HONG), "demo-client", "end_auto_login")).status).toBe(200);
    expect(await purgedOnly()).toEqual([]);
    expect(await outboxOf(link.plid, "demo-client")).toEqual([]);
  });
});

async function streamId(auth: string): Promise<string> {
  return ((await (await api("GET", "/ssf/stream", auth)).json()) as { stream_id: string }[])[0]!.stream_id;
}

describe("a stream deleted while its event waits", () => {
  it("drops what only streams are told of: nothing goes to the app's events_uri", async () => {
    const sent = captureFetch();
    const res = await api("POST", "/ssf/stream", creds.demo, {
      delivery: { method: POLL },
      events_requested: [SESSION_REVOKED, ACCOUNT_PURGED],
    });
    const { stream_id } = (await res.json()) as { stream_id: string };
    // paused: the disconnect's event waits in the outbox
    await api("POST", "/ssf/status", creds.demo, { stream_id, status: "paused" });
    const who = await newPerson();
    const { plid } = await mintFor(who.phone);
    expect((await disconnect(creds.demo, plid)).status).toBe(200);
    expect(await outboxOf(plid, "demo-client")).toEqual(["client_disconnected"]);
    expect((await api("DELETE", `/ssf/stream?stream_id=${stream_id}`, creds.demo)).status).toBe(204);
    // demo-client has an events_uri taking plid-deleted (the seed): the waiting event is tried now
    const stub = storeForPlid(env, plid, providerConfig(env).oneTimeShards);
    await runInDurableObject(stub, (_o, st) => {
      st.storage.sql.exec("UPDATE event_outbox SET next_at = ? WHERE plid = ?", Date.now() - 1, plid);
    });
    await runDurableObjectAlarm(stub);
    expect(await outboxOf(plid, "demo-client")).toEqual([]);
    expect(sent).toEqual([]);
  });
});

describe("opt-in: an app without a stream", () => {
  it("is sent no event of its own disconnect, of automatic login ended or of a passkey, as today", async () => {
    const sent = captureFetch();
    const patched = await admin("PATCH", "/admin/clients/limited-client", {
      json: { events_uri: "https://limited.example/events", event_types: ["plid-deleted", "credential-change"] },
    });
    expect(patched.status).toBe(200);
    const who = await newPerson();
    const { plid } = await mintFor(who.phone, { client: LIMITED_APP });
    const b = new Browser();
    await makePasskey(b, await smsOnAccount(b, who), false);
    expect((await disconnect(creds.limited, plid)).status).toBe(200);
    expect(await outboxOf(plid, "limited-client")).toEqual([]);
    // demo-client (an events_uri in the seed, no stream): automatic login ended
    const h = new Browser();
    await signInAll(h, HONG, {}, { autoLogin: "Y" });
    const s = (await subscriberByPhone(env, HONG.phone))!;
    const link = (await findLink(env, "demo-client", s.id))!;
    expect((await act(h, await proveOnAccount(h, HONG), "demo-client", "end_auto_login")).status).toBe(200);
    expect(await outboxOf(link.plid, "demo-client")).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(sent).toEqual([]);
  });
});
