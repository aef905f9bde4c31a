// How requests arrive (spec §1, docs/architecture.md §4.7): HTTPS only, HEAD never changing state,
// form bodies as apps' HTTP libraries send them (multipart, a parameter in both query and body),
// and the longest `state` an app may send.
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import { basic, call, DEMO, exchange, HONG, KIM, mintFor, SMITH, tokenFor, userMe } from "../support/helpers";
import { Browser, DEMO_CB } from "../support/signin";
import { send } from "../support/kit";

const HTTPS_REQUIRED = {
  error: "invalid_request",
  message: "HTTPS is required: send this request to the https:// address.",
};

async function expectHttpsRefused(res: Response): Promise<void> {
  expect(res.status).toBe(400);
  expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
  expect(await res.json()).toEqual(HTTPS_REQUIRED);
}

describe("HTTPS only (spec §1)", () => {
  it("the JSON APIs refuse plain http to a public host with 400 invalid_request, consuming nothing", async () => {
    const { code } = await mintFor(HONG.phone);
    await expectHttpsRefused(
      await call("http://login.example.com/oauth2/token", {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Authorization: basic(DEMO.clientId, DEMO.secret),
        },
        body: `grant_type=authorization_code&code=${code}`,
      }),
    );
    // the code was not spent: the same exchange over https succeeds
    const ok = await call("https://login.example.com/oauth2/token", {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Authorization: basic(DEMO.clientId, DEMO.secret),
      },
      body: `grant_type=authorization_code&code=${code}`,
    });
    expect(ok.status).toBe(200);
    const { access_token } = (await ok.json()) as { access_token: string };
    await expectHttpsRefused(
      await call("http://login.example.com/v1/user/me", { headers: { Authorization: `Bearer ${access_token}` } }),
    );
    // the token's one read was not spent either
    expect(
      (await call("https://login.example.com/v1/user/me", { headers: { Authorization: `Bearer ${access_token}` } }))
        .status,
    ).toBe(200);
    await expectHttpsRefused(
      await call("http://login.example.com/v1/user/disconnect", {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Authorization: basic(DEMO.clientId, DEMO.secret),
        },
        body: "plid=x",
      }),
    );
    await expectHttpsRefused(
      await call("http://login.example.com/admin/clients", { headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}` } }),
    );
    for (const [method, path] of [
      ["GET", "/auth/me"],
      ["POST", "/auth/token"],
      ["POST", "/auth/events"],
    ] as const) {
      await expectHttpsRefused(await send(null, `http://app.example.net${path}`, { method }));
    }
  });

  it("the pages answer plain http with 308 to the same https address, creating nothing", async () => {
    const q = `response_type=code&client_id=demo-client&redirect_uri=${encodeURIComponent(DEMO_CB)}&state=s`;
    for (const path of [
      `/oauth2/authorize?${q}`,
      "/account?lang=en",
      "/auth/login?return_to=%2F",
      "/auth/callback?code=c&state=s",
      "/",
    ]) {
      const res = await call(`http://login.example.com${path}`, { redirect: "manual" });
      expect(res.status, path).toBe(308);
      expect(res.headers.get("Location"), path).toBe(`https://login.example.com${path}`);
      expect(res.headers.get("Set-Cookie"), path).toBeNull();
    }
  });

  it("loopback hosts keep plain http only where DEV_MODE=true", async () => {
    for (const host of ["localhost:8787", "127.0.0.1:8787", "[::1]:8787"]) {
      expect((await call(`http://${host}/healthz`)).status).toBe(200);
      const b = new Browser({ vars: { DEV_MODE: "false" } });
      const refused = await b.fetch(`http://${host}/v1/user/me`, { headers: { Authorization: "Bearer x" } });
      await expectHttpsRefused(refused);
    }
  });
});

describe("HEAD never changes state", () => {
  it("HEAD /v1/user/me is 405 (Allow: GET) and does not spend the token's one read", async () => {
    const { token } = await tokenFor(KIM.phone);
    const head = await call("/v1/user/me", { method: "HEAD", headers: { Authorization: `Bearer ${token}` } });
    expect(head.status).toBe(405);
    expect(head.headers.get("Allow")).toBe("GET");
    expect((await userMe(token)).status).toBe(200);
  });

  it("HEAD on the pages that create something (authorize, /account, the kit's login and callback) is 405 and sets nothing", async () => {
    const q = `response_type=code&client_id=demo-client&redirect_uri=${encodeURIComponent(DEMO_CB)}&state=s`;
    for (const [path, allow] of [
      [`/oauth2/authorize?${q}`, "GET, POST"],
      ["/account", "GET, POST"],
      ["/auth/login", "GET"],
      ["/auth/callback?code=c&state=s", "GET"],
    ] as const) {
      const res = await call(path, { method: "HEAD" });
      expect(res.status, path).toBe(405);
      expect(res.headers.get("Allow"), path).toBe(allow);
      expect(res.headers.get("Set-Cookie"), path).toBeNull();
    }
    const states = await env.RP_KV.list({ prefix: "state:" });
    expect(states.keys).toEqual([]);
  });

  it("elsewhere HEAD is GET without a body", async () => {
    for (const path of ["/healthz", "/auth/me", "/dev/outbox"]) {
      const get = await call(path);
      const head = await call(path, { method: "HEAD" });
      expect(head.status, path).toBe(get.status);
      expect(await head.text(), path).toBe("");
      await get.body?.cancel();
    }
  });
});

