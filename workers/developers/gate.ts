// Who looks at a developer console page or calls its API, and whether they may (docs/developers.md
// "Session" and "API"). Every page, form and API call needs the developer session; a form or an API
// call that changes anything also needs the session's CSRF token (a form's `csrf` field, the API's
// X-CSRF-Token header) and, when the browser sends one, an Origin of this site. The person behind
// the session is read again: one who left the directory (their number passed to another person)
// or a fixed-code test number is signed out, and their memberships end.

import { ApiError, describe, E } from "../core/errors";
import { html, type SafeHtml } from "../core/html";
import { json, readParams, redirect, type Params } from "../core/http";
import type { Handler, RequestContext } from "../core/router";
import { CSRF_HEADER, fromThisSite, REAUTH_HEADER } from "../admin/access";
import { readJsonObject } from "../admin/steps";
import { errorBox, framePage, type Frame, type PageOut, type Viewer } from "../frame/layout";
import type { ProviderEnv } from "../provider/config";
import { signinConfig } from "../provider/signin/index";
import { sealKeyVar } from "../provider/store/clients";
import {
  consoleCsrfHolds,
  DEVELOPER_SESSION,
  endConsoleSession,
  loadConsoleSession,
  type ConsoleHandle,
} from "../provider/store/console-session";
import { storeConfig } from "../provider/store/config";
import {
  developerId,
  endMembershipsOf,
  memberKey,
  roleOn,
  type DeveloperPerson,
  type TeamRole,
} from "../provider/store/developers";
import { getClient, type AdminClient } from "../provider/store/clients";
import { dirAt, homeOfId } from "../provider/store/directory/index";
import { audit } from "../provider/store/one-time/index";
import { journaledChange } from "../provider/store/flows/journaled-change";
import { d, type Lang } from "./i18n";

export type DevEnv = ProviderEnv;

/** A signed-in developer's request. */
export interface DevSigned {
  v: Viewer;
  h: ConsoleHandle;
  dev: DeveloperPerson;
  /** The form's fields (a page), or the JSON body's (the API). */
  params: Params;
  body: Record<string, unknown>;
  api: boolean;
}

export type DevHandler = (req: Request, env: DevEnv, rc: RequestContext, s: DevSigned) => Promise<Response>;

/** The language a request asks for: `lang=en`, else Korean. */
export const langOf = (params: Params): Lang => (params.get("lang") === "en" ? "en" : "ko");

/** Largest form or JSON body a developer request takes. */
export const MAX_BODY_BYTES = 64 * 1024;

/** Who looks at a developer console page. */
export function viewer(lang: Lang, masked: string, csrf: string, path: string, operator: string): Viewer {
  return { lang, masked, csrf, path, operator };
}

/** The developer console's frame: its name, its one menu entry, its sign-out. */
function frameOf(v: Viewer): Frame {
  return {
    name: d(v.lang, "console"),
    menu: v.csrf ? [{ path: "/developers", label: d(v.lang, "myApps") }] : [],
    signOut: "/developers/sign-out",
    who: v.masked ? d(v.lang, "signedInAs", { masked: v.masked }) : "",
    // its forms' Origin is checked: a no-referrer page makes Chromium post `Origin: null`
    referrer: "same-origin",
  };
}

/** A developer console page: its frame around `body`. */
export function consolePage(v: Viewer, title: string, body: SafeHtml, out: PageOut = {}): Response {
  return framePage(v, frameOf(v), title, body, out);
}

/** The person behind a session, or null when they left the directory or hold a fixed-code number. */
async function personOf(env: DevEnv, rc: RequestContext, h: ConsoleHandle): Promise<DeveloperPerson | null> {
  const id = h.session.subscriberId;
  const person = await dirAt(env, homeOfId(id)).subscriber(id);
  if (!person || person.test_otp_hash !== null) {
    const ended = await endMembershipsOf(env, id);
    for (const clientId of ended) rc.waitUntil(audit(env, "team.removed", clientId, "ok", { reason: "person_left" }));
    return null;
  }
  const key = sealKeyVar(env);
  return {
    subscriberId: id,
    phoneKey: await memberKey(key, person.phone),
    masked: h.session.masked,
    developer: await developerId(key, id),
  };
}

/** The actor of a developer's change in the audit trail. */
export const actorOf = (dev: DeveloperPerson) => `developer:${dev.developer}`;

/**
 * A page's handler for signed-in developers. `signIn` answers a request without a live session
 * (the developer console's identify page).
 */
