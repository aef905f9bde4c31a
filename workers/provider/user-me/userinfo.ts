// GET|POST /oauth2/userinfo (OpenID Connect Core §5.3; RFC 6750 §2.1, §3; docs/oidc.md "UserInfo"):
// the claims of an OpenID Connect code's access token as plain JSON. One store call, no D1 beyond
// the client's cached record; its reads are counted apart from /v1/user/me's (USERINFO_MAX_READS),
// which stays as it is.

import { providerConfig, type ProviderEnv } from "../config";
import { sha256 } from "../../core/crypto";
import { json, parseBearer } from "../../core/http";
import { isRandomValue } from "../../core/spec";
import { storeFor, type CodeGrant, identityClaims } from "../store/one-time/index";
import type { RequestContext } from "../../core/router";
import { cachedClientWithSecrets, clientWithSecrets, secretForToken } from "../store/clients";
import { tally } from "../store/metrics/index";

/** A browser app reads its claims with its own bearer token: any origin, never with cookies. */
const CORS = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "WWW-Authenticate" };

/**
 * RFC 6750 §3: 401 with the challenge; no error code when the request carried no token at all
 * (§3.1), `invalid_token` for one that reads nothing. The reason stays in the service's log.
 */
function refused(rc: RequestContext, reason: string, withCode = true): Response {
  rc.log.cause = reason;
  const challenge = withCode ? 'Bearer error="invalid_token"' : "Bearer";
  const body = withCode
    ? { error: "invalid_token", error_description: "the access token reads nothing here" }
    : {
        error: "invalid_request",
        error_description: "an access token in the Authorization header (Bearer) is required",
      };
  return json(body, 401, { ...CORS, "WWW-Authenticate": challenge });
}

async function userinfo(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const cfg = providerConfig(env);
  const token = parseBearer(req.headers.get("Authorization"));
  if (token === undefined) return refused(rc, "no bearer token", false);
  if (!isRandomValue(token)) return refused(rc, "malformed token");
  const read = await storeFor(env, token, cfg.oneTimeShards).readUserInfo(await sha256(token), cfg.userinfoMaxReads);
  if (!read) return refused(rc, "unknown, expired, revoked, ended, not OpenID Connect or already read token");
  const [grantJson, secretId] = read as [string, string]; // the RPC types a tuple as an array
  const grant = JSON.parse(grantJson) as CodeGrant;
  rc.log.clientId = grant.clientId;
  const found =
    cachedClientWithSecrets(grant.clientId, cfg.clientCacheMs) ??
    (await clientWithSecrets(env, grant.clientId, cfg.clientCacheMs));
  // as /v1/user/me: a disabled client, or a secret rotated out since the exchange, reads nothing;
  // nor does a client whose OpenID Connect was turned off since
  if (!found || !found.client.oidc) return refused(rc, "client gone, disabled or without OpenID Connect");
  if (secretForToken(found.secrets, secretId) === null)
    return refused(rc, "the exchanging client secret was rotated out");
  // the claims /v1/user/me would give in this mode: none for an automatic login (spec §2.1), else
  // the items agreed by the client now and consented to by the person
  const items = found.client.items.filter((i) => grant.items.includes(i));
  const claims = grant.autoLogin?.automatic === true ? {} : identityClaims({ ...grant, items });
  return json({ sub: grant.plid, ...claims }, 200, CORS);
}

/** Each read counted per app, answered or refused (docs/operations.md "Metrics": approximate). */
export async function countedUserinfo(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const res = await userinfo(req, env, rc);
  tally(env, rc, res.status === 200 ? "userinfo.ok" : "userinfo.refused", rc.log.clientId ?? null);
  return res;
}

/** The CORS preflight of a browser app's UserInfo request (its Authorization header). */
export function userinfoPreflight(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      "Access-Control-Allow-Origin": "*",
      "Access-Control-Allow-Methods": "GET, POST",
      "Access-Control-Allow-Headers": "Authorization",
      "Access-Control-Max-Age": "600",
    },
  });
}
