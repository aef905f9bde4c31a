// GET /auth/callback (docs/architecture.md §4.6, §4.7): the state must exist, be fresh and match
// the browser's binding cookie before anything changes (a callback from another browser spends
// nothing); then the code is exchanged once per login, a duplicate of the callback following the
// first request's outcome (the login store's `claimCallback`). Failures are pages: 400 for the
// request (bad state, `error` callback), 502 when the service fails.

import { hostCookie, readHostCookie } from "../core/cookies.js";
import { ApiError } from "../core/errors.js";
import { readParams, type Params } from "../core/http.js";
import type { RequestContext, Route } from "../core/router.js";
import { RpClientError } from "../client.js";
import type { RpConfig, RpEnv } from "../config.js";
import { kitContext, routesOver, type KitContext, type KitRoute } from "../context.js";
import { BINDING_COOKIE, kitRedirect, SESSION_COOKIE } from "../http.js";
import { callbackFailurePage, type CallbackFailure } from "../pages.js";
import { loginWithCode, sessionById, sessionIdFor } from "../sessions.js";
import { stateHash, type CallbackLogin, type RedeemOutcome, type StateRefusal } from "../storage.js";

/** A failure page; the precise reason goes to the log line only. */
class CallbackRefused extends Error {
  constructor(
    readonly failure: CallbackFailure,
    readonly reason: string,
  ) {
    super(reason);
  }
}

async function callbackParams(req: Request, url: URL): Promise<Params> {
  try {
    return await readParams(req, url.search, 8192);
  } catch (err) {
    if (err instanceof ApiError) throw new CallbackRefused("request", err.reason ?? err.message);
    throw err;
  }
}

/** What this callback is for: its state and the login it continues. */
interface Login {
  state: string;
  /** SHA-256 of the state: where the store keeps it and its claim. */
  stateHash: string;
  binding: string;
  /** The state's login as the store checked it. */
  claim: CallbackLogin;
  /** The login's session id, once derived (`sessionIdOf`). */
  sessionId?: Promise<string>;
}

const REFUSED: Record<StateRefusal, string> = {
  unknown: "unknown, replayed or expired state",
  expired: "expired state",
  mismatch: "state bound to another browser (cookie mismatch)",
};

/** How long a duplicate callback may wait for its login's outcome: the exchange and the user read, each bounded. */
const duplicateWaitMs = (cfg: RpConfig) => 2 * cfg.providerTimeoutMs + 1000;

/**
 * The login of this state, checked before anything changes: it exists (pending, or claimed a
 * moment ago by the same browser), is fresh, and this browser holds its binding cookie.
 */
async function loginOf(req: Request, kit: KitContext, params: Params, cfg: RpConfig): Promise<Login> {
  const state = params.get("state");
  if (state === undefined) throw new CallbackRefused("state", "no state (unsolicited callback)");
  const hash = await stateHash(state);
  if (hash === null) throw new CallbackRefused("state", "unknown, replayed or expired state");
  const binding = readHostCookie(req, BINDING_COOKIE);
  const claim = await kit.store.claimCallback(hash, binding, cfg.stateTtlSeconds, duplicateWaitMs(cfg));
  if (typeof claim === "string") throw new CallbackRefused("state", REFUSED[claim]);
  return { state, stateHash: hash, binding: binding!, claim };
}

/** The session id of this login (`sessionIdFor`), derived once per request. */
function sessionIdOf(kit: KitContext, login: Login): Promise<string> {
  return (login.sessionId ??= sessionIdFor(kit, "callback", `${login.state}.${login.binding}`));
}

