// WebAuthn for the service's passkeys (docs/passkeys.md): the posted credential's shape, the
// challenges and the enrolment tickets. The credential itself is verified by @simplewebauthn/server
// in the WebAuthn verifier worker (workers/provider/webauthn/), reached by the `WEBAUTHN` service
// binding: no CBOR, COSE or signature is read here, and the library is not in this worker's code.
// The relying party is the service's own host (the request's), its origin the request's; user
// verification is required for every ceremony.
//
// Challenges:
// - a sign-in's is derived from the `tx` its identify page posts (a signed first page, or a stored
//   transaction's random id): SHA-256 of it, which the page's script computes too, so the first page
//   stays cached and storeless; the person's shard takes it once at the assertion (replay refused);
// - an enrolment's is random, in a ticket signed with a key derived from SEAL_KEY (`EnrolTicket`),
//   bound to the browser, expiring in TICKET_MS, and taken once by the shard that stores the passkey.

import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { bytesToBase64url, randomToken, sha256, utf8 } from "../../../core/crypto";
import type { PasskeyRow } from "../../store/directory/index";
import { openJson, signJson } from "../signed-json";
import type { VerifiedCredential, WebAuthnVerifier } from "../../webauthn/index";

/** The longest credential JSON taken (an assertion is under 2 KB; an attestation "none" under 1 KB). */
export const MAX_CREDENTIAL_CHARS = 8192;
/** How long an enrolment ticket (its page) lasts. */
export const TICKET_MS = 5 * 60_000;

/** The relying party of a request: the service's host is the RP ID, its origin the expected one. */
export function relyingParty(req: Request): { id: string; origin: string } {
  const u = new URL(req.url);
  return { id: u.hostname, origin: u.origin };
}

/** The challenge of a sign-in's identify page: base64url SHA-256 of the `tx` it posts (the page computes it too). */
export async function signinChallenge(tx: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", utf8(tx));
  return bytesToBase64url(new Uint8Array(digest));
}

/** JSON of a posted credential, or null when it is not an object of the expected shape. */
export function credentialJson<T extends AuthenticationResponseJSON | RegistrationResponseJSON>(
  value: string | undefined,
): T | null {
  if (!value || value.length > MAX_CREDENTIAL_CHARS) return null;
  try {
    const v = JSON.parse(value) as T;
    const ok =
      typeof v === "object" &&
      v !== null &&
      typeof v.id === "string" &&
      v.id.length > 0 &&
      v.id.length <= 1024 &&
      /^[A-Za-z0-9_-]+$/.test(v.id) &&
      v.type === "public-key" &&
      typeof v.response === "object" &&
      v.response !== null;
    return ok ? v : null;
  } catch {
    return null;
  }
}

/** The user handle an assertion carries (ours, naming the person's shard), or undefined. */
export function userHandleOf(a: AuthenticationResponseJSON): string | undefined {
  const h = a.response.userHandle;
  return typeof h === "string" ? h : undefined;
}

/** What verifies credentials: the WebAuthn verifier worker, by its service binding. */
type VerifierEnv = { WEBAUTHN: Service<WebAuthnVerifier> };

/**
 * An assertion checked against the stored passkey: the new counter when it is valid for this RP,
 * origin and challenge with the user verified, else null (malformed input included).
 */
export async function verifiedAssertion(
  env: VerifierEnv,
  req: Request,
  a: AuthenticationResponseJSON,
  challenge: string,
  passkey: PasskeyRow,
): Promise<number | null> {
  const { credentialId, publicKey, transports } = passkey;
  return env.WEBAUTHN.assertion({
    response: a,
    challenge,
    rp: relyingParty(req),
    passkey: { credentialId, publicKey, transports },
  });
}

/** A registration checked for this RP, origin and challenge with the user verified, or null. */
export async function verifiedRegistration(
  env: VerifierEnv,
  req: Request,
  r: RegistrationResponseJSON,
  challenge: string,
): Promise<VerifiedCredential | null> {
  return env.WEBAUTHN.registration({ response: r, challenge, rp: relyingParty(req) });
}

/**
 * What an enrolment page hands the browser, signed: who enrols (`s`), the creation challenge (`c`),
 * until when (`e`), the hash of the browser's binding cookie (`b`), what proved the person (`w`:
 * "sms", or the passkey `k` of a passkey sign-in), the page's language (`l`), and for an app's
 * sign-in the end it resumes (`r`, docs/passkeys.md "The offer").
 */
export interface EnrolTicket {
  s: number;
  c: string;
  e: number;
  b: string;
  w: "sms" | "passkey";
  k?: string;
  l: "ko" | "en";
  r?: unknown;
}

const TICKET_PREFIX = "pk1.";
const TICKET_PURPOSE = "passkey-enrol-v1";

type SealEnv = { SEAL_KEY: string };

/** A new ticket with a fresh challenge. */
export async function enrolTicket(
  env: SealEnv,
  t: Omit<EnrolTicket, "c" | "e">,
): Promise<{ token: string; ticket: EnrolTicket }> {
  const ticket: EnrolTicket = { ...t, c: randomToken(32), e: Date.now() + TICKET_MS };
  return { token: await signJson(env, TICKET_PREFIX, TICKET_PURPOSE, ticket), ticket };
}

/** The ticket of a token this service signed, while it lasts, or null. */
export async function openTicket(env: SealEnv, token: string | undefined): Promise<EnrolTicket | null> {
  const t = await openJson<EnrolTicket>(env, TICKET_PREFIX, TICKET_PURPOSE, token, 16_384);
  return t && t.e > Date.now() ? t : null;
}

/** The stored form of a challenge (the shard keeps hashes only). */
export function challengeKey(challenge: string): Promise<string> {
  return sha256(`passkey-challenge:${challenge}`);
}
