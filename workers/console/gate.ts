// Who looks at a console page, and whether they may (docs/console.md "Roles"). Every page and action
// of the console is a route with its least role, as the admin API's routes are; `page` wraps its
// handler: the console exists only where the admin API does (ADMIN_TOKEN set), a request without a
// live session goes to the sign-in, a person without a role sees "no access", a role below the
// route's sees 403, a form without the session's CSRF token or from another Origin is refused, and an admin action asks
// for a sign-in from the last 10 minutes. The operator is then the caller of the admin handlers
// the page calls in process, so their checks and audit events are the API's own.

import { ApiError, describe, E } from "../core/errors";
import { html } from "../core/html";
import { readParams, redirect, type Params } from "../core/http";
import type { Handler, RequestContext, Route } from "../core/router";
import { fromThisSite, operatorOfSession, proofFresh, REAUTH_HEADER, setActor, type Actor } from "../admin/access";
import { adminConfig, type AdminEnv } from "../admin/config";
import type { ProviderEnv } from "../provider/config";
import { operatorName } from "../provider/signin/index";
import { consoleCsrfHolds, loadConsoleSession, type ConsoleHandle } from "../provider/store/console-session";
import { storeConfig } from "../provider/store/config";
import type { Role } from "../provider/store/operators";
import { c, type Lang } from "./i18n";
import { consolePage, covers, errorBox, roleName, type Viewer } from "./layout";

export type ConsoleEnv = ProviderEnv & AdminEnv;

/** A console route with the least role that may open it (null: the sign-in itself). */
export interface ConsoleRoute extends Route<ConsoleEnv> {
  role: Role | null;
}

/** A signed-in operator's request: who they are, their session, the request's fields. */
export interface Signed {
  v: Viewer & { role: Role };
  h: ConsoleHandle;
  actor: Actor;
  params: Params;
}

export type PageHandler = (req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed) => Promise<Response>;

/** The language a console request asks for: `lang=en`, else Korean. */
export function langOf(params: Params): Lang {
  return params.get("lang") === "en" ? "en" : "ko";
}

/** Largest form a console page takes (an app's settings with its redirect URIs). */
const MAX_FORM_BYTES = 64 * 1024;

/**
 * The route `path`'s handler for operators whose role covers `role`. `signIn` answers a request
 * without a live session (the console's identify page).
 */
export function page(
  role: Role,
  handler: PageHandler,
  signIn: (req: Request, env: ConsoleEnv, rc: RequestContext, lang: Lang, alert?: string) => Promise<Response>,
): Handler<ConsoleEnv> {
  return async (req, env, rc) => {
    if (adminConfig(env).token === null) throw E.notFound();
    const params = await readParams(req, rc.search, MAX_FORM_BYTES);
    const lang = langOf(params);
    const post = req.method === "POST";
    const h = await loadConsoleSession(req, env, storeConfig(env).oneTimeShards);
    if (!h) {
      if (post) return signIn(req, env, rc, lang, c(lang, "expired"));
      return redirect(303, lang === "en" ? `/console?lang=en&next=${rc.path}` : `/console?next=${rc.path}`);
    }
    if (h.touch) rc.waitUntil(h.touch);
    const operator = operatorName(env) ?? "";
    const base = { lang, masked: h.session.masked, csrf: h.csrf, path: rc.path, operator };
    const actor = await operatorOfSession(env, rc, h);
    if (!actor) {
      rc.log.event = "console.no_access";
      const body = html`<h1>${c(lang, "noAccessTitle")}</h1><p class="lead">${c(lang, "noAccessText")}</p>`;
      return consolePage({ ...base, role: null }, c(lang, "noAccessTitle"), body, { status: 403 });
    }
    const v = { ...base, role: actor.role };
    if (!covers(actor.role, role)) {
      rc.log.event = "console.role_refused";
      const text = c(lang, "needsRoleText", { role: roleName(lang, role), mine: roleName(lang, actor.role) });
      return consolePage(
        v,
        c(lang, "needsRoleTitle"),
        html`<h1>${c(lang, "needsRoleTitle")}</h1><p class="lead">${text}</p>`,
        {
          status: 403,
        },
      );
    }
    if (post && (!fromThisSite(req) || !(await consoleCsrfHolds(h, params.get("csrf"))))) {
      rc.log.event = "console.csrf_refused";
      return consolePage(
        v,
        c(lang, "csrfTitle"),
        html`<h1>${c(lang, "csrfTitle")}</h1><p class="lead">${c(lang, "csrfText")}</p>`,
        {
          status: 403,
        },
      );
    }
    if (post && role === "admin" && !proofFresh(actor)) return reauthPage(v, rc);
    setActor(rc, actor);
    try {
      return await handler(req, env, rc, { v, h, actor, params });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      rc.log.cause = describe(err);
      if (err.headers[REAUTH_HEADER]) return reauthPage(v, rc);
      return consolePage(
        v,
        c(lang, "errorTitle"),
        html`<h1>${c(lang, "errorTitle")}</h1>${errorBox(v, err.message, rc.requestId)}`,
        {
          status: err.status,
        },
      );
    }
  };
}

/** "Sign in again": an admin action whose proof is older than 10 minutes. */
function reauthPage(v: Viewer, rc: RequestContext): Response {
  rc.log.event = "console.reauth";
  const next = rc.path.replace(/\/(rotate-secret|delete|revoke|remove|disable|enable)$/, "");
  const body = html`<h1>${c(v.lang, "reauthTitle")}</h1><p class="lead">${c(v.lang, "reauthText")}</p>
<form method="get" action="/console"><input type="hidden" name="lang" value="${v.lang}"><input type="hidden" name="reauth" value="1"><input type="hidden" name="next" value="${next}">
<button type="submit">${c(v.lang, "reauthButton")}</button></form>`;
  return consolePage(v, c(v.lang, "reauthTitle"), body, { status: 403 });
}
