// The kit's store interface (docs/rp-kit.md "Storage"): what a login keeps between its requests
// and must hold exactly where it can: the state of /auth/login and the claim of its one code
// exchange, the claim of a native app's code, a plid's session index and its end, an event's jti.
// Two implementations: login-store.ts over the kit's Durable Object store (exact everywhere) and
// store.ts in KV alone (best effort across isolates and locations). store.ts `loginStoreFor` picks
// one per env, and the kit's context (context.ts) holds it. Sessions, sealed identities and the rate
// counter are in KV with either (kv.ts), where every request reads them at the edge.
//
// Rows and keys are named by hashes only: of the state, the code, the plid, the session id.

import { constantTimeEqual, sha256 } from "./core/crypto.js";
import { isRandomValue, type IdentityItem, type YN } from "./core/spec.js";

/** A login between /auth/login and /auth/callback. */
export interface PendingLogin {
  /** SHA-256 of the browser's binding cookie. */
  bindingHash: string;
  /** Same-origin path to return to (validated by `safeReturnTo`). */
  returnTo: string;
  /** Epoch ms; the state is refused after RP_STATE_TTL_SECONDS even if the store still holds it. */
  created: number;
  /** The PKCE verifier, when a challenge was sent. */
  verifier?: string;
  /** The `prompt` sent, so a forced re-login is not repeated. */
  prompt?: string;
  /** This login is the automatic fresh start after a `login_required` return: it is not repeated. */
  restarted?: true;
}

/** "cookie": a browser session (HttpOnly cookie); "token": a native app's Bearer session token. */
export type SessionKind = "cookie" | "token";

export interface SessionRecord {
  plid: string;
  kind: SessionKind;
  /** Epoch ms of the login. */
  loginAt: number;
  autoLoginYn?: YN;
  autoStatusCheck?: YN;
  /**
   * A browser session made by /auth/callback: SHA-256 of the login binding cookie it was made
   * with. The session is valid only with that cookie, which logout clears: a callback still under
   * way in another tab when the person logs out makes a session that no request can use.
   */
  bindingHash?: string;
}

/** The identity kept for automatic logins (spec §2.1 mode 2 returns only the plid). */
export interface StoredIdentity {
  plid: string;
  items: Partial<Record<IdentityItem, string>>;
  /** Epoch ms of the login that reported it. */
  storedAt: number;
  /**
   * Not the person's identity: a mode-2 record's empty values, stored (for the session TTL) only so
   * the sessions of an automatic login that found nothing stored work. An automatic login never
   * takes it as the identity; a full record replaces it.
   */
  placeholder?: true;
}

/** How a login's one code exchange ended, for the duplicate requests that follow it. Holds no secret. */
export type RedeemOutcome =
  { kind: "session" } | { kind: "relogin" } | { kind: "failed"; failure: "upstream" | "invalid_code" };

export interface Redeemed {
  outcome: RedeemOutcome;
  /** False for a duplicate, which must answer from the first request's outcome. */
  first: boolean;
}

/** What a request that does not share the claimer's proof gets: the refusal of a reused code. */
export const NOT_YOURS: Redeemed = { outcome: { kind: "failed", failure: "invalid_code" }, first: false };

/** Duplicates and replays of a login's first minute find its outcome (KV keeps a value at least 60 s). */
export const REDEMPTION_TTL_SECONDS = 60;

/** How often a duplicate looks for the first request's outcome. */
export const POLL_MS = 25;

/**
 * How long the end of a plid is kept: longer than a login can be under way (its exchange and user
 * read, each bounded by RP_PROVIDER_TIMEOUT_MS, at most 60 s), and than the service's retries of
 * an event within the hour.
 */
export const ENDED_TTL_SECONDS = 3600;

/** The most sessions one end deletes itself (KV allows 1,000 operations per invocation); the rest end with the identity. */
export const MAX_ENDED_SESSIONS = 500;

