// All randomness, hashing, comparison and ciphers, named by intent (docs/architecture.md §7). WebCrypto only.

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export const B64URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const codesOf = (alphabet: string): readonly number[] => Array.from(alphabet, (c) => c.charCodeAt(0));
const BASE64_CODES = codesOf("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
const B64URL_CODES = codesOf(B64URL_ALPHABET);

/** Base64 in the alphabet of character codes `C`, made a string in pieces of 8,192 (docs/benchmarks.md "What was fixed"). */
function encodeBase64(bytes: Uint8Array, C: readonly number[], padded: boolean): string {
  const n = Math.ceil((bytes.length * 4) / 3);
  const codes = new Array<number>(n + (padded ? (3 - (bytes.length % 3)) % 3 : 0));
  let j = 0;
  for (let i = 0; i < bytes.length; i += 3) {
    const v = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    codes[j++] = C[v >> 18]!;
    codes[j++] = C[(v >> 12) & 63]!;
    if (j < n) codes[j++] = C[(v >> 6) & 63]!;
    if (j < n) codes[j++] = C[v & 63]!;
  }
  while (j < codes.length) codes[j++] = 61; // "="
  if (codes.length <= 8192) return String.fromCharCode.apply(null, codes);
  let out = "";
  for (let i = 0; i < codes.length; i += 8192) out += String.fromCharCode.apply(null, codes.slice(i, i + 8192));
  return out;
}

/** Standard Base64 with padding (RFC 4648 §4). */
export const bytesToBase64 = (bytes: Uint8Array): string => encodeBase64(bytes, BASE64_CODES, true);
/** Base64url without padding (RFC 4648 §5). */
export const bytesToBase64url = (bytes: Uint8Array): string => encodeBase64(bytes, B64URL_CODES, false);

/** Strict Base64 (standard or URL alphabet, padding optional); throws on anything else. */
export function base64ToBytes(text: string): Uint8Array {
  const t = text.replace(/-/g, "+").replace(/_/g, "/");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(t) || t.replace(/=+$/, "").length % 4 === 1) {
    throw new TypeError("not base64");
  }
  const bin = atob(t.padEnd(Math.ceil(t.length / 4) * 4, "="));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function utf8(text: string): Uint8Array {
  return enc.encode(text);
}

/** Decodes UTF-8 strictly; throws on invalid sequences. */
export function fromUtf8(bytes: Uint8Array): string {
  return dec.decode(bytes);
}

/** `bytes` CSPRNG bytes as base64url (default 32 bytes = 256 bits). */
export function randomToken(bytes = 32): string {
  return bytesToBase64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** `n` uniformly distributed decimal digits from the CSPRNG, by rejection sampling (no modulo bias). */
export function randomDigits(n: number): string {
  let out = "";
  const buf = new Uint8Array(Math.max(16, n * 2));
  while (out.length < n) {
    crypto.getRandomValues(buf);
    for (const b of buf) {
      if (b < 250) out += String(b % 10); // 250 = 25 × 10: values 250..255 are rejected
      if (out.length === n) break;
    }
  }
  return out;
}

/** A random alphanumeric string (for generated client ids and secrets), unbiased. */
export function randomAlphanumeric(n: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"; // 62
  let out = "";
  const buf = new Uint8Array(n * 2);
  while (out.length < n) {
    crypto.getRandomValues(buf);
    for (const b of buf) {
      if (b < 248) out += alphabet[b % 62]; // 248 = 4 × 62
      if (out.length === n) break;
    }
  }
  return out;
}

/** SHA-256 of the UTF-8 text, base64url: how codes, tokens, session ids and OTPs are stored. */
export async function sha256(text: string): Promise<string> {
  return bytesToBase64url(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(text))));
}

async function hmacSha256(key: string, message: string): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey("raw", utf8(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, utf8(message)));
}

