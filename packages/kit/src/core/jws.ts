// Compact JWS (RFC 7515): security event tokens (RFC 8417, docs/events.md), HS256 or ES256, signed and verified by
// `jose`; verification fixes the algorithm (another `alg` is refused, never verified another way) and says why.

import { SignJWT, createLocalJWKSet, errors, jwtVerify, type JWTHeaderParameters, type JWTVerifyOptions } from "jose";
import { utf8 } from "./crypto.js";

/** Signs `claims` as a compact JWS, HS256 under the UTF-8 bytes of `key`, with the header's `typ`. */
export const signHs256 = (claims: Record<string, unknown>, key: string, typ: string): Promise<string> =>
  signJws(claims, utf8(key), { alg: "HS256", typ });
/** Signs `claims` as a compact JWS under `key` with the header given (a stream's ES256 SETs: docs/events.md). */
export const signJws = (claims: Record<string, unknown>, key: CryptoKey | Uint8Array, header: JWTHeaderParameters) =>
  new SignJWT(claims).setProtectedHeader(header).sign(key);

/** "malformed": not three base64url parts, a header or claims not a JSON object, a failing `exp` or `nbf`; "kid": no key of the set has it. */
export type JwsRefusal = "malformed" | "alg" | "signature" | "kid" | "typ" | "iss" | "aud";
type Verified = { header: Record<string, unknown>; claims: Record<string, unknown> } | { refused: JwsRefusal };
/** Three non-empty base64url parts: anything else (an unsigned `alg: none` token too) is not a signed JWS. */
const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
async function verified(token: string, key: Parameters<typeof jwtVerify>[1], o: JWTVerifyOptions): Promise<Verified> {
  if (!COMPACT.test(token)) return { refused: "malformed" };
  try {
    const { protectedHeader, payload } = await jwtVerify(token, key as Uint8Array, o);
    return { header: { ...protectedHeader }, claims: { ...payload } };
  } catch (err) {
    const claim = err instanceof errors.JWTClaimValidationFailed ? err.claim : "";
    if (/^(typ|iss|aud)$/.test(claim)) return { refused: claim as JwsRefusal };
    if (err instanceof errors.JOSEAlgNotAllowed) return { refused: "alg" };
    if (err instanceof errors.JWSSignatureVerificationFailed) return { refused: "signature" };
    if (err instanceof errors.JWKSNoMatchingKey) return { refused: "kid" };
    if (err instanceof errors.JOSEError) return { refused: "malformed" };
    throw err;
  }
}
/** The header and claims of a compact JWS whose HS256 signature under `key` holds, or why not. */
export const verifyHs256 = (token: string, key: string) => verified(token, utf8(key), { algorithms: ["HS256"] });
/** A stream's SET (docs/events.md "Shared Signals"): ES256 under the key of `jwks` its `kid` names, `typ` secevent+jwt, `iss`, `aud`. */
export const verifyEs256Set = (token: string, jwks: { keys: unknown[] }, e: { issuer: string; audience: string }) =>
  verified(token, createLocalJWKSet(jwks as never), { algorithms: ["ES256"], typ: "secevent+jwt", ...e });
