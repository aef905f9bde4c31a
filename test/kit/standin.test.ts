// The kit against an independent server: test/support/fixtures/standin-provider.js, an auxiliary worker
// written only from the spec's examples (6-character codes, 88-character tokens, raw Basic, the
// reference's 500 for an invalid code) and sharing no code with our provider. The kit must work
// against it unchanged, through the service binding and through global fetch to PROVIDER_BASE_URL,
// including the variants the spec allows (spec §2.1-§2.4).
import { env } from "../support/env";
import { afterEach, beforeEach, describe, expect, it, type MockInstance } from "vitest";
import {
  decryptUser,
  exchangeCode,
  readUser,
  type ProviderFetcher,
  type RpClientConfig,
} from "../../packages/kit/src/client";
import type { RpEnv } from "../../packages/kit/src/config";
import { createPhoneLogin } from "../../packages/kit/src/index";
import { Browser, denyOutbound, kit, send, setCookies, type Kit } from "../support/kit";

const STANDIN = env.STANDIN as Fetcher;
const BASE = "https://standin.example";
const VARS = {
  PROVIDER_BASE_URL: BASE,
  RP_CLIENT_ID: "StandInClient0000001",
  RP_CLIENT_SECRET: "StandInSecretAbCdEf0123456789aBcDeF0123456789AbCdEf0123456789xyz",
  RP_REDIRECT_URI: "https://rp.example/auth/callback",
  RP_PUBLIC_ORIGIN: "https://rp.example",
};
const PERSON = {
  plid: "5f0c3c1e-6a8e-4c53-9d6b-1f4f3a2b7c10",
  name: "박지민",
  phoneNo: "01098765432",
  birthdate: "950823",
  birthday: "0823",
  gender: "F",
  agegroup: "20",
  foreign: "L",
  telcoCd: "K",
};

/** The service binding: requests go to the auxiliary worker, whatever their host. */
const binding: ProviderFetcher = { fetch: (input, init) => STANDIN.fetch(new Request(input, init)) };

interface Variant {
  expiresIn?: "string";
  tokenType?: string;
  emptyError?: boolean;
  mode?: "first-auto" | "auto-encrypted" | "auto-plain";
}

async function standin(path: string, body?: unknown): Promise<unknown> {
  const res = await STANDIN.fetch(
    `${BASE}${path}`,
    body === undefined ? {} : { method: "POST", body: JSON.stringify(body) },
  );
  return res.json();
}

/** /auth/login → the stand-in's authorize (which signs in at once) → /auth/callback, as a browser does. */
async function loginThroughStandin(b: Browser, variant: Variant = {}): Promise<Response> {
  await standin("/_standin/next", variant);
  const start = await b.startLogin();
  expect(start.location.origin).toBe(BASE);
  const back = await STANDIN.fetch(start.location.toString(), { redirect: "manual" });
  expect(back.status).toBe(302);
  const callback = new URL(back.headers.get("Location")!);
  expect(callback.origin + callback.pathname).toBe(VARS.RP_REDIRECT_URI);
  expect(callback.searchParams.get("code")).toMatch(/^[A-Za-z0-9]{6}$/);
  return b.get(callback.pathname + callback.search);
}

let outbound: MockInstance<typeof fetch>;
beforeEach(async () => {
  outbound = denyOutbound();
  await standin("/_standin/log");
});
afterEach(() => {
  outbound.mockRestore();
});

