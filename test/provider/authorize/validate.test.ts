// Authorization-request validation before any page (spec §4.1, §7; docs/architecture.md §4.4, §4.7).
import { env } from "../../support/env";
import { describe, expect, it } from "vitest";
import { call, DEMO, FORM, form, HONG } from "../../support/helpers";
import { Browser, signInAll } from "../../support/signin";
import { forgetClient } from "../../../workers/provider/store/clients";

const VALID = {
  response_type: "code",
  client_id: DEMO.clientId,
  redirect_uri: "https://demo.example/callback",
  state: "st-123",
};

function authorize(params: Record<string, string>, init?: RequestInit): Promise<Response> {
  return call("/oauth2/authorize?" + form(params), init);
}

async function expectJsonError(res: Response, status: number, error: string, message: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("Location")).toBeNull();
  expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
  expect(await res.json()).toEqual({ error, message });
}

function without(name: keyof typeof VALID): Record<string, string> {
  const p: Record<string, string> = { ...VALID };
  delete p[name];
  return p;
}

describe("GET /oauth2/authorize: checks before the sign-in page", () => {
  it("a valid request answers the sign-in page (200 HTML), not an error", async () => {
    const res = await authorize(VALID);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(res.headers.get("Cache-Control")).toMatch(/no-store/);
  });

  it("missing client_id: 400 invalid_client 'A client id must be provided.'", async () => {
    await expectJsonError(
      await authorize(without("client_id")),
      400,
      "invalid_client",
      "A client id must be provided.",
    );
  });

  it("unknown client_id: 400 invalid_client 'Bad client credentials.'", async () => {
    await expectJsonError(
      await authorize({ ...VALID, client_id: "nobody" }),
      400,
      "invalid_client",
      "Bad client credentials.",
    );
  });

  it("a disabled client is refused like an unknown one", async () => {
    await env.DB.prepare("UPDATE clients SET status = 'disabled' WHERE client_id = ?").bind(DEMO.clientId).run();
    forgetClient(DEMO.clientId);
    try {
      await expectJsonError(await authorize(VALID), 400, "invalid_client", "Bad client credentials.");
    } finally {
      await env.DB.prepare("UPDATE clients SET status = 'active' WHERE client_id = ?").bind(DEMO.clientId).run();
      forgetClient(DEMO.clientId);
    }
  });

  it("missing redirect_uri: 400 invalid_request naming it", async () => {
    await expectJsonError(
      await authorize(without("redirect_uri")),
      400,
      "invalid_request",
      "A required item redirect_uri is missing.",
    );
  });

  it("in DEV_MODE a loopback http redirect_uri matches a registered loopback one on any port (RFC 8252 §7.3), and the sign-in returns to that port", async () => {
    const given = "http://localhost:8797/auth/callback";
    const b = new Browser();
    const loc = await signInAll(b, HONG, { redirect_uri: given, prompt: "login" });
    expect(`${loc.origin}${loc.pathname}`).toBe(given);
    expect(loc.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await new Browser().authorize({ redirect_uri: "http://127.0.0.1:1234/auth/callback" })).status).toBe(200);
    // another path, https, or another host still do not match
    for (const uri of [
      "http://localhost:8797/auth/other",
      "https://localhost:8797/auth/callback",
      "http://localhost.evil.example:8797/auth/callback",
    ]) {
      expect((await new Browser().authorize({ redirect_uri: uri })).status, uri).toBe(400);
    }
    // without DEV_MODE only the registered string matches
    const prod = new Browser({ vars: { DEV_MODE: "false" } });
    const res = await prod.fetch(
      `https://login.example.com/oauth2/authorize?${form({ response_type: "code", client_id: "demo-client", redirect_uri: given, state: "s" })}`,
    );
    expect(res.status).toBe(400);
  });

  it("an unregistered redirect_uri: 400 invalid_grant naming it, and never a redirect", async () => {
    const res = await authorize({ ...VALID, redirect_uri: "https://evil.example/cb" });
    await expectJsonError(
      res,
      400,
      "invalid_grant",
      "The redirect address https://evil.example/cb matches none of the registered values.",
    );
  });

  it.each([
    ["a prefix of a registered one", "https://demo.example/callback/extra"],
    ["a different scheme", "http://demo.example/callback"],
    ["with a query added", "https://demo.example/callback?x=1"],
    ["with a fragment", "https://demo.example/callback#x"],
    ["letter case changed", "https://DEMO.example/callback"],
  ])("redirect_uri is exact string equality: %s is refused", async (_n, uri) => {
    const res = await authorize({ ...VALID, redirect_uri: uri });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("redirect_uri is compared decoded: raw, encoded and doubly encoded forms match (reference behaviour)", async () => {
    const raw =
      "/oauth2/authorize?response_type=code&client_id=demo-client&state=s&redirect_uri=https://demo.example/callback";
    expect((await call(raw)).status).toBe(200);
    const enc = `/oauth2/authorize?response_type=code&client_id=demo-client&state=s&redirect_uri=${encodeURIComponent("https://demo.example/callback")}`;
    expect((await call(enc)).status).toBe(200);
    const twice = `/oauth2/authorize?response_type=code&client_id=demo-client&state=s&redirect_uri=${encodeURIComponent(encodeURIComponent("https://demo.example/callback"))}`;
    expect((await call(twice)).status).toBe(200);
  });

  it("a custom-scheme redirect registered by the app is accepted", async () => {
    expect((await authorize({ ...VALID, redirect_uri: "demoapp://callback" })).status).toBe(200);
  });

  it("missing response_type: invalid_request; other than code: invalid_request", async () => {
    await expectJsonError(
      await authorize(without("response_type")),
      400,
      "invalid_request",
      "A required item response_type is missing.",
    );
    await expectJsonError(
      await authorize({ ...VALID, response_type: "token" }),
      400,
      "invalid_request",
      "The value of response_type is not valid.",
    );
  });

  it("missing or empty state: invalid_request", async () => {
    await expectJsonError(
      await authorize(without("state")),
      400,
      "invalid_request",
      "A required item state is missing.",
    );
    await expectJsonError(
      await authorize({ ...VALID, state: "" }),
      400,
      "invalid_request",
      "A required item state is missing.",
    );
  });

  it("client_id is checked before redirect_uri, and redirect_uri before the other parameters", async () => {
    const res = await authorize({ client_id: "nobody", redirect_uri: "https://evil.example/" });
    expect(((await res.json()) as { error: string }).error).toBe("invalid_client");
    const res2 = await authorize({ client_id: DEMO.clientId, redirect_uri: "https://evil.example/" });
    expect(((await res2.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("prompt=none (which may redirect) does not bypass the checks: an unregistered redirect_uri or a bad response_type is still the JSON error, never a redirect", async () => {
    await expectJsonError(
      await authorize({ ...VALID, prompt: "none", redirect_uri: "https://evil.example/cb" }),
      400,
      "invalid_grant",
      "The redirect address https://evil.example/cb matches none of the registered values.",
    );
    await expectJsonError(
      await authorize({ ...VALID, prompt: "none", response_type: "token" }),
      400,
      "invalid_request",
      "The value of response_type is not valid.",
    );
    await expectJsonError(
      await authorize({ ...without("state"), prompt: "none" }),
      400,
      "invalid_request",
      "A required item state is missing.",
    );
  });

  it("a duplicated parameter is invalid_request", async () => {
    const res = await call("/oauth2/authorize?" + form(VALID) + "&state=again");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("unknown prompt values are accepted, never rejected (reference behaviour)", async () => {
    for (const prompt of ["select_account", "N", "consent", "weird value"]) {
      expect((await authorize({ ...VALID, prompt })).status).toBe(200);
    }
  });

  it("PKCE: S256 accepted; plain and malformed challenges refused", async () => {
    const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    expect((await authorize({ ...VALID, code_challenge: challenge, code_challenge_method: "S256" })).status).toBe(200);
    await expectJsonError(
      await authorize({ ...VALID, code_challenge: challenge, code_challenge_method: "plain" }),
      400,
      "invalid_request",
      "The value of code_challenge_method is not valid.",
    );
    await expectJsonError(
      await authorize({ ...VALID, code_challenge: challenge }),
      400,
      "invalid_request",
      "The value of code_challenge_method is not valid.",
    );
    await expectJsonError(
      await authorize({ ...VALID, code_challenge: "short", code_challenge_method: "S256" }),
      400,
      "invalid_request",
      "The value of code_challenge is not valid.",
    );
  });
});

describe("POST /oauth2/authorize (reference behaviour: POST answered exactly like GET)", () => {
  it("parameters in the query with an empty body", async () => {
    const res = await call("/oauth2/authorize?" + form(VALID), { method: "POST" });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
  });

  it("parameters in a form body", async () => {
    const res = await call("/oauth2/authorize", { method: "POST", headers: FORM, body: form(VALID) });
    expect(res.status).toBe(200);
  });

  it("the same errors as GET", async () => {
    const res = await call("/oauth2/authorize", { method: "POST", headers: FORM, body: form(without("client_id")) });
    await expectJsonError(res, 400, "invalid_client", "A client id must be provided.");
  });

  it("PUT is 405 with Allow listing GET and POST", async () => {
    const res = await call("/oauth2/authorize?" + form(VALID), { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET, POST");
  });
});

describe("routing (spec §7)", () => {
  it.each(["/nothing-here", "/oauth2", "/v1/user", "/v1/user/me/", "/OAUTH2/TOKEN", "/%ZZ"])(
    "unknown path %s is 404 not_found",
    async (path) => {
      const res = await call(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: "not_found", message: "The requested API address is invalid." });
    },
  );

  it("GET /healthz answers 200", async () => {
    expect((await call("/healthz")).status).toBe(200);
  });

  it("echoes a well-formed X-Request-Id, and sends none for a malformed one (never reflects it)", async () => {
    const a = await call("/healthz", { headers: { "X-Request-Id": "abc-123" } });
    expect(a.headers.get("X-Request-Id")).toBe("abc-123");
    const b = await call("/healthz", { headers: { "X-Request-Id": "bad id <>" } });
    expect(b.headers.get("X-Request-Id")).toBeNull();
  });
});
