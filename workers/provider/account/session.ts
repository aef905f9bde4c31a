// The /account page's session (docs/account.md): after the person proves the number, a random id
// in a `__Host-pl_account` cookie (SameSite=Strict) names a record in the one-time store for 10
// minutes, from the proof, not renewed. The record holds the subscriber, the masked number and the
// hash of the CSRF token its forms carry (derived from the id: only the cookie's holder has it); the
// store holds only the hash of the id.

import { constantTimeEqual, randomToken, sha256 } from "../../core/crypto";
import { hostCookie, readHostCookie } from "../../core/cookies";
import { isRandomValue } from "../../core/spec";
import { storeFor, type OneTimeStore, accountSessionKey } from "../store/one-time/index";

type SessionEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

export const ACCOUNT_COOKIE = "pl_account";
export const ACCOUNT_SESSION_MS = 10 * 60_000;

export interface AccountSession {
  subscriberId: number;
  /** `010-****-5678`: what the page shows of the number. */
  masked: string;
  csrfHash: string;
  expiresAt: number;
  /** The passkey that proved the number (docs/passkeys.md); absent: an SMS code did. */
  passkey?: string;
}

/** A loaded session: the record and where it lives. */
export interface SessionHandle {
  key: string;
  stub: DurableObjectStub<OneTimeStore>;
  session: AccountSession;
}

/** Opens a session for a proven number: the cookie to set. */
export async function openSession(
  env: SessionEnv,
  shards: number,
  subscriberId: number,
  masked: string,
  passkey?: string,
): Promise<{ cookie: string }> {
  const id = randomToken(32);
  const session: AccountSession = {
    subscriberId,
    masked,
    ...(passkey ? { passkey } : {}),
    // The CSRF token is derived from the id (the page needs it on every render; the store keeps hashes only).
    csrfHash: await sha256(await csrfOf(id)),
    expiresAt: Date.now() + ACCOUNT_SESSION_MS,
  };
  await storeFor(env, id, shards).putEntry(await accountSessionKey(id), JSON.stringify(session), ACCOUNT_SESSION_MS);
  return {
    cookie: hostCookie(ACCOUNT_COOKIE, id, { maxAgeSeconds: ACCOUNT_SESSION_MS / 1000, sameSite: "Strict" }),
  };
}

/** The forms' CSRF token of session `id`: a keyed derivation only the cookie's holder can compute. */
function csrfOf(id: string): Promise<string> {
  return sha256(`account-csrf:${id}`);
}

/** The request's live session with its CSRF token, or null (no cookie, unknown, or older than 10 minutes). */
export async function loadSession(
  req: Request,
  env: SessionEnv,
  shards: number,
): Promise<(SessionHandle & { csrf: string }) | null> {
  const id = readHostCookie(req, ACCOUNT_COOKIE);
  if (!isRandomValue(id)) return null;
  const key = await accountSessionKey(id);
  const stub = storeFor(env, id, shards);
  const value = await stub.getEntry(key);
  if (value === null) return null;
  const session = JSON.parse(value) as AccountSession;
  if (session.expiresAt <= Date.now()) return null;
  return { key, stub, session, csrf: await csrfOf(id) };
}

/** True when the posted token is the session's. */
export async function csrfHolds(h: SessionHandle, posted: string | undefined): Promise<boolean> {
  return posted !== undefined && constantTimeEqual(await sha256(posted), h.session.csrfHash);
}

/** Ends the session (the person's "done"); the cookie to clear it. */
export async function endSession(h: SessionHandle): Promise<string> {
  await h.stub.takeEntry(h.key);
  return hostCookie(ACCOUNT_COOKIE, "", { maxAgeSeconds: 0, sameSite: "Strict" });
}
