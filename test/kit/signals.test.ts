// The kit receives a stream (docs/events.md "The kit's stream"; packages/kit/README.md "Shared
// Signals"): "The kit receives a stream: verifies with the published JWKS (cached, refreshed on an
// unknown `kid`), checks `typ`, `iss`, `aud`, and ends the plid's sessions as it does today; it can
// create its stream from its configuration (`createPhoneLogin({ signals: … })`)." Every SET here
// reaches the kit through its HTTP route (POST /auth/ssf); the real service creates the stream,
// pushes to it, publishes and rotates its keys.
import { env } from "../support/env";
import { exports } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { decodeProtectedHeader, generateKeyPair, SignJWT } from "jose";
import { createPhoneLogin, type PhoneLoginOptions } from "../../packages/kit/src/index";
import { admin } from "../support/admin";
import { basic, call, DEMO, HONG, KIM, LEE, mintFor } from "../support/helpers";
import { setCookies } from "../support/kit";
import { signSet } from "../../workers/provider/store/flows/ssf-events";
import { PUBLISH_AHEAD_MS, signingKey } from "../../workers/provider/store/signing-keys";

const ISS = "http://localhost:8787";
const ENDPOINT = "http://localhost:8787/auth/ssf";
const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
const SESSION_REVOKED = `${CAEP}session-revoked`;
const CREDENTIAL_CHANGE = `${CAEP}credential-change`;
const ACCOUNT_PURGED = `${RISC}account-purged`;
const IDENTIFIER_RECYCLED = `${RISC}identifier-recycled`;
const VERIFICATION = "https://schemas.openid.net/secevent/ssf/event-type/verification";
const DEMO_AUTH = basic(DEMO.clientId, DEMO.secret);

afterEach(async () => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  for (const s of (await (await call("/ssf/stream", { headers: { Authorization: DEMO_AUTH } })).json()) as {
    stream_id: string;
  }[])
    await call(`/ssf/stream?stream_id=${s.stream_id}`, { method: "DELETE", headers: { Authorization: DEMO_AUTH } });
});

const appEnv = {
  PHONE_LOGIN_KV: env.RP_KV,
  PHONE_LOGIN_STORE: env.RP_STORE,
  PHONE_LOGIN_CLIENT_SECRET: DEMO.secret,
  PHONE_LOGIN_SEAL_KEY: env.RP_SEAL_KEY,
};
type AppEnv = typeof appEnv;

/** The shop's kit against the service (a service binding), each back-channel call recorded. */
function shop(extra: Partial<PhoneLoginOptions<AppEnv>> = {}) {
  const calls: string[] = [];
  const logouts: { plid: string; reason: string }[] = [];
  const login = createPhoneLogin<AppEnv>({
    providerUrl: ISS,
    clientId: DEMO.clientId,
    redirectUri: `${ISS}/auth/callback`,
    provider: () => ({
      fetch: (input, init) => {
        const req = new Request(input, init);
        calls.push(`${req.method} ${new URL(req.url).pathname}`);
        return exports.default.fetch(req);
      },
    }),
    onLogout: ({ plid, reason }) => {
      logouts.push({ plid, reason });
    },
    logRequests: false,
    signals: {},
    ...extra,
  });
  async function send(req: Request): Promise<Response> {
    const ctx = createExecutionContext();
    const res = await login.fetch(req, appEnv, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  }
  /** POSTs a SET to the kit's route. */
  const post = (set: string) =>
    send(new Request(ENDPOINT, { method: "POST", headers: { "Content-Type": "application/secevent+jwt" }, body: set }));
  /** A browser's login through the kit's routes: its session cookie and the plid. */
  async function signIn(phone: string): Promise<{ me: () => Promise<number>; plid: string }> {
    const jar = new Map<string, string>();
    const get = async (path: string) => {
      const res = await send(
        new Request(new URL(path, ISS), {
          redirect: "manual",
          headers: { Cookie: [...jar].map(([n, v]) => `${n}=${v}`).join("; ") },
        }),
      );
      for (const c of setCookies(res)) jar.set(c.name, c.value);
      return res;
    };
    const start = await get("/auth/login");
    expect(start.status).toBe(302);
    const to = new URL(start.headers.get("Location")!);
    const { code, plid } = await mintFor(phone, { codeChallenge: to.searchParams.get("code_challenge")! });
    const back = await get(`/auth/callback?${new URLSearchParams({ code, state: to.searchParams.get("state")! })}`);
    expect(back.status).toBe(303);
    const me = async () => (await get("/auth/me")).status;
    expect(await me()).toBe(200);
    return { me, plid };
  }
  return { login, calls, logouts, post, signIn };
}

/** The service's pushes to the kit's route go to the kit; what it answered is kept. */
function pushesTo(post: (set: string) => Promise<Response>) {
  const answered: { status: number; body: string }[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (req.url !== ENDPOINT) throw new Error(`unexpected outbound fetch to ${req.url}`);
    const res = await post(new TextDecoder().decode(await req.arrayBuffer()));
    answered.push({ status: res.status, body: await res.clone().text() });
    return res;
  });
  return answered;
}

