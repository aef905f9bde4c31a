// The kit's POST /auth/events (docs/rp-kit.md "Events", docs/events.md): a verified plid-deleted
// event ends every session of that plid and forgets its sealed identity; every refusal is an RFC
// 8935 error and changes nothing; a jti is accepted once (with the kit's store, exactly once among
// concurrent copies); a verified event of a type the kit does not handle is acknowledged, nothing done.
import { env } from "../support/env";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin } from "../support/admin";
import { sha256 } from "../../workers/core/crypto";
import { HONG, intercept, KIM, LEE, SMITH } from "../support/helpers";
import { Browser, kit, send, storeWith, STORAGES, type Kit } from "../support/kit";
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
  return signedPart(header, JSON.stringify(claims), key);
}

/** A compact JWS of `header` and the claims' text as given (which may be no JSON object), MACed under `key`. */
async function signedPart(header: Record<string, unknown>, payload: string, key = SECRET): Promise<string> {
  const input = `${part(header)}.${b64url(new TextEncoder().encode(payload))}`;
  return `${input}.${await mac(input, key)}`;
}

/** The HS256 MAC of a signing input, base64url: tokens are put together by hand here so that a test can send headers and claims `jose` would refuse to sign. */
async function mac(input: string, key: string): Promise<string> {
  const k = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(key),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return b64url(new Uint8Array(await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(input))));
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
    // signed under the right key, yet not a SET: claims that are not a JSON object, a header whose
    // `crit` names an extension nobody understands (RFC 7515 §4.1.11)
    await refused(await post(k, await signedPart({ alg: "HS256", typ: "secevent+jwt" }, "[1,2]")), "invalid_request");
    // a SET carries no exp; one that has passed is refused as any JWT's would be
    await refused(
      await post(k, await sign(claimsFor(plid, { exp: Math.floor(Date.now() / 1000) - 60 }))),
      "invalid_request",
    );
    await refused(
      await post(
        k,
        await signedPart({ alg: "HS256", crit: ["x-unknown"], "x-unknown": 1 }, JSON.stringify(claimsFor(plid))),
      ),
      "invalid_request",
    );
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

describe("POST /auth/events: an event of a type the kit does not handle", () => {
  const OTHER = "urn:phone-login:event:some-later-type";

  it("a verified one is acknowledged (202) and changes nothing; a plid-deleted event beside it is acted on", async () => {
    const k = kit();
    const { b, plid } = await loggedIn(k, HONG.phone);
    const identityKey = `identity:${await sha256(plid)}`;
    const res = await post(k, await sign(claimsFor(plid, { events: { [OTHER]: { plid, anything: [1, 2] } } })));
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
    expect(await k.env.RP_KV.get(identityKey)).not.toBeNull();
    expect((await b.get("/auth/me")).status).toBe(200);
    const both = await post(
      k,
      await sign(
        claimsFor(plid, {
          events: { [OTHER]: {}, "urn:phone-login:event:plid-deleted": { plid, reason: "user_terminated" } },
        }),
      ),
    );
    expect(both.status).toBe(202);
    expect((await b.get("/auth/me")).status).toBe(401);
  });

  it("is verified like any event: bad signature, audience, issuer or iat, no jti, no events: refused", async () => {
    const k = kit();
    const plid = crypto.randomUUID();
    const other = (over: Record<string, unknown> = {}) => claimsFor(plid, { events: { [OTHER]: {} }, ...over });
    await refused(await post(k, await sign(other(), "another-secret-another-secret-xx")), "invalid_key");
    await refused(await post(k, await sign(other({ aud: "someone-else" }))), "invalid_audience");
    await refused(await post(k, await sign(other({ iss: "https://evil.example" }))), "invalid_issuer");
    await refused(await post(k, await sign(other({ iat: Math.floor(Date.now() / 1000) - 601 }))), "invalid_request");
    await refused(await post(k, await sign(other({ jti: undefined }))), "invalid_request");
    for (const events of [undefined, {}, [], "plid-deleted"])
      await refused(await post(k, await sign(claimsFor(plid, { events }))), "invalid_request");
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("POST /auth/events: concurrent copies of one event (docs/events.md: a jti is acted on once)", () => {
  it("with the kit's store, of 20 concurrent copies exactly one is accepted as new and ends the plid (10 rounds)", async () => {
    let ends = 0;
    const k = kit({ RP_STORE: storeWith((method) => void (method === "endPlid" && ends++)) });
    for (let round = 0; round < 10; round++) {
      const first = round === 0 ? await loggedIn(k, KIM.phone) : null;
      const plid = first?.plid ?? crypto.randomUUID();
      const token = await sign(claimsFor(plid));
      ends = 0;
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => sleep(i % 3).then(() => post(k, token))));
      const statuses = answers.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 202),
        `round ${round}: ${statuses}`,
      ).toHaveLength(1);
      for (const r of answers.filter((x) => x.status !== 202)) await refused(r, "invalid_request");
      expect(ends, `round ${round}`).toBe(1);
      if (first) expect((await first.b.get("/auth/me")).status).toBe(401);
      await refused(await post(k, token), "invalid_request"); // a later copy too
    }
  });

  it("with the kit's store, a copy whose end of the plid fails gives its claim up: copies meanwhile are refused, the service's retry is accepted", async () => {
    const good = kit();
    const { b, plid } = await loggedIn(good, SMITH.phone);
    const token = await sign(claimsFor(plid));
    // the store's end of the plid fails, once the other copies have been answered (or after 3 s)
    let ends = 0;
    let othersAnswered!: () => void;
    const answered = new Promise<void>((r) => (othersAnswered = r));
    const failing = kit({
      RP_STORE: storeWith(async (method) => {
        if (method !== "endPlid") return;
        ends += 1;
        await Promise.race([answered, sleep(3000)]);
        throw new Error("the kit's store is unreachable");
      }),
    });
    let done = 0;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        post(failing, token).then((r) => {
          if (++done === 19) othersAnswered();
          return r;
        }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(19).fill(400), 500]);
    for (const r of answers.filter((x) => x.status === 400)) await refused(r, "invalid_request");
    expect(ends).toBe(1);
    expect((await b.get("/auth/me")).status).toBe(200);
    // the service's retry of the same event: accepted, and acted on
    expect((await post(good, token)).status).toBe(202);
    expect((await b.get("/auth/me")).status).toBe(401);
    await refused(await post(good, token), "invalid_request");
  });

  it.each(STORAGES)("%s: an event acted on is refused when it comes again", async (_, storage) => {
    const k = kit(storage);
    const token = await sign(claimsFor(crypto.randomUUID()));
    expect((await post(k, token)).status).toBe(202);
    await refused(await post(k, token), "invalid_request");
  });
});
