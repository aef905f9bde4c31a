// GET /auth/callback (docs/architecture.md §4.6, §4.7): the state must exist, match the browser's binding
// cookie and is deleted at once; only then is the code exchanged. Failures are pages: 400 for the
// request (bad state, `error` callback), 502 when the service fails.

import { hostCookie, readHostCookie } from "../../core/cookies";
import { ApiError } from "../../core/errors";
import { readParams, type Params } from "../../core/http";
import { RpClientError } from "../client";
import { rpConfig, type RpEnv } from "../config";
import { callbackFailurePage, type CallbackFailure } from "../pages";
import { BINDING_COOKIE, kitRedirect, SESSION_COOKIE } from "../http";
import { loginWithCode } from "../sessions";
import { bindingMatches, takeState, type PendingLogin } from "../store";
import type { RequestContext, Route } from "../../core/router";

/** A failure page; the precise reason goes to the log line only. */
class CallbackRefused extends Error {
  constructor(readonly failure: CallbackFailure, readonly reason: string) {
    super(reason);
  }
}

async function callbackParams(req: Request, url: URL): Promise<Params> {
  try {
    return await readParams(req, url, 8192);
  } catch (err) {
    if (err instanceof ApiError) throw new CallbackRefused("request", err.reason ?? err.message);
    throw err;
  }
}

/** The pending login of this state, consumed; refused unless fresh and bound to this browser. */
async function takePendingLogin(req: Request, env: RpEnv, params: Params, ttlSeconds: number): Promise<PendingLogin> {
  const state = params.get("state");
  if (state === undefined) throw new CallbackRefused("state", "no state (unsolicited callback)");
  const pending = await takeState(env, state);
  if (!pending) throw new CallbackRefused("state", "unknown, replayed or expired state");
  if (Date.now() - pending.created > ttlSeconds * 1000) throw new CallbackRefused("state", "expired state");
  if (!(await bindingMatches(pending, readHostCookie(req, BINDING_COOKIE)))) {
    throw new CallbackRefused("state", "state bound to another browser (cookie mismatch)");
  }
  return pending;
}

/** spec §4.1 / docs/architecture.md §4.4: the service reports cancel and other failures as `error=...`. */
function refuseErrorCallback(params: Params): void {
  if (params.has("error")) throw new CallbackRefused("denied", "error callback");
}

async function callback(req: Request, env: RpEnv, rc: RequestContext): Promise<Response> {
  const cfg = rpConfig(env);
  rc.log.event = "rp.callback";
  try {
    const params = await callbackParams(req, rc.url);
    const pending = await takePendingLogin(req, env, params, cfg.stateTtlSeconds);
    refuseErrorCallback(params);
    const code = params.get("code");
    if (code === undefined) throw new CallbackRefused("request", "no code");
    const outcome = await loginWithCode(env, code, {
      ...(pending.verifier !== undefined ? { codeVerifier: pending.verifier } : {}),
      kind: "cookie",
      // An automatic login with no stored identity: ask once more, interactively, to receive it.
      allowRelogin: pending.prompt !== cfg.reloginPrompt,
      ...(readHostCookie(req, SESSION_COOKIE) !== undefined ? { previousSessionId: readHostCookie(req, SESSION_COOKIE)! } : {}),
    });
    if (outcome.kind === "relogin") {
      rc.log.cause = "automatic login without a stored identity: relogin";
      return kitRedirect(303, `/auth/login?${new URLSearchParams({ return_to: pending.returnTo, prompt: cfg.reloginPrompt })}`);
    }
    return kitRedirect(303, pending.returnTo, [hostCookie(SESSION_COOKIE, outcome.sessionId, { maxAgeSeconds: cfg.sessionTtlSeconds })]);
  } catch (err) {
    if (err instanceof CallbackRefused) {
      rc.log.cause = err.reason;
      return callbackFailurePage(err.failure);
    }
    if (err instanceof RpClientError) {
      rc.log.cause = `${err.kind}: ${err.message}`;
      return callbackFailurePage("upstream");
    }
    throw err;
  }
}

export const routes: Route<RpEnv>[] = [{ method: "GET", path: "/auth/callback", handler: callback }];
