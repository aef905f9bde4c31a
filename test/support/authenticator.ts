// A software WebAuthn authenticator for the tests that drive passkeys through HTTP (the browser
// tests use Chromium's virtual authenticator instead): a P-256 key per credential, attestation
// "none", CBOR written by the library's own encoder (@simplewebauthn/server/helpers `isoCBOR`),
// signatures by WebCrypto. It answers the ceremonies the service's pages ask for, and can be told
// to answer for another RP ID or origin, skip user verification or keep its counter, to test what
// the service refuses.

import { isoCBOR } from "@simplewebauthn/server/helpers";

function b64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromB64url(s: string): Uint8Array {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function u32(n: number): Uint8Array {
  return new Uint8Array([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
}

/** An ECDSA signature as WebCrypto gives it (r‖s) in the DER form WebAuthn's ES256 carries. */
function derSignature(raw: Uint8Array): Uint8Array {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    let v: Uint8Array = b.slice(i);
    if (v[0]! & 0x80) v = concat(new Uint8Array([0]), v);
    return concat(new Uint8Array([0x02, v.length]), v);
  };
  const body = concat(int(raw.slice(0, 32)), int(raw.slice(32)));
  return concat(new Uint8Array([0x30, body.length]), body);
}

export interface SoftCredential {
  id: string;
  rpId: string;
  userHandle: string;
  key: CryptoKeyPair;
  counter: number;
}

export interface CeremonyOptions {
  rpId: string;
  origin: string;
  challenge: string;
  /** Leave the UV flag off (the service requires it). */
  noUserVerification?: boolean;
  /** Do not advance the counter (a cloned authenticator). */
  keepCounter?: boolean;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  /** `navigator.credentials.create` for `userHandle`: the RegistrationResponseJSON the page posts. */
  async create(o: CeremonyOptions & { userHandle: string }): Promise<{ json: string; credential: SoftCredential }> {
    const key = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const raw = new Uint8Array((await crypto.subtle.exportKey("raw", key.publicKey)) as ArrayBuffer);
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, raw.slice(1, 33)],
        [-3, raw.slice(33, 65)],
      ]),
    );
    const idBytes = crypto.getRandomValues(new Uint8Array(16));
    const credential: SoftCredential = { id: b64url(idBytes), rpId: o.rpId, userHandle: o.userHandle, key, counter: 1 };
    const flags = FLAG_UP | FLAG_AT | (o.noUserVerification ? 0 : FLAG_UV);
    const authData = concat(
      await sha256(new TextEncoder().encode(o.rpId)),
      new Uint8Array([flags]),
      u32(credential.counter),
      new Uint8Array(16),
      new Uint8Array([0, idBytes.length]),
      idBytes,
      cose,
    );
    const clientData = JSON.stringify({
      type: "webauthn.create",
      challenge: o.challenge,
      origin: o.origin,
      crossOrigin: false,
    });
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]) as never,
    );
    this.credentials.push(credential);
    const json = JSON.stringify({
      id: credential.id,
      rawId: credential.id,
      type: "public-key",
      authenticatorAttachment: "platform",
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(new TextEncoder().encode(clientData)),
        attestationObject: b64url(attestationObject),
        transports: ["internal"],
      },
    });
    return { json, credential };
  }

  /** `navigator.credentials.get` with `credential`: the AuthenticationResponseJSON the page posts. */
  async assert(credential: SoftCredential, o: CeremonyOptions): Promise<string> {
    if (!o.keepCounter) credential.counter++;
    const flags = FLAG_UP | (o.noUserVerification ? 0 : FLAG_UV);
    const authData = concat(
      await sha256(new TextEncoder().encode(o.rpId)),
      new Uint8Array([flags]),
      u32(credential.counter),
    );
    const clientData = new TextEncoder().encode(
      JSON.stringify({ type: "webauthn.get", challenge: o.challenge, origin: o.origin, crossOrigin: false }),
    );
    const signed = concat(authData, await sha256(clientData));
    const sig = new Uint8Array(
      await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, credential.key.privateKey, signed),
    );
    return JSON.stringify({
      id: credential.id,
      rawId: credential.id,
      type: "public-key",
      authenticatorAttachment: "platform",
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(derSignature(sig)),
        userHandle: credential.userHandle,
      },
    });
  }
}

/** The challenge a sign-in page's script computes from the `tx` it posts (base64url SHA-256). */
export async function pageChallenge(tx: string): Promise<string> {
  return b64url(await sha256(new TextEncoder().encode(tx)));
}

export { b64url, fromB64url };
