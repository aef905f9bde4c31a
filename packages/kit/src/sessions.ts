// Logins and sessions of the relying-party kit, shared by /auth/callback (browsers) and
// /auth/token (native apps), and read by /auth/me, /auth/logout, /auth/disconnect and the demo.

import { readHostCookie } from "./core/cookies.js";
import { parseBearer } from "./core/http.js";
import { exchangeCode, readUser, RpClientError, type ProviderUser } from "./client.js";
import { derivedToken } from "./core/crypto.js";
import { rpClientConfig, rpConfig, rpSealKey, rpSealKeyText, type RpEnv } from "./config.js";
import { BINDING_COOKIE, SESSION_COOKIE } from "./http.js";
import {
  bindingMatches,
  createLoginSession,
  endSession,
  forgetIdentity,
  getIdentity,
  identityItems,
  putIdentity,
  readSession,
  type SessionKind,
  type SessionRecord,
  type StoredIdentity,
} from "./store.js";
import { IDENTITY_ITEMS, type IdentityItem, type YN } from "./core/spec.js";

/** What /auth/me and /auth/token answer (docs/architecture.md §4.7): flat, the spec's item names, decrypted. */
export type KitUser = { plid: string; autoLoginYn?: YN; autoStatusCheck?: YN; loginAt: string } & Partial<
  Record<IdentityItem, string>
>;

/**
 * spec §2.1 mode 2 (automatic login, not the first): `autoLoginYn` Y, `autoStatusCheck` not Y, and
 * no identity item carries a value: each is empty, or absent as in the reference's
 * `{"plid","autoLoginYn":"Y","autoStatusCheck":"N"}` (docs/interface.md "Reference behaviour":
 * later automatic logins carry only `plid` and the flags).
 * Only then is the stored identity used.
 */
export function isAutomaticRecord(user: ProviderUser): boolean {
  if (user.autoLoginYn !== "Y" || user.autoStatusCheck === "Y") return false;
  return IDENTITY_ITEMS.every((i) => user[i] === undefined || user[i] === "");
}

export function flatUser(identity: StoredIdentity, session: SessionRecord): KitUser {
  const user: Record<string, string> = { plid: identity.plid };
  for (const item of IDENTITY_ITEMS) {
    const v = identity.items[item];
    if (v !== undefined) user[item] = v;
  }
  if (session.autoLoginYn) user.autoLoginYn = session.autoLoginYn;
  if (session.autoStatusCheck) user.autoStatusCheck = session.autoStatusCheck;
  user.loginAt = new Date(session.loginAt).toISOString();
  return user as KitUser;
}

export type LoginOutcome =
  | { kind: "session"; sessionId: string; user: KitUser; expiresIn: number }
  /** A mode-2 record arrived and no identity is stored: log in again to receive it. */
  | { kind: "relogin" };

export interface LoginOptions {
  codeVerifier?: string;
  kind: SessionKind;
  /** Whether a missing identity may be answered with `relogin` (browsers, once per login). */
  allowRelogin: boolean;
  /** The session this login replaces (rotation): ended before the new one is made. */
  previousSessionId?: string;
  /** The new session's id, derived so that a duplicate of this login can answer with it (`sessionIdFor`). */
  sessionId: string;
  /** A browser login: SHA-256 of its binding cookie, which the session will need (`SessionRecord.bindingHash`). */
  bindingHash?: string;
}

/**
 * Exchanges the code, reads the user once, decrypts, keeps the identity sealed by plid (a mode-2
 * record takes the stored identity) and creates a new session. Throws RpClientError.
 */
