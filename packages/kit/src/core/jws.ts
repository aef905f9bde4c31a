// Compact JWS (RFC 7515): security event tokens (RFC 8417, docs/events.md), HS256 or ES256, signed and verified by
// `jose`; verification fixes the algorithm (another `alg` is refused, never verified another way) and says why.

import { SignJWT, errors, jwtVerify, type JWTHeaderParameters } from "jose";
import { utf8 } from "./crypto.js";

/** Signs `claims` as a compact JWS, HS256 under the UTF-8 bytes of `key`, with the header's `typ`. */
export const signHs256 = (claims: Record<string, unknown>, key: string, typ: string): Promise<string> =>
  signJws(claims, utf8(key), { alg: "HS256", typ });
/** Signs `claims` as a compact JWS under `key` with the header given (a stream's ES256 SETs: docs/events.md). */
export const signJws = (claims: Record<string, unknown>, key: CryptoKey | Uint8Array, header: JWTHeaderParameters) =>
  new SignJWT(claims).setProtectedHeader(header).sign(key);

export type JwsRefusal = "malformed" | "alg" | "signature";

/** Three non-empty base64url parts: anything else (an unsigned `alg: none` token too) is not a signed JWS. */
const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The header and claims of a compact JWS whose HS256 signature under `key` holds; a refusal
 * otherwise: "malformed" (not three base64url parts, a header or claims that are not a JSON object,
 * an `exp` or `nbf` that fails), "alg" (not HS256), "signature".
 */
export async function verifyHs256(
  token: string,
  key: string,
): Promise<{ header: Record<string, unknown>; claims: Record<string, unknown> } | { refused: JwsRefusal }> {
  if (!COMPACT.test(token)) return { refused: "malformed" };
  try {
    const { protectedHeader, payload } = await jwtVerify(token, utf8(key), { algorithms: ["HS256"] });
    return { header: { ...protectedHeader }, claims: { ...payload } };
  } catch (err) {
    if (err instanceof errors.JOSEAlgNotAllowed) return { refused: "alg" };
    if (err instanceof errors.JWSSignatureVerificationFailed) return { refused: "signature" };
    if (err instanceof errors.JOSEError) return { refused: "malformed" };
    throw err;
  }
}
