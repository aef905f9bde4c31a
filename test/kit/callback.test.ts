// GET /auth/callback of the relying-party kit (docs/architecture.md §4.6, §4.7): state checks before any
// token call, the exchange, the identity kept sealed by plid and merged into automatic logins,
// session rotation.
import { exports } from "cloudflare:workers";
import { deviceOfSubscriber } from "../support/shards";
import { env } from "../support/env";
import { afterEach, describe, expect, it, vi } from "vitest";
import { randomToken, sha256, unseal } from "../../workers/core/crypto";
import { rpSealKey } from "../../packages/kit/src/config";
import { createPkce, type ProviderFetcher } from "../../packages/kit/src/client";
import { DEMO, HONG, KIM, LEE, mintFor, SMITH, tokenFor, userMe } from "../support/helpers";
import { Browser, kit, ORIGIN, send, setCookies } from "../support/kit";
import { putAutoLoginGrant } from "../../workers/provider/store/directory/grants";
import { emptyRecord, fullRecord, loginAs, PERSON, ScriptedProvider } from "./scripted-provider";

const EXCHANGE = ["POST /oauth2/token", "GET /v1/user/me"];

afterEach(() => {
  vi.useRealTimers();
});

async function expectFailurePage(res: Response, status: number, text: RegExp): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("Cache-Control")).toBe("no-store");
  expect(res.headers.get("Referrer-Policy")).toBe("same-origin");
  expect(setCookies(res).some((c) => c.name === "__Host-rp_session")).toBe(false);
  const html = await res.text();
  expect(html).toContain("로그인을 완료할 수 없습니다");
  expect(html).toMatch(text);
  expect(html).toContain('href="/auth/login"');
}

/** An automatic-login grant for (device, demo-client) whose first report has been taken. */
async function grantWithFirstReportTaken(phone: string, device: string): Promise<void> {
  const { subscriberId } = await mintFor(phone);
  await putAutoLoginGrant(env, {
    device: deviceOfSubscriber(subscriberId, device),
    clientId: DEMO.clientId,
    subscriberId,
    expiresAt: Date.now() + 86400_000,
  });
  const { token } = await tokenFor(phone, { autoLogin: { deviceHash: device, automatic: false }, optIn: true });
  expect(((await (await userMe(token)).json()) as { user: { autoStatusCheck: string } }).user.autoStatusCheck).toBe(
    "Y",
  );
}