export function devPage(
  handler: DevHandler,
  signIn: (req: Request, env: DevEnv, rc: RequestContext, lang: Lang, alert?: string) => Promise<Response>,
): Handler<DevEnv> {
  return async (req, env, rc) => {
    const params = await readParams(req, rc.search, MAX_BODY_BYTES);
    const lang = langOf(params);
    const post = req.method === "POST";
    const h = await loadConsoleSession(req, env, storeConfig(env).oneTimeShards, DEVELOPER_SESSION);
    const operator = signinConfig(env).operator.name ?? "";
    if (!h) {
      if (post) return signIn(req, env, rc, lang, d(lang, "expired"));
      return redirect(303, lang === "en" ? `/developers?lang=en&next=${rc.path}` : `/developers?next=${rc.path}`);
    }
    if (h.touch) rc.waitUntil(h.touch);
    const v = viewer(lang, h.session.masked, h.csrf, rc.path, operator);
    if (post && (!fromThisSite(req) || !(await consoleCsrfHolds(h, params.get("csrf"))))) {
      rc.log.event = "developers.csrf_refused";
      const body = html`<h1>${d(lang, "csrfTitle")}</h1><p class="lead">${d(lang, "csrfText")}</p>`;
      return consolePage(v, d(lang, "csrfTitle"), body, { status: 403 });
    }
    const dev = await personOf(env, rc, h);
    if (!dev) {
      const cookie = await endConsoleSession(h);
      return signIn(req, env, rc, lang, d(lang, "expired")).then((r) => {
        r.headers.append("Set-Cookie", cookie);
        return r;
      });
    }
    try {
      const s = { v, h, dev, params, body: {}, api: false };
      return await (post
        ? journaledChange(env, rc, actorOf(dev), "POST", () => handler(req, env, rc, s))
        : handler(req, env, rc, s));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      rc.log.cause = describe(err);
      if (err.headers[REAUTH_HEADER]) return reauthPage(v, rc);
      const body = html`<h1>${d(lang, "errorTitle")}</h1>${errorBox(v, err.message, rc.requestId)}
<p><a href="${lang === "en" ? "/developers?lang=en" : "/developers"}">${d(lang, "backToApps")}</a></p>`;
      return consolePage(v, d(lang, "errorTitle"), body, { status: err.status });
    }
  };
}

/**
 * An API handler for signed-in developers: JSON in and out. Without a live session 401; a change
 * without the session's CSRF token in X-CSRF-Token, or from another Origin, 403.
 */
export function devApi(handler: DevHandler): Handler<DevEnv> {
  return async (req, env, rc) => {
    const h = await loadConsoleSession(req, env, storeConfig(env).oneTimeShards, DEVELOPER_SESSION);
    if (!h) throw E.authFailed("developers: no session");
    if (h.touch) rc.waitUntil(h.touch);
    const changes = req.method !== "GET" && req.method !== "HEAD";
    if (changes && !fromThisSite(req)) throw E.crossOrigin("developers: another origin");
    if (changes && !(await consoleCsrfHolds(h, req.headers.get(CSRF_HEADER))))
      throw new ApiError("access_denied", "The request must carry the session's CSRF token (X-CSRF-Token).", {
        status: 403,
        cause: "developers csrf",
      });
    const dev = await personOf(env, rc, h);
    if (!dev) throw E.authFailed("developers: person left");
    const body = changes ? await readJsonObject(req, MAX_BODY_BYTES) : {};
    const params = await readParams(new Request(req.url), rc.search, MAX_BODY_BYTES);
    const operator = signinConfig(env).operator.name ?? "";
    const v = viewer(langOf(params), h.session.masked, h.csrf, rc.path, operator);
    const s = { v, h, dev, params, body, api: true };
    return changes
      ? journaledChange(env, rc, actorOf(dev), req.method, () => handler(req, env, rc, s))
      : handler(req, env, rc, s);
  };
}

export { json };

/** "Sign in again": a live app's redirect URIs or secret, with a proof older than 10 minutes. */
function reauthPage(v: Viewer, rc: RequestContext): Response {
  rc.log.event = "developers.reauth";
  const next = rc.path.replace(/\/(rotate-secret)$/, "");
  const body = html`<h1>${d(v.lang, "reauthTitle")}</h1><p class="lead">${d(v.lang, "reauthText")}</p>
<form method="get" action="/developers"><input type="hidden" name="lang" value="${v.lang}"><input type="hidden" name="reauth" value="1"><input type="hidden" name="next" value="${next}">
<button type="submit">${d(v.lang, "reauthButton")}</button></form>`;
  return consolePage(v, d(v.lang, "reauthTitle"), body, { status: 403 });
}

/**
 * The app the path names and the caller's role on its team: 404 for anyone off it (an app id
 * reveals nothing), as for an unknown app. Every developer route with an app in its path starts here.
 */
export async function teamApp(
  env: DevEnv,
  rc: RequestContext,
  s: DevSigned,
): Promise<{ app: AdminClient; role: TeamRole }> {
  const id = rc.params.id!;
  const role = /^[A-Za-z0-9]{1,64}$/.test(id) ? await roleOn(env, id, s.dev.subscriberId) : null;
  const app = role ? await getClient(env, id) : null;
  if (!role || !app) throw E.noSuch("app");
  rc.log.clientId = app.clientId;
  return { app, role };
}
