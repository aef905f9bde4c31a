// The kit's session API (docs/architecture.md §4.6, §4.7): GET /auth/me, POST /auth/logout,
// POST /auth/disconnect, POST /auth/token; the Origin rule; and the demo page at / in the dev worker.
import { env } from "../support/env";
import { afterEach, describe, expect, it, vi } from "vitest";
import { randomToken, sha256 } from "../../workers/core/crypto";
import { createPkce, type ProviderFetcher } from "../../packages/kit/src/client";
import type { RpEnv } from "../../packages/kit/src/config";
import { basic, call, DEMO, FORM, form, HONG, intercept, KIM, LEE, mintFor, SMITH } from "../support/helpers";
import { Browser, kit, send, setCookies, storeWith, type Kit } from "../support/kit";
import { findLink } from "../../workers/provider/store/directory/links";
import { subscriberByPhone } from "../../workers/provider/store/directory/directory";
import { auditEvents } from "../support/audit";
import { exports } from "cloudflare:workers";
import { fullRecord, gate, loginAs, ScriptedProvider } from "./scripted-provider";

const HTML = { Accept: "text/html,application/xhtml+xml" };
const FLAT_KEYS = [
  "plid",
  "ci",
  "phoneNo",
  "name",
  "gender",
  "agegroup",
  "birthday",
  "birthdate",
  "foreign",
  "telcoCd",
  "autoLoginYn",
  "autoStatusCheck",
  "loginAt",
];

afterEach(() => {
  vi.useRealTimers();
});

async function expectError(res: Response, status: number, error: string): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.headers.get("Cache-Control")).toBe("no-store");
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["error", "message"]);
  expect(body.error).toBe(error);
}

/** POST /auth/token as a native app would (no Origin, no cookie). */
function nativeToken(k: Kit, body: string, headers: Record<string, string> = FORM): Promise<Response> {
  return send(k, "/auth/token", { method: "POST", headers, body });
}

async function sessionToken(
  k: Kit,
  phone: string,
): Promise<{ token: string; plid: string; user: Record<string, string> }> {
  const pkce = await createPkce();
  const { code, plid } = await mintFor(phone, { codeChallenge: pkce.challenge });
  const res = await nativeToken(k, form({ code, code_verifier: pkce.verifier }));
  expect(res.status).toBe(200);
  const body = (await res.json()) as { session_token: string; user: Record<string, string> };
  return { token: body.session_token, plid, user: body.user };
}

