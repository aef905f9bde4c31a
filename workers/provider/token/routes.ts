// POST /oauth2/token (spec §4.2, §5; docs/architecture.md §4.1-4.3, §4.7).

import { providerConfig, type ProviderEnv } from "../config";
import { pkceS256, sha256 } from "../../core/crypto";
import { tokenForCode } from "../codes";
import { E } from "../../core/errors";
import { json, readParams, type Params } from "../../core/http";
import { isRandomValue } from "../../core/spec";
import { storeFor, redeemResultOf } from "../store/one-time/index";
import { authenticateClient } from "../client-auth";
import type { RequestContext, Route } from "../../core/router";
import { jwks } from "./jwks";
import { discovery } from "./discovery";
import { idToken } from "./id-token";
import { issuer } from "../store/flows/events";
import type { Client } from "../store/clients";
import { SSF_SCOPE, streamToken } from "../ssf/routes";

const VERIFIER_SHAPE = /^[A-Za-z0-9._~-]{43,128}$/; // RFC 7636 §4.1

function requireGrantType(params: Params): void {
  if (params.require("grant_type") !== "authorization_code") throw E.invalid("grant_type");
}

/** S256 of a presented code_verifier (RFC 7636 §4.6); none sent: no promise to wait for. */
function verifierChallenge(params: Params): Promise<string> | null {
  const v = params.get("code_verifier");
  if (v === undefined) return null;
  if (!VERIFIER_SHAPE.test(v)) throw E.invalid("code_verifier");
  return pkceS256(v);
}

async function token(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const cfg = providerConfig(env);
  const params = await readParams(req, rc.search, cfg.maxBodyBytes);
  const auth = await authenticateClient(req, env, cfg.clientCacheMs, params);
  const clientId = auth.client.clientId;
  rc.log.clientId = clientId;
  // the stream API's token (docs/events.md "Shared Signals"): client_credentials with scope `ssf`
  // only; any other client_credentials request is refused as before
  if (params.get("grant_type") === "client_credentials" && params.get("scope") === SSF_SCOPE)
    return streamToken(env, auth);
  requireGrantType(params);
  const code = params.require("code");
  const verifier = verifierChallenge(params);
  const challenge = verifier && (await verifier);
  const redirectUri = cfg.tokenErrorStyle === "rfc6749" ? (params.get("redirect_uri") ?? null) : null;
  if (!isRandomValue(code)) throw E.invalidCode(cfg.tokenErrorStyle, code, "malformed code");

  const accessToken = tokenForCode(code);
  const [codeHash, tokenHash] = await Promise.all([sha256(code), sha256(accessToken)]);
  const answer = await storeFor(env, code, cfg.oneTimeShards).redeemCodeText(
    codeHash,
    clientId,
    tokenHash,
    auth.secretId,
    cfg.accessTokenTtlSeconds * 1000,
    challenge,
    redirectUri,
    auth.client.oidc,
  );
  const result = redeemResultOf(answer);
  // The store audits the redemption itself (code.redeemed / code.refused), batched into D1.
  if (!result.ok) throw E.invalidCode(cfg.tokenErrorStyle, code, `code ${result.reason}`);

  // spec §2.3 / reference behaviour: number expires_in, lower-case bearer, no `error` key on success;
  // state echoes the token request's own state when sent (never validated here).
  const state = params.get("state");
  const ttl = cfg.accessTokenTtlSeconds;
  // an OpenID Connect code (a client with it on, an `openid` request): its id_token beside
  // (docs/oidc.md); for any other code `id_token` is undefined, which JSON leaves out
  const body = {
    access_token: accessToken,
    token_type: "bearer",
    expires_in: ttl,
    id_token: result.idClaims === undefined ? undefined : await idToken(env, result.idClaims, issuer(env), ttl),
  };
  return json(state === undefined ? body : { ...body, state }, 200, corsFor(req, auth.client));
}

function originOf(uri: string): string | undefined {
  try {
    return new URL(uri).origin;
  } catch {
    return undefined;
  }
}

/**
 * A browser app's exchange (an OpenID Connect client's, `client_secret_post`: no preflight) may
 * read the answer from the origin of one of its registered redirect URIs; nothing else changes,
 * and no other client's answer gains a header (docs/oidc.md "Browser apps").
 */
function corsFor(req: Request, client: Client): Record<string, string> | undefined {
  if (!client.oidc) return undefined; // before reading a header: every other client's exchange pays nothing
  const origin = req.headers.get("Origin");
  if (origin === null) return undefined;
  const allowed = client.redirectUris.some((u) => originOf(u) === origin);
  return allowed ? { "Access-Control-Allow-Origin": origin, Vary: "Origin" } : undefined;
}

export const routes: Route<ProviderEnv>[] = [
  { method: "POST", path: "/oauth2/token", handler: token },
  { method: "GET", path: "/oauth2/jwks", handler: jwks },
  { method: "GET", path: "/.well-known/openid-configuration", handler: discovery },
];
