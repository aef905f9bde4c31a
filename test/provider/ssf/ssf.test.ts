// The Shared Signals transmitter (docs/events.md "Shared Signals"; OpenID SSF 1.0, CAEP 1.0, RISC
// 1.0): the configuration document, one stream per app through the stream configuration API with
// the app's own credentials, the verification event, push (RFC 8935) and poll (RFC 8936), SETs
// signed ES256 with the published key and a top-level `sub_id` (RFC 9493); an app without a stream
// keeps today's events byte for byte.
import { env } from "../../support/env";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from "jose";
import { admin } from "../../support/admin";
import { basic, bodyText, call, DEMO, HONG, KIM, LEE, LIMITED, mintFor, SMITH } from "../../support/helpers";
import { providerConfig } from "../../../workers/provider/config";
import { storeForPlid } from "../../support/store";
import { tellCredentialChange } from "../../../workers/provider/store/flows/end-plids";

const ISS = "http://localhost:8787";
const PUSH = "urn:ietf:rfc:8935";
const POLL = "urn:ietf:rfc:8936";
const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
const SESSION_REVOKED = `${CAEP}session-revoked`;
const CREDENTIAL_CHANGE = `${CAEP}credential-change`;
const ACCOUNT_PURGED = `${RISC}account-purged`;
const IDENTIFIER_RECYCLED = `${RISC}identifier-recycled`;
const VERIFICATION = "https://schemas.openid.net/secevent/ssf/event-type/verification";
const RECEIVER = "https://receiver.example/ssf/events";

afterEach(async () => {
  vi.restoreAllMocks();
  // each test starts with no stream: every app's own is deleted through the API
  for (const auth of [creds.demo, creds.limited, creds.oidc]) {
    for (const s of (await (await api("GET", "/ssf/stream", auth)).json()) as { stream_id: string }[])
      expect((await api("DELETE", `/ssf/stream?stream_id=${s.stream_id}`, auth)).status).toBe(204);
  }
});

interface Sent {
  url: string;
  headers: Headers;
  body: string;
}

/** Stands in for the apps' receivers (outbound fetch); the service's own routes pass through. */
function receivers(answer: () => number = () => 202): Sent[] {
  const sent: Sent[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    sent.push({ url: req.url, headers: req.headers, body: await bodyText(req) });
    return new Response(null, { status: answer() });
  });
  return sent;
}

const creds = {
  demo: basic(DEMO.clientId, DEMO.secret),
  limited: basic(LIMITED.clientId, LIMITED.secret),
  oidc: basic("oidc-client", "oidcSecret0123456789abcdefABCDEF"),
};

