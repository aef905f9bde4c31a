// The parts of the hot routes measured one against the other inside one isolate
// (`node investigations/parts.mjs`, docs/benchmarks.md "What each remaining microsecond is"): each pair is
// the floor's way of doing one step (bench/workers/floor.ts) and the project's, called `n` times in
// one request while the runner reads workerd's CPU time around it. No storage: what is left is the
// JavaScript and the runtime calls of the step. Compiled into the investigations' bundle only
// (investigations/workers/investigations-entry.ts).

import { IttyRouter, Router } from "itty-router";
import { decodeJwt } from "jose";
import { base64ToBytes, constantTimeEqual } from "../../workers/core/crypto";
import { json, readParams } from "../../workers/core/http";
import { createWorker } from "../../workers/core/router";
import { authenticateClient } from "../../workers/provider/client-auth";
import { providerConfig, type ProviderEnv } from "../../workers/provider/config";
import { userRecordJson } from "../../workers/provider/user-me/record";
import tokenWorker from "../../workers/provider/token/index";
import meWorker from "../../workers/provider/user-me/index";
import { clientSecrets } from "../../workers/provider/store/clients";
import type { PartsFloorStore, PartsOneTimeStore } from "./parts-store";
import {
  CLIENT,
  demoGrant,
  flatRecord,
  floorMe,
  floorToken,
  floorTokenOidc,
  floorUserBody,
  OIDC_CLIENT,
  OIDC_SECRET,
  SECRET,
  type OidcRecord,
} from "../../bench/workers/floor";
import { idClaimsOf, type CodeGrant } from "../../workers/provider/store/one-time/tables/codes";

const BASIC = `Basic ${btoa(`${CLIENT}:${SECRET}`)}`;
const CODE = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE";
const BODY = `grant_type=authorization_code&code=${CODE}`;
const GRANT = demoGrant("6f1c2b9e-1d2a-4c7b-9a55-0e6a1f3b2c4d", "abcdefghijklmnopqrstuv", 1_763_900_000_000);
const GRANT_JSON = JSON.stringify(GRANT);
const TOKEN_BODY = { access_token: CODE, token_type: "bearer", expires_in: 600 };

const tokenRequest = (authorization = BASIC) =>
  new Request("https://login.example/oauth2/token", {
    method: "POST",
    headers: {
      Authorization: authorization,
      "Content-Type": "application/x-www-form-urlencoded",
      "Content-Length": String(BODY.length),
    },
    body: BODY,
  });
const meRequest = () =>
  new Request("https://login.example/v1/user/me", { headers: { Authorization: `Bearer ${CODE}` } });
const answer = () => json({ a: 1 });
const viaProject = createWorker<ProviderEnv>("parts", [{ method: "GET", path: "/v1/user/me", handler: answer }]);
const viaItty = Router();
viaItty.get("/v1/user/me", answer);
const viaIttyMinimal = IttyRouter();
viaIttyMinimal.get("/v1/user/me", answer);
const noCtx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
let storedDigest: Promise<ArrayBuffer> | undefined;

/**
 * The env of a whole route with its one-time store answered from memory at once (every code
 * redeems, every token reads the demo grant under the client's current secret): the route's own
 * CPU, as the floor's with its store call answered the same way.
 */
let memoryEnv: Promise<ProviderEnv> | undefined;
const routeEnv = (env: ProviderEnv) =>
  (memoryEnv ??= clientSecrets(env, CLIENT, providerConfig(env).clientCacheMs).then((s) => {
    const store = {
      redeemCodeText: async () => "",
      readToken: async () => [JSON.stringify(demoGrant(GRANT.plid, s!.current.id, Date.now())), s!.current.id, false],
    };
    return { ...env, ONE_TIME: { idFromName: () => ({}), get: () => store } } as unknown as ProviderEnv;
  }));
const FLAT = flatRecord(GRANT);

