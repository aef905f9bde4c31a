// OpenID Connect UserInfo (docs/oidc.md "UserInfo"), the OpenID Connect request parameters
// (`prompt` as a list, `max_age`, `login_hint`) and a browser app's exchange. Invariants:
// - UserInfo gives the claims the id_token of the same code gives, under the same `sub`, and only
//   for an OpenID Connect code's token, read as often as USERINFO_MAX_READS allows (exactly that
//   many winners of concurrent reads), counted apart from /v1/user/me's reads;
// - `prompt` is read as a list only for a client with OpenID Connect on; `max_age` never lets an
//   automatic login answer for a proof older than it;
// - no other client's answer changes (no new headers).
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import { describe, expect, it } from "vitest";
import { env } from "../../support/env";
import { call, exchange, FORM, form, HONG, KIM, LEE, userMe } from "../../support/helpers";
import { Browser, signInAll } from "../../support/signin";
import { SEED_CLIENTS } from "../../../workers/all-in-one/seed";
import { admin, createClient } from "../../support/admin";

const OIDC = SEED_CLIENTS.find((c) => c.clientId === "oidc-client")!;
const CB = "https://oidc.example/callback";
const ISSUER = env.PUBLIC_BASE_URL as string;

async function signedIn(who = HONG, params: Record<string, string> = {}, b = new Browser()) {
  const loc = await signInAll(b, who, { client_id: OIDC.clientId, redirect_uri: CB, scope: "openid", ...params });
  const res = await exchange(loc.searchParams.get("code")!, { clientId: OIDC.clientId, secret: OIDC.secret });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; id_token: string };
}

function userinfo(token: string | null, init: RequestInit = {}, b?: Browser): Promise<Response> {
  const headers = new Headers(init.headers);
  if (token !== null) headers.set("Authorization", `Bearer ${token}`);
  return b ? b.fetch("/oauth2/userinfo", { ...init, headers }) : call("/oauth2/userinfo", { ...init, headers });
}

async function idClaims(idToken: string) {
  const set = createLocalJWKSet((await (await call("/oauth2/jwks")).json()) as JSONWebKeySet);
  return (await jwtVerify(idToken, set, { issuer: ISSUER, audience: OIDC.clientId })).payload;
}

