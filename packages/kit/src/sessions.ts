// Logins and sessions of the relying-party kit, shared by /auth/callback (browsers) and
// /auth/token (native apps), and read by /auth/me, /auth/logout, /auth/disconnect, `getSession` and
// the demo.

import { readHostCookie } from "./core/cookies.js";
import { parseBearer } from "./core/http.js";
import type { RequestContext } from "./core/router.js";
import { exchangeCode, readUser, RpClientError, type ProviderUser } from "./client.js";
import { derivedToken } from "./core/crypto.js";
import type { RpEnv } from "./config.js";
import { kitContext, type KitContext } from "./context.js";
import { hookRequest } from "./hooks.js";
import { BINDING_COOKIE, SESSION_COOKIE } from "./http.js";
import { endSession, forgetIdentity, getIdentity, identityItems, putIdentity, readSession } from "./kv.js";
import { bindingMatches, type SessionKind, type SessionRecord, type StoredIdentity } from "./storage.js";
import { flatUser, type KitUser } from "./user.js";
import { IDENTITY_ITEMS } from "./core/spec.js";

export { flatUser, type KitUser } from "./user.js";

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
 * record takes the stored identity) and creates a new session, then calls the app's onLogin with
 * the request `req`. Throws RpClientError.
 */
export async function loginWithCode(
  kit: KitContext,
  req: Request,
  rc: RequestContext,
  code: string,
  opts: LoginOptions,
): Promise<LoginOutcome> {
  const cfg = kit.config;
  const client = kit.client();
  const started = Date.now();
  const tokens = await exchangeCode(
    client,
    code,
    opts.codeVerifier !== undefined ? { codeVerifier: opts.codeVerifier } : {},
  );
  const user = await readUser(client, tokens.accessToken);
  // RP_ITEMS: the items this app keeps; the rest are dropped before anything is stored.
  for (const item of IDENTITY_ITEMS) if (!cfg.items.includes(item)) delete user[item];
  const key = await kit.sealKey();
  const now = Date.now();
  let identity: StoredIdentity = { plid: user.plid, items: identityItems(user), storedAt: now };
  const automatic = isAutomaticRecord(user);
  if (automatic) {
    const stored = await getIdentity(kit.kv, key, user.plid);
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
  await putIdentity(kit.kv, key, identity, identity.placeholder ? cfg.sessionTtlSeconds : cfg.identityTtlSeconds, {
    writeBack: automatic,
  });
  if (opts.previousSessionId !== undefined) await endSession(kit.kv, opts.previousSessionId);
  const record: SessionRecord = { plid: user.plid, kind: opts.kind, loginAt: now };
  if (user.autoLoginYn) record.autoLoginYn = user.autoLoginYn;
  if (user.autoStatusCheck) record.autoStatusCheck = user.autoStatusCheck;
  if (opts.bindingHash !== undefined) record.bindingHash = opts.bindingHash;
  const sessionId = opts.sessionId;
  const endedAt = await kit.store.createLoginSession(record, cfg.sessionTtlSeconds, sessionId, started);
  // A disconnect (or the service's event) that ended the plid after this login began: the user read
  // above may predate it, and the writes above may have landed after its deletions. Ended here,
  // nothing of this login stays. (The end is recorded before its deletions; if the read of it
  // missed it, those deletions come after these writes, where KV shows writes at once: one
  // location. Across locations KV lags up to 60 s, and this is best effort.)
  if (endedAt !== null) {
    await Promise.all([endSession(kit.kv, sessionId), forgetIdentity(kit.kv, user.plid)]);
    throw new RpClientError("ended", "user", "the login's plid was ended while it was under way");
  }
  const kitUser = flatUser(identity, record);
  const onLogin = kit.hooks.onLogin;
  if (onLogin) {
    try {
      await onLogin(kitUser, { via: opts.kind === "cookie" ? "callback" : "token", ...hookRequest(req, rc) });
    } catch (err) {
      // The app refused or failed to take the login: nothing of it stays logged in.
      await endSession(kit.kv, sessionId);
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
export async function sessionOf(req: Request, kit: KitContext): Promise<CurrentSession | null> {
  const claim = sessionClaim(req);
  if (!claim) return null;
  const record = await readSession(kit.kv, claim.id, claim.kind, kit.config.sessionTtlSeconds);
  if (!record) return null;
  if (
    claim.kind === "cookie" &&
    record.bindingHash !== undefined &&
    !(await bindingMatches({ bindingHash: record.bindingHash }, readHostCookie(req, BINDING_COOKIE)))
  ) {
    await endSession(kit.kv, claim.id);
    return null;
  }
  const identity = await getIdentity(kit.kv, await kit.sealKey(), record.plid);
  if (!identity) {
    await endSession(kit.kv, claim.id);
    return null;
  }
  return { id: claim.id, kind: claim.kind, record, identity };
}

/** `sessionOf` for a route worker's env (the all-in-one's demo page). */
export function currentSession(req: Request, env: RpEnv): Promise<CurrentSession | null> {
  return sessionOf(req, kitContext(env));
}

/**
 * The session id of one login: derived (HKDF/HMAC under RP_SEAL_KEY) from what only its requester
 * holds (the state and the browser's binding cookie; the code and its verifier), so the login's
 * duplicate requests answer with the same session and nothing of it is stored in clear.
 */
export function sessionIdFor(kit: KitContext, purpose: "callback" | "token", proof: string): Promise<string> {
  return derivedToken(kit.sealKeyText(), `rp-session-id:${purpose}`, proof);
}

/** A live session by id with its identity (a duplicate following a login), or null. */
export async function sessionById(
  kit: KitContext,
  id: string,
  kind: SessionKind,
): Promise<{ record: SessionRecord; identity: StoredIdentity } | null> {
  const record = await readSession(kit.kv, id, kind, kit.config.sessionTtlSeconds);
  if (!record) return null;
  const identity = await getIdentity(kit.kv, await kit.sealKey(), record.plid);
  return identity ? { record, identity } : null;
}
