// The id_token of an OpenID Connect code (docs/oidc.md "The id_token"; OpenID Connect Core §2,
// §3.1.3.3): ES256 under the service's signing key (store/signing-keys.ts), signed with `jose`.
// Its identity claims are the ones /v1/user/me would give for this code: none for an automatic
// login (spec §2.1), else the items the person agreed to, in OpenID Connect's names and forms.

import { SignJWT } from "jose";
import type { IdentityItem } from "../../core/spec";
import { signingKey } from "../store/signing-keys";
import type { CodeGrant } from "../store/one-time/tables/codes";

type KeyEnv = { DB: D1Database; SEAL_KEY: string };

/** `01012345678` as E.164: `+821012345678` (Korea's country code, the trunk 0 dropped). */
export function e164(phone: string): string {
  return `+82${phone.replace(/^0/, "")}`;
}

/** The identity claims of `grant`'s agreed items (OpenID Connect Core §5.1). */
export function identityClaims(grant: CodeGrant): Record<string, string | boolean> {
  const has = (i: IdentityItem) => grant.items.includes(i);
  const s = grant.subscriber;
  const out: Record<string, string | boolean> = {};
  if (has("name")) out.name = s.name;
  if (has("phoneNo")) {
    out.phone_number = e164(s.phone);
    out.phone_number_verified = true;
  }
  if (has("gender")) out.gender = s.gender === "F" ? "female" : "male";
  if (has("birthdate")) out.birthdate = s.birth;
  else if (has("birthday")) out.birthdate = `0000-${s.birth.slice(5)}`;
  return out;
}

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
