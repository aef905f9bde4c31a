// /admin/* (docs/operations.md "Admin API"): the operators' API. The gate (./access.ts) runs first
// for every method and path under /admin/: without the ADMIN_TOKEN secret the API does not exist
// (404); with it, a bearer token (ADMIN_TOKEN or a named one) or the console's session, or 401,
// before any 404 or 405 can answer. Each route then needs its least role, or 403.

import { clearGuardScope, guardAcrossApps, guardScopes } from "./guard";
import { json } from "../core/http";
import type { Handler, RequestContext, Route } from "../core/router";
import { openNotices } from "../provider/store/notices";
import { asciiJson } from "../provider/store/one-time/index";
import { exportEvents, listEvents, pendingEvents } from "./audit";
import { create, disable, enable, list, read, remove, rotate, update } from "./clients";
import type { AdminEnv } from "./config";
import { commitImport, importSubscribers, removeSubscriber, summary } from "./directory";
import { findRun } from "./import-progress";
import { listKeys, rotateKeys } from "./keys";
import { alerts, metrics } from "./metrics";
import { migrateAudit, migrateDirectory } from "./migrate/migrate";
import { actorOf, allow, requireAdmin, type Role } from "./access";
import {
  createApiToken,
  grantOperator,
  listAllOperators,
  listApiTokens,
  revokeApiToken,
  revokeOperator,
  withdrawInvite,
} from "./operators";
import { addTestNumber, listTestNumbers, removeTestNumber } from "./test-numbers";
import { approveReview, inviteOwner, listReviews, rejectReview, resumeEvents } from "./reviews";

/** The most notices an answer carries. */
const NOTICES = 10;

/**
 * Every answer of the admin API carries the operator's open notices (docs/operations.md
 * "Notices") in `Admin-Notices`, a JSON array of texts, so the CLI warns on its next call.
 */
function withNotices(h: Handler<AdminEnv>): Handler<AdminEnv> {
  return async (req, env, rc) => {
    const res = await h(req, env, rc);
    if (!res) return res;
    const notices = await openNotices(env, NOTICES);
    if (notices.length === 0) return res;
    const out = new Response(res.body, res);
    out.headers.set("Admin-Notices", asciiJson(notices.map((n) => n.text)));
    return out;
  };
}

/** A route of the admin API with the least role that may call it (docs/operations.md "Operators and roles"). */
export interface AdminRoute extends Route<AdminEnv> {
  role: Role;
}

export const table: AdminRoute[] = [
  { method: "GET", path: "/admin/clients", role: "viewer", handler: list },
  { method: "POST", path: "/admin/clients", role: "editor", handler: create },
  { method: "GET", path: "/admin/clients/:id", role: "viewer", handler: read },
  { method: "PATCH", path: "/admin/clients/:id", role: "editor", handler: update },
  { method: "DELETE", path: "/admin/clients/:id", role: "admin", handler: remove },
  { method: "POST", path: "/admin/clients/:id/rotate-secret", role: "admin", handler: rotate },
  { method: "POST", path: "/admin/clients/:id/disable", role: "editor", handler: disable },
  { method: "POST", path: "/admin/clients/:id/enable", role: "editor", handler: enable },
  { method: "GET", path: "/admin/guard", role: "viewer", handler: guardAcrossApps },
  { method: "GET", path: "/admin/clients/:id/guard", role: "viewer", handler: guardScopes },
  { method: "POST", path: "/admin/clients/:id/guard/clear", role: "editor", handler: clearGuardScope },
  { method: "GET", path: "/admin/directory", role: "viewer", handler: summary },
  { method: "POST", path: "/admin/directory/import", role: "editor", handler: importSubscribers },
  { method: "POST", path: "/admin/directory/import/commit", role: "editor", handler: commitImport },
  { method: "GET", path: "/admin/directory/import/runs", role: "editor", handler: findRun },
  { method: "POST", path: "/admin/migrate/directory", role: "admin", handler: migrateDirectory },
  { method: "POST", path: "/admin/migrate/audit", role: "admin", handler: migrateAudit },
  { method: "DELETE", path: "/admin/directory/:phone", role: "admin", handler: removeSubscriber },
  { method: "GET", path: "/admin/test-numbers", role: "viewer", handler: listTestNumbers },
  { method: "POST", path: "/admin/test-numbers", role: "editor", handler: addTestNumber },
  { method: "DELETE", path: "/admin/test-numbers/:phone", role: "editor", handler: removeTestNumber },
  { method: "GET", path: "/admin/audit", role: "viewer", handler: listEvents },
  { method: "GET", path: "/admin/audit/export", role: "viewer", handler: exportEvents },
  { method: "GET", path: "/admin/events", role: "viewer", handler: pendingEvents },
  { method: "GET", path: "/admin/reviews", role: "viewer", handler: listReviews },
  { method: "POST", path: "/admin/reviews/:id/approve", role: "editor", handler: approveReview },
  { method: "POST", path: "/admin/reviews/:id/reject", role: "editor", handler: rejectReview },
  { method: "POST", path: "/admin/clients/:id/owner", role: "editor", handler: inviteOwner },
  { method: "POST", path: "/admin/clients/:id/events/resume", role: "editor", handler: resumeEvents },
  { method: "GET", path: "/admin/operators", role: "admin", handler: listAllOperators },
  { method: "POST", path: "/admin/operators", role: "admin", handler: grantOperator },
  { method: "DELETE", path: "/admin/operators/invites/:phone", role: "admin", handler: withdrawInvite },
  { method: "DELETE", path: "/admin/operators/:id", role: "admin", handler: revokeOperator },
  { method: "GET", path: "/admin/tokens", role: "admin", handler: listApiTokens },
  { method: "POST", path: "/admin/tokens", role: "admin", handler: createApiToken },
  { method: "DELETE", path: "/admin/tokens/:name", role: "admin", handler: revokeApiToken },
  { method: "GET", path: "/admin/keys", role: "viewer", handler: listKeys },
  { method: "POST", path: "/admin/keys/rotate", role: "admin", handler: rotateKeys },
  { method: "GET", path: "/admin/whoami", role: "viewer", handler: whoami },
  { method: "GET", path: "/admin/metrics", role: "viewer", handler: metrics },
  { method: "GET", path: "/admin/alerts", role: "viewer", handler: alerts },
];

/** `GET /admin/whoami`: the caller as the audit names them, and their role. */
function whoami(_req: Request, _env: AdminEnv, rc: RequestContext): Response {
  const a = actorOf(rc);
  return json({ actor: a.id, role: a.role });
}

export const routes: Route<AdminEnv>[] = [
  { method: "ALL", path: "/admin/*", handler: requireAdmin },
  ...table.map(({ method, path, role, handler }) => ({ method, path, handler: withNotices(allow(role, handler)) })),
];
