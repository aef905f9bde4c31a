// The kit's configuration (docs/rp-kit.md "Configuration"): parsed once, failing loudly naming the
// variable; /auth/login needs no secret (least privilege).
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../workers/core/config";
import { IDENTITY_ITEMS } from "../../workers/core/spec";
import { rpClientConfig, rpConfig, rpSealKey, type RpEnv } from "../../packages/kit/src/config";
import { kitContext } from "../../packages/kit/src/context";
import { randomToken } from "../../workers/core/crypto";
import { HONG, mintFor } from "../support/helpers";
import { Browser, kit, send } from "../support/kit";

const BASE_VARS = {
  PROVIDER_BASE_URL: "https://login.example/",
  RP_CLIENT_ID: "app",
  RP_REDIRECT_URI: "https://app.example/auth/callback",
};

function configError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).variable;
  }
  throw new Error("no ConfigError");
}

describe("rpConfig", () => {
  it("has the documented defaults; the public origin defaults to the redirect URI's", () => {
    expect(rpConfig({ ...BASE_VARS })).toEqual({
      providerBaseUrl: "https://login.example",
      clientId: "app",
      redirectUri: "https://app.example/auth/callback",
      publicOrigin: "https://app.example",
      stateTtlSeconds: 600,
      sessionTtlSeconds: 3600,
      identityTtlSeconds: 30 * 86400,
      pkce: true,
      clientAuth: "basic",
      tokenRateLimit: 20,
      tokenRateWindowSeconds: 60,
      providerTimeoutMs: 10_000,
      reloginPrompt: "login",
      tokenPkce: "required",
      basePath: "/auth",
      items: IDENTITY_ITEMS,
      events: true,
      signals: false,
    });
  });

  it("takes a base path, the items to keep and the events switch, naming a malformed one", () => {
    const cfg = rpConfig({
      ...BASE_VARS,
      RP_BASE_PATH: "/login/phone",
      RP_REDIRECT_URI: "https://app.example/login/phone/callback",
      RP_ITEMS: "name, ci,phoneNo",
      RP_EVENTS: "false",
    });
    expect([cfg.basePath, cfg.items, cfg.events]).toEqual(["/login/phone", ["ci", "phoneNo", "name"], false]);
    expect(configError(() => rpConfig({ ...BASE_VARS, RP_BASE_PATH: "/auth/" }))).toBe("RP_BASE_PATH");
    expect(configError(() => rpConfig({ ...BASE_VARS, RP_ITEMS: "name,email" }))).toBe("RP_ITEMS");
    // the callback must be where the kit answers, when it is on the app's origin
    expect(configError(() => rpConfig({ ...BASE_VARS, RP_BASE_PATH: "/login" }))).toBe("RP_REDIRECT_URI");
  });

  it("names the variable that is missing or malformed", () => {
    expect(configError(() => rpConfig({ ...BASE_VARS, PROVIDER_BASE_URL: undefined }))).toBe("PROVIDER_BASE_URL");
    expect(configError(() => rpConfig({ ...BASE_VARS, PROVIDER_BASE_URL: "http://login.example" }))).toBe(
      "PROVIDER_BASE_URL",
    ); // https only
    expect(configError(() => rpConfig({ ...BASE_VARS, PROVIDER_BASE_URL: "https://login.example/?x=1" }))).toBe(
      "PROVIDER_BASE_URL",
    );
    expect(configError(() => rpConfig({ ...BASE_VARS, RP_REDIRECT_URI: "/auth/callback" }))).toBe("RP_REDIRECT_URI");
    expect(configError(() => rpConfig({ ...BASE_VARS, RP_PUBLIC_ORIGIN: "https://app.example/path" }))).toBe(
      "RP_PUBLIC_ORIGIN",
    );
    expect(configError(() => rpConfig({ ...BASE_VARS, RP_CLIENT_ID: undefined }))).toBe("RP_CLIENT_ID");
    expect(configError(() => rpConfig({ ...BASE_VARS, RP_STATE_TTL_SECONDS: "30" }))).toBe("RP_STATE_TTL_SECONDS"); // KV's minimum is 60
    expect(
      configError(() => rpConfig({ ...BASE_VARS, RP_SESSION_TTL_SECONDS: "7200", RP_IDENTITY_TTL_SECONDS: "3600" })),
    ).toBe("RP_IDENTITY_TTL_SECONDS");
    expect(configError(() => rpConfig({ ...BASE_VARS, RP_CLIENT_AUTH: "post" }))).toBe("RP_CLIENT_AUTH");
    expect(configError(() => rpConfig({ ...BASE_VARS, RP_PKCE: "yes" }))).toBe("RP_PKCE");
    expect(rpConfig({ ...BASE_VARS, PROVIDER_BASE_URL: "http://localhost:8787" }).providerBaseUrl).toBe(
      "http://localhost:8787",
    ); // loopback may be http
  });

  it("checks the secrets only where they are used", () => {
    const env = { ...BASE_VARS, RP_KV: {} as KVNamespace } as RpEnv;
    expect(configError(() => rpClientConfig(env))).toBe("RP_CLIENT_SECRET");
    expect(configError(() => rpClientConfig({ ...env, RP_CLIENT_SECRET: "short" }))).toBe("RP_CLIENT_SECRET");
    expect(configError(() => rpSealKey({ ...env, RP_SEAL_KEY: "c2hvcnQ=" }))).toBe("RP_SEAL_KEY");
    expect(configError(() => rpSealKey(env))).toBe("RP_SEAL_KEY");
  });

  it("/auth/login works without the secrets; the callback without them answers the fixed 500", async () => {
    const k = kit({ RP_CLIENT_SECRET: undefined, RP_SEAL_KEY: undefined });
    const login = await send(k, "/auth/login");
    expect(login.status).toBe(302);
    const cb = await send(k, "/auth/callback?code=x&state=y", {
      headers: { Cookie: login.headers.get("Set-Cookie")!.split(";")[0]! },
    });
    // the unknown state is refused before any secret is needed
    expect(cb.status).toBe(400);
    // a good state and code: the exchange needs RP_CLIENT_SECRET, so the fixed 500 and no token call
    const b = new Browser(k);
    const start = await b.startLogin();
    const { code } = await mintFor(HONG.phone, { codeChallenge: start.challenge! });
    const failed = await b.get(`/auth/callback?code=${code}&state=${start.state}`);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: "server_error", message: "A temporary error occurred. Retry later." });
    expect(k.calls).toEqual([]);
    const id = randomToken(32);
    const loginAt = Date.now();
    await kitContext(k.env).store.createLoginSession({ plid: "p", kind: "token", loginAt }, 60, id, loginAt);
    const me = await send(k, "/auth/me", { headers: { Authorization: `Bearer ${id}` } });
    expect(me.status).toBe(500);
    expect(await me.json()).toEqual({ error: "server_error", message: "A temporary error occurred. Retry later." });
  });
});
