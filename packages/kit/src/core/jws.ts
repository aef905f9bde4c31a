// Compact JWS with HS256 (RFC 7515, RFC 7518 §3.2): what signed security event tokens travel as
// (RFC 8417, docs/events.md). Only HS256 exists here: a token naming another `alg` is refused,
// never verified another way.

import { base64ToBytes, bytesToBase64url, constantTimeEqual, fromUtf8, utf8 } from "./crypto.js";

async function hmac(key: string, data: string): Promise<string> {
  const k = await crypto.subtle.importKey("raw", utf8(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return bytesToBase64url(new Uint8Array(await crypto.subtle.sign("HMAC", k, utf8(data))));
}

function part(value: unknown): string {
  return bytesToBase64url(utf8(JSON.stringify(value)));
}

/** Signs `claims` as a compact JWS, HS256 under the UTF-8 bytes of `key`, with the header's `typ`. */
export async function signHs256(claims: Record<string, unknown>, key: string, typ: string): Promise<string> {
  const input = `${part({ alg: "HS256", typ })}.${part(claims)}`;
  return `${input}.${await hmac(key, input)}`;
}

export type JwsRefusal = "malformed" | "alg" | "signature";

/**
 * The header and claims of a compact JWS whose HS256 signature under `key` holds; a refusal
 * otherwise: "malformed" (not three base64url JSON parts), "alg" (not HS256), "signature".
 */
export async function verifyHs256(
  token: string,
  key: string,
): Promise<{ header: Record<string, unknown>; claims: Record<string, unknown> } | { refused: JwsRefusal }> {
  const parts = token.split(".");
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return { refused: "malformed" };
  let header: unknown;
  let claims: unknown;
  try {
    header = JSON.parse(fromUtf8(base64ToBytes(parts[0]!)));
    claims = JSON.parse(fromUtf8(base64ToBytes(parts[1]!)));
  } catch {
    return { refused: "malformed" };
  }
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(header) || !isObject(claims)) return { refused: "malformed" };
  if (header.alg !== "HS256") return { refused: "alg" };
  const expected = await hmac(key, `${parts[0]}.${parts[1]}`);
  if (!(await constantTimeEqual(expected, parts[2]!))) return { refused: "signature" };
  return { header, claims };
}