/** The first request's work: the code exchange, the user read and the new session. */
async function redeem(
  req: Request,
  kit: KitContext,
  rc: RequestContext,
  login: Login,
  code: string,
  cfg: RpConfig,
): Promise<RedeemOutcome> {
  const pending = login.claim.pending!;
  const previous = readHostCookie(req, SESSION_COOKIE);
  try {
    const outcome = await loginWithCode(kit, req, rc, code, {
      ...(pending.verifier !== undefined ? { codeVerifier: pending.verifier } : {}),
      kind: "cookie",
      // An automatic login with no stored identity: ask once more, interactively, to receive it.
      allowRelogin: pending.prompt !== cfg.reloginPrompt,
      ...(previous !== undefined ? { previousSessionId: previous } : {}),
      sessionId: await sessionIdOf(kit, login),
      bindingHash: pending.bindingHash,
    });
    if (outcome.kind === "relogin") rc.log.cause = "automatic login without a stored identity: relogin";
    return { kind: outcome.kind };
  } catch (err) {
    if (!(err instanceof RpClientError)) throw err;
    rc.log.cause = `${err.kind}: ${err.message}`;
    return { kind: "failed", failure: "upstream" };
  }
}

/**
 * The answer to a login's outcome: the first request's and its duplicates' alike. The first request
 * made the session it answers with a moment ago; a duplicate checks it still stands.
 */
async function answer(
  kit: KitContext,
  login: Login,
  outcome: RedeemOutcome,
  first: boolean,
  cfg: RpConfig,
): Promise<Response> {
  const returnTo = login.claim.returnTo;
  switch (outcome.kind) {
    case "relogin":
      return kitRedirect(
        303,
        `${cfg.basePath}/login?${new URLSearchParams({ return_to: returnTo, prompt: cfg.reloginPrompt })}`,
      );
    case "failed":
      return callbackFailurePage("upstream", cfg.basePath);
    case "session": {
      const id = await sessionIdOf(kit, login);
      // A duplicate arriving after a logout finds no session: it is a replay, not a login.
      if (!first && !(await sessionById(kit, id, "cookie")))
        throw new CallbackRefused("state", "replayed state: its session has ended");
      return kitRedirect(303, returnTo, [hostCookie(SESSION_COOKIE, id, { maxAgeSeconds: cfg.sessionTtlSeconds })]);
    }
  }
}

async function callback(req: Request, kit: KitContext, rc: RequestContext): Promise<Response> {
  const cfg = kit.config;
  rc.log.event = "rp.callback";
  try {
    const params = await callbackParams(req, rc.url);
    const login = await loginOf(req, kit, params, cfg);
    // spec §4.1, docs/architecture.md §4.4: the service reports cancel and other failures as `error=...`.
    if (params.has("error") || !params.has("code")) {
      // ended with nothing to follow: a later callback of this state finds none
      await login.claim.cancel();
      // The service could not continue (an expired sign-in): start one fresh login, once.
      const p = login.claim.pending;
      if (params.get("error") === "login_required" && p && !p.restarted && p.prompt !== "none") {
        rc.log.cause = "login_required: a fresh login";
        const q = new URLSearchParams({ return_to: login.claim.returnTo, restart: "1" });
        if (p.prompt !== undefined) q.set("prompt", p.prompt);
        return kitRedirect(303, `${cfg.basePath}/login?${q}`);
      }
      const error = params.get("error");
      throw new CallbackRefused(
        error === undefined ? "request" : error === "access_denied" ? "denied" : "unfinished",
        error === undefined ? "no code" : "error callback",
      );
    }
    const code = params.get("code")!;
    const { outcome, first } = await login.claim.redeem(() => redeem(req, kit, rc, login, code, cfg));
    if (!first) rc.log.event = "rp.callback_duplicate";
    return await answer(kit, login, outcome, first, cfg);
  } catch (err) {
    if (err instanceof CallbackRefused) {
      rc.log.cause = err.reason;
      return callbackFailurePage(err.failure, cfg.basePath);
    }
    throw err;
  }
}

export const kitRoutes: KitRoute[] = [
  { method: "GET", path: "/auth/callback", handler: callback, effects: true, page: true },
];

/** The route over a route worker's env (the three-worker deploy, the all-in-one). */
export const routes: Route<RpEnv>[] = routesOver(kitRoutes, kitContext);
