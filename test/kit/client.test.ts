// The kit's client module (workers/kit/client.ts) against our provider and against crafted
// answers a spec-following service may give (spec §2.1-§2.4, §4, §5).
import { exports } from "cloudflare:workers";
import { deviceOfSubscriber } from "../support/shards";
import { afterEach, describe, expect, it } from "vitest";
import { encryptField } from "../../workers/core/crypto";
import {
  authorizationUrl,
  basicAuthorization,
  createPkce,
  decryptUser,
  disconnectUser,
  exchangeCode,
  readUser,
  RpClientError,
  type ProviderFetcher,
  type RpClientConfig,
} from "../../packages/kit/src/client";
import { bodyText, DEMO, HONG, KIM, mintFor } from "../support/helpers";
import { env } from "../support/env";
import { denyOutbound } from "../support/kit";

const SECRET = DEMO.secret;
const captured: Request[] = [];

/** Our provider, in process; every request is kept for inspection. */
const ours: ProviderFetcher = {
  fetch: async (input, init) => {
    const req = new Request(input, init);
    captured.push(req.clone());
    return exports.default.fetch(req);
  },
};

function config(over: Partial<RpClientConfig> = {}): RpClientConfig {
  return {
    baseUrl: "http://localhost:8787",
    clientId: DEMO.clientId,
    clientSecret: SECRET,
    redirectUri: "http://localhost:8787/auth/callback",
    fetcher: ours,
    ...over,
  };
}

/** A service that answers every call with this status and body. */
function answering(status: number, body: unknown): ProviderFetcher {
  return {
    fetch: async () =>
      new Response(typeof body === "string" ? body : JSON.stringify(body), {
        status,
        headers: { "Content-Type": "application/json" },
      }),
  };
}

async function failure(p: Promise<unknown>): Promise<RpClientError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RpClientError);
  return err as RpClientError;
}

afterEach(() => {
  captured.length = 0;
});

describe("authorizationUrl (spec §4.1)", () => {
  it("carries response_type=code, client_id, redirect_uri and state, plus PKCE S256, prompt and isHybrid=Y when asked", () => {
    const url = new URL(
      authorizationUrl(config({ baseUrl: "https://login.example/" }), {
        state: "s t",
        codeChallenge: "abc",
        prompt: "select_account",
        isHybrid: true,
      }),
    );
    expect(url.origin + url.pathname).toBe("https://login.example/oauth2/authorize");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: "code",
      client_id: DEMO.clientId,
      redirect_uri: "http://localhost:8787/auth/callback",
      state: "s t",
      code_challenge: "abc",
      code_challenge_method: "S256",
      prompt: "select_account",
      isHybrid: "Y",
    });
  });

  it("sends neither prompt nor isHybrid nor a challenge unless asked", () => {
    const url = new URL(authorizationUrl(config(), { state: "x" }));
    expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "redirect_uri", "response_type", "state"]);
  });
});

