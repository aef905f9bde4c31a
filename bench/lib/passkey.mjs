// A passkey for the bench (docs/passkeys.md): one P-256 key the harness holds, its COSE public key
// written by the library's own CBOR encoder (@simplewebauthn/server/helpers), and the assertions an
// identify page's script would post, signed by WebCrypto. The bench entry stores the public key for
// each bench person (`/__bench/mint?kind=passkey-people`).
import { webcrypto as crypto } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";

const b64url = (bytes) => Buffer.from(bytes).toString("base64url");
const sha256 = async (bytes) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
const concat = (...parts) => Buffer.concat(parts.map((p) => Buffer.from(p)));

/** r‖s (WebCrypto) as the DER form an ES256 assertion carries. */
function der(raw) {
  const int = (b) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    let v = b.subarray(i);
    if (v[0] & 0x80) v = concat([0], v);
    return concat([0x02, v.length], v);
  };
  const body = concat(int(raw.subarray(0, 32)), int(raw.subarray(32)));
  return concat([0x30, body.length], body);
}

/** A key pair and its COSE public key (base64url). */
export async function benchPasskey() {
  const key = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", key.publicKey));
  const cose = isoCBOR.encode(
    new Map(
      /** @type {[number, number | Uint8Array][]} */ ([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, raw.slice(1, 33)],
        [-3, raw.slice(33, 65)],
      ]),
    ),
  );
  return { key, cose: b64url(cose) };
}

/**
 * The assertion JSON for a person's credential on an identify page whose form posts `tx`, for the
 * page's host `rpId` and origin; `counter` must grow from one assertion of a credential to the next.
 */
export async function assertion(key, { credentialId, handle }, tx, rpId, origin, counter) {
  const challenge = b64url(await sha256(Buffer.from(tx)));
  const authData = concat(
    await sha256(Buffer.from(rpId)),
    [0x05],
    [(counter >>> 24) & 255, (counter >>> 16) & 255, (counter >>> 8) & 255, counter & 255],
  );
  const clientData = Buffer.from(JSON.stringify({ type: "webauthn.get", challenge, origin, crossOrigin: false }));
  const signed = concat(authData, await sha256(clientData));
  const sig = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key.privateKey, signed));
  return JSON.stringify({
    id: credentialId,
    rawId: credentialId,
    type: "public-key",
    authenticatorAttachment: "platform",
    clientExtensionResults: {},
    response: {
      clientDataJSON: b64url(clientData),
      authenticatorData: b64url(authData),
      signature: b64url(der(sig)),
      userHandle: handle,
    },
  });
}
