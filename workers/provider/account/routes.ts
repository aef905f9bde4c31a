// GET|POST /account: "my phone-number login" (docs/account.md). The person proves the number with
// the sign-in's own identify and code steps (workers/provider/signin/steps.ts: same fields,
// limits and counters, with the purpose of ./purpose.ts), then a 10-minute session shows
// the apps the number is connected to, each of which the person can stop logging in automatically
// or disconnect. Korean unless `lang=en`.

import { readParams, type Params } from "../../core/http";
import type { RequestContext, Route } from "../../core/router";
import { providerConfig, type ProviderEnv } from "../config";
import { signinConfig, t, type Lang, bareContext, stopPage } from "../signin/index";
import { audit } from "../store/one-time/index";
import { endAutoLogin, subscriberWithRisk, riskUntil } from "../store/directory/index";
import { connectionsOf } from "../store/flows/connections";
import { endLinksOf, tellStreams } from "../store/flows/end-plids";
import { confirmTerminatePage, dashboardPage } from "./pages";
import { accountSignin } from "./purpose";
import { csrfHolds, endSession, loadSession, type AccountSession, type SessionHandle } from "./session";
import { storeConfig } from "../store/config";
import { formatKst } from "../dates";
import { enrolOnAccount, passkeysView, removeOnAccount } from "./passkeys";

function langOf(params: Params): { lang: Lang; given: boolean } {
  const l = params.get("lang");
  return l === "ko" || l === "en" ? { lang: l, given: true } : { lang: "ko", given: false };
}

/** Step 1 of proving the number: a new transaction of purpose "account". */
function startAccount(
  req: Request,
  env: ProviderEnv,
  lang: Lang,
  langGiven: boolean,
  alert?: string,
  cookies: string[] = [],
): Promise<Response> {
  return accountSignin.start(req, env, { lang, langGiven, alert, cookies });
}

async function dashboard(
  req: Request,
  env: ProviderEnv,
  h: SessionHandle & { csrf: string },
  lang: Lang,
  extra: { notice?: string; alert?: string; status?: number } = {},
): Promise<Response> {
  const [connections, passkeys] = await Promise.all([
    connectionsOf(env, h.session.subscriberId),
    passkeysView(req, env, h.session, lang),
  ]);
  return dashboardPage({
    passkeys,
    operator: signinConfig(env).operator,
    lang,
    masked: h.session.masked,
    csrf: h.csrf,
    connections,
    ...extra,
  });
}

type Action = "end_auto_login" | "terminate" | "sign_out" | "passkey_remove" | "passkey_enrol";

function isAction(v: string | undefined): v is Action {
  return (
    v === "end_auto_login" || v === "terminate" || v === "sign_out" || v === "passkey_remove" || v === "passkey_enrol"
  );
}

