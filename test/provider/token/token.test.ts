import { env } from "../../support/env";
import { describe, expect, it, vi, afterEach } from "vitest";
import { pkceS256, randomToken } from "../../../workers/core/crypto";
import tokenWorker from "../../../workers/provider/token/index";
import { DEMO, FORM, HONG, LIMITED, basic, call, exchange, form, mintFor, userMe } from "../../support/helpers";
import { asClient, createClient } from "../../support/admin";
import { auditEvents } from "../../support/audit";

type Body = Record<string, unknown>;

async function expectError(res: Response, status: number, error: string, message?: RegExp): Promise<Body> {
  expect(res.status).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
  expect(res.headers.get("Cache-Control")).toBe("no-store");
  const body = (await res.json()) as Body;
  expect(body.error).toBe(error);
  expect(typeof body.message).toBe("string");
  if (message) expect(body.message).toMatch(message);
  expect(Object.keys(body).sort()).toEqual(["error", "message"]);
  return body;
}

function post(body: string, headers: Record<string, string> = {}, query = ""): Promise<Response> {
  return call(`/oauth2/token${query}`, { method: "POST", headers: { ...FORM, ...headers }, body });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("POST /oauth2/token: success (spec §2.3, §4.2)", () => {
  it("exchanges a fresh code: lower-case bearer, numeric expires_in 600, no error key, no-store", async () => {
    const { code } = await mintFor(HONG.phone);
    const res = await exchange(code);
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const body = (await res.json()) as Body;
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "token_type"]);
    expect(body.token_type).toBe("bearer");
    expect(body.expires_in).toBe(600);
    expect(body.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("echoes the token request's own state, which need not equal the authorize state (reference behaviour)", async () => {
    const { code } = await mintFor(HONG.phone);
    const body = (await (await exchange(code, DEMO, { state: "different-é" })).json()) as Body;
    expect(body.state).toBe("different-é");
  });

  it("accepts client_id/client_secret in the form body with an empty Authorization header (spec §5 fallback)", async () => {
    const { code } = await mintFor(HONG.phone);
    const res = await post(
      form({ grant_type: "authorization_code", code, client_id: DEMO.clientId, client_secret: DEMO.secret }),
      {
        Authorization: "",
      },
    );
    expect(res.status).toBe(200);
  });

  it("accepts every parameter in the query string with an empty body (spec §4.2)", async () => {
    const { code } = await mintFor(HONG.phone);
    const q =
      "?" + form({ grant_type: "authorization_code", code, client_id: DEMO.clientId, client_secret: DEMO.secret });
    const res = await call(`/oauth2/token${q}`, { method: "POST" });
    expect(res.status).toBe(200);
  });

  it("accepts Basic with a body client_id equal to the Basic id, and ignores unknown parameters like redirect_uri", async () => {
    const { code } = await mintFor(HONG.phone);
    const res = await post(
      form({
        grant_type: "authorization_code",
        code,
        client_id: DEMO.clientId,
        redirect_uri: "https://elsewhere.example/",
        foo: "bar",
      }),
      { Authorization: basic(DEMO.clientId, DEMO.secret) },
    );
    expect(res.status).toBe(200);
  });

  it("form-url-decodes the Basic halves (RFC 6749 §2.3.1) and falls back to raw text when decoding fails", async () => {
    const { code } = await mintFor(HONG.phone);
    // "demo-client" form-url-encoded is itself; encode a character that needs it: "-" as %2D.
    const res = await post(form({ grant_type: "authorization_code", code }), {
      Authorization: "Basic " + btoa(`demo%2Dclient:${DEMO.secret}`),
    });
    expect(res.status).toBe(200);
  });

  it("treats the Basic scheme name case-insensitively", async () => {
    const { code } = await mintFor(HONG.phone);
    const res = await post(form({ grant_type: "authorization_code", code }), {
      Authorization: "bAsIc " + btoa(`${DEMO.clientId}:${DEMO.secret}`),
    });
    expect(res.status).toBe(200);
  });

  it("the token allows exactly one /v1/user/me read", async () => {
    const { code } = await mintFor(HONG.phone);
    const { access_token } = (await (await exchange(code)).json()) as { access_token: string };
    expect((await userMe(access_token)).status).toBe(200);
    await expectError(await userMe(access_token), 401, "authentication_failed");
  });
});

describe("POST /oauth2/token: codes (docs/architecture.md §4.3)", () => {
  it("a reused code is refused with the reference's invalid-code answer and its access token revoked (RFC 6749 §4.1.2)", async () => {
    const { code } = await mintFor(HONG.phone);
    const first = (await (await exchange(code)).json()) as { access_token: string };
    const body = await expectError(await exchange(code), 500, "server_error", /Invalid authorization code/);
    expect(body.message).toBe(`Invalid authorization code: ${code}`);
    await expectError(await userMe(first.access_token), 401, "authentication_failed");
  });

  it("a used code replayed by another registered client is refused and revokes nothing: the rightful token still reads (RFC 9700 §4.5)", async () => {
    const { code } = await mintFor(HONG.phone);
    const first = (await (await exchange(code)).json()) as { access_token: string };
    await expectError(await exchange(code, LIMITED), 500, "server_error", /Invalid authorization code/);
    expect((await userMe(first.access_token)).status).toBe(200);
  });

  it("a used PKCE code replayed without or with a wrong verifier revokes nothing; the rightful client's replay with its verifier does", async () => {
    const verifier = randomToken(32);
    const pkceCode = async () => (await mintFor(HONG.phone, { codeChallenge: await pkceS256(verifier) })).code;
    const redeem = async (code: string) =>
      ((await (await exchange(code, DEMO, { code_verifier: verifier })).json()) as { access_token: string })
        .access_token;
    const a = await pkceCode();
    const tokenA = await redeem(a);
    await expectError(await exchange(a), 500, "server_error", /Invalid authorization code/);
    await expectError(await exchange(a, DEMO, { code_verifier: randomToken(32) }), 500, "server_error");
    expect((await userMe(tokenA)).status).toBe(200);
    const b = await pkceCode();
    const tokenB = await redeem(b);
    await expectError(await exchange(b, DEMO, { code_verifier: verifier }), 500, "server_error");
    await expectError(await userMe(tokenB), 401, "authentication_failed");
  });

  it("an unknown code gets 500 server_error 'Invalid authorization code' by default (spec §4.2)", async () => {
    await expectError(await exchange(randomToken(32)), 500, "server_error", /^Invalid authorization code: /);
  });

  it("a malformed code is refused without being echoed", async () => {
    const body = await expectError(await exchange('<script>"x'), 500, "server_error", /Invalid authorization code/);
    expect(body.message).not.toContain("<script>");
  });

  it("a code expires 60 s after issue", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { code } = await mintFor(HONG.phone);
    vi.setSystemTime(Date.now() + 61_000);
    await expectError(await exchange(code), 500, "server_error", /Invalid authorization code/);
  });

  it("a code is still good 59 s after issue", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { code } = await mintFor(HONG.phone);
    vi.setSystemTime(Date.now() + 59_000);
    expect((await exchange(code)).status).toBe(200);
  });

  it("a code is bound to its client: another client's attempt fails and does not burn the code (docs/architecture.md §4.7)", async () => {
    const { code } = await mintFor(HONG.phone);
    await expectError(await exchange(code, LIMITED), 500, "server_error", /Invalid authorization code/);
    expect((await exchange(code)).status).toBe(200);
  });

  it("50 concurrent redemptions of one code give exactly one 200", async () => {
    const { code } = await mintFor(HONG.phone);
    const results = await Promise.all(Array.from({ length: 50 }, () => exchange(code)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 500)).toHaveLength(49);
  });

  it("with TOKEN_ERROR_STYLE=rfc6749 an invalid code is 400 invalid_grant", async () => {
    const { code } = await mintFor(HONG.phone);
    const rfcEnv = { ...env, TOKEN_ERROR_STYLE: "rfc6749" };
    const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
    const worker = tokenWorker;
    const req = (c: string, extra: Record<string, string> = {}) =>
      new Request("http://localhost/oauth2/token", {
        method: "POST",
        headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
        body: form({ grant_type: "authorization_code", code: c, ...extra }),
      });
    // rfc6749 also checks a sent redirect_uri against the authorize one, without burning the code
    await expectError(
      await worker.fetch!(req(code, { redirect_uri: "https://other.example/cb" }) as never, rfcEnv, ctx),
      400,
      "invalid_grant",
    );
    expect((await worker.fetch!(req(code, { redirect_uri: DEMO.redirectUris[0]! }) as never, rfcEnv, ctx)).status).toBe(
      200,
    );
    await expectError(
      await worker.fetch!(req(code) as never, rfcEnv, ctx),
      400,
      "invalid_grant",
      /^Invalid authorization code/,
    );
  });
});