export async function loginWithCode(env: RpEnv, code: string, opts: LoginOptions): Promise<LoginOutcome> {
  const cfg = rpConfig(env);
  const client = rpClientConfig(env);
  const started = Date.now();
  const tokens = await exchangeCode(
    client,
    code,
    opts.codeVerifier !== undefined ? { codeVerifier: opts.codeVerifier } : {},
  );
  const user = await readUser(client, tokens.accessToken);
  // RP_ITEMS: the items this app keeps; the rest are dropped before anything is stored.
  for (const item of IDENTITY_ITEMS) if (!cfg.items.includes(item)) delete user[item];
  const key = await rpSealKey(env);
  const now = Date.now();
  let identity: StoredIdentity = { plid: user.plid, items: identityItems(user), storedAt: now };
  const automatic = isAutomaticRecord(user);
  if (automatic) {
    const stored = await getIdentity(env, key, user.plid);
    if (stored && !stored.placeholder) identity = stored;
    else if (opts.allowRelogin) return { kind: "relogin" };
    // Nothing of the person is stored and no re-login may be asked (a native app, or the re-login
    // itself): the session gets the empty values, stored as a placeholder that no later automatic
    // login takes for the person's identity (a browser's asks once more).
    else identity.placeholder = true;
  }
  // Written on every login, so the lifetime counts from the last one; a placeholder lives as long as its sessions.
  // An automatic login writes back what it read (or a placeholder): a full record landing in the
  // same second wins over it (`putIdentity`).
  await putIdentity(env, key, identity, identity.placeholder ? cfg.sessionTtlSeconds : cfg.identityTtlSeconds, {
    writeBack: automatic,
  });
  if (opts.previousSessionId !== undefined) await endSession(env, opts.previousSessionId);
  const record: SessionRecord = { plid: user.plid, kind: opts.kind, loginAt: now };
  if (user.autoLoginYn) record.autoLoginYn = user.autoLoginYn;
  if (user.autoStatusCheck) record.autoStatusCheck = user.autoStatusCheck;
  if (opts.bindingHash !== undefined) record.bindingHash = opts.bindingHash;
  const { id: sessionId, endedAt } = await createLoginSession(
    env,
    record,
    cfg.sessionTtlSeconds,
    opts.sessionId,
    started,
  );
  // A disconnect (or the service's event) that ended the plid after this login began: the user read
  // above may predate it, and the writes above may have landed after its deletions. Ended here,
  // nothing of this login stays. (The end is recorded before its deletions; if the read of it
  // missed it, those deletions come after these writes, where KV shows writes at once: one
  // location. Across locations KV lags up to 60 s, and this is best effort.)
  if (endedAt !== null) {
    await Promise.all([endSession(env, sessionId), forgetIdentity(env, user.plid)]);
    throw new RpClientError("ended", "user", "the login's plid was ended while it was under way");
  }
  const kitUser = flatUser(identity, record);
  const onLogin = env.RP_HOOKS?.onLogin;
  if (onLogin) {
    try {
      await onLogin(kitUser, { via: opts.kind === "cookie" ? "callback" : "token" });
    } catch (err) {
      // The app refused or failed to take the login: nothing of it stays logged in.
      await endSession(env, sessionId);
      throw err;
    }
  }
  return { kind: "session", sessionId, user: kitUser, expiresIn: cfg.sessionTtlSeconds };
}

export interface CurrentSession {
  id: string;
  /** "token" when authenticated by `Authorization: Bearer`, "cookie" by the session cookie. */
  kind: SessionKind;
  record: SessionRecord;
  identity: StoredIdentity;
}

/** How the request claims a session: a Bearer session token wins over the cookie. */
export function sessionClaim(req: Request): { id: string; kind: SessionKind } | null {
  const bearer = parseBearer(req.headers.get("Authorization"));
  if (bearer !== undefined) return { id: bearer, kind: "token" };
  const cookie = readHostCookie(req, SESSION_COOKIE);
  return cookie !== undefined ? { id: cookie, kind: "cookie" } : null;
}

/**
 * The request's live session, or null. A session whose identity is gone (disconnected) is ended
 * here: that is how a disconnect ends every session of its plid. So is a browser session presented
 * without the login binding cookie it was made with (logout cleared it): no I/O, one hash.
 */
export async function currentSession(req: Request, env: RpEnv): Promise<CurrentSession | null> {
  const claim = sessionClaim(req);
  if (!claim) return null;
  const cfg = rpConfig(env);
  const record = await readSession(env, claim.id, claim.kind, cfg.sessionTtlSeconds);
  if (!record) return null;
  if (
    claim.kind === "cookie" &&
    record.bindingHash !== undefined &&
    !(await bindingMatches({ bindingHash: record.bindingHash }, readHostCookie(req, BINDING_COOKIE)))
  ) {
    await endSession(env, claim.id);
    return null;
  }
  const identity = await getIdentity(env, await rpSealKey(env), record.plid);
  if (!identity) {
    await endSession(env, claim.id);
    return null;
  }
  return { id: claim.id, kind: claim.kind, record, identity };
}

/**
 * The session id of one login: derived (HKDF/HMAC under RP_SEAL_KEY) from what only its requester
 * holds (the state and the browser's binding cookie; the code and its verifier), so the login's
 * duplicate requests answer with the same session and nothing of it is stored in clear.
 */
export function sessionIdFor(env: RpEnv, purpose: "callback" | "token", proof: string): Promise<string> {
  return derivedToken(rpSealKeyText(env), `rp-session-id:${purpose}`, proof);
}

/** A live session by id with its identity (a duplicate following a login), or null. */
export async function sessionById(
  env: RpEnv,
  id: string,
  kind: SessionKind,
): Promise<{ record: SessionRecord; identity: StoredIdentity } | null> {
  const record = await readSession(env, id, kind, rpConfig(env).sessionTtlSeconds);
  if (!record) return null;
  const identity = await getIdentity(env, await rpSealKey(env), record.plid);
  return identity ? { record, identity } : null;
}
