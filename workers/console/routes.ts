// /console: the operations console (docs/console.md). GET /console without a session is the
// console's sign-in (the service's own identify and code steps, purpose ./purpose.ts); with one,
// the overview. Every other page and action is a route with its least role, checked by ./gate.ts
// before the admin handler it calls checks it again.

import type { Handler } from "../core/router";
import { adminConfig } from "../admin/config";
import { providerConfig } from "../provider/config";
import { door } from "../frame/signin";
import { appAction, appPage, appsPage, createApp } from "./apps";
import { page, type ConsoleEnv, type ConsoleRoute, type PageHandler } from "./gate";
import { c } from "./i18n";
import { auditExport, auditPage, directoryPage, operatorAction, operatorsPage, tokenAction, tokensPage } from "./pages";
import { overviewPage } from "./overview";
import { smsPage } from "./sms";
import { reviewAction, reviewsPage } from "./reviews";
import { consoleSigninPage } from "./purpose";

/**
 * The console's door (workers/frame/signin.ts): GET|POST /console, a step of its sign-in, the
 * sign-in itself (no session, or `reauth=1`: a fresh proof for admin actions), else the overview;
 * POST /console/sign-out; the way back from an action's address. The console exists only where the
 * admin API does.
 */
const { signIn, root, signOut, back } = door<ConsoleEnv>({
  page: consoleSigninPage,
  open: (env) => adminConfig(env).token !== null,
  signOutBytes: (env) => providerConfig(env).maxBodyBytes,
  first: (req, env, rc) => overview(req, env, rc),
  signedOut: (lang) => c(lang, "signedOut"),
});

const at = (role: ConsoleRoute["role"] & string, h: PageHandler) => page(role, h, signIn);

const overview: Handler<ConsoleEnv> = at("viewer", overviewPage);

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
    path: "/console/apps/:id/stream/pause",
    role: "editor",
    handler: at("editor", appAction("pause_stream")),
    page: true,
  },
  {
    method: "POST",
    path: "/console/apps/:id/stream/resume",
    role: "editor",
    handler: at("editor", appAction("resume_stream")),
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