/** Why a callback's state is refused; each refusal changes nothing. */
export type StateRefusal = "unknown" | "expired" | "mismatch";

/** A callback's login, its state checked: fresh and bound to this browser, or claimed a moment ago by it. */
export interface CallbackLogin {
  /** The pending login; null for a duplicate of a login another request of this browser claimed. */
  pending: PendingLogin | null;
  /** SHA-256 of the binding cookie, as checked: what a duplicate of this login must prove. */
  bindingHash: string;
  returnTo: string;
  /** Ends the login with nothing to follow (an error callback): a later callback of the state finds none. */
  cancel(): Promise<void>;
  /**
   * Runs `work` (the exchange, the user read, the session) once for this login, the state ended
   * first; a duplicate follows the first request's outcome.
   */
  redeem(work: () => Promise<RedeemOutcome>): Promise<Redeemed>;
}

/** Where the kit keeps what a login must hold exactly: login-store.ts (Durable Object), store.ts (KV). */
export interface LoginStore {
  /** A new login's state (/auth/login), kept by its hash for `ttlSeconds`. */
  putState(state: string, pending: PendingLogin, ttlSeconds: number): Promise<void>;
  /**
   * A callback's login: the state exists, is not older than `stateTtlSeconds` and is bound to
   * `bindingCookie` (with the Durable Object store it is also ended and its exchange claimed, in one
   * call), or a duplicate of the same browser finds the claim. `waitMs` bounds a duplicate's wait.
   */
  claimCallback(
    stateHash: string,
    bindingCookie: string | undefined,
    stateTtlSeconds: number,
    waitMs: number,
  ): Promise<CallbackLogin | StateRefusal>;
  /**
   * Runs `work` once for a code with no state (/auth/token: `keyHash` a hash of the code); a
   * duplicate proving the same `proofHash` (the verifier's) gets the first request's outcome, any
   * other request the refusal of a reused code. `waitMs` bounds a duplicate's wait.
   */
  redeemCode(keyHash: string, proofHash: string, waitMs: number, work: () => Promise<RedeemOutcome>): Promise<Redeemed>;
  /**
   * Creates a session under `id` (only its hash is stored) for a login that began at `startedAt`,
   * and indexes it by plid. Returns when the plid was ended at or after `startedAt` (null if not),
   * read after the session and its index entry were written: the caller ends such a session.
   */
  createLoginSession(record: SessionRecord, ttlSeconds: number, id: string, startedAt: number): Promise<number | null>;
  /**
   * Ends every session of a plid and forgets its identity (a disconnect, an event from the
   * service), the end recorded first. Returns how many sessions it deleted itself.
   */
  endPlid(plid: string): Promise<number>;
  /**
   * Claims an event's `jti` for `ttlSeconds`: false when it was acted on already (a replay) or,
   * with the Durable Object store, while another copy of the event holds it.
   */
  claimJti(jti: string, ttlSeconds: number): Promise<boolean>;
  /** The event of a claimed `jti` was acted on. */
  jtiActedOn(jti: string, ttlSeconds: number): Promise<void>;
  /** The event of a claimed `jti` could not be acted on: the claim goes, so the service's retry is accepted. */
  releaseJti(jti: string): Promise<void>;
}

/** The hash a state is kept under, or null for a value no login made. */
export async function stateHash(state: string): Promise<string | null> {
  return isRandomValue(state) ? sha256(state) : null;
}

/** The hash a binding cookie is compared by, or null for a value no login made (or none). */
export async function bindingHashOf(cookie: string | undefined): Promise<string | null> {
  return cookie !== undefined && isRandomValue(cookie) ? sha256(cookie) : null;
}

/** True when the cookie is the one the state was bound to (compared in constant time). */
export async function bindingMatches(
  pending: Pick<PendingLogin, "bindingHash">,
  cookie: string | undefined,
): Promise<boolean> {
  const hash = await bindingHashOf(cookie);
  return hash !== null && constantTimeEqual(hash, pending.bindingHash);
}
