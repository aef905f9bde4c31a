// The abuse run's passkeys (docs/benchmarks.md "Abuse: leaked numbers against the SMS guard"): a
// software platform authenticator for the people of the passkey share. It makes a passkey where the
// sign-in's end offers one (docs/passkeys.md "The offer"), with attestation "none", and answers the
// identify page's passkey form with an assertion, as a phone's authenticator would. The service
// verifies both with its own WebAuthn library; here the CBOR of the registration is that library's
// encoder (`isoCBOR`), the key is node's P-256, and the signature is node's, DER-encoded as
// WebAuthn's ES256 wants it.

import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { isoBase64URL, isoCBOR } from "@simplewebauthn/server/helpers";

/** WebAuthn's authenticator data flags: user present, user verified, attested credential data. */
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

const sha256 = (/** @type {Uint8Array | string} */ b) => new Uint8Array(createHash("sha256").update(b).digest());
const b64u = (/** @type {Uint8Array} */ b) => isoBase64URL.fromBuffer(new Uint8Array(b));

/** @param {Uint8Array[]} parts */
function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** @param {number} n @param {number} bytes big-endian */
function uint(n, bytes) {
  const out = new Uint8Array(bytes);
  for (let i = bytes - 1; i >= 0; i--, n = Math.floor(n / 256)) out[i] = n % 256;
  return out;
}

/**
 * @typedef {{ id: string; privateKey: import("node:crypto").KeyObject; userHandle: string; rpId: string }} Passkey
 * @typedef {{ challenge: string; rp: { id: string }; user: { id: string } }} CreationOptions
 */

/**
 * A new passkey for the offer's options (the enrolment page's `enrol-options`), and the
 * registration the page's script would post (`RegistrationResponseJSON`), for `origin`.
 * @param {CreationOptions} options
 * @param {string} origin
 * @returns {{ passkey: Passkey; credential: string }}
 */
export function makePasskey(options, origin) {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicKey.export({ format: "jwk" });
  const rawId = new Uint8Array(randomBytes(16));
  // COSE_Key: kty EC2, alg ES256, crv P-256, x, y
  const cose = isoCBOR.encode(
    new Map(
      /** @type {[number, number | Uint8Array][]} */ ([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, isoBase64URL.toBuffer(/** @type {string} */ (jwk.x))],
        [-3, isoBase64URL.toBuffer(/** @type {string} */ (jwk.y))],
      ]),
    ),
  );
  const authData = concat(
    sha256(options.rp.id),
    Uint8Array.of(UP | UV | AT),
    uint(0, 4),
    new Uint8Array(16), // AAGUID: none
    uint(rawId.length, 2),
    rawId,
    cose,
  );
  const clientData = JSON.stringify({
    type: "webauthn.create",
    challenge: options.challenge,
    origin,
    crossOrigin: false,
  });
  const attestation = isoCBOR.encode(
    new Map(
      /** @type {[string, string | Map<never, never> | Uint8Array][]} */ ([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]),
    ),
  );
  const id = b64u(rawId);
  return {
    passkey: { id, privateKey, userHandle: options.user.id, rpId: options.rp.id },
    credential: JSON.stringify({
      id,
      rawId: id,
      type: "public-key",
      authenticatorAttachment: "platform",
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64u(new TextEncoder().encode(clientData)),
        attestationObject: b64u(attestation),
        transports: ["internal"],
      },
    }),
  };
}

/**
 * The assertion the identify page's passkey form posts (`AuthenticationResponseJSON`): its
 * challenge is SHA-256 of the form's `tx`, as the page's script computes it. The counter stays 0,
 * as many platform authenticators keep it.
 * @param {Passkey} k
 * @param {string} tx
 * @param {string} origin
 */
export function assertion(k, tx, origin) {
  const authData = concat(sha256(k.rpId), Uint8Array.of(UP | UV), uint(0, 4));
  const clientData = new TextEncoder().encode(
    JSON.stringify({ type: "webauthn.get", challenge: b64u(sha256(tx)), origin, crossOrigin: false }),
  );
  const signature = sign("sha256", concat(authData, sha256(clientData)), { key: k.privateKey, dsaEncoding: "der" });
  return JSON.stringify({
    id: k.id,
    rawId: k.id,
    type: "public-key",
    authenticatorAttachment: "platform",
    clientExtensionResults: {},
    response: {
      clientDataJSON: b64u(clientData),
      authenticatorData: b64u(authData),
      signature: b64u(new Uint8Array(signature)),
      userHandle: k.userHandle,
    },
  });
}

/**
 * The JSON of the enrolment page's options (`<script type="application/json" id="enrol-options">`),
 * or null when the page has none.
 * @param {string} html
 * @returns {CreationOptions | null}
 */
export function enrolOptionsOf(html) {
  const m = /<script type="application\/json" id="enrol-options">([\s\S]*?)<\/script>/.exec(html);
  return m ? JSON.parse(m[1]) : null;
}
