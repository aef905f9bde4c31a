// The library's two checks (docs/passkeys.md "Verification"), by @simplewebauthn/server: no CBOR,
// COSE or signature is read here. Each takes what the sign-in pages know (the posted credential, the
// challenge, the relying party, the stored key) and answers plain data, so it crosses a service
// binding as it is. User verification is required for every ceremony.

import {
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";

/** The service's relying party for a request: its host is the RP ID, its origin the expected one. */
export interface RelyingParty {
  id: string;
  origin: string;
}

/** An assertion to check against the stored passkey. */
export interface AssertionCheck {
  response: AuthenticationResponseJSON;
  challenge: string;
  rp: RelyingParty;
  passkey: { credentialId: string; publicKey: Uint8Array; transports: string[] };
}

/** A registration to check. */
export interface RegistrationCheck {
  response: RegistrationResponseJSON;
  challenge: string;
  rp: RelyingParty;
}

/** A registration the library verified: what is stored of it. */
export interface VerifiedCredential {
  id: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  /** "synced" (a passkey provider keeps it on the person's devices), "device" (this one), "key" (a security key or phone). */
  device: "synced" | "device" | "key";
}

/**
 * The assertion's new counter when it is valid for this RP, origin and challenge with the user
 * verified, else null (malformed input included).
 */
export async function verifyAssertion(c: AssertionCheck): Promise<number | null> {
  try {
    const r = await verifyAuthenticationResponse({
      response: c.response,
      expectedChallenge: c.challenge,
      expectedOrigin: c.rp.origin,
      expectedRPID: c.rp.id,
      requireUserVerification: true,
      credential: {
        id: c.passkey.credentialId,
        publicKey: c.passkey.publicKey as Uint8Array<ArrayBuffer>,
        // the counter is checked where it is advanced, in the shard's one step (tables/passkeys.ts)
        counter: 0,
        transports: c.passkey.transports as never,
      },
    });
    return r.verified ? r.authenticationInfo.newCounter : null;
  } catch {
    return null;
  }
}

/** The registration checked for this RP, origin and challenge with the user verified, or null. */
export async function verifyRegistration(c: RegistrationCheck): Promise<VerifiedCredential | null> {
  try {
    const v = await verifyRegistrationResponse({
      response: c.response,
      expectedChallenge: c.challenge,
      expectedOrigin: c.rp.origin,
      expectedRPID: c.rp.id,
      requireUserVerification: true,
    });
    if (!v.verified) return null;
    const info = v.registrationInfo;
    const device =
      info.credentialDeviceType === "multiDevice"
        ? "synced"
        : c.response.authenticatorAttachment === "cross-platform"
          ? "key"
          : "device";
    return {
      id: info.credential.id,
      publicKey: info.credential.publicKey,
      counter: info.credential.counter,
      transports: (info.credential.transports ?? []).filter((t) => typeof t === "string").slice(0, 8),
      device,
    };
  } catch {
    return null;
  }
}
