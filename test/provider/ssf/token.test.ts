// The stream API's access token (docs/events.md "Shared Signals"; SSF 1.0 §7.1 authorization_schemes,
// RFC 6749 §4.4): "The stream API authenticates the app with its own credentials as the
// configuration document advertises (an access token of the app from the token endpoint,
// scope-limited to the stream, or HTTP Basic), never another app's."
import { env } from "../../support/env";
import { afterEach, describe, expect, it, vi } from "vitest";
import { basic, call, DEMO, FORM, form, KIM, LIMITED, tokenFor, userMe } from "../../support/helpers";
import { sha256 } from "../../../workers/core/crypto";

const POLL = "urn:ietf:rfc:8936";
const creds = {
  demo: basic(DEMO.clientId, DEMO.secret),
  limited: basic(LIMITED.clientId, LIMITED.secret),
};

afterEach(async () => {
  vi.useRealTimers();
  for (const auth of [creds.demo, creds.limited]) {
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

/** The token endpoint's answer to `fields` with the app's Basic credentials. */
function tokenCall(auth: string, fields: Record<string, string>): Promise<Response> {
  return call("/oauth2/token", { method: "POST", headers: { ...FORM, Authorization: auth }, body: form(fields) });
}

async function streamToken(auth = creds.demo): Promise<string> {
  const res = await tokenCall(auth, { grant_type: "client_credentials", scope: "ssf" });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string };
  expect(body).toEqual({ access_token: expect.any(String), token_type: "bearer", expires_in: 600, scope: "ssf" });
  return body.access_token;
}

const bearer = (t: string) => `Bearer ${t}`;

/** Every stream route, on stream `id`. */
const routes = (id: string): [string, string, unknown?][] => [
  ["GET", `/ssf/stream?stream_id=${id}`],
  ["PATCH", "/ssf/stream", { stream_id: id, description: "x" }],
  ["PUT", "/ssf/stream", { stream_id: id, delivery: { method: POLL } }],
  ["GET", `/ssf/status?stream_id=${id}`],
  ["POST", "/ssf/status", { stream_id: id, status: "enabled" }],
  ["POST", "/ssf/verify", { stream_id: id, state: "x" }],
  ["POST", `/ssf/poll/${id}`, { returnImmediately: true }],
  ["DELETE", `/ssf/stream?stream_id=${id}`],
];

describe("the stream API's access token (client_credentials, scope ssf)", () => {
  it("the configuration document advertises OAuth 2.0 beside Basic; the app's token opens every route of its own stream; only its hash is kept", async () => {
    const conf = (await (await call("/.well-known/ssf-configuration")).json()) as Record<string, unknown>;
    expect(conf.authorization_schemes).toEqual([{ spec_urn: "urn:ietf:rfc:6749" }, { spec_urn: "urn:ietf:rfc:7617" }]);
    const token = await streamToken();
    const created = await api("POST", "/ssf/stream", bearer(token), { delivery: { method: POLL } });
    expect(created.status).toBe(201);
    const s = (await created.json()) as { stream_id: string; aud: string };
    expect(s.aud).toBe(DEMO.clientId);
    expect(await (await api("GET", "/ssf/stream", bearer(token))).json()).toEqual([s]);
    for (const [method, path, body] of routes(s.stream_id)) {
      const res = await api(method, path, bearer(token), body);
      expect(res.status, `${method} ${path}`).toBe(method === "DELETE" || path === "/ssf/verify" ? 204 : 200);
    }
    // D1 holds the token's SHA-256, never the token
    const rows = await env.DB.prepare("SELECT * FROM ssf_tokens WHERE client_id = ?").bind(DEMO.clientId).all();
    expect(rows.results.map((r) => r.token_hash)).toContain(await sha256(token));
    expect(JSON.stringify(rows.results)).not.toContain(token);
    // it is no user's token: /v1/user/me refuses it
    expect((await userMe(token)).status).toBe(401);
  });

  it("an expired token opens nothing (401 authentication_failed)", async () => {
    const token = await streamToken();
    expect((await api("GET", "/ssf/stream", bearer(token))).status).toBe(200);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 601_000);
    const res = await api("GET", "/ssf/stream", bearer(token));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe("authentication_failed");
    expect((await api("POST", "/ssf/stream", bearer(token), { delivery: { method: POLL } })).status).toBe(401);
  });

  it("another scope, or none, gets no token: refused as before (invalid_request, grant_type not valid)", async () => {
    const kept = () => env.DB.prepare("SELECT count(*) AS n FROM ssf_tokens").first("n");
    const before = await kept();
    for (const scope of [undefined, "openid", "ssf openid", "SSF", ""]) {
      const res = await tokenCall(creds.demo, {
        grant_type: "client_credentials",
        ...(scope !== undefined ? { scope } : {}),
      });
      expect(res.status, String(scope)).toBe(400);
      expect(await res.json()).toEqual({ error: "invalid_request", message: "The value of grant_type is not valid." });
    }
    // and a wrong secret gets nothing
    expect(
      (await tokenCall(basic(DEMO.clientId, "wrong"), { grant_type: "client_credentials", scope: "ssf" })).status,
    ).toBe(401);
    expect(await kept()).toBe(before);
  });

  it("a user's access token (authorization code flow) opens no stream route (401)", async () => {
    const { token } = await tokenFor(KIM.phone);
    const created = await api("POST", "/ssf/stream", creds.demo, { delivery: { method: POLL } });
    const { stream_id: id } = (await created.json()) as { stream_id: string };
    expect((await api("POST", "/ssf/stream", bearer(token), { delivery: { method: POLL } })).status).toBe(401);
    expect((await api("GET", "/ssf/stream", bearer(token))).status).toBe(401);
    for (const [method, path, body] of routes(id)) {
      const res = await api(method, path, bearer(token), body);
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    // the user's token still reads the user once: nothing of it was spent
    expect((await userMe(token)).status).toBe(200);
    expect((await api("GET", `/ssf/stream?stream_id=${id}`, creds.demo)).status).toBe(200);
  });

  it("another app's token is answered 404 on every route of this app's stream, and changes nothing", async () => {
    const created = await api("POST", "/ssf/stream", creds.demo, { delivery: { method: POLL } });
    const s = (await created.json()) as { stream_id: string };
    const other = await streamToken(creds.limited);
    for (const [method, path, body] of routes(s.stream_id)) {
      const res = await api(method, path, bearer(other), body);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect(await (await api("GET", "/ssf/stream", bearer(other))).json()).toEqual([]);
    expect(await (await api("GET", `/ssf/stream?stream_id=${s.stream_id}`, creds.demo)).json()).toEqual(s);
  });
});
