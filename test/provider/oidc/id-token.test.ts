// OpenID Connect on the same endpoints (docs/oidc.md): a client with it on whose request's scope holds
// `openid` gets an id_token beside today's token response, checked here by OpenID Connect Core's
// rules with `jose` (signature by the JWKS, iss, aud, exp, iat, nonce, sub, auth_time, amr) and its
// identity claims as /v1/user/me gives them; every other request's answer is unchanged; discovery.
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from "jose";
import { describe, expect, it } from "vitest";
import { env } from "../../support/env";
import { call, exchange, HONG, KIM, userMe } from "../../support/helpers";
import { Browser, signInAll } from "../../support/signin";
import { SEED_CLIENTS } from "../../../workers/all-in-one/seed";
import { SoftAuthenticator } from "../../support/authenticator";
import { pkceS256 } from "../../../workers/core/crypto";
import { makePasskey, newPerson, passkeySignIn, smsOnAccount } from "../../support/passkeys";

const OIDC = SEED_CLIENTS.find((c) => c.clientId === "oidc-client")!;
const CB = "https://oidc.example/callback";
const ISSUER = env.PUBLIC_BASE_URL as string;

async function jwks(): Promise<ReturnType<typeof createLocalJWKSet>> {
  return createLocalJWKSet((await (await call("/oauth2/jwks")).json()) as JSONWebKeySet);
}

/** A sign-in to oidc-client through the pages; its code. */
async function codeOf(who: typeof HONG, params: Record<string, string>, b = new Browser()): Promise<string> {
  const loc = await signInAll(b, who, { client_id: OIDC.clientId, redirect_uri: CB, ...params });
  return loc.searchParams.get("code")!;
}

