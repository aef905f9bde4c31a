// /console: the operations console (docs/console.md). GET /console without a session is the
// console's sign-in (the service's own identify and code steps, purpose ./purpose.ts); with one,
// the overview. Every other page and action is a route with its least role, checked by ./gate.ts
// before the admin handler it calls checks it again.

import { readParams, redirect } from "../core/http";
import type { RequestContext } from "../core/router";
import { fromThisSite } from "../admin/access";
import { adminConfig } from "../admin/config";
import { E } from "../core/errors";
import { providerConfig } from "../provider/config";
import { consoleSignIn, continueSignIn } from "../provider/signin/index";
import {
  clearConsoleCookie,
  consoleCsrfHolds,
  endConsoleSession,
  loadConsoleSession,
} from "../provider/store/console-session";
import { appAction, appPage, appsPage, createApp } from "./apps";
import { langOf, page, type ConsoleEnv, type ConsoleRoute, type PageHandler } from "./gate";
import { c, type Lang } from "./i18n";
import { auditExport, auditPage, directoryPage, operatorAction, operatorsPage, tokenAction, tokensPage } from "./pages";
import { overviewPage } from "./overview";
import { smsPage } from "./sms";
import { reviewAction, reviewsPage } from "./reviews";
import { NEXT_PATH, consoleSignin } from "./purpose";

/** The console's identify page: a new sign-in of purpose "console", going on to `next` once proven. */
const signIn = consoleSignIn("console", NEXT_PATH);

const at = (role: ConsoleRoute["role"] & string, h: PageHandler) => page(role, h, signIn);

/**
 * GET|POST /console: a step of the console's sign-in (a POST with `tx`), the sign-in itself (no
 * session, or `reauth=1`: a fresh proof for admin actions), else the overview.
 */
async function root(req: Request, env: ConsoleEnv, rc: RequestContext): Promise<Response | void> {
  if (adminConfig(env).token === null) throw E.notFound();
  const params = await readParams(req, rc.search, providerConfig(env).maxBodyBytes);
  if (req.method === "POST" && params.has("tx")) return continueSignIn(req, env, rc, params, consoleSignin);
  const lang = langOf(params);
  if (req.method === "POST") throw E.missing("tx");
  if (params.get("reauth") === "1") return signIn(req, env, rc, lang);
  const h = await loadConsoleSession(req, env, providerConfig(env).oneTimeShards);
  if (!h) return signIn(req, env, rc, lang);
  return overview(req, env, rc);
}

const overview = at("viewer", overviewPage);

/** POST /console/sign-out: the session ends, and the sign-in shows again. */
async function signOut(req: Request, env: ConsoleEnv, rc: RequestContext): Promise<Response> {
  if (adminConfig(env).token === null) throw E.notFound();
  const params = await readParams(req, rc.search, providerConfig(env).maxBodyBytes);
  const lang = langOf(params);
  const h = await loadConsoleSession(req, env, providerConfig(env).oneTimeShards);
  // a sign-out needs the session's own form (a cross-site POST cannot end it: SameSite=Strict as well)
  if (h) {
    if (!fromThisSite(req) || !(await consoleCsrfHolds(h, params.get("csrf")))) return redirect(303, "/console");
    const cookie = await endConsoleSession(h);
    rc.log.event = "console.sign_out";
    return signIn(req, env, rc, lang, c(lang, "signedOut"), [cookie]);
  }
  return signIn(req, env, rc, lang, undefined, [clearConsoleCookie()]);
}

/** A 303 to the page an action belongs to, in the asked language (nothing is read or changed). */
function back(to: (rc: RequestContext) => string) {
  return (_req: Request, _env: ConsoleEnv, rc: RequestContext): Response => {
    const path = to(rc);
    if (!NEXT_PATH.test(path)) throw E.notFound();
    return redirect(303, new URLSearchParams(rc.search).get("lang") === "en" ? `${path}?lang=en` : path);
  };
}

