// GET /v1/user/me (spec §4.3, §2.1, §2.2; docs/architecture.md §4.5, §4.7).

import { providerConfig, type ProviderEnv } from "../config";
import { sha256 } from "../../core/crypto";
import { E } from "../../core/errors";
import { jsonText, parseBearer } from "../../core/http";
import { isRandomValue, type YN } from "../../core/spec";
import { storeFor, type CodeGrant, type TokenRead } from "../store/one-time/index";
import type { RequestContext, Route } from "../../core/router";
import { userRecordJson } from "./record";
import { tally } from "../store/metrics/index";
import { countedUserinfo, userinfoPreflight } from "./userinfo";
import { cachedClientWithSecrets, clientWithSecrets, secretForToken } from "../store/clients";

/** The one read this token allows (atomic in the plid's store object), or authentication_failed. */
async function readToken(req: Request, env: ProviderEnv, shards: number, maxReads: number): Promise<TokenRead> {
  const token = parseBearer(req.headers.get("Authorization"));
  if (token === undefined) throw E.authFailed("no bearer token");
  if (!isRandomValue(token)) throw E.authFailed("malformed token");
  const read = await storeFor(env, token, shards).readToken(await sha256(token), maxReads);
  if (!read) throw E.authFailed("unknown, expired, revoked, ended or already read token");
  return read as TokenRead; // the RPC types a tuple as an array
}

/**
 * The automatic-login flags and record mode (spec §2.1, docs/architecture.md §4.5): the first
 * report under a grant is full with Y/Y; a later automatic login is mode 2 (Y/N, empty); an
 * interactive login under a grant is full with Y/N; no grant is full with N/N.
 */
function loginMode(grant: CodeGrant, firstReport: boolean): { full: boolean; autoLoginYn: YN; autoStatusCheck: YN } {
  const a = grant.autoLogin;
  if (!a) return { full: true, autoLoginYn: "N", autoStatusCheck: "N" };
  if (firstReport) return { full: true, autoLoginYn: "Y", autoStatusCheck: "Y" };
  return { full: !a.automatic, autoLoginYn: "Y", autoStatusCheck: "N" };
}

/**
 * One store call and no D1: the token's grant carries the subscriber and consented items of its
 * sign-in (docs/storage.md "Snapshots"); an ended plid, a disabled client (within the client
 * cache) or a rotated-out secret still read nothing.
 */
async function userMe(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const cfg = providerConfig(env);
  const [grantJson, secretId, firstReport] = await readToken(req, env, cfg.oneTimeShards, cfg.userMeMaxReads);
  const grant = JSON.parse(grantJson) as CodeGrant;
  rc.log.clientId = grant.clientId;
  const found =
    cachedClientWithSecrets(grant.clientId, cfg.clientCacheMs) ??
    (await clientWithSecrets(env, grant.clientId, cfg.clientCacheMs));
  if (!found) throw E.authFailed("client gone or disabled");
  const { client, secrets } = found;
  // The secret that authenticated the exchange, across later rotations; gone (rotated out, or
  // revoked at once as leaked): its tokens read nothing.
  const secret = secretForToken(secrets, secretId);
  if (secret === null) throw E.authFailed("the exchanging client secret was rotated out");
  const mode = loginMode(grant, firstReport);
  // Only items agreed by the client now and consented to by the subscriber (spec §2.1, reference behaviour).
  const items = client.items.filter((i) => grant.items.includes(i));
  const user = await userRecordJson({
    plid: grant.plid,
    items,
    subscriber: mode.full ? grant.subscriber : null,
    autoLoginYn: mode.autoLoginYn,
    autoStatusCheck: mode.autoStatusCheck,
    secret,
    now: Date.now(),
  });
  return jsonText(`{"code":"0000","error":"success","message":"success","user":${user}}`);
}

/** Each read counted per app, answered or refused (docs/operations.md "Metrics": approximate). */
async function countedUserMe(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  try {
    const res = await userMe(req, env, rc);
    tally(env, rc, "userme.ok", rc.log.clientId ?? null);
    return res;
  } catch (err) {
    tally(env, rc, "userme.refused", rc.log.clientId ?? null);
    throw err;
  }
}

export const routes: Route<ProviderEnv>[] = [
  { method: "GET", path: "/v1/user/me", handler: countedUserMe, effects: true },
  // OpenID Connect UserInfo (docs/oidc.md): GET and POST (Core §5.3.1), and a browser app's preflight
  { method: "GET", path: "/oauth2/userinfo", handler: countedUserinfo, effects: true },
  { method: "POST", path: "/oauth2/userinfo", handler: countedUserinfo },
  { method: "OPTIONS", path: "/oauth2/userinfo", handler: userinfoPreflight },
];