describe("the kit against a stand-in service built from the spec's examples", () => {
  it("completes a browser login through the service binding and shows the decrypted profile; nothing goes to the network", async () => {
    const k = kit(VARS, binding);
    const b = new Browser(k);
    const res = await loginThroughStandin(b);
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/");
    const me = await b.get("/auth/me");
    expect(await me.json()).toMatchObject({ ...PERSON, autoLoginYn: "N", autoStatusCheck: "N" });
    expect(k.calls).toEqual(["POST /oauth2/token", "GET /v1/user/me"]);
    expect(outbound).not.toHaveBeenCalled();
    const seen = (await standin("/_standin/log")) as { path: string; basic: boolean }[];
    expect(seen.find((c) => c.path === "/oauth2/token")!.basic).toBe(true);
  });

  it.each<[string, Variant]>([
    ["expires_in as a JSON string", { expiresIn: "string" }],
    ['token_type "Bearer"', { tokenType: "Bearer" }],
    ['error "" on success', { emptyError: true }],
    ["all three at once", { expiresIn: "string", tokenType: "Bearer", emptyError: true }],
  ])("tolerates %s (spec §2.3, §2.4)", async (_name, variant) => {
    const b = new Browser(kit(VARS, binding));
    expect((await loginThroughStandin(b, variant)).status).toBe(303);
    expect(await (await b.get("/auth/me")).json()).toMatchObject(PERSON);
  });

  it("keeps the identity of the opt-in login for later automatic logins, with empty values encrypted or plain (spec §2.1)", async () => {
    const k = kit(VARS, binding);
    const first = new Browser(k);
    expect((await loginThroughStandin(first, { mode: "first-auto" })).status).toBe(303);
    expect(await (await first.get("/auth/me")).json()).toMatchObject({
      ...PERSON,
      autoLoginYn: "Y",
      autoStatusCheck: "Y",
    });
    for (const mode of ["auto-encrypted", "auto-plain"] as const) {
      const later = new Browser(k);
      const res = await loginThroughStandin(later, { mode });
      expect(res.headers.get("Location"), mode).toBe("/");
      expect(await (await later.get("/auth/me")).json()).toMatchObject({
        ...PERSON,
        autoLoginYn: "Y",
        autoStatusCheck: "N",
      });
    }
  });

  it("disconnects at the stand-in with Basic and ends the session", async () => {
    const k = kit(VARS, binding);
    const b = new Browser(k);
    await loginThroughStandin(b);
    await standin("/_standin/log");
    expect((await b.post("/auth/disconnect")).status).toBe(200);
    const seen = (await standin("/_standin/log")) as { path: string; basic: boolean }[];
    expect(seen).toEqual([{ method: "POST", path: "/v1/user/disconnect", basic: true }]);
    expect((await b.get("/auth/me")).status).toBe(401);
  });

  it("turns the stand-in's invalid-code 500 into 400 invalid_grant at /auth/token and a 502 page at the callback", async () => {
    const k = kit(VARS, binding);
    const { code } = (await standin("/_standin/issue", {})) as { code: string };
    const token = (c: string) =>
      send(k, "/auth/token", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: `code=${c}&code_verifier=${"v".repeat(43)}`,
      });
    expect((await token(code)).status).toBe(200);
    expect(await (await token("ZZZZZZ")).json()).toMatchObject({ error: "invalid_grant" });
    const b = new Browser(k);
    const start = await b.startLogin();
    const res = await b.get(`/auth/callback?code=ZZZZZZ&state=${start.state}`);
    expect(res.status).toBe(502);
  });

  it("reaches the stand-in by global fetch to PROVIDER_BASE_URL when no service binding is configured", async () => {
    outbound.mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      if (new URL(req.url).origin !== BASE) throw new Error(`unexpected outbound fetch to ${req.url}`);
      return STANDIN.fetch(req);
    });
    const k: Kit = kit(VARS, binding);
    const unbound: Kit = { ...k, env: { ...k.env, PROVIDER: undefined } as unknown as RpEnv };
    const b = new Browser(unbound);
    expect((await loginThroughStandin(b, { expiresIn: "string" })).status).toBe(303);
    expect(await (await b.get("/auth/me")).json()).toMatchObject(PERSON);
    expect(outbound.mock.calls.map(([r]) => (r as Request).url)).toEqual([
      `${BASE}/oauth2/token`,
      `${BASE}/v1/user/me`,
    ]);
    expect(k.calls).toEqual([]);
  });
});