// An OpenID Connect code of the seed's `oidc-client`, as an SMS sign-in's consent writes its grant
// (bench/workers/bench-entry.ts `oidcCodes`), and the floor's record of the same person and sign-in
// (bench/workers/floor.ts `floorMintOidc`), made to carry the same claims (`idTokenIn` checks they do).
const OIDC_BASIC = `Basic ${btoa(`${OIDC_CLIENT}:${OIDC_SECRET}`)}`;
const OIDC_PART = { authTime: 1_763_900_000_000, amr: ["sms"], nonce: "n0nceN0nceN0nce0" };
// a code's grant carries no secret fingerprint (the token's does): demoGrant's is left out
const { secretId: _, ...DEMO_CODE_GRANT } = demoGrant(GRANT.plid, "", 1_763_900_000_000);
const OIDC_GRANT: CodeGrant = {
  ...DEMO_CODE_GRANT,
  clientId: OIDC_CLIENT,
  redirectUri: "http://localhost:8787/oidc/callback",
  oidc: OIDC_PART,
};
/** What the store keeps with that code and answers its redemption with (tables/codes.ts `idClaimsOf`). */
const OIDC_ID_CLAIMS = idClaimsOf(OIDC_GRANT);
const OIDC_RECORD: OidcRecord = {
  plid: GRANT.plid,
  name: GRANT.subscriber.name,
  phoneNo: GRANT.subscriber.phone,
  gender: GRANT.subscriber.gender,
  birth: GRANT.subscriber.birth,
  oidc: OIDC_PART,
};
const OIDC_RECORD_JSON = JSON.stringify(OIDC_RECORD);
/** The route's env with its store answering every OpenID Connect code with that grant at once. */
let oidcMemoryEnv: ProviderEnv | undefined;
const OIDC_STORE = { redeemCodeText: async () => OIDC_ID_CLAIMS };
const oidcRouteEnv = (env: ProviderEnv) =>
  (oidcMemoryEnv ??= { ...env, ONE_TIME: { idFromName: () => ({}), get: () => OIDC_STORE } } as unknown as ProviderEnv);