describe("POST /oauth2/token: PKCE (RFC 7636, S256 only)", () => {
  const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

  it("a code issued with an S256 challenge requires the matching verifier", async () => {
    const { code } = await mintFor(HONG.phone, { codeChallenge: await pkceS256(verifier) });
    await expectError(await exchange(code), 500, "server_error", /Invalid authorization code/);
    await expectError(await exchange(code, DEMO, { code_verifier: "x".repeat(43) }), 500, "server_error");
    expect((await exchange(code, DEMO, { code_verifier: verifier })).status).toBe(200);
  });

  it("the RFC 7636 Appendix B example verifier hashes to its published challenge", async () => {
    expect(await pkceS256(verifier)).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  });

  it("a malformed verifier is invalid_request and does not burn the code", async () => {
    const { code } = await mintFor(HONG.phone, { codeChallenge: await pkceS256(verifier) });
    await expectError(await exchange(code, DEMO, { code_verifier: "short" }), 400, "invalid_request", /code_verifier/);
    expect((await exchange(code, DEMO, { code_verifier: verifier })).status).toBe(200);
  });

  it("a verifier sent for a code without a challenge is refused (downgrade protection)", async () => {
    const { code } = await mintFor(HONG.phone);
    await expectError(await exchange(code, DEMO, { code_verifier: verifier }), 500, "server_error");
    expect((await exchange(code)).status).toBe(200);
  });
});