describe("exchangeCode (spec §4.2, §2.3, §5)", () => {
  it("form-url-encodes the Basic halves before Base64 (RFC 6749 §2.3.1)", () => {
    expect(basicAuthorization("a b:c", "p%&+é")).toBe("Basic " + btoa("a+b%3Ac:p%25%26%2B%C3%A9"));
    expect(basicAuthorization("demo-client", "s3cret")).toBe("Basic " + btoa("demo-client:s3cret"));
  });

  it("exchanges a code with Basic authentication at our provider", async () => {
    const { code } = await mintFor(HONG.phone);
    const set = await exchangeCode(config(), code);
    expect(set).toMatchObject({ tokenType: "bearer", expiresIn: 600 });
    expect(set.accessToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const sent = captured[0]!;
    expect(sent.headers.get("Authorization")).toBe(basicAuthorization(DEMO.clientId, SECRET));
    expect(sent.headers.get("Content-Type")).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(await bodyText(sent)))).toEqual({
      grant_type: "authorization_code",
      code,
    });
  });

  it("uses the parameter fallback when configured: no Authorization header, client_id and client_secret in the form", async () => {
    const { code } = await mintFor(HONG.phone);
    const set = await exchangeCode(config({ clientAuth: "params" }), code);
    expect(set.accessToken).toBeTruthy();
    const sent = captured[0]!;
    expect(sent.headers.get("Authorization")).toBeNull();
    const form = new URLSearchParams(await bodyText(sent));
    expect(form.get("client_id")).toBe(DEMO.clientId);
    expect(form.get("client_secret")).toBe(SECRET);
  });

  it("sends the PKCE verifier", async () => {
    const pkce = await createPkce();
    expect(pkce.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const { code } = await mintFor(KIM.phone, { codeChallenge: pkce.challenge });
    const set = await exchangeCode(config(), code, { codeVerifier: pkce.verifier });
    expect(set.accessToken).toBeTruthy();
    expect(new URLSearchParams(await bodyText(captured[0]!)).get("code_verifier")).toBe(pkce.verifier);
  });

  it("accepts expires_in as a JSON string and token_type in any case (spec §2.3)", async () => {
    for (const tokenType of ["bearer", "Bearer", "BEARER"]) {
      const set = await exchangeCode(
        config({ fetcher: answering(200, { access_token: "T0k3n+/=", token_type: tokenType, expires_in: "600" }) }),
        "c",
      );
      expect(set).toEqual({ accessToken: "T0k3n+/=", tokenType: "bearer", expiresIn: 600 });
    }
    const state = await exchangeCode(
      config({ fetcher: answering(200, { access_token: "t", token_type: "bearer", expires_in: 60, state: "st" }) }),
      "c",
    );
    expect(state.state).toBe("st");
  });

  it("refuses a 200 with an error key, a missing token, another token type or a bad expires_in (envelope)", async () => {
    for (const body of [
      { access_token: "t", token_type: "bearer", expires_in: 600, error: "invalid_grant" },
      { token_type: "bearer", expires_in: 600 },
      { access_token: "t", token_type: "mac", expires_in: 600 },
      { access_token: "t", token_type: "bearer", expires_in: "ten" },
      { access_token: "t", token_type: "bearer", expires_in: -1 },
      "not json",
    ]) {
      const err = await failure(exchangeCode(config({ fetcher: answering(200, body) }), "c"));
      expect(err.kind).toBe("envelope");
      expect(err.endpoint).toBe("token");
    }
  });

  it("gives up on an answer over 64 KiB, streamed without a length or declared too long, and cancels the stream", async () => {
    let pulled = 0;
    let cancelled = false;
    const chunk = new TextEncoder().encode(`{"access_token":"${"a".repeat(16 * 1024)}`);
    const streaming: ProviderFetcher = {
      fetch: async () =>
        new Response(
          new ReadableStream<Uint8Array>({
            pull(c) {
              pulled += 1;
              if (pulled > 100)
                c.close(); // 1.6 MiB at the most, should it never be cancelled
              else c.enqueue(chunk);
            },
            cancel() {
              cancelled = true;
            },
          }),
          { status: 200 },
        ),
    };
    const err = await failure(exchangeCode(config({ fetcher: streaming }), "c"));
    expect(err).toMatchObject({
      kind: "envelope",
      endpoint: "token",
      message: "token endpoint: unreadable or oversized body",
    });
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(10);

    const declared: ProviderFetcher = {
      fetch: async () => new Response("{}", { status: 502, headers: { "Content-Length": String(65 * 1024) } }),
    };
    expect(await failure(readUser(config({ fetcher: declared }), "t"))).toMatchObject({
      kind: "status",
      status: 502,
      endpoint: "user",
    });
  });

  it("reports the reference's invalid-code answer (500 server_error) as a status error flagged invalidCode (spec §4.2)", async () => {
    const { code } = await mintFor(HONG.phone);
    await exchangeCode(config(), code);
    const err = await failure(exchangeCode(config(), code));
    expect(err).toMatchObject({ kind: "status", status: 500, providerError: "server_error", invalidCode: true });
    const rfc = await failure(
      exchangeCode(config({ fetcher: answering(400, { error: "invalid_grant", message: "x" }) }), "c"),
    );
    expect(rfc.invalidCode).toBe(true);
  });

  it("reports a wrong secret as a status error that is not about the code", async () => {
    const { code } = await mintFor(HONG.phone);
    const err = await failure(exchangeCode(config({ clientSecret: "wrongSecret0123456789" }), code));
    expect(err).toMatchObject({ kind: "status", status: 401, providerError: "invalid_client", invalidCode: false });
  });

  it("reports an unreachable or silent service as a network error", async () => {
    const down: ProviderFetcher = { fetch: async () => Promise.reject(new TypeError("connection refused")) };
    expect((await failure(exchangeCode(config({ fetcher: down }), "c"))).kind).toBe("network");
    const silent: ProviderFetcher = { fetch: () => new Promise<Response>(() => {}) };
    const started = Date.now();
    const err = await failure(exchangeCode(config({ fetcher: silent, timeoutMs: 100 }), "c"));
    expect(err.kind).toBe("network");
    expect(err.message).toContain("timed out");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("reaches the service by global fetch to the base URL when no service binding is configured", async () => {
    const spy = denyOutbound();
    try {
      const { fetcher: _, ...noBinding } = config({ baseUrl: "https://login.example" });
      expect((await failure(exchangeCode(noBinding, "c"))).kind).toBe("network");
      expect(spy).toHaveBeenCalledTimes(1);
      expect((spy.mock.calls[0]![0] as Request).url).toBe("https://login.example/oauth2/token");
    } finally {
      spy.mockRestore();
    }
  });
});

describe("readUser and decryptUser (spec §4.3, §2.4, §2.1, §2.2)", () => {
  async function raw(fields: Record<string, string>): Promise<Record<string, unknown>> {
    return { plid: "5f0c3c1e-6a8e-4c53-9d6b-1f4f3a2b7c10", ...fields };
  }

  it("reads our provider's record once and decrypts every item to the subscriber's values", async () => {
    const { code, plid } = await mintFor(HONG.phone);
    const set = await exchangeCode(config(), code);
    const user = await readUser(config(), set.accessToken);
    expect(user).toMatchObject({
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
    expect(user.agegroup).toMatch(/^\d0$/);
    expect(captured.at(-1)!.headers.get("Authorization")).toBe(`Bearer ${set.accessToken}`);
    // one read per token (reference behaviour): a second read is a status error
    expect((await failure(readUser(config(), set.accessToken))).status).toBe(401);
  });

  it('accepts error "success", "" or absent on success, and refuses another code or error word (spec §2.4)', async () => {
    const user = { plid: "p-1", gender: "F" };
    for (const error of ["success", "", undefined]) {
      const got = await readUser(
        config({ fetcher: answering(200, { code: "0000", error, message: "ok", user }) }),
        "t",
      );
      expect(got).toEqual({ plid: "p-1", gender: "F" });
    }
    for (const body of [
      { code: "0001", error: "success", user },
      { code: "0000", error: "fail", user },
      { code: 0, error: "success", user },
      { code: "0000", error: "success" },
      { code: "0000", error: "success", user: { gender: "F" } },
    ]) {
      expect((await failure(readUser(config({ fetcher: answering(200, body) }), "t"))).kind).toBe("envelope");
    }
    expect(
      (
        await failure(
          readUser(config({ fetcher: answering(401, { error: "authentication_failed", message: "x" }) }), "t"),
        )
      ).kind,
    ).toBe("status");
  });

  it('decrypts both empty-value forms of an automatic login: encryptions of "" and plain "" (spec §2.1 mode 2)', async () => {
    const encrypted = await raw({
      ci: await encryptField(SECRET, ""),
      phoneNo: await encryptField(SECRET, ""),
      name: await encryptField(SECRET, ""),
      birthday: await encryptField(SECRET, ""),
      birthdate: await encryptField(SECRET, ""),
      gender: "",
      agegroup: await encryptField(SECRET, ""), // agegroup's empty value may come encrypted
      foreign: "",
      telcoCd: "",
      autoLoginYn: "Y",
      autoStatusCheck: "N",
    });
    const plain = await raw({
      ci: "",
      phoneNo: "",
      name: "",
      birthday: "",
      birthdate: "",
      gender: "",
      agegroup: "",
      foreign: "",
      telcoCd: "",
      autoLoginYn: "Y",
      autoStatusCheck: "N",
    });
    const expected = {
      plid: "5f0c3c1e-6a8e-4c53-9d6b-1f4f3a2b7c10",
      ci: "",
      phoneNo: "",
      name: "",
      birthday: "",
      birthdate: "",
      gender: "",
      agegroup: "",
      foreign: "",
      telcoCd: "",
      autoLoginYn: "Y",
      autoStatusCheck: "N",
    };
    expect(await decryptUser(SECRET, encrypted)).toEqual(expected);
    expect(await decryptUser(SECRET, plain)).toEqual(expected);
  });

  it("decrypts our provider's mode-2 record (automatic login after the first report)", async () => {
    const { putAutoLoginGrant } = await import("../../workers/provider/store/directory/grants");
    const device = "device-" + crypto.randomUUID();
    const first = await mintFor(KIM.phone);
    await putAutoLoginGrant(env, {
      device: deviceOfSubscriber(first.subscriberId, device),
      clientId: DEMO.clientId,
      subscriberId: first.subscriberId,
      expiresAt: Date.now() + 86400_000,
    });
    const opt = await mintFor(KIM.phone, { autoLogin: { deviceHash: device, automatic: false }, optIn: true });
    const full = await readUser(config(), (await exchangeCode(config(), opt.code)).accessToken);
    expect(full).toMatchObject({ name: "김영희", autoLoginYn: "Y", autoStatusCheck: "Y" });
    const auto = await mintFor(KIM.phone, { autoLogin: { deviceHash: device, automatic: true } });
    const empty = await readUser(config(), (await exchangeCode(config(), auto.code)).accessToken);
    expect(empty).toMatchObject({
      plid: auto.plid,
      name: "",
      phoneNo: "",
      gender: "",
      agegroup: "",
      autoLoginYn: "Y",
      autoStatusCheck: "N",
    });
  });

  it("refuses a ciphertext that does not open with the secret (decryption) and values of the wrong shape (envelope)", async () => {
    const other = "anotherSecret0123456789abcdef";
    expect((await failure(decryptUser(SECRET, await raw({ name: await encryptField(other, "홍길동") })))).kind).toBe(
      "decryption",
    );
    expect((await failure(decryptUser(SECRET, await raw({ name: "not-base64-!!" })))).kind).toBe("decryption");
    const bads: Record<string, string>[] = [
      { phoneNo: await encryptField(SECRET, "010-1234-5678") },
      { birthdate: await encryptField(SECRET, "19900315") },
      { birthday: await encryptField(SECRET, "1332") },
      { gender: "X" },
      { agegroup: "25" },
      { foreign: "K" },
      { telcoCd: "X" },
      { autoLoginYn: "yes" },
    ];
    for (const bad of bads) {
      expect((await failure(decryptUser(SECRET, await raw(bad)))).kind).toBe("envelope");
    }
    expect((await failure(decryptUser(SECRET, { plid: "../../etc" }))).kind).toBe("envelope");
    expect((await failure(decryptUser(SECRET, { name: "x" }))).kind).toBe("envelope");
  });

  it("keeps only the spec's items: unknown keys are dropped, absent items stay absent", async () => {
    expect(await decryptUser(SECRET, await raw({ gender: "M", extra: "<script>" }))).toEqual({
      plid: "5f0c3c1e-6a8e-4c53-9d6b-1f4f3a2b7c10",
      gender: "M",
    });
  });
});

describe("disconnectUser (spec §4.4)", () => {
  it("disconnects with Basic and the plid in the form; an unknown plid is a status error", async () => {
    const { plid } = await mintFor(HONG.phone);
    await disconnectUser(config(), plid);
    const sent = captured.at(-1)!;
    expect(sent.headers.get("Authorization")).toBe(basicAuthorization(DEMO.clientId, SECRET));
    expect(await bodyText(sent)).toBe(new URLSearchParams({ plid }).toString());
    expect(await failure(disconnectUser(config(), plid))).toMatchObject({
      kind: "status",
      status: 400,
      providerError: "invalid_request",
    });
  });

  it("refuses a 200 whose code is not 0000 (spec §2.4)", async () => {
    expect(
      (
        await failure(
          disconnectUser(config({ fetcher: answering(200, { code: "9999", error: "", message: "" }) }), "p"),
        )
      ).kind,
    ).toBe("envelope");
  });
});

describe("errors never carry the secret", () => {
  it("no failure's message, name or JSON contains the client secret, its key half or the access token", async () => {
    const token = "AccessTokenValue0123456789";
    const wrongKeyName = await encryptField("anotherSecret0123456789abcdef", "x");
    const cases: (() => Promise<unknown>)[] = [
      () =>
        exchangeCode(
          config({
            fetcher: answering(500, { error: "server_error", message: `Invalid authorization code: c ${SECRET}` }),
          }),
          "c",
        ),
      () => exchangeCode(config({ fetcher: answering(200, { access_token: SECRET, token_type: "mac" }) }), "c"),
      () =>
        exchangeCode(
          config({ clientAuth: "params", fetcher: { fetch: async () => Promise.reject(new Error(SECRET)) } }),
          "c",
        ),
      () => readUser(config({ fetcher: answering(401, { error: "authentication_failed", message: token }) }), token),
      () => decryptUser(SECRET, { plid: "p", name: wrongKeyName }),
      () => disconnectUser(config({ fetcher: answering(401, { error: "invalid_client", message: SECRET }) }), "p"),
    ];
    for (const c of cases) {
      const err = await failure(c());
      for (const text of [err.message, String(err), JSON.stringify(err), err.stack ?? ""]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain(SECRET.slice(0, 16));
        expect(text).not.toContain(token);
      }
    }
  });
});
