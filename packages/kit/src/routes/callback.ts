// GET /auth/callback (docs/architecture.md §4.6, §4.7): the state must exist, be fresh and match
// the browser's binding cookie before anything changes (a callback from another browser spends
// nothing); then the code is exchanged once per login, a duplicate of the callback following the
// first request's outcome (redeem.ts). Failures are pages: 400 for the request (bad
// state, `error` callback), 502 when the service fails.

import { hostCookie, readHostCookie } from "../core/cookies.js";
import { ApiError } from "../core/errors.js";
import { readParams, type Params } from "../core/http.js";
import type { RequestContext, Route } from "../core/router.js";
import { RpClientError } from "../client.js";
import { rpConfig, type RpConfig, type RpEnv } from "../config.js";
import { BINDING_COOKIE, kitRedirect, SESSION_COOKIE } from "../http.js";
import { callbackFailurePage, type CallbackFailure } from "../pages.js";
import { claimExpiry, followClaim, redeemOnce } from "../redeem.js";
import { storeAt, type ClaimResult, type PhoneLoginStore } from "../login-store.js";
import { loginWithCode, sessionById, sessionIdFor } from "../sessions.js";
import {
  bindingHashOf,
  bindingMatches,
  endState,
  getRedemption,
  readState,
  stateHash,
  type PendingLogin,
  type RedeemOutcome,
} from "../store.js";

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
  /** SHA-256 of the state: its KV key, and (as `callback:<hash>`) its redemption's. */
  stateHash: string;
  binding: string;
  /** SHA-256 of the binding cookie, as checked: what a duplicate of this login must prove. */
  bindingHash: string;
  /** The pending login; null for a duplicate arriving after the first request ended the state. */
  pending: PendingLogin | null;
  returnTo: string;
  /** The login's session id, once derived (`sessionIdOf`). */
  sessionId?: Promise<string>;
  /** With the kit's store (RP_STORE): the claim made as the state was checked, and its object. */
  claimed?: { stub: DurableObjectStub<PhoneLoginStore>; result: Exclude<ClaimResult, { kind: "refused" }> };
}

const REFUSED: Record<Extract<ClaimResult, { kind: "refused" }>["reason"], string> = {
  unknown: "unknown, replayed or expired state",
  expired: "expired state",
  mismatch: "state bound to another browser (cookie mismatch)",
  foreign: "unknown, replayed or expired state",
};

/**
 * `loginOf` with the kit's store: the state checked, ended and its exchange claimed in one call
 * (login-store.ts `claimState`); a duplicate of the same browser finds the claim.
 */
async function claimedLoginOf(
  req: Request,
  store: DurableObjectNamespace<PhoneLoginStore>,
  state: string,
  hash: string,
  cfg: RpConfig,
): Promise<Login> {
  const binding = readHostCookie(req, BINDING_COOKIE);
  const bindingHash = await bindingHashOf(binding);
  const stub = storeAt(store, hash);
  const now = Date.now();
  const result = await stub.claimState(
    hash,
    bindingHash,
    now - cfg.stateTtlSeconds * 1000,
    claimExpiry(duplicateWaitMs(cfg)),
  );
  if (result.kind === "refused") throw new CallbackRefused("state", REFUSED[result.reason]);
  const pending = result.kind === "first" ? (JSON.parse(result.pending!) as PendingLogin) : null;
  const returnTo = pending ? pending.returnTo : (result.kind === "duplicate" && result.returnTo) || "/";
  return {
    state,
    stateHash: hash,
    binding: binding!,
    bindingHash: bindingHash!,
    pending,
    returnTo,
    claimed: { stub, result },
  };
}

/**
 * The login of this state, checked before anything changes: it exists (pending, or redeemed a
 * moment ago by the same browser), is fresh, and this browser holds its binding cookie.
 */
async function loginOf(req: Request, env: RpEnv, params: Params, cfg: RpConfig): Promise<Login> {
  const state = params.get("state");
  if (state === undefined) throw new CallbackRefused("state", "no state (unsolicited callback)");
  const hash = await stateHash(state);
  if (hash === null) throw new CallbackRefused("state", "unknown, replayed or expired state");
  if (env.RP_STORE) return claimedLoginOf(req, env.RP_STORE, state, hash, cfg);
  const binding = readHostCookie(req, BINDING_COOKIE);
  const pending = await readState(env, hash);
  if (pending) {
    if (Date.now() - pending.created > cfg.stateTtlSeconds * 1000) throw new CallbackRefused("state", "expired state");
    if (!(await bindingMatches(pending, binding)))
      throw new CallbackRefused("state", "state bound to another browser (cookie mismatch)");
    const { bindingHash, returnTo } = pending;
    return { state, stateHash: hash, binding: binding!, bindingHash, pending, returnTo };
  }
  const redeemed = await getRedemption(env, redemptionKey(hash));
  if (!redeemed?.returnTo || !(await bindingMatches({ bindingHash: redeemed.proofHash }, binding))) {
    throw new CallbackRefused("state", "unknown, replayed or expired state");
  }
  const { proofHash: bindingHash, returnTo } = redeemed;
  return { state, stateHash: hash, binding: binding!, bindingHash, pending: null, returnTo };
}