describe("POST /oauth2/token: client authentication (spec §5, §7; docs/architecture.md §4.7)", () => {
  it("no credentials at all: 401 invalid_client 'A client id must be provided' with WWW-Authenticate: Basic", async () => {
    const { code } = await mintFor(HONG.phone);
    const res = await post(form({ grant_type: "authorization_code", code }));
    expect(res.headers.get("WWW-Authenticate")).toMatch(/^Basic/);
    await expectError(res, 401, "invalid_client", /client id must be provided/);
  });

  it("unknown client id and wrong secret give the same invalid_client answer", async () => {
    const { code } = await mintFor(HONG.phone);
    const a = await expectError(
      await post(form({ grant_type: "authorization_code", code }), { Authorization: basic("nobody", DEMO.secret) }),
      401,
      "invalid_client",
    );
    const b = await expectError(
      await post(form({ grant_type: "authorization_code", code }), { Authorization: basic(DEMO.clientId, "wrong") }),
      401,
      "invalid_client",
    );
    expect(a).toEqual(b);
    expect(a.message).toBe("Bad client credentials.");
    expect((await exchange(code)).status).toBe(200); // refused attempts did not burn the code
  });

  it("a parameter client_id that differs from the Basic one is invalid_client", async () => {
    const { code } = await mintFor(HONG.phone);
    await expectError(
      await post(form({ grant_type: "authorization_code", code, client_id: LIMITED.clientId }), {
        Authorization: basic(DEMO.clientId, DEMO.secret),
      }),
      401,
      "invalid_client",
    );
  });

  it("a client_id parameter without a secret is invalid_client", async () => {
    const { code } = await mintFor(HONG.phone);
    await expectError(
      await post(form({ grant_type: "authorization_code", code, client_id: DEMO.clientId })),
      401,
      "invalid_client",
      /Bad client/,
    );
  });

  it.each([
    ["bad Base64", "Basic %%%"],
    ["no colon", "Basic " + btoa("demo-client")],
    ["empty credentials", "Basic "],
    ["invalid UTF-8", "Basic " + btoa("\xff\xfe:\xff")],
  ])("malformed Basic (%s) is 401 invalid_client, never 500", async (_name, header) => {
    await expectError(
      await post(form({ grant_type: "authorization_code", code: "x" }), { Authorization: header }),
      401,
      "invalid_client",
    );
  });

  it("Basic with an empty id is 'A client id must be provided'", async () => {
    await expectError(
      await post(form({ grant_type: "authorization_code", code: "x" }), { Authorization: basic("", "s") }),
      401,
      "invalid_client",
      /must be provided/,
    );
  });
});

