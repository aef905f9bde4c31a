// The kit's session API (docs/architecture.md §4.6, §4.7): GET /auth/me, POST /auth/logout,
// POST /auth/disconnect, and POST /auth/token, the token/user proxy for native and WebView apps
// (the app never holds the client secret).

import { hostCookie, readHostCookie } from "../core/cookies.js";
import { randomToken, sha256 } from "../core/crypto.js";
import { clientNetwork, json, mediaType, readBodyText, readParams } from "../core/http.js";
import { E } from "../core/errors.js";
import { disconnectUser, RpClientError } from "../client.js";
import type { RpEnv } from "../config.js";
import { kitContext, routesOver, type KitContext, type KitRoute } from "../context.js";
import { BINDING_COOKIE, checkOrigin, kitRedirect, SESSION_COOKIE, wantsHtml } from "../http.js";
import { receiveEvent } from "../events.js";
import { receiveSignal } from "../signals.js";
import { endSession, hitRateLimit, readSession } from "../kv.js";
import {
  flatUser,
  loginWithCode,
  sessionById,
  sessionClaim,
  sessionIdFor,
  sessionOf,
  type CurrentSession,
} from "../sessions.js";
import { notifyLogout } from "../hooks.js";
import type { RedeemOutcome, SessionKind } from "../storage.js";
import type { RequestContext, Route } from "../core/router.js";

const MAX_BODY_BYTES = 16 * 1024;
const CODE_SHAPE = /^[\x21-\x7e]{1,512}$/;
const VERIFIER_SHAPE = /^[A-Za-z0-9._~-]{43,128}$/; // RFC 7636 §4.1
const CLEAR_SESSION = hostCookie(SESSION_COOKIE, "", { maxAgeSeconds: 0 });
const CLEAR_BINDING = hostCookie(BINDING_COOKIE, "", { maxAgeSeconds: 0 });

async function requireSession(req: Request, kit: KitContext): Promise<CurrentSession> {
  const session = await sessionOf(req, kit);
  if (!session) throw E.noSession(sessionClaim(req) ? "unknown, expired or ended session" : "no session");
  return session;
}

/**
 * docs/architecture.md §4.7: every POST refuses a foreign or `null` Origin; a missing one is accepted only
 * from a session-token (native) caller.
 */
function checkPostOrigin(req: Request, kit: KitContext): void {
  checkOrigin(req, kit.config.publicOrigin, sessionClaim(req)?.kind === "token");
}

/**
 * A browser form post gets 303 to `/?done=logout` (or `disconnect`), so the app can say what
 * happened; an API caller gets JSON. Both lose the session cookie, and the login binding cookie:
 * a callback of this browser replayed afterwards (its address from the history, within the minute
 * a duplicate is answered) must not log it in again, also when two tabs' callbacks ran at once and
 * left a session the cookie no longer names.
 */
function done(req: Request, body: Record<string, unknown>, what: "logout" | "disconnect"): Response {
  if (wantsHtml(req)) return kitRedirect(303, `/?done=${what}`, [CLEAR_SESSION, CLEAR_BINDING]);
  const res = json(body, 200, { "Set-Cookie": CLEAR_SESSION });
  res.headers.append("Set-Cookie", CLEAR_BINDING);
  return res;
}

async function me(req: Request, kit: KitContext): Promise<Response> {
  const s = await requireSession(req, kit);
  return json(flatUser(s.identity, s.record));
}

async function logout(req: Request, kit: KitContext, rc: RequestContext): Promise<Response> {
  checkPostOrigin(req, kit);
  // Both the cookie's session and a Bearer one when a request carries both (an app's fetch wrapper
  // adding its own token): the cookie is cleared below, so its session must not outlive it.
  const claims = new Map<string, SessionKind>();
  const claim = sessionClaim(req);
  if (claim) claims.set(claim.id, claim.kind);
  const cookie = readHostCookie(req, SESSION_COOKIE);
  if (cookie !== undefined && !claims.has(cookie)) claims.set(cookie, "cookie");
  const hooks = kit.hooks;
  for (const [id, kind] of claims) {
    // Whose session it was, for the app's onLogout: read only when the app asked to be told.
    const record = hooks.onLogout ? await readSession(kit.kv, id, kind, kit.config.sessionTtlSeconds) : null;
    await endSession(kit.kv, id);
    if (record) rc.log.cause = (await notifyLogout(hooks, req, rc, record.plid, "logout")) ?? rc.log.cause;
  }
  rc.log.event = "rp.logout";
  return done(req, { loggedOut: true }, "logout");
}

/**
 * Disconnects at the service, then ends every session of the plid (its index) and forgets the
 * identity: a login of the plid still in flight that stores the identity again brings no session back.
 * The service refusing the plid itself (400 naming it: it has no such link) means it is disconnected already (an
 * earlier disconnect whose answer was lost, or one from elsewhere): the sessions end all the same,
 * or they would outlive the link with no way left to end them. A failing service (timeout, 5xx)
 * keeps them, so the person can try again.
 */
async function disconnect(req: Request, kit: KitContext, rc: RequestContext): Promise<Response> {
  checkPostOrigin(req, kit);
  const s = await requireSession(req, kit);
  try {
    await disconnectUser(kit.client(), s.record.plid);
  } catch (err) {
    if (!(err instanceof RpClientError)) throw err;
    if (!err.unknownPlid) throw E.upstream(`${err.kind}: ${err.message}`);
    rc.log.cause = `${err.kind}: ${err.message} (disconnected already)`;
  }
  await kit.store.endPlid(s.record.plid);
  await endSession(kit.kv, s.id);
  rc.log.event = "rp.disconnect";
  rc.log.cause = (await notifyLogout(kit.hooks, req, rc, s.record.plid, "disconnect")) ?? rc.log.cause;
  return done(req, { disconnected: true }, "disconnect");
}