describe("GET /auth/callback: success", () => {
  it("exchanges the code, reads the user once and 303s to return_to with a __Host- session cookie (docs/architecture.md §4.6)", async () => {
    const k = kit();
    const b = new Browser(k);
    const { res, plid } = await b.login(HONG.phone, { query: "?return_to=%2Forders%3Fpage%3D2" });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/orders?page=2");
    expect(k.calls).toEqual(EXCHANGE);
    const session = setCookies(res).find((c) => c.name === "__Host-rp_session")!;
    expect(session.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session.attrs).toEqual(
      expect.arrayContaining(["Path=/", "Max-Age=3600", "HttpOnly", "Secure", "SameSite=Lax"]),
    );
    expect(session.attrs.some((a) => /^domain=/i.test(a))).toBe(false); // a __Host- cookie has no Domain
    const me = await b.get("/auth/me");
    expect(await me.json()).toMatchObject({
      plid,
      name: "홍길동",
      phoneNo: "01012345678",
      birthdate: "900315",
      telcoCd: "S",
    });
  });

  it("stores only the session id's hash, and the identity sealed: no name or phone number in KV", async () => {
    const k = kit();
    const b = new Browser(k);
    const { plid } = await b.login(SMITH.phone);
    const id = b.jar.get("__Host-rp_session")!;
    const keys = (await k.env.RP_KV.list()).keys.map((x) => x.name);
    expect(keys).toContain(`session:${await sha256(id)}`);
    expect(keys).toContain(`identity:${await sha256(plid)}`);
    expect(keys.some((n) => n.includes(id) || n.includes(plid))).toBe(false);
    const sealed = (await k.env.RP_KV.get(`identity:${await sha256(plid)}`))!;
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain("John");
    expect(sealed).not.toContain(SMITH.phone);
    // AES-256-GCM under RP_SEAL_KEY, bound to the plid: it opens to the identity, and one altered
    // byte no longer opens, which ends the session
    const opened = JSON.parse(await unseal(await rpSealKey(k.env), sealed, `rp-identity:${plid}`)) as {
      plid: string;
      items: Record<string, string>;
    };
    expect(opened).toMatchObject({ plid, items: { name: "John Smith", phoneNo: SMITH.phone } });
    const [v, iv, ct] = sealed.split(".");
    const flipped = ct!.slice(0, 5) + (ct![5] === "A" ? "B" : "A") + ct!.slice(6);
    await k.env.RP_KV.put(`identity:${await sha256(plid)}`, [v, iv, flipped].join("."));
    expect((await b.get("/auth/me")).status).toBe(401);
  });

  it("a session TTL from RP_SESSION_TTL_SECONDS sets the cookie's Max-Age and the KV expiry", async () => {
    const k = kit({ RP_SESSION_TTL_SECONDS: "120" });
    const b = new Browser(k);
    const { res } = await b.login(KIM.phone);
    expect(setCookies(res).find((c) => c.name === "__Host-rp_session")!.attrs).toContain("Max-Age=120");
    const key = `session:${await sha256(b.jar.get("__Host-rp_session")!)}`;
    const entry = (await k.env.RP_KV.list({ prefix: "session:" })).keys.find((x) => x.name === key)!;
    expect(entry.expiration! - Date.now() / 1000).toBeLessThanOrEqual(121);
  });
});

