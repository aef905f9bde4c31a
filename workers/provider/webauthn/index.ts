// The WebAuthn verifier worker (docs/passkeys.md "Verification"): the passkey library's checks of
// an assertion and a registration, reached by the `WEBAUTHN` service binding of the workers that
// serve the sign-in steps (authorize, console; the all-in-one binds to its own entrypoint). The
// library, its attestation formats and certificate parsing are most of a sign-in worker's code
// otherwise, and only a passkey ceremony needs them: a first page or a code step never loads them.
// It has no route: nothing but a binding reaches it.

import { WorkerEntrypoint } from "cloudflare:workers";
import {
  verifyAssertion,
  verifyRegistration,
  type AssertionCheck,
  type RegistrationCheck,
  type VerifiedCredential,
} from "./verify";

export type { AssertionCheck, RegistrationCheck, RelyingParty, VerifiedCredential } from "./verify";

/** The checks, as RPC methods. */
export class WebAuthnVerifier extends WorkerEntrypoint {
  /** The assertion's new counter when it is valid, else null. */
  assertion(c: AssertionCheck): Promise<number | null> {
    return verifyAssertion(c);
  }

  /** What is stored of a valid registration, else null. */
  registration(c: RegistrationCheck): Promise<VerifiedCredential | null> {
    return verifyRegistration(c);
  }
}

export default WebAuthnVerifier;