describe("GET /auth/me", () => {
  it("answers the session's user flat, keyed by the spec's item names, decrypted, with the flags and loginAt (docs/architecture.md §4.7)", async () => {
    const b = new Browser(kit());
    const before = Date.now();
    const { plid } = await b.login(HONG.phone);
    const res = await b.get("/auth/me");
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const me = (await res.json()) as Record<string, string>;
    expect(Object.keys(me)).toEqual(FLAT_KEYS);
    expect(me).toMatchObject({
      plid,
      ci: HONG.ci,
      phoneNo: "01012345678",
      name: "홍길동",
      gender: "M",
      birthday: "0315",
      birthdate: "900315",
      foreign: "L",
      telcoCd: "S",
      autoLoginYn: "N",
      autoStatusCheck: "N",
    });
    expect(Date.parse(me.loginAt!)).toBeGreaterThanOrEqual(before - 1000);
    expect(me.loginAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("answers 401 {error, message} without a session, with an unknown one, and after the session's TTL", async () => {
    const k = kit();
    await expectError(await send(k, "/auth/me"), 401, "authentication_failed");
    await expectError(
      await send(k, "/auth/me", { headers: { Cookie: `__Host-rp_session=${randomToken(32)}` } }),
      401,
      "authentication_failed",
    );
    await expectError(
      await send(k, "/auth/me", { headers: { Authorization: "Bearer x" } }),
      401,
      "authentication_failed",
    );
    const b = new Browser(k);
    await b.login(KIM.phone);
    expect((await b.get("/auth/me")).status).toBe(200);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 3601_000);
    await expectError(await b.get("/auth/me"), 401, "authentication_failed");
  });
});

describe("the Origin rule on POSTs (docs/architecture.md §4.7)", () => {
  it("refuses a cross-origin or null Origin on every POST with 403, and a missing one on cookie-authenticated POSTs", async () => {
    const k = kit();
    const b = new Browser(k);
    await b.login(HONG.phone);
    for (const path of ["/auth/logout", "/auth/disconnect", "/auth/token"]) {
      for (const origin of ["https://evil.example", "null", "http://localhost:8788", "http://127.0.0.1:8787"]) {
        await expectError(await b.post(path, { origin, headers: FORM, body: "code=x" }), 403, "access_denied");
      }
    }
    for (const path of ["/auth/logout", "/auth/disconnect"]) {
      await expectError(await b.post(path, { origin: null }), 403, "access_denied");
    }
    expect(k.calls).toEqual(["POST /oauth2/token", "GET /v1/user/me"]); // none of the refused POSTs reached the service
    expect((await b.get("/auth/me")).status).toBe(200); // and the session is intact
  });

  it("allows a missing Origin on /auth/token and on POSTs authenticated by a session token (native apps)", async () => {
    const k = kit();
    const { token } = await sessionToken(k, SMITH.phone);
    const res = await send(k, "/auth/logout", { method: "POST", headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  });
});

describe("POST /auth/logout", () => {
  it("ends the session and clears the cookie: 303 to / for a browser form, 200 JSON otherwise", async () => {
    const k = kit();
    const b = new Browser(k);
    await b.login(HONG.phone);
    const id = b.jar.get("__Host-rp_session")!;
    const res = await b.post("/auth/logout", { headers: HTML });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/?done=logout");
    const cleared = setCookies(res).find((c) => c.name === "__Host-rp_session")!;
    expect(cleared.attrs).toContain("Max-Age=0");
    expect(await k.env.RP_KV.get(`session:${await sha256(id)}`)).toBeNull();
    expect((await b.get("/auth/me")).status).toBe(401);

    await b.login(HONG.phone);
    const json = await b.post("/auth/logout");
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ loggedOut: true });
    expect((await b.get("/auth/me")).status).toBe(401);
  });

  it("keeps the stored identity and other sessions of the same user", async () => {
    const k = kit();
    const one = new Browser(k);
    const two = new Browser(k);
    await one.login(KIM.phone);
    await two.login(KIM.phone);
    await one.post("/auth/logout");
    expect((await two.get("/auth/me")).status).toBe(200);
  });

  it("a callback of this browser replayed after the logout is refused, also when two tabs' callbacks ran at once (each made a session, the cookie names one)", async () => {
    const k = kit();
    const b = new Browser(k);
    const starts = [await b.startLogin(), await b.startLogin()];
    const urls = await Promise.all(
      starts.map(async (s) => {
        const { code } = await mintFor(HONG.phone, { codeChallenge: s.challenge! });
        return `/auth/callback?${new URLSearchParams({ code, state: s.state })}`;
      }),
    );
    const answers = await Promise.all(urls.map((u) => b.get(u)));
    expect(answers.map((r) => r.status)).toEqual([303, 303]);
    expect((await b.post("/auth/logout")).status).toBe(200);
    for (const u of urls) expect((await b.get(u)).status).toBe(400);
    expect((await b.get("/auth/me")).status).toBe(401);
  });

  it("a callback under way in another tab when the person logs out does not log the browser in afterwards: its session needs the login binding cookie the logout cleared, also once a new login has started", async () => {
    const p = new ScriptedProvider();
    const k = kit({}, p.fetcher);
    const user = await fullRecord(randomToken(16), { autoLoginYn: "N", autoStatusCheck: "N" });
    const browser = new Browser(k); // one cookie jar: two tabs of a shared computer's browser
    expect((await loginAs(browser, p, user)).status).toBe(303);
    // tab 1: another login's callback reaches the kit; the service is slow to answer the user read
    const g = gate();
    const tab1 = loginAs(browser, p, user, g.wait);
    await g.reached;
    // tab 2: the person logs out and walks away
    expect((await browser.post("/auth/logout", { headers: HTML })).status).toBe(303);
    expect(browser.jar.size).toBe(0);
    g.open();
    await tab1; // its answer sets a session cookie
    expect(browser.jar.has("__Host-rp_session")).toBe(true);
    expect((await browser.get("/auth/me")).status).toBe(401);
    // the next person starts a login (a new binding): the session the late callback made stays ended
    const late = browser.jar.get("__Host-rp_session")!;
    await browser.startLogin();
    browser.jar.set("__Host-rp_session", late);
    expect((await browser.get("/auth/me")).status).toBe(401);
  });

  it("a request carrying both the cookie and a Bearer token (an app's own API token) ends the cookie's session too: a copy of the cookie no longer works", async () => {
    const k = kit();
    const b = new Browser(k);
    await b.login(HONG.phone);
    const id = b.jar.get("__Host-rp_session")!;
    const res = await b.post("/auth/logout", { headers: { Authorization: `Bearer ${randomToken()}` } });
    expect(res.status).toBe(200);
    const copy = await send(k, "/auth/me", { headers: { Cookie: `__Host-rp_session=${id}` } });
    expect(copy.status).toBe(401);
    expect(await k.env.RP_KV.get(`session:${await sha256(id)}`)).toBeNull();
  });
});

describe("POST /auth/disconnect", () => {
  it("disconnects at the service, forgets the identity and ends every session of that plid (docs/architecture.md §4.7)", async () => {
    const k = kit();
    const b = new Browser(k);
    const other = new Browser(k);
    const bystander = new Browser(k);
    const { plid } = await b.login(LEE.phone);
    await other.login(LEE.phone);
    const app = await sessionToken(k, LEE.phone);
    await bystander.login(HONG.phone);
    const res = await b.post("/auth/disconnect", { headers: HTML });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/?done=disconnect");
    expect(k.calls.at(-1)).toBe("POST /v1/user/disconnect");
    // the service forgot the link: its plid is gone and the next login gets a new one
    expect(await findLink(env, DEMO.clientId, (await subscriberByPhone(env, LEE.phone))!.id)).toBeNull();
    expect(await k.env.RP_KV.get(`identity:${await sha256(plid)}`)).toBeNull();
    for (const gone of [b, other]) expect((await gone.get("/auth/me")).status).toBe(401);
    expect((await send(k, "/auth/me", { headers: { Authorization: `Bearer ${app.token}` } })).status).toBe(401);
    expect((await bystander.get("/auth/me")).status).toBe(200);
  });

  it("ends the plid's other sessions themselves: a login in flight that stores the identity again after the disconnect brings none of them back", async () => {
    const k = kit();
    const b = new Browser(k);
    const other = new Browser(k);
    const { plid } = await b.login(KIM.phone);
    await other.login(KIM.phone);
    const key = `identity:${await sha256(plid)}`;
    const sealed = (await k.env.RP_KV.get(key))!;
    expect((await b.post("/auth/disconnect", { headers: HTML })).status).toBe(303);
    // a login of the same plid that had read the user before the disconnect stores its identity now
    await k.env.RP_KV.put(key, sealed);
    expect((await other.get("/auth/me")).status).toBe(401);
  });

  it("a login in flight across a disconnect (its user read before the disconnect, its session stored after) keeps no session and brings no identity back", async () => {
    let hold: (() => Promise<void>) | null = null;
    const k = kit(
      {},
      {
        fetch: async (input, init) => {
          const req = new Request(input, init);
          const res = await exports.default.fetch(req);
          // the in-flight login's user read has its answer; the disconnect runs before the kit goes on
          if (hold && new URL(req.url).pathname === "/v1/user/me") {
            const h = hold;
            hold = null;
            await h();
          }
          return res;
        },
      },
    );
    const b = new Browser(k);
    const inFlight = new Browser(k);
    const { plid } = await b.login(KIM.phone);
    hold = async () => {
      expect((await b.post("/auth/disconnect", { headers: HTML })).status).toBe(303);
    };
    const late = await inFlight.login(KIM.phone);
    expect(hold).toBeNull(); // the disconnect ran in the window
    expect(late.res.status).toBe(502);
    expect((await inFlight.get("/auth/me")).status).toBe(401);
    expect(await k.env.RP_KV.get(`identity:${await sha256(plid)}`)).toBeNull();
    // a login that starts after the disconnect is an ordinary login
    const again = new Browser(k);
    await again.login(KIM.phone);
    expect((await again.get("/auth/me")).status).toBe(200);
  });

  it.each([
    "KV alone",
    "the kit's store, the end landing after the login's call",
    "the kit's store, the end landing before it",
  ])(
    "the end of a plid is never lost to another login of it (%s): a disconnect landing right after a login read what it had to know of the plid (before it indexed its session) still ends a login in flight across it, and brings neither session back",
    async (storage) => {
      const p = new ScriptedProvider();
      const plid = randomToken(16);
      const plidHash = await sha256(plid);
      const kv = env.RP_KV as KVNamespace;
      let meanwhile: (() => Promise<void>) | null = null;
      const step = async () => {
        const m = meanwhile;
        meanwhile = null;
        await m?.();
      };
      const RP_KV = intercept(kv, {
        get: async (key: string, ...rest: unknown[]) => {
          const v = await (kv.get as (...a: unknown[]) => Promise<unknown>).call(kv, key, ...rest);
          // a login's read of its plid's index or end: another request's step lands before it goes on
          if (key.startsWith("plid-") && key.includes(plidHash)) await step();
          return v;
        },
      });
      // with the store, the index and the end are read in one call: the step lands just after it
      // (as after KV's read of the end), or just before it
      const early = storage.endsWith("before it");
      const atIndex = (when: boolean) => async (method: string, args: unknown[]) => {
        if (when && method === "indexSession" && args[0] === plidHash) await step();
      };
      const RP_STORE = storage === "KV alone" ? undefined : storeWith(atIndex(early), atIndex(!early));
      const k = kit({ RP_KV, RP_STORE }, p.fetcher);
      const user = await fullRecord(plid, { autoLoginYn: "N", autoStatusCheck: "N" });
      const a = new Browser(k); // the session that will disconnect
      expect((await loginAs(a, p, user)).status).toBe(303);
      // login C: its user read done before the disconnect, its writes after
      const c = new Browser(k);
      const g = gate();
      const lateLogin = loginAs(c, p, user, g.wait);
      await g.reached;
      // login B: right after its read of the plid, the person disconnects from browser A
      let disconnected: Response | null = null;
      meanwhile = async () => {
        disconnected = await a.post("/auth/disconnect", { headers: HTML });
      };
      const b = new Browser(k);
      const bStart = await b.startLogin();
      const bCallback = `/auth/callback?${new URLSearchParams({ code: p.issue(user), state: bStart.state })}`;
      const bRes = await b.get(bCallback);
      expect(disconnected!.status).toBe(303);
      expect(p.disconnected).toEqual([plid]);
      // B's login ended with the plid: it is answered (its writes came before the end's deletions),
      // and the session it was answered with does not stand; or, the end read by its own call, refused
      expect(bRes.status).toBe(early ? 502 : 303);
      expect((await b.get("/auth/me")).status).toBe(401);
      g.open();
      const cRes = await lateLogin;
      const bAgain = await b.get(bCallback); // B's browser repeats its callback within the minute // a refused login's repeat is refused the same way
      expect({
        cLogin: cRes.status,
        cMe: (await c.get("/auth/me")).status,
        bAgain: bAgain.status,
        bMe: (await b.get("/auth/me")).status,
        identity: await kv.get(`identity:${plidHash}`),
      }).toEqual({ cLogin: 502, cMe: 401, bAgain: early ? 502 : 400, bMe: 401, identity: null });
    },
  );

  it("answers JSON to an API caller, and works with a session token", async () => {
    const k = kit();
    const { token } = await sessionToken(k, SMITH.phone);
    const res = await send(k, "/auth/disconnect", { method: "POST", headers: { Authorization: `bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ disconnected: true });
  });

  it("needs a session (401) and makes no service call without one", async () => {
    const k = kit();
    await expectError(await new Browser(k).post("/auth/disconnect"), 401, "authentication_failed");
    expect(k.calls).toEqual([]);
  });

  it("the service no longer knows the plid (disconnected already: an earlier answer lost, or elsewhere): every session and the identity end all the same", async () => {
    const k = kit();
    const b = new Browser(k);
    const other = new Browser(k);
    const { plid } = await b.login(KIM.phone);
    await other.login(KIM.phone);
    // the disconnect went through at the service, but its answer never reached the kit
    const direct = await call("/v1/user/disconnect", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
      body: form({ plid }),
    });
    expect(direct.status).toBe(200);
    const res = await b.post("/auth/disconnect", { headers: HTML });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/?done=disconnect");
    for (const gone of [b, other]) expect((await gone.get("/auth/me")).status).toBe(401);
    expect(await k.env.RP_KV.get(`identity:${await sha256(plid)}`)).toBeNull();
  });

  it("answers 502 when the service fails (unreachable, 5xx, a 400 that is not about the plid), and keeps the session and identity so the person can try again", async () => {
    let down: "unreachable" | "400" | null = null;
    const k = kit(
      {},
      {
        fetch: async (input, init) => {
          if (down === "unreachable") throw new TypeError("connection refused");
          if (down === "400")
            return Response.json(
              { error: "invalid_request", message: "A required item grant_type is missing." },
              { status: 400 },
            );
          return exports.default.fetch(new Request(input, init));
        },
      },
    );
    const b = new Browser(k);
    const { plid } = await b.login(KIM.phone);
    for (const failure of ["unreachable", "400"] as const) {
      down = failure;
      await expectError(await b.post("/auth/disconnect"), 502, "server_error");
      expect((await b.get("/auth/me")).status).toBe(200);
    }
    expect(await findLink(env, DEMO.clientId, (await subscriberByPhone(env, KIM.phone))!.id)).not.toBeNull();
    down = null;
    expect((await b.post("/auth/disconnect")).status).toBe(200);
    expect((await b.get("/auth/me")).status).toBe(401);
    expect(await k.env.RP_KV.get(`identity:${await sha256(plid)}`)).toBeNull();
  });
});

describe("POST /auth/token (the token/user proxy for native and WebView apps)", () => {
  it("exchanges the app's code with the kit's secret and answers {session_token, expires_in, user}; the token works on /auth/me", async () => {
    const k = kit();
    const pkce = await createPkce();
    const { code, plid } = await mintFor(HONG.phone, {
      redirectUri: "demoapp://callback",
      codeChallenge: pkce.challenge,
    });
    const res = await nativeToken(k, form({ code, code_verifier: pkce.verifier }));
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(setCookies(res)).toEqual([]);
    const body = (await res.json()) as { session_token: string; expires_in: number; user: Record<string, string> };
    expect(Object.keys(body).sort()).toEqual(["expires_in", "session_token", "user"]);
    expect(body.session_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.expires_in).toBe(3600);
    expect(Object.keys(body.user)).toEqual(FLAT_KEYS);
    expect(body.user).toMatchObject({ plid, name: "홍길동" });
    const me = await send(k, "/auth/me", { headers: { Authorization: `Bearer ${body.session_token}` } });
    expect(await me.json()).toEqual(body.user);
  });

  it("accepts a JSON body with the app's PKCE verifier", async () => {
    const k = kit();
    const pkce = await createPkce();
    const { code } = await mintFor(KIM.phone, { codeChallenge: pkce.challenge });
    const res = await nativeToken(k, JSON.stringify({ code, code_verifier: pkce.verifier }), {
      "Content-Type": "application/json",
    });
    expect(res.status).toBe(200);
  });

  it("a code without code_verifier is refused 400 invalid_request before any service call (RFC 8252 §8.1: an intercepted app-link code is not enough)", async () => {
    const k = kit();
    const { code } = await mintFor(HONG.phone, { redirectUri: "demoapp://callback" });
    const res = await nativeToken(k, form({ code }));
    await expectError(res, 400, "invalid_request");
    expect(k.calls).toEqual([]);
  });

  it("RP_TOKEN_PKCE=optional (legacy apps) accepts a code without code_verifier; any other value is a configuration error", async () => {
    const k = kit({ RP_TOKEN_PKCE: "optional" });
    const { code } = await mintFor(HONG.phone, { redirectUri: "demoapp://callback" });
    expect((await nativeToken(k, form({ code }))).status).toBe(200);
    const bad = kit({ RP_TOKEN_PKCE: "sometimes" });
    expect((await nativeToken(bad, form({ code: "x", code_verifier: "v".repeat(43) }))).status).toBe(500);
  });

  it("RP_TOKEN_PKCE=optional: a code without verifier gets its session once; a repeat of the code, from anywhere, is refused and learns nothing", async () => {
    const k = kit({ RP_TOKEN_PKCE: "optional" });
    const { code } = await mintFor(HONG.phone, { redirectUri: "demoapp://callback" });
    const first = await nativeToken(k, form({ code }));
    expect(first.status).toBe(200);
    const { session_token } = (await first.json()) as { session_token: string };
    for (const ip of ["203.0.113.77", "198.51.100.77"]) {
      const again = await nativeToken(k, form({ code }), { ...FORM, "CF-Connecting-IP": ip });
      const text = await again.clone().text();
      await expectError(again, 400, "invalid_grant");
      expect(text).not.toContain(session_token);
    }
    // and concurrently: exactly one caller gets a session
    const other = await mintFor(KIM.phone, { redirectUri: "demoapp://callback" });
    const racing = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        nativeToken(k, form({ code: other.code }), { ...FORM, "CF-Connecting-IP": `192.0.2.${i + 101}` }),
      ),
    );
    expect(racing.map((r) => r.status).filter((s) => s === 200)).toHaveLength(1);
  });

  it("answers 400 invalid_grant for a refused code (another verifier, or redeemed by another caller) and 400 invalid_request for a malformed request", async () => {
    const k = kit();
    const first = await createPkce();
    const { code } = await mintFor(HONG.phone, { codeChallenge: first.challenge });
    expect((await nativeToken(k, form({ code, code_verifier: first.verifier }))).status).toBe(200);
    // the same code with another verifier: not the app that redeemed it
    await expectError(
      await nativeToken(k, form({ code, code_verifier: (await createPkce()).verifier })),
      400,
      "invalid_grant",
    );
    const pkce = await createPkce();
    const other = await mintFor(HONG.phone, { codeChallenge: pkce.challenge });
    await expectError(
      await nativeToken(k, form({ code: other.code, code_verifier: (await createPkce()).verifier })),
      400,
      "invalid_grant",
    );
    for (const [body, type] of [
      ["", FORM["Content-Type"]],
      [form({ code_verifier: pkce.verifier }), FORM["Content-Type"]],
      [form({ code: "a", code_verifier: "short" }), FORM["Content-Type"]],
      ["{not json", "application/json"],
      ["[]", "application/json"],
      [JSON.stringify({ code: 7 }), "application/json"],
      ["code=x", "text/plain"],
    ] as const) {
      await expectError(await nativeToken(k, body, { "Content-Type": type }), 400, "invalid_request");
    }
  });

  it("keeps token sessions and cookie sessions apart: neither id works as the other", async () => {
    const k = kit();
    const { token } = await sessionToken(k, KIM.phone);
    expect((await send(k, "/auth/me", { headers: { Cookie: `__Host-rp_session=${token}` } })).status).toBe(401);
    const b = new Browser(k);
    await b.login(KIM.phone);
    const cookieId = b.jar.get("__Host-rp_session")!;
    expect((await send(k, "/auth/me", { headers: { Authorization: `Bearer ${cookieId}` } })).status).toBe(401);
  });

  it("is rate-limited per IP: 429 with Retry-After past RP_TOKEN_RATE_LIMIT, other addresses unaffected", async () => {
    const k = kit({ RP_TOKEN_RATE_LIMIT: "3" });
    const from = (ip: string) =>
      nativeToken(k, form({ code: "x", code_verifier: "v".repeat(43) }), { ...FORM, "CF-Connecting-IP": ip });
    for (let i = 0; i < 3; i++) expect((await from("203.0.113.9")).status).not.toBe(429);
    const limited = await from("203.0.113.9");
    await expectError(limited.clone(), 429, "too_many_requests");
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get("Retry-After"))).toBeLessThanOrEqual(60);
    expect((await from("198.51.100.7")).status).not.toBe(429);
  });

  it("answers 502 when the service is unreachable", async () => {
    const down: ProviderFetcher = { fetch: async () => Promise.reject(new TypeError("connection refused")) };
    const k = kit({}, down);
    await expectError(await nativeToken(k, form({ code: "abc", code_verifier: "v".repeat(43) })), 502, "server_error");
  });
});

describe("the demo page at / (dev worker, kit mounted with the provider in process)", () => {
  it("offers the login, then shows the decrypted profile in Korean with logout and disconnect; logout returns to the login", async () => {
    const b = new Browser(null);
    const home = await b.get("/");
    expect(home.status).toBe(200);
    expect(home.headers.get("Referrer-Policy")).toBe("same-origin");
    expect(home.headers.get("Cache-Control")).toBe("no-store");
    expect(home.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    const welcome = await home.text();
    expect(welcome).toContain("휴대폰번호로 로그인");
    expect(welcome).toContain('href="/auth/login?return_to=%2F"');

    const { res } = await b.login(HONG.phone);
    expect(res.status).toBe(303);
    const profile = await (await b.get("/")).text();
    expect(profile).toContain("홍길동님, 환영합니다");
    expect(profile).toContain("010-1234-5678");
    expect(profile).toContain("남성");
    expect(profile).toContain('action="/auth/logout"');
    // disconnect is confirmed first, on its own page, which holds the form
    expect(profile).not.toContain('action="/auth/disconnect"');
    expect(profile).toContain('href="/?confirm=disconnect"');
    const confirm = await (await b.get("/?confirm=disconnect")).text();
    expect(confirm).toContain("연결을 끊을까요?");
    expect(confirm).toContain('action="/auth/disconnect"');
    // dates in Korea Standard Time, birth date written out, the way to end automatic login
    expect(profile).toMatch(
      /data-item="loginAt">\d{4}년 \d{1,2}월 \d{1,2}일 \d{2}:\d{2} \(\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} KST\)</,
    );
    expect(profile).toContain('data-item="birthdate">1990년 3월 15일 (15 Mar 1990)<');
    expect(profile).toContain('data-item="birthday">3월 15일 (15 Mar)<');

    const out = await b.post("/auth/logout", { headers: HTML });
    expect(out.status).toBe(303);
    const after = await (await b.get(out.headers.get("Location")!)).text();
    expect(after).toContain("휴대폰번호로 로그인");
    expect(after).toContain('<p class="flash" role="status">로그아웃했습니다.');
    // the flash is one of a fixed set: the query's text is never shown
    const odd = await (await b.get("/?done=%3Cscript%3E")).text();
    expect(odd).not.toContain('class="flash"');
    expect(await (await b.get("/?done=__proto__")).text()).not.toContain('class="flash"');
  });

  it("disconnect through the in-process provider: the link is gone, the service audits it once, the session ends", async () => {
    const b = new Browser(null);
    const { res: login } = await b.login(KIM.phone);
    expect(login.status).toBe(303);
    const before = (await auditEvents({ type: "disconnect" })).length;
    const res = await b.post("/auth/disconnect", { headers: HTML });
    expect(res.status).toBe(303);
    const after = (await auditEvents({ type: "disconnect" })).length;
    expect(after).toBe(before + 1);
    expect(await findLink(env, DEMO.clientId, (await subscriberByPhone(env, KIM.phone))!.id)).toBeNull();
    expect((await b.get("/auth/me")).status).toBe(401);
  });

  it("escapes what it shows: a hostile name is rendered as text", async () => {
    const { putIdentity } = await import("../../packages/kit/src/kv");
    const { kitContext } = await import("../../packages/kit/src/context");
    const context = kitContext(env as unknown as RpEnv);
    const plid = crypto.randomUUID();
    await putIdentity(
      context.kv,
      await context.sealKey(),
      { plid, items: { name: `<img src=x onerror="a">` }, storedAt: Date.now() },
      3600,
    );
    const id = randomToken(32);
    const loginAt = Date.now();
    await context.store.createLoginSession({ plid, kind: "cookie", loginAt }, 3600, id, loginAt);
    const page = await (await send(null, "/", { headers: { Cookie: `__Host-rp_session=${id}` } })).text();
    expect(page).toContain("&lt;img src=x onerror=&quot;a&quot;&gt;님, 환영합니다");
    expect(page).not.toContain("<img");
  });
});