/** Claims of a SET from the service to the shop about `plid`. */
function claims(plid: string, type = SESSION_REVOKED, over: Record<string, unknown> = {}) {
  const jti = crypto.randomUUID();
  return { iss: ISS, aud: DEMO.clientId, jti, sub_id: { format: "opaque", id: plid }, events: { [type]: {} }, ...over };
}

async function refused(res: Response, err: string, description?: RegExp): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as Record<string, string>;
  expect(Object.keys(body).sort()).toEqual(["description", "err"]);
  expect(body.err).toBe(err);
  if (description) expect(body.description).toMatch(description);
}

describe("the kit receives a stream (createPhoneLogin({ signals }))", () => {
  it("creates its push stream on its first request with its own token; the verification event, then a subscriber removal ends the plid's sessions once", async () => {
    const k = shop();
    const answered = pushesTo(k.post);
    expect(await (await call("/ssf/stream", { headers: { Authorization: DEMO_AUTH } })).json()).toEqual([]);
    const one = await k.signIn(HONG.phone);
    const two = await k.signIn(HONG.phone);
    const other = await k.signIn(KIM.phone);
    // the first request made the stream, through the stream API with a client_credentials token
    expect(k.calls.slice(0, 3)).toEqual(["POST /oauth2/token", "GET /ssf/stream", "POST /ssf/stream"]);
    expect(k.calls.filter((c) => c.endsWith("/ssf/stream"))).toHaveLength(2);
    const [stream] = (await (await call("/ssf/stream", { headers: { Authorization: DEMO_AUTH } })).json()) as {
      stream_id: string;
      delivery: unknown;
      events_delivered: string[];
    }[];
    expect(stream!.delivery).toEqual({ method: "urn:ietf:rfc:8935", endpoint_url: ENDPOINT });
    expect(stream!.events_delivered).toEqual([SESSION_REVOKED, ACCOUNT_PURGED, IDENTIFIER_RECYCLED, CREDENTIAL_CHANGE]);

    const verify = await call("/ssf/verify", {
      method: "POST",
      headers: { Authorization: DEMO_AUTH, "Content-Type": "application/json" },
      body: JSON.stringify({ stream_id: stream!.stream_id, state: "shop" }),
    });
    expect(verify.status).toBe(204);
    expect(answered).toEqual([{ status: 202, body: "" }]);

    expect((await admin("DELETE", `/admin/directory/${HONG.phone}`)).status).toBe(200);
    await vi.waitFor(() => expect(answered).toHaveLength(3), { timeout: 15_000, interval: 25 });
    expect(answered.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(await one.me()).toBe(401);
    expect(await two.me()).toBe(401);
    expect(await other.me()).toBe(200);
    // session-revoked and account-purged of one change: onLogout once, as the plid-deleted event
    expect(k.logouts).toEqual([{ plid: one.plid, reason: "deleted" }]);
  });

  it("ensureStream(env) creates the stream once; a forged SET, a wrong aud, iss, typ or alg are refused (RFC 8935 errors) and end nothing; a replayed jti ends nothing again", async () => {
    const k = shop({ signals: { createStream: false } });
    const first = await k.login.signals.ensureStream(appEnv);
    expect(first.created).toBe(true);
    expect(first.stream.delivery).toEqual({ method: "urn:ietf:rfc:8935", endpoint_url: ENDPOINT });
    const again = await k.login.signals.ensureStream(appEnv);
    expect(again).toEqual({ created: false, stream: first.stream });

    const person = await k.signIn(KIM.phone);
    const { kid, key } = await signingKey(env);
    const forger = await generateKeyPair("ES256");
    const forged = await new SignJWT({ ...claims(person.plid), iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({ alg: "ES256", kid, typ: "secevent+jwt" })
      .sign(forger.privateKey);
    await refused(await k.post(forged), "invalid_key", /signature/);
    await refused(
      await k.post(await signSet(env, claims(person.plid, SESSION_REVOKED, { aud: "limited-client" }))),
      "invalid_audience",
    );
    await refused(
      await k.post(await signSet(env, claims(person.plid, SESSION_REVOKED, { iss: "https://login.evil.example" }))),
      "invalid_issuer",
    );
    const asJwt = await new SignJWT({ ...claims(person.plid), iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({ alg: "ES256", kid, typ: "JWT" })
      .sign(key);
    await refused(await k.post(asJwt), "invalid_request", /typ/);
    const hs = await new SignJWT({ ...claims(person.plid), iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({ alg: "HS256", kid, typ: "secevent+jwt" })
      .sign(new TextEncoder().encode(DEMO.secret));
    await refused(await k.post(hs), "invalid_key", /ES256/);
    await refused(await k.post("not a jws"), "invalid_request");
    expect(await person.me()).toBe(200);
    expect(k.logouts).toEqual([]);

    const real = await signSet(env, claims(person.plid, ACCOUNT_PURGED));
    expect((await k.post(real)).status).toBe(202);
    expect(await person.me()).toBe(401);
    const back = await k.signIn(KIM.phone);
    expect((await k.post(real)).status).toBe(202);
    expect(await back.me()).toBe(200);
    expect(k.logouts).toEqual([{ plid: person.plid, reason: "deleted" }]);
    // a verified SET of a type that ends nothing is acknowledged, nothing changed
    expect((await k.post(await signSet(env, claims(back.plid, CREDENTIAL_CHANGE)))).status).toBe(202);
    expect((await k.post(await signSet(env, claims(back.plid, VERIFICATION)))).status).toBe(202);
    expect(await back.me()).toBe(200);
  });

  it("an unknown kid fetches the JWKS again: a key rotated in since verifies; a kid still unknown is refused; within 10 s of a fetch none is made (503, retried)", async () => {
    const k = shop({ signals: { createStream: false } });
    const person = await k.signIn(LEE.phone);
    const jwksFetches = () => k.calls.filter((c) => c === "GET /oauth2/jwks").length;
    expect((await k.post(await signSet(env, claims(person.plid, CREDENTIAL_CHANGE)))).status).toBe(202);
    expect(jwksFetches()).toBe(1);
    const rotated = await admin("POST", "/admin/keys/rotate");
    expect(rotated.status).toBe(201);
    const next = (await rotated.json()) as { kid: string };
    // a SET signed by the new key, when it signs (its iat within the 10 minutes the kit allows)
    const later = await signSet(env, claims(person.plid, CREDENTIAL_CHANGE), Date.now() + PUBLISH_AHEAD_MS + 1000);
    expect(decodeProtectedHeader(later).kid).toBe(next.kid);
    // within 10 s of the last fetch an unknown kid is not fetched for: a temporary answer, the service retries
    const soon = await k.post(later);
    expect(soon.status).toBe(503);
    expect(jwksFetches()).toBe(1);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 11_000);
    expect((await k.post(later)).status).toBe(202);
    expect(jwksFetches()).toBe(2);

    const stranger = await generateKeyPair("ES256");
    const unknownKid = async () =>
      new SignJWT({ ...claims(person.plid), iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: "ES256", kid: "no-such-kid", typ: "secevent+jwt" })
        .sign(stranger.privateKey);
    expect((await k.post(await unknownKid())).status).toBe(503);
    expect(jwksFetches()).toBe(2);
    vi.setSystemTime(Date.now() + 11_000);
    await refused(await k.post(await unknownKid()), "invalid_key", /kid/);
    expect(jwksFetches()).toBe(3);
    expect(await person.me()).toBe(200);
    expect(k.logouts).toEqual([]);
  });
});
