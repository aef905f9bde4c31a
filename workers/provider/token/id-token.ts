// The id_token of an OpenID Connect code (docs/oidc.md "The id_token"; OpenID Connect Core §2,
// §3.1.3.3): ES256 under the service's signing key (store/signing-keys.ts), signed with `jose`.
// Its claims are the ones the sign-in fixed (store/one-time/tables/grant.ts `signInClaims`: the
// identity claims /v1/user/me would give for this code, auth_time, amr, nonce, sub, aud), kept with
// the code and answered by its redemption, and the exchange's own: iss, iat, exp.

import { SignJWT } from "jose";
import { signerNow, signingKey } from "../store/signing-keys";

type KeyEnv = { DB: D1Database; SEAL_KEY: string };

/** The signed id_token of a redeemed OpenID Connect code; `iss` the service, lifetime the access token's. */
export async function idToken(
  env: KeyEnv,
  signInClaimsJson: string,
  iss: string,
  ttlSeconds: number,
  now = Date.now(),
): Promise<string> {
  const { kid, key } = signerNow(env, now) ?? (await signingKey(env, now));
  const iat = Math.floor(now / 1000);
  return new SignJWT(JSON.parse(signInClaimsJson) as Record<string, unknown>)
    .setProtectedHeader({ alg: "ES256", kid, typ: "JWT" })
    .setIssuer(iss)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(key);
}