async function api(method: string, path: string, auth: string, body?: unknown): Promise<Response> {
  return call(path, {
    method,
    headers: { Authorization: auth, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function jwks() {
  const res = await call("/oauth2/jwks");
  return createLocalJWKSet((await res.json()) as { keys: [] });
}

/** Verifies a SET as a receiver written from the specs: the published key, ES256, typ, iss, aud. */
async function verified(token: string, aud: string) {
  const { payload, protectedHeader } = await jwtVerify(token, await jwks(), {
    algorithms: ["ES256"],
    issuer: ISS,
    audience: aud,
    typ: "secevent+jwt",
  });
  expect(protectedHeader.kid).toBeTypeOf("string");
  expect(Object.keys(payload.events as object)).toHaveLength(1);
  return payload as Record<string, unknown> & { events: Record<string, Record<string, unknown>> };
}

async function createPush(
  auth = creds.demo,
  events = [SESSION_REVOKED, ACCOUNT_PURGED, IDENTIFIER_RECYCLED, CREDENTIAL_CHANGE],
) {
  const res = await api("POST", "/ssf/stream", auth, {
    delivery: { method: PUSH, endpoint_url: RECEIVER, authorization_header: "Bearer receiver-token-1" },
    events_requested: [...events, "urn:example:unknown"],
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, unknown> & { stream_id: string };
}

describe("the configuration document and the stream API (SSF 1.0 §7, §8.1)", () => {
  it("publishes the issuer, the OIDC JWKS, push and poll, the endpoints, OAuth 2.0 and Basic authorization", async () => {
    const res = await call("/.well-known/ssf-configuration");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      spec_version: "1_0",
      issuer: ISS,
      jwks_uri: `${ISS}/oauth2/jwks`,
      delivery_methods_supported: [PUSH, POLL],
      configuration_endpoint: `${ISS}/ssf/stream`,
      status_endpoint: `${ISS}/ssf/status`,
      verification_endpoint: `${ISS}/ssf/verify`,
      authorization_schemes: [{ spec_urn: "urn:ietf:rfc:6749" }, { spec_urn: "urn:ietf:rfc:7617" }],
      default_subjects: "ALL",
    });
  });

  it("creates one stream per app, reads, updates and deletes it; events_delivered is what is both requested and supported", async () => {
    const s = await createPush();
    expect(s).toMatchObject({
      iss: ISS,
      aud: "demo-client",
      delivery: { method: PUSH, endpoint_url: RECEIVER },
      events_delivered: [SESSION_REVOKED, ACCOUNT_PURGED, IDENTIFIER_RECYCLED, CREDENTIAL_CHANGE],
    });
    expect(JSON.stringify(s)).not.toContain("receiver-token-1");
    expect((await api("POST", "/ssf/stream", creds.demo, { delivery: { method: POLL } })).status).toBe(409);
    const got = await api("GET", `/ssf/stream?stream_id=${s.stream_id}`, creds.demo);
    expect(await got.json()).toEqual(s);
    expect(await (await api("GET", "/ssf/stream", creds.demo)).json()).toEqual([s]);
    const patched = await api("PATCH", "/ssf/stream", creds.demo, {
      stream_id: s.stream_id,
      events_requested: [SESSION_REVOKED],
    });
    expect(await patched.json()).toMatchObject({
      events_delivered: [SESSION_REVOKED],
      delivery: { endpoint_url: RECEIVER },
    });
    const put = await api("PUT", "/ssf/stream", creds.demo, { stream_id: s.stream_id, delivery: { method: POLL } });
    expect(await put.json()).toMatchObject({
      delivery: { method: POLL, endpoint_url: `${ISS}/ssf/poll/${s.stream_id}` },
      events_requested: [],
    });
    expect((await api("DELETE", `/ssf/stream?stream_id=${s.stream_id}`, creds.demo)).status).toBe(204);
    expect((await api("GET", `/ssf/stream?stream_id=${s.stream_id}`, creds.demo)).status).toBe(404);
  });

  it("refuses bad input with 400 and a private push endpoint; never a 500", async () => {
    for (const body of [
      "not json",
      "[]",
      JSON.stringify({ delivery: { method: "urn:example" } }),
      JSON.stringify({ delivery: { method: PUSH } }),
      JSON.stringify({ delivery: { method: PUSH, endpoint_url: "https://169.254.169.254/x" } }),
      JSON.stringify({ delivery: { method: PUSH, endpoint_url: RECEIVER, authorization_header: "a\nb" } }),
      JSON.stringify({ delivery: { method: POLL }, events_requested: "x" }),
    ]) {
      const res = await call("/ssf/stream", { method: "POST", headers: { Authorization: creds.demo }, body });
      expect(res.status, body).toBe(400);
    }
    expect((await api("GET", "/ssf/stream", basic(DEMO.clientId, "wrong"))).status).toBe(401);
    expect((await call("/ssf/stream")).status).toBe(401);
  });
});

describe("an app reaches only its own stream", () => {
  it("another app can neither read, update, pause, verify, poll nor delete it, with any of its credentials (404, nothing changed)", async () => {
    const sent = receivers();
    const s = await createPush();
    const id = s.stream_id;
    const others = [creds.limited, creds.oidc];
    for (const auth of others) {
      const tries: [string, string, unknown?][] = [
        ["GET", `/ssf/stream?stream_id=${id}`],
        ["PATCH", "/ssf/stream", { stream_id: id, events_requested: [] }],
        ["PUT", "/ssf/stream", { stream_id: id, delivery: { method: POLL } }],
        ["DELETE", `/ssf/stream?stream_id=${id}`],
        ["GET", `/ssf/status?stream_id=${id}`],
        ["POST", "/ssf/status", { stream_id: id, status: "disabled" }],
        ["POST", "/ssf/verify", { stream_id: id, state: "x" }],
        ["POST", `/ssf/poll/${id}`, { returnImmediately: true }],
      ];
      for (const [method, path, body] of tries) {
        const res = await api(method, path, auth, body);
        expect(res.status, `${method} ${path}`).toBe(404);
      }
      // its own listing does not show it
      expect(await (await api("GET", "/ssf/stream", auth)).json()).toEqual([]);
    }
    // the demo client's own secret with another app's id is no credential
    expect((await api("GET", `/ssf/stream?stream_id=${id}`, basic(LIMITED.clientId, DEMO.secret))).status).toBe(401);
    expect(sent).toEqual([]);
    expect(await (await api("GET", `/ssf/stream?stream_id=${id}`, creds.demo)).json()).toEqual(s);
    expect(await (await api("GET", `/ssf/status?stream_id=${id}`, creds.demo)).json()).toEqual({
      stream_id: id,
      status: "enabled",
    });
  });
});

describe("push (RFC 8935)", () => {
  it("the verification event, then a subscriber removal: session-revoked and account-purged, one txn, sub_id opaque, the receiver's Authorization; no HS256 event", async () => {
    const sent = receivers();
    const s = await createPush();
    expect((await api("POST", "/ssf/verify", creds.demo, { stream_id: s.stream_id, state: "st-1" })).status).toBe(204);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe(RECEIVER);
    expect(sent[0]!.headers.get("Authorization")).toBe("Bearer receiver-token-1");
    expect(sent[0]!.headers.get("Content-Type")).toBe("application/secevent+jwt");
    const v = await verified(sent[0]!.body, "demo-client");
    expect(v.events).toEqual({ [VERIFICATION]: { state: "st-1" } });
    expect(v.sub_id).toEqual({ format: "opaque", id: s.stream_id });

    const { plid } = await mintFor(SMITH.phone);
    const t0 = Math.floor(Date.now() / 1000);
    expect((await admin("DELETE", `/admin/directory/${SMITH.phone}`)).status).toBe(200);
    await vi.waitFor(() => expect(sent).toHaveLength(3), { timeout: 15_000, interval: 25 });
    const [a, b] = [await verified(sent[1]!.body, "demo-client"), await verified(sent[2]!.body, "demo-client")];
    for (const x of [a, b]) {
      expect(decodeProtectedHeader(sent[1]!.body)).toMatchObject({ alg: "ES256", typ: "secevent+jwt" });
      expect(x.sub_id).toEqual({ format: "opaque", id: plid });
      expect(x.txn).toBeTypeOf("string");
      expect(x.iat).toBeGreaterThanOrEqual(t0);
      for (const pii of [SMITH.name, SMITH.phone, SMITH.ci, SMITH.birth]) expect(JSON.stringify(x)).not.toContain(pii);
      expect(Object.keys(x).sort()).toEqual(["aud", "events", "iat", "iss", "jti", "sub_id", "txn"]);
    }
    expect(a.txn).toBe(b.txn);
    expect(a.jti).not.toBe(b.jti);
    expect(a.events).toEqual({
      [SESSION_REVOKED]: {
        event_timestamp: expect.any(Number),
        initiating_entity: "admin",
        reason_admin: { en: "The operator removed the subscriber" },
      },
    });
    expect(b.events).toEqual({ [ACCOUNT_PURGED]: {} });
    expect(sent.every((x) => x.url === RECEIVER)).toBe(true);
  });

  it("a SIM change or a port: CAEP credential-change with phone-sms, update, event_timestamp, initiating_entity, reason_admin; an OIDC app's sub_id is iss_sub", async () => {
    const sent = receivers();
    const oidc = creds.oidc;
    const res = await api("POST", "/ssf/stream", oidc, {
      delivery: { method: PUSH, endpoint_url: RECEIVER },
      events_requested: [CREDENTIAL_CHANGE],
    });
    expect(res.status).toBe(201);
    const { plid, subscriberId } = await mintFor(KIM.phone, {
      client: { clientId: "oidc-client", redirectUris: ["https://oidc.example/cb"], items: ["name"] },
    });
    const at = Date.now() - 60_000;
    expect(await tellCredentialChange(env, subscriberId, at)).toBe(1);
    await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 15_000, interval: 25 });
    expect(sent[0]!.headers.get("Authorization")).toBeNull();
    const x = await verified(sent[0]!.body, "oidc-client");
    expect(x.sub_id).toEqual({ format: "iss_sub", iss: ISS, sub: plid });
    expect(x.txn).toBeUndefined();
    expect(x.events).toEqual({
      [CREDENTIAL_CHANGE]: {
        credential_type: "phone-sms",
        change_type: "update",
        event_timestamp: Math.floor(at / 1000),
        initiating_entity: "system",
        reason_admin: { en: "The carrier reported a SIM change or a number port" },
      },
    });
  });

  it("a paused stream delivers nothing, and once enabled delivers what waited with the same jti as a retry", async () => {
    let status = 202;
    const sent = receivers(() => status);
    const s = await createPush(creds.demo, [ACCOUNT_PURGED]);
    const st = await api("POST", "/ssf/status", creds.demo, {
      stream_id: s.stream_id,
      status: "paused",
      reason: "deploy",
    });
    expect(await st.json()).toEqual({ stream_id: s.stream_id, status: "paused", reason: "deploy" });
    expect((await api("POST", "/ssf/verify", creds.demo, { stream_id: s.stream_id })).status).toBe(400);
    const { plid } = await mintFor(HONG.phone);
    expect((await admin("DELETE", `/admin/directory/${HONG.phone}`)).status).toBe(200);
    const stub = storeForPlid(env, plid, providerConfig(env).oneTimeShards);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(
      async () => {
        const r = await admin("GET", "/admin/events");
        const list = ((await r.json()) as { events: { last_outcome: string }[] }).events;
        expect(list.map((e) => e.last_outcome)).toEqual(["paused"]);
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(sent).toEqual([]);
    expect((await api("POST", "/ssf/status", creds.demo, { stream_id: s.stream_id, status: "enabled" })).status).toBe(
      200,
    );
    const elapse = () =>
      runInDurableObject(stub, (_o, st) => {
        st.storage.sql.exec("UPDATE event_outbox SET next_at = ?", Date.now() - 1);
      });
    status = 503; // the first try after resuming is refused: retried with the same jti
    await elapse();
    await runDurableObjectAlarm(stub);
    expect(sent).toHaveLength(1);
    status = 202;
    await elapse();
    await runDurableObjectAlarm(stub);
    expect(sent).toHaveLength(2);
    const [first, second] = [
      await verified(sent[0]!.body, "demo-client"),
      await verified(sent[1]!.body, "demo-client"),
    ];
    expect(second.jti).toBe(first.jti);
    expect(second.events).toEqual({ [ACCOUNT_PURGED]: {} });
    expect(second.sub_id).toEqual({ format: "opaque", id: plid });
  });
});

describe("poll (RFC 8936)", () => {
  it("queues the SETs, answers them signed, drops them once acknowledged; returnImmediately answers at once when none wait", async () => {
    const sent = receivers();
    const res = await api("POST", "/ssf/stream", creds.demo, {
      delivery: { method: POLL },
      events_requested: [SESSION_REVOKED, ACCOUNT_PURGED, IDENTIFIER_RECYCLED],
    });
    const s = (await res.json()) as { stream_id: string; delivery: { endpoint_url: string } };
    const poll = async (body: unknown) => {
      const r = await call(s.delivery.endpoint_url, {
        method: "POST",
        headers: { Authorization: creds.demo, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(r.status).toBe(200);
      return (await r.json()) as { sets: Record<string, string>; moreAvailable: boolean };
    };
    const t = Date.now();
    expect(await poll({ returnImmediately: true })).toEqual({ sets: {}, moreAvailable: false });
    expect(Date.now() - t).toBeLessThan(2000);
    expect((await api("POST", "/ssf/verify", creds.demo, { stream_id: s.stream_id, state: "p" })).status).toBe(204);
    const { plid } = await mintFor(LEE.phone);
    expect((await admin("DELETE", `/admin/directory/${LEE.phone}`)).status).toBe(200);
    const all: Record<string, string> = {};
    await vi.waitFor(
      async () => {
        Object.assign(all, (await poll({ returnImmediately: true })).sets);
        expect(Object.keys(all)).toHaveLength(3);
      },
      { timeout: 15_000, interval: 100 },
    );
    const types: string[] = [];
    for (const [jti, token] of Object.entries(all)) {
      const x = await verified(token, "demo-client");
      expect(x.jti).toBe(jti);
      types.push(Object.keys(x.events)[0]!);
      if (!x.events[VERIFICATION]) expect(x.sub_id).toEqual({ format: "opaque", id: plid });
    }
    expect(types.sort()).toEqual([ACCOUNT_PURGED, SESSION_REVOKED, VERIFICATION].sort());
    // maxEvents limits, moreAvailable says the rest wait; an ack drops only what it names
    const one = await poll({ returnImmediately: true, maxEvents: 1 });
    expect(Object.keys(one.sets)).toHaveLength(1);
    expect(one.moreAvailable).toBe(true);
    const [first] = Object.keys(all);
    const after = await poll({ returnImmediately: true, ack: [first] });
    expect(Object.keys(after.sets).sort()).toEqual(
      Object.keys(all)
        .filter((j) => j !== first)
        .sort(),
    );
    expect(await poll({ returnImmediately: true, ack: Object.keys(after.sets) })).toEqual({
      sets: {},
      moreAvailable: false,
    });
    expect(sent).toEqual([]);
  });
});

describe("opt-in: an app without a stream", () => {
  it("receives exactly today's bytes: the documented HS256 token of docs/events.md", async () => {
    const sent = receivers();
    // limited-client has no stream; the demo client's stream does not change what another app gets
    await createPush();
    const patched = await admin("PATCH", "/admin/clients/limited-client", {
      json: { events_uri: "https://limited.example/events", event_types: ["plid-deleted"] },
    });
    expect(patched.status).toBe(200);
    const { plid } = await mintFor(KIM.phone, {
      client: {
        clientId: "limited-client",
        redirectUris: ["https://limited.example/cb"],
        items: ["gender", "agegroup"],
      },
    });
    expect((await admin("DELETE", `/admin/directory/${KIM.phone}`)).status).toBe(200);
    await vi.waitFor(() => expect(sent.filter((x) => x.url === "https://limited.example/events")).toHaveLength(1), {
      timeout: 5000,
      interval: 25,
    });
    const got = sent.find((x) => x.url === "https://limited.example/events")!;
    const claims = JSON.parse(atob(got.body.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")));
    const expected = await new SignJWT({
      iss: ISS,
      aud: "limited-client",
      iat: claims.iat,
      jti: claims.jti,
      events: { "urn:phone-login:event:plid-deleted": { plid, reason: "subscriber_removed" } },
    })
      .setProtectedHeader({ alg: "HS256", typ: "secevent+jwt" })
      .sign(new TextEncoder().encode(LIMITED.secret));
    expect(got.body).toBe(expected);
    expect(got.headers.get("Authorization")).toBeNull();
  });
});