/** How long a duplicate callback may wait for its login's outcome: the exchange and the user read, each bounded. */
const duplicateWaitMs = (cfg: RpConfig) => 2 * cfg.providerTimeoutMs + 1000;

/** The key of a state's redemption (redeem.ts); the native apps' are `sha256(token:<code>)`. */
const redemptionKey = (stateHash: string) => `callback:${stateHash}`;

/** The session id of this login (`sessionIdFor`), derived once per request. */
function sessionIdOf(env: RpEnv, login: Login): Promise<string> {
  return (login.sessionId ??= sessionIdFor(env, "callback", `${login.state}.${login.binding}`));
}

/** The first request's work: the code exchange, the user read and the new session. */
async function redeem(
  req: Request,
  env: RpEnv,
  rc: RequestContext,
  login: Login,
  code: string,
  cfg: RpConfig,
): Promise<RedeemOutcome> {
  const pending = login.pending!;
  // The state is spent by this attempt whatever its outcome: a second callback must not exchange
  // again (the store's claim ended it already).
  if (!login.claimed) await endState(env, login.stateHash);
  const previous = readHostCookie(req, SESSION_COOKIE);
  try {
    const outcome = await loginWithCode(env, code, {
      ...(pending.verifier !== undefined ? { codeVerifier: pending.verifier } : {}),
      kind: "cookie",
      // An automatic login with no stored identity: ask once more, interactively, to receive it.
      allowRelogin: pending.prompt !== cfg.reloginPrompt,
      ...(previous !== undefined ? { previousSessionId: previous } : {}),
      sessionId: await sessionIdOf(env, login),
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
  env: RpEnv,
  login: Login,
  outcome: RedeemOutcome,
  first: boolean,
  cfg: RpConfig,
): Promise<Response> {
  switch (outcome.kind) {
    case "relogin":
      return kitRedirect(
        303,
        `${cfg.basePath}/login?${new URLSearchParams({ return_to: login.returnTo, prompt: cfg.reloginPrompt })}`,
      );
    case "failed":
      return callbackFailurePage("upstream", cfg.basePath);
    case "session": {
      const id = await sessionIdOf(env, login);
      // A duplicate arriving after a logout finds no session: it is a replay, not a login.
      if (!first && !(await sessionById(env, id, "cookie")))
        throw new CallbackRefused("state", "replayed state: its session has ended");
      return kitRedirect(303, login.returnTo, [
        hostCookie(SESSION_COOKIE, id, { maxAgeSeconds: cfg.sessionTtlSeconds }),
      ]);
    }
  }
}

async function callback(req: Request, env: RpEnv, rc: RequestContext): Promise<Response> {
  const cfg = rpConfig(env);
  rc.log.event = "rp.callback";
  try {
    const params = await callbackParams(req, rc.url);
    const login = await loginOf(req, env, params, cfg);
    // spec §4.1, docs/architecture.md §4.4: the service reports cancel and other failures as `error=...`.
    if (params.has("error") || !params.has("code")) {
      // ended with nothing to follow: a later callback of this state finds none
      if (login.claimed?.result.kind === "first") await login.claimed.stub.forget(login.stateHash);
      else if (login.pending) await endState(env, login.stateHash);
      // The service could not continue (an expired sign-in): start one fresh login, once.
      const p = login.pending;
      if (params.get("error") === "login_required" && p && !p.restarted && p.prompt !== "none") {
        rc.log.cause = "login_required: a fresh login";
        const q = new URLSearchParams({ return_to: login.returnTo, restart: "1" });
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
    if (login.claimed) {
      const { stub, result } = login.claimed;
      const deadline = Date.now() + duplicateWaitMs(cfg);
      const outcome = await followClaim(stub, login.stateHash, result, deadline, () =>
        redeem(req, env, rc, login, code, cfg),
      );
      const first = result.kind === "first";
      if (!first) rc.log.event = "rp.callback_duplicate";
      return await answer(env, login, outcome, first, cfg);
    }
    const claim = { proofHash: login.bindingHash, returnTo: login.returnTo };
    const { outcome, first } = await redeemOnce(env, redemptionKey(login.stateHash), claim, duplicateWaitMs(cfg), () =>
      login.pending
        ? redeem(req, env, rc, login, code, cfg)
        : Promise.resolve({ kind: "failed", failure: "upstream" } as const),
    );
    if (!first) rc.log.event = "rp.callback_duplicate";
    return await answer(env, login, outcome, first, cfg);
  } catch (err) {
    if (err instanceof CallbackRefused) {
      rc.log.cause = err.reason;
      return callbackFailurePage(err.failure, cfg.basePath);
    }
    throw err;
  }
}

export const routes: Route<RpEnv>[] = [
  { method: "GET", path: "/auth/callback", handler: callback, effects: true, page: true },
];