describe("GET /auth/callback: the state is checked before any token call", () => {
  it("a replayed callback never exchanges again: its browser gets its login's session while it lives, then a 400 page; another browser a 400 page", async () => {
    const k = kit();
    const b = new Browser(k);
    const start = await b.startLogin();
    const { code } = await mintFor(HONG.phone, { codeChallenge: start.challenge! });
    const url = `/auth/callback?code=${code}&state=${start.state}`;
    const first = await b.get(url);
    expect(first.status).toBe(303);
    const session = setCookies(first).find((c) => c.name === "__Host-rp_session")!.value;
    const calls = k.calls.length;
    const again = await b.get(url);
    expect(again.status).toBe(303);
    expect(setCookies(again).find((c) => c.name === "__Host-rp_session")!.value).toBe(session);
    await expectFailurePage(await new Browser(k).get(url), 400, /expired/);
    expect((await b.post("/auth/logout")).status).toBeLessThan(400);
    await expectFailurePage(await b.get(url), 400, /expired/);
    expect(k.calls.length).toBe(calls);
  });

  it("a state presented by another browser (cookie mismatch) is refused and spends nothing: its own browser then completes the login", async () => {
    const k = kit();
    const victim = new Browser(k);
    const attacker = new Browser(k);
    const start = await attacker.startLogin();
    const { code } = await mintFor(HONG.phone, { codeChallenge: start.challenge! });
    const url = `/auth/callback?code=${code}&state=${start.state}`;
    await victim.startLogin(); // the victim has a binding cookie of its own
    await expectFailurePage(await victim.get(url), 400, /not started in this browser/);
    await expectFailurePage(await new Browser(k).get(url), 400, /expired/); // no cookie at all
    expect(k.calls).toEqual([]);
    // the refusals changed nothing: the browser that started the login completes it
    expect((await attacker.get(url)).status).toBe(303);
  });

  it("an expired state (older than RP_STATE_TTL_SECONDS) is refused; no token call", async () => {
    const k = kit();
    const b = new Browser(k);
    const start = await b.startLogin();
    const { code } = await mintFor(HONG.phone, { codeChallenge: start.challenge! });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 601_000);
    await expectFailurePage(await b.get(`/auth/callback?code=${code}&state=${start.state}`), 400, /expired/);
    expect(k.calls).toEqual([]);
  });

  it("an unsolicited callback (no state, unknown state, malformed state) is refused; no token call", async () => {
    const k = kit();
    const b = new Browser(k);
    await b.startLogin();
    const { code } = await mintFor(HONG.phone);
    for (const q of [`code=${code}`, `code=${code}&state=${randomToken(32)}`, `code=${code}&state=%3Cscript%3E`, ""]) {
      await expectFailurePage(await b.get(`/auth/callback?${q}`), 400, /expired|not valid/);
    }
    expect(k.calls).toEqual([]);
  });

  it("login_required (a sign-in that expired on the service) starts one fresh login by itself; a second one shows the page", async () => {
    const k = kit();
    const b = new Browser(k);
    const start = await b.startLogin("?return_to=%2Fcart");
    const q = new URLSearchParams({ error: "login_required", message: "expired", state: start.state });
    const first = await b.get(`/auth/callback?${q}`);
    expect(first.status).toBe(303);
    expect(first.headers.get("Location")).toBe("/auth/login?return_to=%2Fcart&restart=1");
    expect(k.calls).toEqual([]);
    // the fresh login has a new state; if the service answers login_required again, the kit stops
    const again = await b.startLogin("?return_to=%2Fcart&restart=1");
    expect(again.state).not.toBe(start.state);
    const q2 = new URLSearchParams({ error: "login_required", message: "expired", state: again.state });
    await expectFailurePage(await b.get(`/auth/callback?${q2}`), 400, /로그인을 마치지 못했습니다/);
    // an app that asked for no page (prompt=none) gets its answer, not a new interactive login
    const silent = await b.startLogin("?prompt=none");
    const q3 = new URLSearchParams({ error: "login_required", message: "no session", state: silent.state });
    expect((await b.get(`/auth/callback?${q3}`)).status).toBe(400);
  });

  it("an error callback (the user cancelled) shows a 400 page, consumes the state and makes no token call (spec §4.1)", async () => {
    const k = kit();
    const b = new Browser(k);
    const start = await b.startLogin();
    const q = new URLSearchParams({ error: "access_denied", message: "The user cancelled.", state: start.state });
    await expectFailurePage(
      await b.get(`/auth/callback?${q}`),
      400,
      /로그인을 취소해 앱에 아무 정보도 제공되지 않았습니다/,
    );
    expect(k.calls).toEqual([]);
    const { code } = await mintFor(HONG.phone, { codeChallenge: start.challenge! });
    await expectFailurePage(await b.get(`/auth/callback?code=${code}&state=${start.state}`), 400, /expired/);
    expect(k.calls).toEqual([]);
  });

  it("a repeated parameter is a 400 page", async () => {
    const k = kit();
    const b = new Browser(k);
    const start = await b.startLogin();
    await expectFailurePage(await b.get(`/auth/callback?code=a&code=b&state=${start.state}`), 400, /not valid/);
    expect(k.calls).toEqual([]);
  });
});

describe("GET /auth/callback: the service fails", () => {
  it("a refused code (the service's 500 Invalid authorization code) is a 502 page; the user is never read", async () => {
    const k = kit();
    const b = new Browser(k);
    const start = await b.startLogin();
    const url = `/auth/callback?code=${randomToken(32)}&state=${start.state}`;
    await expectFailurePage(await b.get(url), 502, /did not answer as expected/);
    expect(k.calls).toEqual(["POST /oauth2/token"]);
    // the state was spent by the exchange: the same callback again follows that outcome, no second token call
    await expectFailurePage(await b.get(url), 502, /did not answer as expected/);
    expect(k.calls).toEqual(["POST /oauth2/token"]);
  });

  it("a wrong client secret is a 502 page", async () => {
    const b = new Browser(kit({ RP_CLIENT_SECRET: "wrongSecret0123456789abcdef" }));
    const { res } = await b.login(HONG.phone);
    await expectFailurePage(res, 502, /did not answer as expected/);
  });

  it("a field that does not decrypt is a 502 page and no session", async () => {
    const corrupting: ProviderFetcher = {
      fetch: async (input, init) => {
        const req = new Request(input, init);
        const res = await exports.default.fetch(req);
        if (new URL(req.url).pathname !== "/v1/user/me") return res;
        const body = (await res.json()) as { user: Record<string, string> };
        body.user.name = "AAAAAAAAAAAAAAAAAAAAAA==";
        return Response.json(body);
      },
    };
    const k = kit({}, corrupting);
    const b = new Browser(k);
    const { res } = await b.login(HONG.phone);
    await expectFailurePage(res, 502, /did not answer as expected/);
    expect(k.calls).toEqual(EXCHANGE);
  });
});