describe("the package (createPhoneLogin) against the stand-in, configured as for the reference service", () => {
  // As the package README configures the reference: its https base URL, no service binding (global
  // fetch, routed here to the stand-in), the app's own binding names.
  const appEnv = {
    LOGIN_KV: env.RP_KV,
    PHONE_LOGIN_CLIENT_SECRET: VARS.RP_CLIENT_SECRET,
    PHONE_LOGIN_SEAL_KEY: env.RP_SEAL_KEY,
  };
  const login = createPhoneLogin<typeof appEnv>({
    providerUrl: BASE,
    clientId: VARS.RP_CLIENT_ID,
    redirectUri: VARS.RP_REDIRECT_URI,
    kv: (e) => e.LOGIN_KV,
    logRequests: false,
  });
  const jar = new Map<string, string>();
  async function app(path: string): Promise<Response> {
    const req = new Request(new URL(path, VARS.RP_PUBLIC_ORIGIN), {
      redirect: "manual",
      headers: { Cookie: [...jar].map(([n, v]) => `${n}=${v}`).join("; ") },
    });
    if (!login.handles(req)) {
      const user = await login.getSession(req, appEnv);
      return Response.json(user, { status: user ? 200 : 401 });
    }
    const res = await login.fetch(req, appEnv);
    for (const c of setCookies(res)) jar.set(c.name, c.value);
    return res;
  }
  async function signIn(variant: Variant): Promise<Response> {
    await standin("/_standin/next", variant);
    const start = await app("/auth/login?return_to=/profile");
    const back = await STANDIN.fetch(start.headers.get("Location")!, { redirect: "manual" });
    const callback = new URL(back.headers.get("Location")!);
    return app(callback.pathname + callback.search);
  }

  it("signs in with every variant the reference may send, and getSession keeps the identity across automatic logins (spec §2.1-§2.4)", async () => {
    outbound.mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      if (new URL(req.url).origin !== BASE) throw new Error(`unexpected outbound fetch to ${req.url}`);
      return STANDIN.fetch(req);
    });
    const lenient: Variant = { expiresIn: "string", tokenType: "Bearer", emptyError: true };
    const first = await signIn({ ...lenient, mode: "first-auto" });
    expect(first.headers.get("Location")).toBe("/profile");
    expect(await (await app("/profile")).json()).toMatchObject({ ...PERSON, autoLoginYn: "Y", autoStatusCheck: "Y" });
    for (const mode of ["auto-encrypted", "auto-plain"] as const) {
      expect((await signIn({ ...lenient, mode })).headers.get("Location"), mode).toBe("/profile");
      expect(await (await app("/profile")).json(), mode).toMatchObject({
        ...PERSON,
        autoLoginYn: "Y",
        autoStatusCheck: "N",
      });
    }
    expect(new Set(outbound.mock.calls.map(([r]) => new URL((r as Request).url).pathname))).toEqual(
      new Set(["/oauth2/token", "/v1/user/me"]),
    );
  });
});

describe("the client module against the stand-in", () => {
  const cfg: RpClientConfig = {
    baseUrl: BASE,
    clientId: VARS.RP_CLIENT_ID,
    clientSecret: VARS.RP_CLIENT_SECRET,
    redirectUri: VARS.RP_REDIRECT_URI,
    fetcher: binding,
  };

  it("exchanges with the parameter fallback and decrypts the stand-in's own AES-CBC ciphertexts (spec §2.2)", async () => {
    const { code } = (await standin("/_standin/issue", { expiresIn: "string" })) as { code: string };
    const set = await exchangeCode({ ...cfg, clientAuth: "params" }, code);
    expect(set.expiresIn).toBe(600);
    expect(set.accessToken).toHaveLength(88);
    expect(await readUser(cfg, set.accessToken)).toEqual({
      ...PERSON,
      ci: expect.any(String),
      autoLoginYn: "N",
      autoStatusCheck: "N",
    });
    const seen = (await standin("/_standin/log")) as { path: string; basic: boolean }[];
    expect(seen.find((c) => c.path === "/oauth2/token")!.basic).toBe(false);
  });

  it("decryptUser alone opens a record whose empty agegroup came encrypted", async () => {
    const { code } = (await standin("/_standin/issue", { mode: "auto-encrypted" })) as { code: string };
    const set = await exchangeCode(cfg, code);
    const res = await STANDIN.fetch(`${BASE}/v1/user/me`, { headers: { Authorization: `Bearer ${set.accessToken}` } });
    const raw = ((await res.json()) as { user: Record<string, string> }).user;
    expect(raw.agegroup!.length).toBeGreaterThan(20); // an encryption of ""
    expect(raw.gender).toBe("");
    const user = await decryptUser(VARS.RP_CLIENT_SECRET, raw);
    expect(user).toMatchObject({
      name: "",
      phoneNo: "",
      agegroup: "",
      gender: "",
      autoLoginYn: "Y",
      autoStatusCheck: "N",
    });
  });
});
