// Client authentication (spec §5, docs/architecture.md §4.7): HTTP Basic with the
// client id and secret, each half form-url-decoded (RFC 6749 §2.3.1); at the token endpoint the
// `client_id`/`client_secret` parameters are the fallback. Secrets are compared in constant time
// (SHA-256 digests; the stored secret's is cached with the client),
// and an unknown id, a disabled client and a wrong secret give the same answer.

import { constantTimeEqual } from "../core/crypto";
import { E } from "../core/errors";
import { parseBasic, type Params } from "../core/http";
import { cachedClientWithSecrets, clientWithSecrets, type Client } from "./store/clients";

type AuthEnv = { DB: D1Database; SEAL_KEY: string };

const NO_DIGEST = new ArrayBuffer(32);

export interface AuthenticatedClient {
  client: Client;
  /** The secret that matched, and its fingerprint (what a token records). */
  secret: string;
  secretId: string;
}

/** Checks a client id and secret in constant time; the reason of a refusal goes only to the log. */
export async function checkClientSecret(
  env: AuthEnv,
  clientId: string,
  secret: string,
  cacheMs: number,
): Promise<AuthenticatedClient> {
  const found = cachedClientWithSecrets(clientId, cacheMs) ?? (await clientWithSecrets(env, clientId, cacheMs));
  if (!found) {
    await constantTimeEqual(secret, NO_DIGEST); // same work as a known client
    throw E.badClient("basic", "unknown, disabled or deleted client");
  }
  const { client, secrets: s } = found;
  if (await constantTimeEqual(secret, s.current.digest))
    return { client, secret: s.current.secret, secretId: s.current.id };
  if (s.previous && s.previous.until > Date.now() && (await constantTimeEqual(secret, s.previous.digest))) {
    return { client, secret: s.previous.secret, secretId: s.previous.id };
  }
  throw E.badClient("basic", "wrong secret");
}

/**
 * The request's client. Basic wins; with `params` (the token endpoint) the `client_id` and
 * `client_secret` parameters are the fallback, and a parameter `client_id` that differs from the
 * Basic one is refused. Without `params` (disconnect) Basic is the only way. A request that names
 * no usable credentials throws before any promise (callers await it inside their handler).
 */
export function authenticateClient(
  req: Request,
  env: AuthEnv,
  cacheMs: number,
  params?: Params,
): Promise<AuthenticatedClient> {
  const basic = parseBasic(req.headers.get("Authorization"));
  if (basic.kind === "malformed") throw E.badClient("basic", basic.reason);
  let id: string | undefined;
  let secret: string | undefined;
  if (basic.kind === "basic") {
    const paramId = params?.get("client_id");
    if (paramId !== undefined && paramId !== basic.id) throw E.badClient("basic", "client_id differs from Basic");
    id = basic.id || undefined;
    secret = basic.secret;
  } else if (params) {
    id = params.get("client_id");
    secret = params.get("client_secret");
  }
  if (id === undefined) throw E.clientMissing("basic");
  if (!secret) throw E.badClient("basic", "no secret");
  return checkClientSecret(env, id, secret, cacheMs);
}
