// What an authorization code stands for (table `codes`, carried on to its token: codes.ts), and the
// OpenID Connect claims it gives (docs/oidc.md "The id_token"; OpenID Connect Core §5.1): the items
// the person agreed to, in OpenID Connect's names and forms. The id_token (token/id-token.ts, from
// the claims kept with the code) and UserInfo (user-me/userinfo.ts, from the token's grant) give the
// same ones; no signing here, so the user-me worker carries no JOSE library.

import type { IdentityItem, Telco } from "../../../../core/spec";

/**
 * A person's directory entry as a code carries it: the directory's `Subscriber` without its id
 * (store/directory/directory.ts; the minting code passes one, so the compiler holds the two alike).
 */
export interface SubscriberSnapshot {
  telco: Telco;
  phone: string;
  name: string;
  gender: "M" | "F";
  birth: string; // YYYY-MM-DD
  foreign: "L" | "F";
  ci: string;
}

/**
 * What an authorization code stands for; carried on to the access token issued from it. It holds
 * what /v1/user/me needs, so that read touches no D1: the subscriber as the directory had them at
 * sign-in and the items consented then (docs/storage.md "Snapshots").
 */
export interface CodeGrant {
  clientId: string;
  subscriberId: number;
  plid: string;
  redirectUri: string;
  /** The automatic-login grant this login was made under, if any (spec §2.1 modes). */
  autoLogin: { deviceHash: string; automatic: boolean } | null;
  /** The sign-in's time: a revocation of the plid at or after it ends the code and its token. */
  issuedAt: number;
  /** The client's agreed items that the subscriber consented to, at sign-in. */
  items: IdentityItem[];
  /** The subscriber's directory entry at sign-in. */
  subscriber: SubscriberSnapshot;
  /**
   * An OpenID Connect request's (docs/oidc.md): the nonce to echo, when the number was last proven
   * interactively (`auth_time`, epoch ms) and how (`amr`). Absent for every other code.
   */
  oidc?: { nonce?: string; authTime: number; amr: string[] };
}

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

/**
 * The claims of a code's id_token that its sign-in fixes (docs/oidc.md "The id_token"), from its
 * grant and the grant's `oidc` part: the identity claims /v1/user/me would give for it (none for an
 * automatic login, spec §2.1), when the number was last proven and how, the nonce when one was
 * sent, the app's plid and the client. The exchange adds `iss`, `iat` and `exp`
 * (token/id-token.ts). Kept with the code when it is made (store/one-time/tables/codes.ts), so the
 * exchange reads these and not the whole grant.
 */
export function signInClaims(grant: CodeGrant, oidc: NonNullable<CodeGrant["oidc"]>): Record<string, unknown> {
  return {
    ...(grant.autoLogin?.automatic === true ? {} : identityClaims(grant)),
    auth_time: Math.floor(oidc.authTime / 1000),
    amr: oidc.amr,
    ...(oidc.nonce !== undefined && { nonce: oidc.nonce }),
    sub: grant.plid,
    aud: grant.clientId,
  };
}