/** The console's route table: every page and action with its least role (docs/console.md "Roles"). */
export const table: ConsoleRoute[] = [
  { method: "GET", path: "/console", role: null, handler: root, effects: true, page: true },
  { method: "POST", path: "/console", role: null, handler: root, page: true },
  { method: "POST", path: "/console/sign-out", role: null, handler: signOut, page: true },
  { method: "GET", path: "/console/apps", role: "viewer", handler: at("viewer", appsPage), page: true },
  { method: "POST", path: "/console/apps", role: "editor", handler: at("editor", createApp), page: true },
  { method: "GET", path: "/console/apps/:id", role: "viewer", handler: at("viewer", appPage), page: true },
  { method: "POST", path: "/console/apps/:id", role: "editor", handler: at("editor", appAction("update")), page: true },
  {
    method: "POST",
    path: "/console/apps/:id/rotate-secret",
    role: "admin",
    handler: at("admin", appAction("rotate")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/apps/:id/disable",
    role: "editor",
    handler: at("editor", appAction("disable")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/apps/:id/enable",
    role: "editor",
    handler: at("editor", appAction("enable")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/apps/:id/delete",
    role: "admin",
    handler: at("admin", appAction("delete")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/apps/:id/test-numbers",
    role: "editor",
    handler: at("editor", appAction("add_test")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/apps/:id/test-numbers/:phone/remove",
    role: "editor",
    handler: at("editor", appAction("remove_test")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/apps/:id/guard/clear",
    role: "editor",
    handler: at("editor", appAction("clear_scope")),
    page: true,
  },
  { method: "GET", path: "/console/reviews", role: "viewer", handler: at("viewer", reviewsPage), page: true },
  {
    method: "POST",
    path: "/console/reviews/:id/approve",
    role: "editor",
    handler: at("editor", reviewAction("approve")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/reviews/:id/reject",
    role: "editor",
    handler: at("editor", reviewAction("reject")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/apps/:id/events/resume",
    role: "editor",
    handler: at("editor", appAction("resume_events")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/apps/:id/owner",
    role: "editor",
    handler: at("editor", appAction("invite_owner")),
    page: true,
  },
  { method: "GET", path: "/console/sms", role: "viewer", handler: at("viewer", smsPage), page: true },
  { method: "GET", path: "/console/directory", role: "viewer", handler: at("viewer", directoryPage), page: true },
  { method: "GET", path: "/console/audit", role: "viewer", handler: at("viewer", auditPage), page: true },
  { method: "GET", path: "/console/audit/export", role: "viewer", handler: at("viewer", auditExport), page: true },
  { method: "GET", path: "/console/operators", role: "admin", handler: at("admin", operatorsPage), page: true },
  {
    method: "POST",
    path: "/console/operators",
    role: "admin",
    handler: at("admin", operatorAction("grant")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/operators/invites/withdraw",
    role: "admin",
    handler: at("admin", operatorAction("withdraw")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/operators/:id/revoke",
    role: "admin",
    handler: at("admin", operatorAction("revoke")),
    page: true,
  },
  { method: "GET", path: "/console/tokens", role: "admin", handler: at("admin", tokensPage), page: true },
  { method: "POST", path: "/console/tokens", role: "admin", handler: at("admin", tokenAction("create")), page: true },
  {
    method: "POST",
    path: "/console/tokens/:name/revoke",
    role: "admin",
    handler: at("admin", tokenAction("revoke")),
    page: true,
  },
  // an action's address opened as a page (a bookmark, the address bar after an action): its page
  {
    method: "GET",
    path: "/console/apps/:id/*",
    role: null,
    handler: back((rc) => `/console/apps/${rc.params.id}`),
    page: true,
  },
  { method: "GET", path: "/console/operators/*", role: null, handler: back(() => "/console/operators"), page: true },
  { method: "GET", path: "/console/tokens/*", role: null, handler: back(() => "/console/tokens"), page: true },
  { method: "GET", path: "/console/reviews/*", role: null, handler: back(() => "/console/reviews"), page: true },
  { method: "GET", path: "/console/sign-out", role: null, handler: back(() => "/console"), page: true },
];

export const routes = table.map(({ method, path, handler, effects, page }) => ({
  method,
  path,
  handler,
  effects,
  page,
}));