describe("POST /oauth2/token: request validation (spec §7; docs/architecture.md §4.7)", () => {
  const auth = { Authorization: basic(DEMO.clientId, DEMO.secret) };

  it("missing grant_type: invalid_request naming the item", async () => {
    await expectError(
      await post(form({ code: "x" }), auth),
      400,
      "invalid_request",
      /A required item grant_type is missing/,
    );
  });

  it("grant_type other than authorization_code: invalid_request", async () => {
    await expectError(
      await post(form({ grant_type: "client_credentials", code: "x" }), auth),
      400,
      "invalid_request",
      /grant_type is not valid/,
    );
  });

  it("missing code (or empty): invalid_request naming code", async () => {
    await expectError(
      await post(form({ grant_type: "authorization_code" }), auth),
      400,
      "invalid_request",
      /code is missing/,
    );
    await expectError(
      await post(form({ grant_type: "authorization_code", code: "" }), auth),
      400,
      "invalid_request",
      /code is missing/,
    );
  });

  it("a parameter twice in the body, or in query and body with different values, is invalid_request; equal values in both are accepted", async () => {
    await expectError(await post("grant_type=authorization_code&code=a&code=b", auth), 400, "invalid_request", /code/);
    await expectError(
      await post("grant_type=authorization_code&code=a", auth, "?code=b"),
      400,
      "invalid_request",
      /^The value of code is not valid: the query and the body differ.$/,
    );
    const { code } = await mintFor(HONG.phone);
    const res = await post(
      `grant_type=authorization_code&code=${code}`,
      auth,
      `?code=${code}&grant_type=authorization_code`,
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { access_token: string }).access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("a JSON body is invalid_request (form bodies only)", async () => {
    const res = await call("/oauth2/token", {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ grant_type: "authorization_code", code: "x" }),
    });
    await expectError(res, 400, "invalid_request", /Content-Type/);
  });

  it("a form body with a charset parameter is accepted", async () => {
    const { code } = await mintFor(HONG.phone);
    const res = await call("/oauth2/token", {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/x-www-form-urlencoded; charset=UTF-8" },
      body: form({ grant_type: "authorization_code", code }),
    });
    expect(res.status).toBe(200);
  });

  it("a body over 64 KiB is 413 invalid_request", async () => {
    await expectError(await post("code=" + "a".repeat(70 * 1024), auth), 413, "invalid_request", /too large/);
  });

  it("GET is 405 method_not_allowed with Allow: POST", async () => {
    const res = await call("/oauth2/token");
    expect(res.headers.get("Allow")).toBe("POST");
    await expectError(res, 405, "method_not_allowed");
  });
});

describe("POST /oauth2/token: audit", () => {
  it("every redemption is audited (code.redeemed counted per client and flush, code.refused one by one with its reason), batched by the store into R2", async () => {
    // a client of its own: the events of earlier tests never match
    const c = await createClient({ auto_login: false });
    const client = { clientId: c.client_id, secret: c.client_secret };
    const { code } = await mintFor(HONG.phone, { client: asClient(c) });
    expect((await exchange(code, client)).status).toBe(200);
    expect((await exchange(code, client)).status).toBe(500);
    const rows = (await auditEvents({ type: "code.", clientId: c.client_id }))
      .map(({ type, outcome, detail }) => ({ type, outcome, detail }))
      .sort((a, b) => (a.type < b.type ? -1 : 1));
    expect(rows).toEqual([
      { type: "code.redeemed", outcome: "ok", detail: expect.stringMatching(/^\{"count":1,"until":\d+\}$/) },
      { type: "code.refused", outcome: "refused", detail: JSON.stringify({ reason: "reused" }) },
    ]);
    expect(JSON.stringify(rows)).not.toContain(code);
  });
});