describe("form bodies as HTTP libraries send them (token and disconnect)", () => {
  const auth = { Authorization: basic(DEMO.clientId, DEMO.secret) };

  it("multipart/form-data with text fields is read like a form (PHP cURL with an array body)", async () => {
    const { code } = await mintFor(SMITH.phone);
    const body = new FormData();
    body.set("grant_type", "authorization_code");
    body.set("code", code);
    const res = await call("/oauth2/token", { method: "POST", headers: auth, body });
    expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(res.status).toBe(200);
    const { plid } = await mintFor(SMITH.phone);
    const d = new FormData();
    d.set("plid", plid);
    const gone = await call("/v1/user/disconnect", { method: "POST", headers: auth, body: d });
    expect(gone.status).toBe(200);
    expect(((await gone.json()) as { code: string }).code).toBe("0000");
  });

  it("a file part is 400 invalid_request; a multipart body over the size cap is 413; a malformed one 400", async () => {
    const { code } = await mintFor(HONG.phone);
    const withFile = new FormData();
    withFile.set("grant_type", "authorization_code");
    withFile.set("code", new File(["x"], "code.txt", { type: "text/plain" }));
    const res = await call("/oauth2/token", { method: "POST", headers: auth, body: withFile });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request" });
    const big = new FormData();
    big.set("grant_type", "authorization_code");
    big.set("code", "a".repeat(70 * 1024));
    expect((await call("/oauth2/token", { method: "POST", headers: auth, body: big })).status).toBe(413);
    const broken = await call("/oauth2/token", {
      method: "POST",
      headers: { ...auth, "Content-Type": "multipart/form-data; boundary=zz" },
      body: "--zz\r\nnot a part",
    });
    expect(broken.status).toBe(400);
    // nothing was consumed: the code still exchanges
    expect((await exchange(code)).status).toBe(200);
  });

  it("the same parameter in query and body: equal values accepted, different ones 400 invalid_request", async () => {
    const { code } = await mintFor(KIM.phone);
    const differ = await call(`/oauth2/token?grant_type=authorization_code`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/x-www-form-urlencoded" },
      body: `grant_type=client_credentials&code=${code}`,
    });
    expect(differ.status).toBe(400);
    expect(await differ.json()).toEqual({
      error: "invalid_request",
      message: "The value of grant_type is not valid: the query and the body differ.",
    });
    const equal = await call(`/oauth2/token?grant_type=authorization_code&code=${code}`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/x-www-form-urlencoded" },
      body: `grant_type=authorization_code&code=${code}`,
    });
    expect(equal.status).toBe(200);
  });
});

describe("state (spec §4.1 sets no limit)", () => {
  it("8,192 characters of JSON come back byte for byte; 8,193 are refused; the Location fits the platform's URL limit", async () => {
    const json = JSON.stringify({ returnTo: "/cart?items=1,2,3", nonce: "n" });
    const longest = (json + "x".repeat(8192)).slice(0, 8192);
    expect(longest).toHaveLength(8192);
    const b = new Browser();
    const page = await b.authorize({ state: longest, prompt: "login" });
    expect(page.status).toBe(200);
    const p2 = await b.submit(page, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    const done = await b.submit(p2, { otp: HONG.code });
    const final = done.form?.step === "consent" ? await b.submit(done, { agree: "Y" }) : done;
    expect(final.status).toBe(302);
    const location = final.res.headers.get("Location")!;
    expect(location.length).toBeLessThan(16 * 1024);
    expect(new URL(location).searchParams.get("state")).toBe(longest);
    // within 8,192 characters, but 3 bytes each once percent-encoded: the redirect would not fit
    const wide = await new Browser().authorize({ state: "가".repeat(2000) });
    expect(wide.status).toBe(400);
    const tooLong = await new Browser().authorize({ state: longest + "x" });
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.html)).toMatchObject({
      error: "invalid_request",
      message: "The value of state is not valid.",
    });
  });
});
