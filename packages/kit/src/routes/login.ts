// GET /auth/login (docs/architecture.md §4.6, §4.7): a 256-bit state in the login store bound to a
// browser cookie, then 302 to the service's authorization request (spec §4.1).

import { hostCookie, readHostCookie } from "../core/cookies.js";
import { randomToken, sha256 } from "../core/crypto.js";
import { E } from "../core/errors.js";
import { readParams, type Params } from "../core/http.js";
import { authorizationUrl, createPkce } from "../client.js";
import type { RpConfig, RpEnv } from "../config.js";
import { kitContext, routesOver, type KitContext, type KitRoute } from "../context.js";
import { BINDING_COOKIE, kitRedirect, safeReturnTo } from "../http.js";
import { isRandomValue } from "../core/spec.js";
import type { PendingLogin } from "../storage.js";
import type { RequestContext, Route } from "../core/router.js";

const PROMPT_SHAPE = /^[A-Za-z0-9_ -]{1,32}$/;

/** The longest query a redirect copies (docs/rp-kit.md "Limits"): a login's parameters are short. */
export const MAX_COPIED_QUERY = 2048;

/** The `__Host-` cookies belong to one host: a login started on another name moves there first. */
function onPublicOrigin(cfg: RpConfig, url: URL): Response | undefined {
  if (url.origin === cfg.publicOrigin) return undefined;
  if (url.search.length > MAX_COPIED_QUERY) throw E.uriTooLong("query too long to copy into a redirect");
  return kitRedirect(302, cfg.publicOrigin + url.pathname + url.search);
}

interface LoginRequest {
  returnTo: string;
  restarted: boolean;
  prompt?: string;
  isHybrid: boolean;
  lang?: string;
}

function loginRequest(params: Params, cfg: RpConfig): LoginRequest {
  const returnTo = safeReturnTo(params.get("return_to"), cfg.publicOrigin);
  if (returnTo === null) throw E.invalid("return_to", "return_to is not a same-origin path");
  const prompt = params.get("prompt");
  if (prompt !== undefined && !PROMPT_SHAPE.test(prompt)) throw E.invalid("prompt");
  const hybrid = params.get("isHybrid");
  if (hybrid !== undefined && hybrid !== "Y" && hybrid !== "N") throw E.invalid("isHybrid");
  const lang = params.get("lang");
  if (lang !== undefined && lang !== "ko" && lang !== "en") throw E.invalid("lang");
  const r: LoginRequest = { returnTo, isHybrid: hybrid === "Y", restarted: params.get("restart") === "1" };
  if (prompt !== undefined) r.prompt = prompt;
  if (lang !== undefined) r.lang = lang;
  return r;
}

async function login(req: Request, kit: KitContext, rc: RequestContext): Promise<Response> {
  const cfg = kit.config;
  const moved = onPublicOrigin(cfg, rc.url);
  if (moved) return moved;
  const lr = loginRequest(await readParams(req, rc.search, 8192), cfg);
  // One binding per browser, reused while valid (and renewed), so logins started in two tabs both
  // complete and the sessions already made with it stay valid.
  const existing = readHostCookie(req, BINDING_COOKIE);
  const binding = isRandomValue(existing) ? existing : randomToken(32);
  const state = randomToken(32);
  const pkce = cfg.pkce ? await createPkce() : undefined;
  const pending: PendingLogin = { bindingHash: await sha256(binding), returnTo: lr.returnTo, created: Date.now() };
  if (pkce) pending.verifier = pkce.verifier;
  if (lr.prompt !== undefined) pending.prompt = lr.prompt;
  if (lr.restarted) pending.restarted = true;
  await kit.store.putState(state, pending, cfg.stateTtlSeconds);
  const location = authorizationUrl(
    { baseUrl: cfg.providerBaseUrl, clientId: cfg.clientId, redirectUri: cfg.redirectUri },
    {
      state,
      ...(pkce ? { codeChallenge: pkce.challenge } : {}),
      ...(lr.prompt !== undefined ? { prompt: lr.prompt } : {}),
      isHybrid: lr.isHybrid,
      ...(lr.lang !== undefined ? { extra: { lang: lr.lang } } : {}),
    },
  );
  rc.log.event = "rp.login";
  // The binding outlives the login: a session made by its callback (at most the state's lifetime
  // from now) is valid only with it, so it lasts as long as such a session can. Logout clears it.
  const maxAgeSeconds = cfg.stateTtlSeconds + cfg.sessionTtlSeconds;
  return kitRedirect(302, location, [hostCookie(BINDING_COOKIE, binding, { maxAgeSeconds })]);
}

export const kitRoutes: KitRoute[] = [
  { method: "GET", path: "/auth/login", handler: login, effects: true, page: true },
];

/** The route over a route worker's env (the three-worker deploy, the all-in-one). */
export const routes: Route<RpEnv>[] = routesOver(kitRoutes, kitContext);
