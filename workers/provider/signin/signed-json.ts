// JSON a page carries and the service gets back unaltered: base64url of the value, then a MAC with
// a key derived from SEAL_KEY for one purpose (`derivedToken`), behind a prefix naming the kind
// and version. The first page's `tx` (transaction.ts `pageToken`) and a passkey enrolment's ticket
// (passkey/webauthn.ts) are such values. Nothing is stored for them; what they say is only believed
// once the MAC checks.

import { base64ToBytes, bytesToBase64url, derivedToken, fromUtf8, utf8 } from "../../core/crypto";
import { sealKeyVar } from "../store/clients";
import { sameHash } from "../store/one-time/index";

type SealEnv = { SEAL_KEY: string };

/** `prefix` + base64url(JSON of `value`) + "." + its MAC for `purpose`. */
export async function signJson(env: SealEnv, prefix: string, purpose: string, value: unknown): Promise<string> {
  const body = bytesToBase64url(utf8(JSON.stringify(value)));
  return `${prefix}${body}.${await derivedToken(sealKeyVar(env), purpose, body)}`;
}

/** The value of a token `signJson` made with this prefix and purpose, or null (malformed, altered, too long, another key). */
export async function openJson<T>(
  env: SealEnv,
  prefix: string,
  purpose: string,
  token: string | undefined,
  maxChars: number,
): Promise<T | null> {
  if (!token || token.length > maxChars || !token.startsWith(prefix)) return null;
  const dot = token.lastIndexOf(".");
  const body = token.slice(prefix.length, dot);
  if (dot <= prefix.length || !/^[A-Za-z0-9_-]+$/.test(body)) return null;
  if (!sameHash(await derivedToken(sealKeyVar(env), purpose, body), token.slice(dot + 1))) return null;
  return JSON.parse(fromUtf8(base64ToBytes(body))) as T;
}