/** A whole route's answer, which must be its success (a refusal would cost less and mislead). */
async function ok(res: Response): Promise<string> {
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${body}`);
  return body;
}

/** The id_token claims each side's first answer carried, but its times (`iat`, `exp`). */
const firstClaims: { floor?: string; project?: string } = {};

/**
 * A token answer that carries an id_token (one without would cost less and mislead), whose claims
 * are the other side's: the floor's and the route's must sign the same token, or the part compares
 * unlike work. Checked on each side's first answer.
 */
function idTokenIn(body: string, side: "floor" | "project"): string {
  const m = /"id_token":"([\w-]+\.[\w-]+\.[\w-]{86})"/.exec(body);
  if (!m) throw new Error(`no id_token: ${body}`);
  if (firstClaims[side] === undefined) {
    const { iat: _i, exp: _e, ...claims } = decodeJwt(m[1]!);
    firstClaims[side] = JSON.stringify(Object.fromEntries(Object.entries(claims).sort(([a], [b]) => (a < b ? -1 : 1))));
    const { floor, project } = firstClaims;
    if (floor !== undefined && project !== undefined && floor !== project)
      throw new Error(`the floor's id_token and the route's carry other claims: ${floor} against ${project}`);
  }
  return body;
}

/** One call of each step, keyed `<step>/<floor|project|…>`; each makes its own request where it reads one. */
export const PARTS: Record<string, (env: ProviderEnv) => Promise<unknown>> = {
  "request/alone": async () => tokenRequest(),
  "parse/floor": async () => new URLSearchParams(await tokenRequest().text()),
  "parse/project": async () => {
    const req = tokenRequest();
    return readParams(req, new URL(req.url).search, 65_536);
  },
  "response/floor": async () =>
    new Response(JSON.stringify(TOKEN_BODY), {
      headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
    }),
  "response/project": async () => {
    const res = json(TOKEN_BODY);
    res.headers.set("X-Request-Id", GRANT.plid); // as the router's `finish` does
    return res;
  },
  "client-auth/floor": async () => {
    const req = tokenRequest();
    const [, secret] = new TextDecoder().decode(base64ToBytes(req.headers.get("Authorization")!.slice(6))).split(":");
    storedDigest ??= crypto.subtle.digest("SHA-256", new TextEncoder().encode(SECRET));
    return constantTimeEqual(secret!, await storedDigest);
  },
  "client-auth/project": async (env) => authenticateClient(tokenRequest(), env, providerConfig(env).clientCacheMs),
  "route/bare": async () => {
    meRequest().headers.get("Authorization");
    return answer();
  },
  "route/itty-minimal": async () => viaIttyMinimal.fetch(meRequest()),
  "route/itty": async () => viaItty.fetch(meRequest()),
  "route/project": async (env) => viaProject.fetch!(meRequest() as never, env, noCtx),
  "record/floor": async () => JSON.stringify(await floorUserBody(FLAT)),
  "record/project": async () => {
    // as the route writes it: the record as JSON text inside the answer's text
    const user = await userRecordJson({
      plid: GRANT.plid,
      items: GRANT.items,
      subscriber: GRANT.subscriber,
      autoLoginYn: "N",
      autoStatusCheck: "N",
      secret: SECRET,
      now: Date.now(),
    });
    return `{"code":"0000","error":"success","message":"success","user":${user}}`;
  },
  "token-route/floor": async (env) => ok(await floorToken(tokenRequest(), env as never, async () => true)),
  "token-route/project": async (env) =>
    ok(await tokenWorker.fetch!(tokenRequest() as never, await routeEnv(env), noCtx)),
  "me-route/floor": async (env) => ok(await floorMe(meRequest(), env as never, async () => ({ ...FLAT }))),
  "me-route/project": async (env) => ok(await meWorker.fetch!(meRequest() as never, await routeEnv(env), noCtx)),
  // the same two with an id_token (docs/benchmarks.md "The token route with an id_token"): the
  // route's whole JavaScript, its key from D1 once a minute, against the floor's, without storage
  "token-oidc-route/floor": async (env) =>
    idTokenIn(
      await ok(await floorTokenOidc(tokenRequest(OIDC_BASIC), env as never, async () => OIDC_RECORD_JSON)),
      "floor",
    ),
  "token-oidc-route/project": async (env) =>
    idTokenIn(
      await ok(await tokenWorker.fetch!(tokenRequest(OIDC_BASIC) as never, oidcRouteEnv(env), noCtx)),
      "project",
    ),
  "grant-clone/object": async () => structuredClone(GRANT),
  "grant-clone/string+parse": async () => JSON.parse(structuredClone(GRANT_JSON)),
};

type StoreEnv = {
  ONE_TIME: DurableObjectNamespace<PartsOneTimeStore>;
  FLOOR: DurableObjectNamespace<PartsFloorStore>;
};
const projectStore = (env: ProviderEnv, name = "bench-parts") => (env as unknown as StoreEnv).ONE_TIME.getByName(name);
const floorStore = (env: ProviderEnv) => (env as unknown as StoreEnv).FLOOR.getByName("bench-parts");

/** Parts that run their `n` calls inside a store object in one RPC (investigations/workers/parts-store.ts). */
export const BATCH_PARTS: Record<string, (env: ProviderEnv, n: number) => Promise<number>> = {};
for (const [step, commitEach] of [
  ["redeem", false],
  ["redeem-commit", true],
] as const) {
  Object.assign(BATCH_PARTS, {
    [`${step}/floor-mint`]: (env: ProviderEnv, n: number) => floorStore(env).partsRedeem(GRANT_JSON, n, false),
    [`${step}/floor`]: (env: ProviderEnv, n: number) => floorStore(env).partsRedeem(GRANT_JSON, n, true, commitEach),
    [`${step}/project-mint`]: (env: ProviderEnv, n: number) => projectStore(env).partsRedeem(GRANT, n, false),
    [`${step}/project`]: async (env: ProviderEnv, n: number) => {
      const stub = projectStore(env);
      const won = await stub.partsRedeem(GRANT, n, true, commitEach);
      await stub.flushAudit(); // its audit records written to R2, as the route's shard does each flush
      return won;
    },
  });
}

Object.assign(BATCH_PARTS, {
  "read-commit/floor-mint": (env: ProviderEnv, n: number) => floorStore(env).partsRead(GRANT_JSON, n, false),
  "read-commit/floor": (env: ProviderEnv, n: number) => floorStore(env).partsRead(GRANT_JSON, n, true),
  "read-commit/project-mint": (env: ProviderEnv, n: number) => projectStore(env).partsRead(GRANT, n, false),
  "read-commit/project": (env: ProviderEnv, n: number) => projectStore(env).partsRead(GRANT, n, true),
});

/** `/__bench/parts?part=<id>&n=<calls>`: runs one part `n` times (the dev seed must exist). */
export async function partsWork(url: URL, env: ProviderEnv): Promise<Response> {
  const id = url.searchParams.get("part") ?? "";
  const part = PARTS[id];
  const batch = BATCH_PARTS[id];
  if (!part && !batch)
    return Response.json({ parts: [...Object.keys(PARTS), ...Object.keys(BATCH_PARTS)] }, { status: id ? 404 : 200 });
  const n = Math.min(Number(url.searchParams.get("n") ?? "1") || 1, 500_000);
  if (batch) {
    const done = await batch(env, n);
    if (done !== n) return Response.json({ part: id, n, done }, { status: 500 });
  } else for (let i = 0; i < n; i++) await part!(env);
  return Response.json({ part: id, n });
}