describe("/oauth2/userinfo", () => {
  it("gives the id_token's sub and identity claims as plain JSON, once by default, apart from /v1/user/me's read", async () => {
    const t = await signedIn();
    const res = await userinfo(t.access_token);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(res.headers.get("Cache-Control")).toMatch(/no-store/);
    const body = (await res.json()) as Record<string, unknown>;
    // the issue's forms: E.164, female/male, YYYY-MM-DD
    expect(body).toEqual({
      sub: body.sub,
      name: "홍길동",
      phone_number: "+821012345678",
      phone_number_verified: true,
      gender: "male",
      birthdate: "1990-03-15",
    });
    const claims = await idClaims(t.id_token);
    expect(body.sub).toBe(claims.sub);
    for (const k of ["name", "phone_number", "phone_number_verified", "gender", "birthdate"])
      expect(body[k]).toEqual(claims[k]);
    // USERINFO_MAX_READS defaults to 1: the second read is refused as RFC 6750 says
    const again = await userinfo(t.access_token);
    expect(again.status).toBe(401);
    expect(again.headers.get("WWW-Authenticate")).toBe('Bearer error="invalid_token"');
    expect(await again.json()).toMatchObject({ error: "invalid_token" });
    // /v1/user/me's one read was not spent
    const me = await userMe(t.access_token);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { user: { plid: string } }).user.plid).toBe(body.sub);
  });

  it("answers POST too (Core §5.3.1); refuses no token (a bare challenge), a malformed one, an unknown one", async () => {
    const t = await signedIn(LEE);
    const post = await userinfo(t.access_token, { method: "POST" });
    expect(post.status).toBe(200);
    expect(((await post.json()) as { sub: string }).sub).toBe((await idClaims(t.id_token)).sub);
    const none = await userinfo(null);
    expect(none.status).toBe(401);
    expect(none.headers.get("WWW-Authenticate")).toBe("Bearer");
    for (const token of ["x.y", "A".repeat(43)]) {
      const r = await userinfo(token);
      expect(r.status).toBe(401);
      expect(r.headers.get("WWW-Authenticate")).toBe('Bearer error="invalid_token"');
    }
  });

  it("reads nothing for a token of a request without openid, or of a client without OpenID Connect", async () => {
    const loc = await signInAll(new Browser(), HONG, { client_id: OIDC.clientId, redirect_uri: CB });
    const plain = (await (
      await exchange(loc.searchParams.get("code")!, { clientId: OIDC.clientId, secret: OIDC.secret })
    ).json()) as { access_token: string };
    expect((await userinfo(plain.access_token)).status).toBe(401);
    const demo = await signInAll(new Browser(), HONG, { scope: "openid", nonce: "n" });
    const demoToken = (await (await exchange(demo.searchParams.get("code")!)).json()) as { access_token: string };
    expect((await userinfo(demoToken.access_token)).status).toBe(401);
    // neither read was spent: their /v1/user/me reads still answer
    expect((await userMe(plain.access_token)).status).toBe(200);
    expect((await userMe(demoToken.access_token)).status).toBe(200);
  });

  it("USERINFO_MAX_READS readers win exactly that many of 12 concurrent reads", async () => {
    for (const max of [1, 3]) {
      const t = await signedIn(KIM);
      const b = new Browser({ vars: { USERINFO_MAX_READS: String(max) } });
      const statuses = await Promise.all(Array.from({ length: 12 }, () => userinfo(t.access_token, {}, b)));
      expect(statuses.filter((r) => r.status === 200)).toHaveLength(max);
      expect(statuses.filter((r) => r.status === 401)).toHaveLength(12 - max);
    }
  });

  it("an automatic login's token gives the sub alone, as its /v1/user/me record has no identity fields", async () => {
    const b = new Browser();
    await signedIn(KIM, {}, b);
    await signInAll(b, KIM, { client_id: OIDC.clientId, redirect_uri: CB, scope: "openid" }, { autoLogin: "Y" });
    const auto = await b.authorize({ client_id: OIDC.clientId, redirect_uri: CB, scope: "openid", nonce: "a" });
    expect(auto.status).toBe(302);
    const code = new URL(auto.res.headers.get("Location")!).searchParams.get("code")!;
    const t = (await (await exchange(code, { clientId: OIDC.clientId, secret: OIDC.secret })).json()) as {
      access_token: string;
    };
    const body = (await (await userinfo(t.access_token)).json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["sub"]);
  });

  it("a client whose OpenID Connect is turned off after the exchange reads nothing more", async () => {
    const c = await createClient({ oidc: true, redirect_uris: [CB], items: ["name"] });
    const loc = await signInAll(new Browser(), HONG, { client_id: c.client_id, redirect_uri: CB, scope: "openid" });
    const res = await exchange(loc.searchParams.get("code")!, { clientId: c.client_id, secret: c.client_secret });
    const t = (await res.json()) as { access_token: string };
    expect((await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { oidc: false } })).status).toBe(200);
    const b = new Browser({ vars: { CLIENT_CACHE_SECONDS: "0" } });
    expect((await userinfo(t.access_token, {}, b)).status).toBe(401);
  });

  it("a browser app may read it: any origin, never with cookies; the preflight allows the Authorization header", async () => {
    const pre = await call("/oauth2/userinfo", {
      method: "OPTIONS",
      headers: {
        Origin: "https://spa.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization",
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(pre.headers.get("Access-Control-Allow-Headers")).toMatch(/Authorization/i);
    expect(pre.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    const t = await signedIn(LEE);
    const res = await userinfo(t.access_token, { headers: { Origin: "https://spa.example" } });
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });

  it("discovery names it", async () => {
    const d = (await (await call("/.well-known/openid-configuration")).json()) as Record<string, unknown>;
    expect(d.userinfo_endpoint).toBe(`${ISSUER}/oauth2/userinfo`);
  });
});

describe("a browser app's exchange (client_secret_post from a registered redirect URI's origin)", () => {
  async function post(clientId: string, secret: string, code: string, origin: string): Promise<Response> {
    return call("/oauth2/token", {
      method: "POST",
      headers: { ...FORM, Origin: origin },
      body: form({ grant_type: "authorization_code", code, client_id: clientId, client_secret: secret }),
    });
  }

  it("may read the answer from that origin only; no other client's answer gains a header", async () => {
    const code = async (params: Record<string, string>) =>
      (await signInAll(new Browser(), HONG, params)).searchParams.get("code")!;
    const oidcParams = { client_id: OIDC.clientId, redirect_uri: CB, scope: "openid", nonce: "n" };
    const ok = await post(OIDC.clientId, OIDC.secret, await code(oidcParams), "https://oidc.example");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("Access-Control-Allow-Origin")).toBe("https://oidc.example");
    expect(ok.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    const foreign = await post(OIDC.clientId, OIDC.secret, await code(oidcParams), "https://evil.example");
    expect(foreign.status).toBe(200);
    expect(foreign.headers.get("Access-Control-Allow-Origin")).toBeNull();
    const demo = SEED_CLIENTS[0]!;
    const plain = await post(demo.clientId, demo.secret, await code({}), new URL(demo.redirectUris[0]!).origin);
    expect(plain.status).toBe(200);
    expect([...plain.headers.keys()].filter((h) => h.startsWith("access-control") || h === "vary")).toEqual([]);
  });
});

describe("OpenID Connect request parameters", () => {
  /** A browser holding an automatic-login grant of KIM for oidc-client. */
  async function withGrant(): Promise<Browser> {
    const b = new Browser();
    await signInAll(b, KIM, { client_id: OIDC.clientId, redirect_uri: CB, scope: "openid" }, { autoLogin: "Y" });
    const check = await b.authorize({ client_id: OIDC.clientId, redirect_uri: CB, scope: "openid" });
    expect(check.status).toBe(302); // the grant answers
    return b;
  }
  const req = (extra: Record<string, string>) => ({
    client_id: OIDC.clientId,
    redirect_uri: CB,
    scope: "openid",
    ...extra,
  });

  it("prompt is a space-separated list: login or consent shows the pages, none with unknown values answers at once, none with another value is refused", async () => {
    const b = await withGrant();
    for (const prompt of ["consent login", "login", "consent", "select_account foo"])
      expect((await b.authorize(req({ prompt }))).status, prompt).toBe(200);
    const auto = await b.authorize(req({ prompt: "none x-unknown" }));
    expect(auto.status).toBe(302);
    expect(new URL(auto.res.headers.get("Location")!).searchParams.get("code")).not.toBeNull();
    const both = await b.authorize(req({ prompt: "none login" }));
    expect(both.status).toBe(400);
    expect(JSON.parse(both.html)).toMatchObject({ error: "invalid_request" });
    // without a grant, prompt=none is login_required, and state echoed
    const fresh = await new Browser().authorize(req({ prompt: "none", state: "s-9" }));
    expect(fresh.status).toBe(302);
    const loc = new URL(fresh.res.headers.get("Location")!);
    expect(loc.searchParams.get("error")).toBe("login_required");
    expect(loc.searchParams.get("state")).toBe("s-9");
  });

  it("for every other client, prompt stays one value and an unknown one means the default (the reference's rule)", async () => {
    const b = new Browser();
    await signInAll(b, KIM, {}, { autoLogin: "Y" });
    // "consent login" is no value the reference knows: automatic login answers, as today
    const p = await b.authorize({ prompt: "consent login" });
    expect(p.status).toBe(302);
    // and "none login" is not refused
    expect((await b.authorize({ prompt: "none login" })).status).toBe(302);
  });

  it("max_age: an automatic login answers only while its proof is younger; 0 always asks, prompt=none then says login_required", async () => {
    const b = await withGrant();
    expect((await b.authorize(req({ max_age: "3600" }))).status).toBe(302);
    await new Promise((r) => setTimeout(r, 50));
    expect((await b.authorize(req({ max_age: "0" }))).status).toBe(200);
    const none = await b.authorize(req({ max_age: "0", prompt: "none" }));
    expect(new URL(none.res.headers.get("Location")!).searchParams.get("error")).toBe("login_required");
    for (const max_age of ["-1", "1.5", "abc", "1".repeat(12)]) {
      const bad = await b.authorize(req({ max_age }));
      expect(bad.status, max_age).toBe(400);
      expect(JSON.parse(bad.html)).toMatchObject({ error: "invalid_request" });
    }
  });

  it("login_hint is accepted and read by nobody: the first page is the same, and the number appears nowhere", async () => {
    const hinted = await new Browser().authorize(req({ login_hint: "01012345678", state: "s" }));
    const plain = await new Browser().authorize(req({ state: "s" }));
    expect(hinted.status).toBe(200);
    // (the page's own example number, 010-1234-5678, is on both)
    for (const digits of ["01012345678", "1012345678"]) expect(hinted.html).not.toContain(digits);
    // the same page but for the per-request values (the sealed transaction, the CSP nonces)
    const shape = (html: string) => html.replace(/name="(tx|csrf)" value="[^"]*"/g, "").replace(/nonce="[^"]*"/g, "");
    expect(shape(hinted.html)).toBe(shape(plain.html));
    // nor does the transaction carry it
    const tx = /name="tx" value="pg1\.([^".]+)/.exec(hinted.html)![1]!;
    const decoded = atob(tx.replace(/-/g, "+").replace(/_/g, "/"));
    expect(decoded).toContain("oidc-client");
    expect(decoded).not.toContain("1012345678");
  });
});
