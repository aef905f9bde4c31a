// A validated authorization request (spec §4.1, docs/architecture.md §4.4): automatic login when the
// browser holds a grant and `prompt` allows it; `prompt=none` never shows a page; otherwise the
// protocol hands off to the sign-in (its first page, `beginSignIn`), which takes it back at its end
// (./purpose.ts).

import { providerConfig, type ProviderEnv } from "../config";
import { mintCode } from "../codes";
import type { RequestContext } from "../../core/router";
import { signinConfig, autoLoginEligible, deviceIdOf, beginSignIn, mayTest } from "../signin/index";
import { errorRedirect, LOGIN_REQUIRED_MESSAGE, redirectLocation } from "./redirects";
import { redirect } from "../../core/http";
import type { AuthorizeRequest } from "./validate";
import {
  subscriberWithRisk,
  riskUntil,
  findLink,
  touchLink,
  deviceOf,
  findAutoLoginGrant,
} from "../store/directory/index";
import { storeConfig } from "../store/config";
import { audit } from "../store/one-time/index";

/** The code of an automatic login (no page) and its plid, or null when the device has no usable grant. */
async function automaticLogin(
  req: Request,
  env: ProviderEnv,
  ar: AuthorizeRequest,
): Promise<{ code: string; plid: string } | null> {
  if (!ar.client.autoLogin) return null;
  const deviceId = deviceIdOf(req);
  if (!deviceId) return null;
  const device = await deviceOf(env, deviceId);
  const deviceHash = device.hash;
  const grant = await findAutoLoginGrant(env, device, ar.client.clientId);
  if (!grant) return null;
  const [link, person] = await Promise.all([
    findLink(env, ar.client.clientId, grant.subscriberId),
    subscriberWithRisk(env, grant.subscriberId),
  ]);
  // Gone after a disconnect; consent needed again when the agreed items grew; SKT/KT only.
  if (!link || !person || ar.client.items.some((i) => !link.items.includes(i))) return null;
  // no automatic login while a SIM change or a port keeps the number at risk (a cloned SIM's
  // grant, or the person's own one, waits the window out: the pages ask for a proof)
  if (riskUntil(person.riskFrom, storeConfig(env).riskWindowMs) !== null) return null;
  const subscriber = person.subscriber;
  if (!autoLoginEligible(ar.client, subscriber.telco, ar.prompt)) return null;
  // a testing app logs in only its team (a member who left it keeps no automatic login there)
  if (!(await mayTest(env, ar.client, grant.subscriberId, false))) return null;
  // the proof that made the grant: its time (the grant's life counted back); older than the
  // OpenID Connect request's max_age, the pages ask for a new one
  const authTime = grant.expiresAt - signinConfig(env).autoLoginTtlMs;
  if (ar.oidc?.maxAge !== undefined && Date.now() - authTime > ar.oidc.maxAge * 1000) return null;
  const cfg = providerConfig(env);
  const code = await mintCode(env, cfg.oneTimeShards, cfg.codeTtlMs, {
    clientId: ar.client.clientId,
    subscriber,
    plid: link.plid,
    items: ar.client.items.filter((i) => link.items.includes(i)),
    redirectUri: ar.redirectUri,
    autoLogin: { deviceHash, automatic: true },
    codeChallenge: ar.codeChallenge,
    // `auto` for how this login was made (docs/oidc.md "The id_token")
    ...(ar.oidc && {
      oidc: { ...(ar.oidc.nonce !== undefined && { nonce: ar.oidc.nonce }), authTime, amr: ["auto"] },
    }),
  });
  return { code, plid: link.plid };
}

/** Answers a validated authorization request: a 302 (automatic login, login_required) or step 1. */
export async function startSignIn(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  ar: AuthorizeRequest,
): Promise<Response> {
  const cfg = signinConfig(env);
  const usesGrant = ar.prompt !== "login" && ar.prompt !== "select_account" && ar.prompt !== "N";
  if (usesGrant) {
    const auto = await automaticLogin(req, env, ar);
    if (auto) {
      rc.log.event = "signin.automatic";
      rc.waitUntil(touchLink(env, ar.client.clientId, auto.plid));
      rc.waitUntil(audit(env, "signin.success", ar.client.clientId, "ok", { mode: "automatic", method: "automatic" }));
      return redirect(
        302,
        redirectLocation(ar.redirectUri, [
          ["code", auto.code],
          ["state", ar.state],
        ]),
      );
    }
  }
  if (ar.prompt === "none") {
    rc.log.event = "signin.login_required";
    rc.waitUntil(audit(env, "signin.failure", ar.client.clientId, "refused", { reason: "login_required" }));
    return errorRedirect(ar.redirectUri, ar.state, "login_required", LOGIN_REQUIRED_MESSAGE);
  }
  return beginSignIn(req, env, rc, cfg, ar);
}