describe("GET /auth/callback: sessions and automatic login", () => {
  it("rotates the session id at every login: the previous session ends (docs/architecture.md §4.6)", async () => {
    const k = kit();
    const b = new Browser(k);
    await b.login(HONG.phone);
    const first = b.jar.get("__Host-rp_session")!;
    await b.login(HONG.phone);
    const second = b.jar.get("__Host-rp_session")!;
    expect(second).not.toBe(first);
    expect((await b.get("/auth/me")).status).toBe(200);
    const old = new Browser(k);
    old.jar.set("__Host-rp_session", first);
    expect((await old.get("/auth/me")).status).toBe(401);
    expect(await k.env.RP_KV.get(`session:${await sha256(first)}`)).toBeNull();
  });

  it("a mode-2 record (automatic login: plid only) takes the identity stored at the opt-in login (spec §2.1, reference behaviour)", async () => {
    const k = kit();
    const b = new Browser(k);
    const device = randomToken(32);
    const { subscriberId } = await mintFor(KIM.phone);
    await putAutoLoginGrant(env, {
      device: deviceOfSubscriber(subscriberId, device),
      clientId: DEMO.clientId,
      subscriberId,
      expiresAt: Date.now() + 86400_000,
    });
    // the opt-in login: full identity, Y/Y
    await b.login(KIM.phone, { mint: { autoLogin: { deviceHash: device, automatic: false }, optIn: true } });
    expect(await (await b.get("/auth/me")).json()).toMatchObject({
      name: "김영희",
      autoLoginYn: "Y",
      autoStatusCheck: "Y",
    });
    // later: an automatic login in a fresh browser; the service sends empty identity fields
    const later = new Browser(k);
    const { res, plid } = await later.login(KIM.phone, {
      mint: { autoLogin: { deviceHash: device, automatic: true } },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/");
    const me = (await (await later.get("/auth/me")).json()) as Record<string, string>;
    expect(me).toMatchObject({
      plid,
      name: "김영희",
      phoneNo: "01023456789",
      birthdate: "011201",
      gender: "F",
      telcoCd: "K",
      autoLoginYn: "Y",
      autoStatusCheck: "N",
    });
  });

  it("an automatic login in the reference's format (plid and the flags, no identity keys at all) takes the stored identity and leaves it as it was for every session of the plid", async () => {
    const p = new ScriptedProvider();
    const k = kit({}, p.fetcher);
    const plid = randomToken(16);
    const first = new Browser(k);
    expect((await loginAs(first, p, await fullRecord(plid, { autoLoginYn: "Y", autoStatusCheck: "Y" }))).status).toBe(
      303,
    );
    // docs/interface.md "Reference behaviour": later automatic logins carry only plid and Y/N
    const later = new Browser(k);
    const res = await loginAs(later, p, { plid, autoLoginYn: "Y", autoStatusCheck: "N" });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/");
    expect(await (await later.get("/auth/me")).json()).toMatchObject({
      ...PERSON,
      plid,
      autoLoginYn: "Y",
      autoStatusCheck: "N",
    });
    expect(await (await first.get("/auth/me")).json()).toMatchObject({ ...PERSON, plid, autoStatusCheck: "Y" });
    // with nothing stored, the same record asks for the identity once more
    const fresh = await loginAs(new Browser(k), p, { plid: randomToken(16), autoLoginYn: "Y", autoStatusCheck: "N" });
    expect(fresh.headers.get("Location")).toMatch(/^\/auth\/login\?.*prompt=login/);
  });

  it("an automatic login with no stored identity asks once more with prompt=login, then stores what it gets", async () => {
    const k = kit();
    const b = new Browser(k);
    const device = randomToken(32);
    await grantWithFirstReportTaken(LEE.phone, device);
    const first = await b.login(LEE.phone, {
      query: "?return_to=%2Fme",
      mint: { autoLogin: { deviceHash: device, automatic: true } },
    });
    expect(first.res.status).toBe(303);
    const again = new URL(first.res.headers.get("Location")!, ORIGIN);
    expect(again.pathname).toBe("/auth/login");
    expect(Object.fromEntries(again.searchParams)).toEqual({ return_to: "/me", prompt: "login" });
    expect(b.jar.has("__Host-rp_session")).toBe(false);
    // the forced interactive login under the grant gives the full identity (Y/N)
    const second = await b.login(LEE.phone, {
      query: again.search,
      mint: { autoLogin: { deviceHash: device, automatic: false } },
    });
    expect(second.res.headers.get("Location")).toBe("/me");
    expect(await (await b.get("/auth/me")).json()).toMatchObject({
      name: "이민수",
      autoLoginYn: "Y",
      autoStatusCheck: "N",
    });
  });

  it("a mode-2 record is never stored as the person's identity: a native app's automatic login with nothing stored keeps its empty values for its own session only, and a browser's automatic login after it still asks for the identity", async () => {
    const p = new ScriptedProvider();
    const k = kit({}, p.fetcher);
    const plid = randomToken(16);
    const pkce = await createPkce();
    const tr = await send(k, "/auth/token", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code: p.issue(emptyRecord(plid)), code_verifier: pkce.verifier }),
    });
    expect(tr.status).toBe(200);
    const app = { Authorization: `Bearer ${((await tr.json()) as { session_token: string }).session_token}` };
    expect(await (await send(k, "/auth/me", { headers: app })).json()).toMatchObject({ plid, name: "" });
    // the browser's automatic login: nothing of the person is stored, so it asks once more
    const b = new Browser(k);
    const res = await loginAs(b, p, emptyRecord(plid));
    const again = new URL(res.headers.get("Location")!, ORIGIN);
    expect(again.pathname).toBe("/auth/login");
    expect(again.searchParams.get("prompt")).toBe("login");
    // the interactive login returns the full record: every session of the plid shows the person now
    expect(
      (await loginAs(b, p, await fullRecord(plid, { autoLoginYn: "Y", autoStatusCheck: "N" }), undefined, again.search))
        .status,
    ).toBe(303);
    expect(await (await b.get("/auth/me")).json()).toMatchObject({ ...PERSON, plid });
    expect(await (await send(k, "/auth/me", { headers: app })).json()).toMatchObject({ ...PERSON, plid });
  });

  it("does not loop: after a forced login, a second empty record still makes a session (with empty items)", async () => {
    const k = kit();
    const b = new Browser(k);
    const device = randomToken(32);
    await grantWithFirstReportTaken(SMITH.phone, device);
    const kv = k.env.RP_KV;
    for (const key of (await kv.list({ prefix: "identity:" })).keys) await kv.delete(key.name);
    const { res, plid } = await b.login(SMITH.phone, {
      query: "?prompt=login",
      mint: { autoLogin: { deviceHash: device, automatic: true } },
    });
    expect(res.headers.get("Location")).toBe("/");
    expect(await (await b.get("/auth/me")).json()).toMatchObject({
      plid,
      name: "",
      autoLoginYn: "Y",
      autoStatusCheck: "N",
    });
  });
});