async function tokens(code: string): Promise<Record<string, unknown>> {
  const res = await exchange(code, { clientId: OIDC.clientId, secret: OIDC.secret });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe("the id_token", () => {
  it("an openid request of a client with OpenID Connect on gets an ES256 id_token that OpenID Connect Core's checks accept", async () => {
    const before = Math.floor(Date.now() / 1000);
    const body = await tokens(await codeOf(HONG, { scope: "openid", nonce: "n-0S6_WzA2Mj" }));
    expect(Object.keys(body)).toEqual(["access_token", "token_type", "expires_in", "id_token"]);
    const idToken = body.id_token as string;
    expect(decodeProtectedHeader(idToken)).toMatchObject({ alg: "ES256", typ: "JWT" });
    const { payload } = await jwtVerify(idToken, await jwks(), {
      issuer: ISSUER,
      audience: OIDC.clientId,
      algorithms: ["ES256"],
    });
    expect(payload.nonce).toBe("n-0S6_WzA2Mj");
    expect(payload.exp! - payload.iat!).toBe(body.expires_in);
    expect(payload.auth_time).toBeGreaterThanOrEqual(before);
    expect(payload.auth_time).toBeLessThanOrEqual(payload.iat!);
    expect(payload.amr).toEqual(["sms"]);
    // sub is the app's plid: the one /v1/user/me gives
    const me = (await (await userMe(body.access_token as string)).json()) as { user: { plid: string } };
    expect(payload.sub).toBe(me.user.plid);
    // the agreed items, in OpenID Connect's names and forms (from the issue: E.164, female/male, YYYY-MM-DD)
    expect(payload).toMatchObject({
      name: "홍길동",
      phone_number: "+821012345678",
      phone_number_verified: true,
      gender: "male",
      birthdate: "1990-03-15",
    });
  });

  it("an automatic login's id_token keeps the time of the proof that made its grant, says amr auto, and has no identity claims", async () => {
    const b = new Browser();
    const first = await codeOf(KIM, { scope: "openid" }, b);
    await tokens(first);
    // the opt-in: a second interactive sign-in ticking the box
    const opted = await signInAll(
      b,
      KIM,
      { client_id: OIDC.clientId, redirect_uri: CB, scope: "openid" },
      { autoLogin: "Y" },
    );
    const proof = (await jwtVerify((await tokens(opted.searchParams.get("code")!)).id_token as string, await jwks()))
      .payload.auth_time!;
    const auto = await b.authorize({ client_id: OIDC.clientId, redirect_uri: CB, scope: "openid", nonce: "auto-1" });
    expect(auto.status).toBe(302);
    const code = new URL(auto.res.headers.get("Location")!).searchParams.get("code")!;
    const { payload } = await jwtVerify((await tokens(code)).id_token as string, await jwks(), {
      issuer: ISSUER,
      audience: OIDC.clientId,
    });
    expect(payload.amr).toEqual(["auto"]);
    expect(payload.nonce).toBe("auto-1");
    expect(Math.abs((payload.auth_time as number) - (proof as number))).toBeLessThanOrEqual(1);
    for (const claim of ["name", "phone_number", "gender", "birthdate"]) expect(payload).not.toHaveProperty(claim);
  });

  it("after a passkey sign-in, amr says user and hwk (a device-bound credential) and auth_time is the assertion's", async () => {
    const who = await newPerson();
    const b = new Browser({ vars: { PASSKEY_ACTIVATION_SECONDS: "0" } });
    const auth = new SoftAuthenticator();
    const { credential } = await makePasskey(b, await smsOnAccount(b, who), auth);
    const app = new Browser();
    const before = Math.floor(Date.now() / 1000);
    let p = await passkeySignIn(
      app,
      await app.authorize({ client_id: OIDC.clientId, redirect_uri: CB, scope: "openid", nonce: "pk" }),
      auth,
      credential,
    );
    if (p.form?.step === "consent") p = await app.submit(p, { agree: "Y" });
    expect(p.status).toBe(302);
    const body = await tokens(new URL(p.res.headers.get("Location")!).searchParams.get("code")!);
    const { payload } = await jwtVerify(body.id_token as string, await jwks(), {
      issuer: ISSUER,
      audience: OIDC.clientId,
    });
    expect(payload.amr).toEqual(["user", "hwk"]);
    expect(payload.auth_time).toBeGreaterThanOrEqual(before);
    expect(payload.nonce).toBe("pk");
  });

  it("without openid in the scope, or for a client without OpenID Connect, the answer is today's: no id_token", async () => {
    const plain = await tokens(await codeOf(HONG, {}));
    expect(Object.keys(plain)).toEqual(["access_token", "token_type", "expires_in"]);
    const other = await tokens(await codeOf(HONG, { scope: "profile email" }));
    expect(other).not.toHaveProperty("id_token");
    // demo-client has it off: an openid scope changes nothing
    const b = new Browser();
    const loc = await signInAll(b, HONG, { scope: "openid", nonce: "x" });
    const res = await exchange(loc.searchParams.get("code")!);
    expect(Object.keys((await res.json()) as object)).toEqual(["access_token", "token_type", "expires_in"]);
  });

  it("an openid request with a nonce or PKCE may go without state: the redirect carries none; with neither, state stays required", async () => {
    const loc = await signInAll(new Browser(), HONG, {
      client_id: OIDC.clientId,
      redirect_uri: CB,
      scope: "openid",
      nonce: "no-state",
      state: "",
    });
    expect([...loc.searchParams.keys()]).toEqual(["code"]);
    const { payload } = await jwtVerify((await tokens(loc.searchParams.get("code")!)).id_token as string, await jwks());
    expect(payload.nonce).toBe("no-state");
    const verifier = "v".repeat(43);
    const challenge = await pkceS256(verifier);
    const pkce = await signInAll(new Browser(), HONG, {
      client_id: OIDC.clientId,
      redirect_uri: CB,
      scope: "openid",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "",
    });
    expect([...pkce.searchParams.keys()]).toEqual(["code"]);
    const res = await exchange(
      pkce.searchParams.get("code")!,
      { clientId: OIDC.clientId, secret: OIDC.secret },
      {
        code_verifier: verifier,
      },
    );
    expect(((await res.json()) as { id_token?: string }).id_token).toBeDefined();
    // neither: the reference's rule; nor may any other request go without it
    for (const params of <Record<string, string>[]>[
      { client_id: OIDC.clientId, redirect_uri: CB, scope: "openid", state: "" },
      { scope: "openid", nonce: "n", state: "" },
    ]) {
      const p = await new Browser().authorize(params);
      expect(p.status).toBe(400);
      expect(JSON.parse(p.html)).toMatchObject({ error: "invalid_request" });
    }
  });

  it("a nonce out of shape is refused before any page", async () => {
    for (const nonce of ["x".repeat(513), "a\nb"]) {
      const p = await new Browser().authorize({ client_id: OIDC.clientId, redirect_uri: CB, scope: "openid", nonce });
      expect(p.status).toBe(400);
      expect(JSON.parse(p.html)).toMatchObject({ error: "invalid_request" });
    }
  });
});

describe("discovery", () => {
  it("names the issuer, the endpoints and what the service supports; its jwks_uri serves the keys", async () => {
    const res = await call("/.well-known/openid-configuration");
    expect(res.status).toBe(200);
    const d = (await res.json()) as Record<string, unknown>;
    expect(d).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/oauth2/authorize`,
      token_endpoint: `${ISSUER}/oauth2/token`,
      jwks_uri: `${ISSUER}/oauth2/jwks`,
      response_types_supported: ["code"],
      subject_types_supported: ["pairwise"],
      id_token_signing_alg_values_supported: ["ES256"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      code_challenge_methods_supported: ["S256"],
    });
    expect(new URL(d.jwks_uri as string).pathname).toBe("/oauth2/jwks");
  });
});
