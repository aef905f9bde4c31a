// GET /v1/user/me (spec §4.3, §2.1, §2.2; docs/architecture.md §4.5, §4.7).

import { providerConfig, type ProviderEnv } from "../config";
import { sha256 } from "../../core/crypto";
import { E } from "../../core/errors";
import { json, parseBearer } from "../../core/http";
import { isRandomValue, type YN } from "../../core/spec";
import { storeFor, type TokenGrant } from "../store/one-time-store";
import type { RequestContext, Route } from "../../core/router";
import { buildUserRecord } from "./record";
import { clientSecrets, findClient, secretForToken } from "../store/clients";
import { linkedSubscriber } from "../store/links";
import { takeFirstReport } from "../store/grants";

/** The one read this token allows (atomic in the store), or authentication_failed. */
async function readToken(req: Request, env: ProviderEnv, shards: number, maxReads: number): Promise<TokenGrant> {
  const token = parseBearer(req.headers.get("Authorization"));
  if (token === undefined) throw E.authFailed("no bearer token");
  if (!isRandomValue(token)) throw E.authFailed("malformed token");
  const grant = await storeFor(env, token, shards).readToken(await sha256(token), maxReads);
  if (!grant) throw E.authFailed("unknown, expired, revoked or already read token");
  return grant;
}

/**
 * The automatic-login flags and record mode (spec §2.1, docs/architecture.md §4.7): the first report under a
 * grant is full with Y/Y; a later automatic login is mode 2 (Y/N, empty); an interactive login
 * under a grant is full with Y/N; no grant is full with N/N.
 */
async function loginMode(
  env: ProviderEnv,
  grant: TokenGrant,
): Promise<{ full: boolean; autoLoginYn: YN; autoStatusCheck: YN }> {
  const a = grant.autoLogin;
  if (!a) return { full: true, autoLoginYn: "N", autoStatusCheck: "N" };
  const report = await takeFirstReport(env, a.deviceHash, grant.clientId);
  if (report.first) return { full: true, autoLoginYn: "Y", autoStatusCheck: "Y" };
  if (a.automatic) return { full: false, autoLoginYn: "Y", autoStatusCheck: "N" };
  return { full: true, autoLoginYn: report.exists ? "Y" : "N", autoStatusCheck: "N" };
}

async function userMe(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const cfg = providerConfig(env);
  const grant = await readToken(req, env, cfg.oneTimeShards, cfg.userMeMaxReads);
  rc.log.clientId = grant.clientId;
  const [client, linked, mode] = await Promise.all([
    findClient(env, grant.clientId, cfg.clientCacheMs),
    linkedSubscriber(env, grant.clientId, grant.plid),
    loginMode(env, grant),
  ]);
  // A disconnected user or a disabled client ends what its tokens can read.
  if (!client) throw E.authFailed("client gone or disabled");
  if (!linked) throw E.authFailed("link gone (disconnected)");
  const secrets = await clientSecrets(env, client.clientId, cfg.clientCacheMs);
  // The secret that authenticated the exchange, across later rotations; gone (rotated out, or
  // revoked at once as leaked): its tokens read nothing.
  const secret = secretForToken(secrets, grant.secretId);
  if (secret === null) throw E.authFailed("the exchanging client secret was rotated out");
  // Only items agreed by the client now and consented to by the subscriber (spec §2.1, reference behaviour).
  const items = client.items.filter((i) => linked.items.includes(i));
  const user = await buildUserRecord({
    plid: grant.plid,
    items,
    subscriber: mode.full ? linked.subscriber : null,
    autoLoginYn: mode.autoLoginYn,
    autoStatusCheck: mode.autoStatusCheck,
    secret,
    now: Date.now(),
  });
  return json({ code: "0000", error: "success", message: "success", user });
}

export const routes: Route<ProviderEnv>[] = [{ method: "GET", path: "/v1/user/me", handler: userMe }];
