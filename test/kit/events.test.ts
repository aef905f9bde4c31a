// The kit's POST /auth/events (docs/rp-kit.md "Events", docs/events.md): a verified plid-deleted
// event ends every session of that plid and forgets its sealed identity; every refusal is an RFC
// 8935 error and changes nothing; a jti is accepted once.
import { env } from "../support/env";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin } from "../support/admin";
import { sha256 } from "../../workers/core/crypto";
import { HONG, intercept, KIM, LEE, SMITH } from "../support/helpers";
import { Browser, kit, send, type Kit } from "../support/kit";
import { b64url, part } from "./scripted-provider";

afterEach(() => {
  vi.restoreAllMocks();
});

const SECRET = env.RP_CLIENT_SECRET as string;

/** An HS256 compact JWS made here with WebCrypto (not the service's code). */
async function sign(
  claims: Record<string, unknown>,
  key = SECRET,
  header: Record<string, unknown> = { alg: "HS256", typ: "secevent+jwt" },
) {
  const input = `${part(header)}.${part(claims)}`;
  const k = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(key),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return `${input}.${b64url(new Uint8Array(await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(input))))}`;
}

function claimsFor(plid: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: "http://localhost:8787",
    aud: "demo-client",
    iat: Math.floor(Date.now() / 1000),
    jti: crypto.randomUUID(),
    events: { "urn:phone-login:event:plid-deleted": { plid, reason: "user_terminated" } },
    ...over,
  };
}

function post(k: Kit | null, body: string): Promise<Response> {
  return send(k, "/auth/events", { method: "POST", headers: { "Content-Type": "application/secevent+jwt" }, body });
}

async function refused(res: Response, err: string): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["description", "err"]);
  expect(body.err).toBe(err);
}

async function loggedIn(k: Kit, phone: string): Promise<{ b: Browser; plid: string }> {
  const b = new Browser(k);
  const { res, plid } = await b.login(phone);
  expect(res.status).toBe(303);
  expect((await b.get("/auth/me")).status).toBe(200);
  return { b, plid };
}

describe("POST /auth/events", () => {
  it("a verified event ends every session of its plid (202); other people's sessions stay", async () => {
    const k = kit();
    const one = await loggedIn(k, HONG.phone);
    const two = new Browser(k);
    await two.login(HONG.phone);
    const other = await loggedIn(k, KIM.phone);
    const identityKey = `identity:${await sha256(one.plid)}`;
    expect(await k.env.RP_KV.get(identityKey)).not.toBeNull();
    const res = await post(k, await sign(claimsFor(one.plid)));
    expect(res.status).toBe(202);
    expect(await k.env.RP_KV.get(identityKey)).toBeNull();
    expect((await one.b.get("/auth/me")).status).toBe(401);
    expect((await two.get("/auth/me")).status).toBe(401);
    expect((await other.b.get("/auth/me")).status).toBe(200);
  });

  it("an event whose handling failed (KV refusing a deletion) is accepted when the service sends it again, and then ends the sessions", async () => {
    const k = kit();
    const { b, plid } = await loggedIn(k, HONG.phone);
    const token = await sign(claimsFor(plid));
    // KV refuses deleting this browser's session, both times the kit tries (it tries a refused
    // delete once more a second on); the index of the plid may list sessions of earlier tests too
    const sessionKey = `session:${await sha256(b.jar.get("__Host-rp_session")!)}`;
    let refusals = 0;
    const flaky = {
      ...k,
      env: {
        ...k.env,
        RP_KV: intercept(k.env.RP_KV, {
          delete: async (key: string) => {
            if (refusals < 2 && key === sessionKey) {
              refusals += 1;
              throw new Error("KV PUT failed: 429 Too Many Requests");
            }
            return k.env.RP_KV.delete(key);
          },
        }),
      },
    };
    expect((await post(flaky, token)).status).toBe(500);
    expect(refusals).toBe(2);
    expect((await post(k, token)).status).toBe(202); // the service's retry: the same jti
    // the session itself is gone, not only the identity it needs (a later login stores that again)
    expect(await k.env.RP_KV.get(sessionKey)).toBeNull();
    expect((await b.get("/auth/me")).status).toBe(401);
    await refused(await post(k, token), "invalid_request"); // acted on: now a replay
  });

  it("refuses, changing nothing: bad signature or another alg → invalid_key; aud → invalid_audience; iss → invalid_issuer; malformed, stale iat, replayed jti → invalid_request", async () => {
    const k = kit();
    const { b, plid } = await loggedIn(k, SMITH.phone);
    await refused(await post(k, await sign(claimsFor(plid), "another-secret-another-secret-xx")), "invalid_key");
    await refused(
      await post(k, await sign(claimsFor(plid), SECRET, { alg: "HS512", typ: "secevent+jwt" })),
      "invalid_key",
    );
    await refused(await post(k, `${part({ alg: "none" })}.${part(claimsFor(plid))}.`), "invalid_request");
    await refused(await post(k, await sign(claimsFor(plid, { aud: "someone-else" }))), "invalid_audience");
    await refused(await post(k, await sign(claimsFor(plid, { iss: "https://evil.example" }))), "invalid_issuer");
    await refused(await post(k, "not a token"), "invalid_request");
    await refused(
      await post(k, await sign(claimsFor(plid, { iat: Math.floor(Date.now() / 1000) - 601 }))),
      "invalid_request",
    );
    await refused(await post(k, await sign(claimsFor(plid, { events: {} }))), "invalid_request");
    expect((await b.get("/auth/me")).status).toBe(200);
    // one jti is accepted once
    const token = await sign(claimsFor(plid));
    expect((await post(k, token)).status).toBe(202);
    await refused(await post(k, token), "invalid_request");
  });

  it("end to end in the dev worker: the service's event, delivered to the demo's own /auth/events, logs the demo app out", async () => {
    // The service's outbound delivery reaches this same worker (as it does under `npm start`).
    const delivered: number[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      expect(new URL(req.url).pathname).toBe("/auth/events");
      const res = await exports.default.fetch(req);
      delivered.push(res.status);
      return res;
    });
    const b = new Browser(null);
    const { res } = await b.login(LEE.phone);
    expect(res.status).toBe(303);
    expect((await b.get("/auth/me")).status).toBe(200);
    expect((await admin("DELETE", `/admin/directory/${LEE.phone}`)).status).toBe(200);
    await vi.waitFor(() => expect(delivered).toEqual([202]), { timeout: 5000, interval: 25 });
    expect((await b.get("/auth/me")).status).toBe(401);
  });
});
