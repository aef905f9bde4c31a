// The id_token of an OpenID Connect code (docs/oidc.md "The id_token"; OpenID Connect Core §2,
// §3.1.3.3): ES256 under the service's signing key (store/signing-keys.ts), signed with `jose`.
// Its identity claims are the ones /v1/user/me would give for this code: none for an automatic
// login (spec §2.1), else the items the person agreed to, in OpenID Connect's names and forms.

import { SignJWT } from "jose";
import { signingKey } from "../store/signing-keys";
import type { CodeGrant } from "../store/one-time/tables/codes";
import { identityClaims } from "../oidc-claims";

type KeyEnv = { DB: D1Database; SEAL_KEY: string };

/** The signed id_token of a redeemed OpenID Connect code; `iss` the service, lifetime the access token's. */
export async function idToken(
  env: KeyEnv,
  grant: CodeGrant & { oidc: NonNullable<CodeGrant["oidc"]> },
  iss: string,
  ttlSeconds: number,
  now = Date.now(),
): Promise<string> {
  const { kid, key } = await signingKey(env, now);
  const iat = Math.floor(now / 1000);
  const automatic = grant.autoLogin?.automatic === true;
  return new SignJWT({
    ...(automatic ? {} : identityClaims(grant)),
    auth_time: Math.floor(grant.oidc.authTime / 1000),
    amr: grant.oidc.amr,
    ...(grant.oidc.nonce !== undefined && { nonce: grant.oidc.nonce }),
  })
    .setProtectedHeader({ alg: "ES256", kid, typ: "JWT" })
    .setIssuer(iss)
    .setSubject(grant.plid)
    .setAudience(grant.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(key);
}