interface TokenRequest {
  code: string;
  codeVerifier?: string;
}

/** `{code, code_verifier?}` as a form or as JSON. */
async function tokenRequest(req: Request, url: URL): Promise<TokenRequest> {
  const type = mediaType(req);
  let code: unknown;
  let verifier: unknown;
  if (type === "application/json") {
    let body: unknown;
    try {
      body = JSON.parse(await readBodyText(req, MAX_BODY_BYTES));
    } catch (err) {
      if (err instanceof SyntaxError) throw E.invalid("body", "body is not JSON");
      throw err;
    }
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw E.invalid("body", "JSON body is not an object");
    ({ code, code_verifier: verifier } = body as Record<string, unknown>);
  } else {
    const params = await readParams(req, url.search, MAX_BODY_BYTES);
    code = params.get("code");
    verifier = params.get("code_verifier");
  }
  if (code === undefined || code === null || code === "") throw E.missing("code");
  if (typeof code !== "string" || !CODE_SHAPE.test(code)) throw E.invalid("code");
  if (verifier === undefined || verifier === null || verifier === "") return { code };
  if (typeof verifier !== "string" || !VERIFIER_SHAPE.test(verifier)) throw E.invalid("code_verifier");
  return { code, codeVerifier: verifier };
}

async function rateLimit(req: Request, kit: KitContext): Promise<void> {
  const cfg = kit.config;
  const r = await hitRateLimit(kit.kv, clientNetwork(req), cfg.tokenRateLimit, cfg.tokenRateWindowSeconds);
  if (!r.ok) throw E.tooMany(r.retryAfterSeconds, "per-IP /auth/token limit");
}

/** The first request's work: the exchange, the user read and the session; refusals as outcomes. */
async function redeem(
  req: Request,
  kit: KitContext,
  rc: RequestContext,
  tr: TokenRequest,
  sessionId: string,
): Promise<RedeemOutcome> {
  try {
    const outcome = await loginWithCode(kit, req, rc, tr.code, {
      ...(tr.codeVerifier !== undefined ? { codeVerifier: tr.codeVerifier } : {}),
      kind: "token",
      allowRelogin: false,
      sessionId,
    });
    return { kind: outcome.kind };
  } catch (err) {
    if (!(err instanceof RpClientError)) throw err;
    rc.log.cause = `${err.kind}: ${err.message}`;
    // The app's code was refused: its fault, 400 (RFC 6749 §5.2 style). Anything else is the service's: 502.
    return { kind: "failed", failure: err.invalidCode ? "invalid_code" : "upstream" };
  }
}

/**
 * The token/user proxy for native and WebView apps. PKCE is required (RFC 8252 §8.1) unless
 * RP_TOKEN_PKCE=optional; concurrent calls with one code and verifier get one session.
 */
async function token(req: Request, kit: KitContext, rc: RequestContext): Promise<Response> {
  const cfg = kit.config;
  checkOrigin(req, cfg.publicOrigin, true);
  await rateLimit(req, kit);
  const tr = await tokenRequest(req, rc.url);
  if (tr.codeVerifier === undefined && cfg.tokenPkce === "required")
    throw E.missing("code_verifier", "PKCE required at /auth/token");
  rc.log.event = "rp.token";
  // What a repeat caller must prove to share the first caller's session: the verifier. Without one
  // (RP_TOKEN_PKCE=optional) nothing but the code would, and anyone who saw the code would get the
  // session, so every repeat is refused as a reused code, as the service refuses it.
  const proof = `${tr.code}.${tr.codeVerifier ?? randomToken(16)}`;
  const sessionId = await sessionIdFor(kit, "token", proof);
  const proofHash = await sha256(proof);
  const { outcome, first } = await kit.store.redeemCode(
    await sha256(`token:${tr.code}`),
    proofHash,
    2 * cfg.providerTimeoutMs + 1000,
    () => redeem(req, kit, rc, tr, sessionId),
  );
  if (!first) rc.log.event = "rp.token_duplicate";
  if (outcome.kind === "failed") {
    if (outcome.failure === "invalid_code")
      throw E.invalidCode("rfc6749", tr.code, rc.log.cause ?? "code already redeemed");
    throw E.upstream(rc.log.cause ?? "the first request's exchange failed");
  }
  const s = await sessionById(kit, sessionId, "token");
  if (outcome.kind !== "session" || !s)
    throw E.invalidCode("rfc6749", tr.code, "no session for this code (relogin or ended)");
  const expiresIn = Math.max(0, cfg.sessionTtlSeconds - Math.floor((Date.now() - s.record.loginAt) / 1000));
  return json({ session_token: sessionId, expires_in: expiresIn, user: flatUser(s.identity, s.record) });
}

export const kitRoutes: KitRoute[] = [
  { method: "GET", path: "/auth/me", handler: me },
  { method: "POST", path: "/auth/logout", handler: logout, page: true },
  { method: "POST", path: "/auth/disconnect", handler: disconnect, page: true },
  { method: "POST", path: "/auth/token", handler: token },
  { method: "POST", path: "/auth/events", handler: receiveEvent },
  { method: "POST", path: "/auth/ssf", handler: receiveSignal },
];

/** The routes over a route worker's env (the three-worker deploy, the all-in-one). */
export const routes: Route<RpEnv>[] = routesOver(kitRoutes, kitContext);