/** One of the dashboard's forms: refused unless it carries the session's CSRF token. */
async function act(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  h: SessionHandle & { csrf: string },
  params: Params,
  lang: Lang,
): Promise<Response> {
  const action = params.has("enrol") ? "passkey_enrol" : params.get("action");
  const stopCtx = bareContext(signinConfig(env).operator, lang);
  if (!(await csrfHolds(h, params.get("csrf")))) {
    rc.log.event = "account.csrf_refused";
    return stopPage(stopCtx, t(lang, "forbiddenTitle"), t(lang, "forbiddenText"), {
      href: `/account?lang=${lang}`,
    });
  }
  if (!isAction(action)) return dashboard(req, env, h, lang, { alert: t(lang, "accountUnknownApp"), status: 400 });
  if (action === "sign_out") {
    const cookie = await endSession(h);
    rc.log.event = "account.sign_out";
    return startAccount(req, env, lang, lang !== "ko", t(lang, "accountSignedOut"), [cookie]);
  }
  // Proven by SMS alone in a risk window (a SIM change or a port): what a cloned SIM would use to
  // take the account from its owner (their passkeys, their logins) waits until the window ends.
  if (action === "passkey_remove" || action === "terminate") {
    const until = await smsHeldUntil(env, h.session);
    if (until !== null) {
      rc.log.event = "account.risk_refused";
      rc.waitUntil(audit(env, "risk.refused", null, "refused", { reason: "account", action }));
      return dashboard(req, env, h, lang, {
        alert: t(lang, "accountRiskWait", { until: formatKst(until, lang) }),
        status: 403,
      });
    }
  }
  if (action === "passkey_enrol" || action === "passkey_remove") {
    const o =
      action === "passkey_enrol"
        ? await enrolOnAccount(req, env, rc, h.session, params, lang)
        : await removeOnAccount(env, rc, h.session, params, lang);
    return dashboard(req, env, h, lang, o);
  }
  const clientId = params.get("client_id") ?? "";
  const subscriberId = h.session.subscriberId;
  const connection = (await connectionsOf(env, subscriberId)).find((c) => c.clientId === clientId);
  rc.log.clientId = connection ? clientId : undefined;
  if (!connection) {
    rc.waitUntil(audit(env, `account.${action}`, null, "refused", { reason: "not_connected" }));
    return dashboard(req, env, h, lang, { alert: t(lang, "accountUnknownApp"), status: 404 });
  }
  if (action === "end_auto_login") {
    const grants = await endAutoLogin(env, clientId, subscriberId);
    // the app, when its Shared Signals stream takes it, hears its session ended (CAEP session-revoked)
    if (grants > 0) await tellStreams(env, subscriberId, clientId, "auto_login_ended", Date.now());
    rc.log.event = "account.end_auto_login";
    rc.waitUntil(audit(env, "account.end_auto_login", clientId, "ok", { grants }));
    return dashboard(req, env, h, lang, { notice: t(lang, "accountDoneAutoLogin", { app: connection.appName }) });
  }
  // ending a login is asked a second time (a page of its own, no script): one click ends nothing
  if (params.get("confirm") !== "Y") {
    rc.log.event = "account.terminate_asked";
    return confirmTerminatePage(
      { operator: signinConfig(env).operator, lang, masked: h.session.masked, csrf: h.csrf },
      connection,
    );
  }
  const ended = await endLinksOf(env, subscriberId, clientId, "user_terminated");
  rc.log.event = "account.terminate";
  rc.waitUntil(audit(env, "account.terminate", clientId, ended.length > 0 ? "ok" : "refused"));
  return dashboard(req, env, h, lang, { notice: t(lang, "accountDoneTerminate", { app: connection.appName }) });
}

/** When the risk window ends for a session proven by SMS alone (null: no window, or a passkey proved it). */
async function smsHeldUntil(env: ProviderEnv, session: AccountSession): Promise<number | null> {
  if (session.passkey !== undefined) return null;
  const person = await subscriberWithRisk(env, session.subscriberId);
  return person && riskUntil(person.riskFrom, storeConfig(env).riskWindowMs);
}

async function account(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const params = await readParams(req, rc.search, providerConfig(env).maxBodyBytes);
  if (req.method === "POST" && params.has("tx")) return accountSignin.step(req, env, rc, params);
  const { lang, given } = langOf(params);
  const h = await loadSession(req, env, providerConfig(env).oneTimeShards);
  if (req.method === "POST" && (params.has("action") || params.has("enrol"))) {
    if (!h) return startAccount(req, env, lang, given, t(lang, "accountExpired"));
    return act(req, env, rc, h, params, lang);
  }
  if (h) return dashboard(req, env, h, lang);
  rc.log.event = "account.start";
  return startAccount(req, env, lang, given);
}

export const routes: Route<ProviderEnv>[] = [
  { method: "GET", path: "/account", handler: account, effects: true, page: true },
  { method: "POST", path: "/account", handler: account, page: true },
];