/** HMAC-SHA256 of `message` under the UTF-8 `key`, as lowercase hex (signed webhooks). */
export async function hmacSha256Hex(key: string, message: string): Promise<string> {
  return [...(await hmacSha256(key, message))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** HMAC-SHA256 of `message` under the UTF-8 `key`, as standard Base64 (Naver Cloud's API signature). */
export async function hmacSha256Base64(key: string, message: string): Promise<string> {
  return bytesToBase64(await hmacSha256(key, message));
}

/** Constant-time equality: both sides hashed (`b` may come as its digest), so nothing leaks. */
export async function constantTimeEqual(a: string, b: string | ArrayBuffer): Promise<boolean> {
  const ha = crypto.subtle.digest("SHA-256", utf8(a)); // both digests start before either is awaited
  const hb = typeof b === "string" ? await crypto.subtle.digest("SHA-256", utf8(b)) : b;
  return crypto.subtle.timingSafeEqual(await ha, hb);
}

/** PKCE S256 (RFC 7636 §4.2): base64url(SHA-256(ASCII(verifier))). */
export async function pkceS256(verifier: string): Promise<string> {
  return sha256(verifier);
}

// ---- spec §2.2 field cipher: AES-128-CBC, PKCS#7, key = IV = first 16 characters of the secret ----

/** Per secret prefix: the 16 key bytes (also the IV) and the imported key. */
const fieldKeys = new Map<string, { bytes: Uint8Array; key: Promise<CryptoKey> }>();

/** The 16 key bytes of spec §2.2; throws when the secret is too short to give them. */
export function fieldKeyBytes(clientSecret: string): Uint8Array {
  const bytes = utf8(clientSecret.slice(0, 16));
  if (bytes.length !== 16) throw new RangeError("client secret cannot key the field cipher");
  return bytes;
}

// Cached by the secret's first 16 characters, which the key bytes are the UTF-8 of: a record's
// five fields encode and import once (docs/benchmarks.md). Only prefixes that gave 16 bytes are cached.
function fieldKey(clientSecret: string): { bytes: Uint8Array; key: Promise<CryptoKey> } {
  const id = clientSecret.slice(0, 16);
  let k = fieldKeys.get(id);
  if (!k) {
    const bytes = fieldKeyBytes(clientSecret);
    if (fieldKeys.size > 1000) fieldKeys.clear(); // bounded per isolate
    k = { bytes, key: crypto.subtle.importKey("raw", bytes, { name: "AES-CBC" }, false, ["encrypt", "decrypt"]) };
    fieldKeys.set(id, k);
  }
  return k;
}

/** Encrypts one user-record field for transport (spec §2.2): Base64 of AES-128-CBC ciphertext. */
export async function encryptField(clientSecret: string, plaintext: string): Promise<string> {
  const k = fieldKey(clientSecret);
  const ct = await crypto.subtle.encrypt({ name: "AES-CBC", iv: k.bytes }, await k.key, utf8(plaintext));
  return bytesToBase64(new Uint8Array(ct));
}

/** Decrypts one spec §2.2 field; throws on bad Base64, bad padding or invalid UTF-8. */
export async function decryptField(clientSecret: string, ciphertext: string): Promise<string> {
  const k = fieldKey(clientSecret);
  const pt = await crypto.subtle.decrypt({ name: "AES-CBC", iv: k.bytes }, await k.key, base64ToBytes(ciphertext));
  return fromUtf8(new Uint8Array(pt));
}

// ---- AES-256-GCM sealing at rest (client secrets, RP identities) ----

const sealKeys = new Map<string, Promise<CryptoKey>>();

/** Imports a sealing key given as Base64 of 32 bytes; throws when it is not that. */
export function importSealKey(base64Key: string): Promise<CryptoKey> {
  let key = sealKeys.get(base64Key);
  if (!key) {
    const raw = base64ToBytes(base64Key.trim());
    if (raw.length !== 32) throw new RangeError("seal key must be 32 bytes");
    key = crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
    sealKeys.set(base64Key, key);
  }
  return key;
}

/**
 * Seals `plaintext` with AES-256-GCM. `context` is bound as additional data, so a sealed value
 * copied to another row (another client, another plid) does not open there.
 */
export async function seal(key: CryptoKey, plaintext: string, context: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8(context) }, key, utf8(plaintext));
  return `v1.${bytesToBase64url(iv)}.${bytesToBase64url(new Uint8Array(ct))}`;
}

/** Opens a value made by `seal` with the same context; throws when it was altered or moved. */
export async function unseal(key: CryptoKey, sealed: string, context: string): Promise<string> {
  const [v, iv, ct] = sealed.split(".");
  if (v !== "v1" || !iv || !ct) throw new TypeError("not a sealed value");
  const pt = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: base64ToBytes(iv), additionalData: utf8(context) },
    key,
    base64ToBytes(ct),
  );
  return fromUtf8(new Uint8Array(pt));
}

// ---- values derived from a secret key (HKDF-SHA256 per purpose, then HMAC-SHA256) ----

const derivedKeys = new Map<string, Promise<CryptoKey>>();

/**
 * A 256-bit base64url value derived from `input` under the secret key `base64Key` (Base64 of 32 bytes) for one
 * `purpose`: one input gives one value, nobody without the key can compute it, and one purpose's value shows no other.
 */
export async function derivedToken(base64Key: string, purpose: string, input: string): Promise<string> {
  const id = `${purpose}\u0000${base64Key}`;
  let key = derivedKeys.get(id);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", base64ToBytes(base64Key.trim()), "HKDF", false, ["deriveKey"])
      .then((ikm) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: utf8(purpose) },
          ikm,
          { name: "HMAC", hash: "SHA-256", length: 256 },
          false,
          ["sign"],
        ),
      );
    if (derivedKeys.size > 100) derivedKeys.clear();
    derivedKeys.set(id, key);
  }
  return bytesToBase64url(new Uint8Array(await crypto.subtle.sign("HMAC", await key, utf8(input))));
}
