// /admin/* (docs/operations.md "Admin API"): the operator's API. The gate runs first for every
// method and path under /admin/: without the ADMIN_TOKEN secret the API does not exist (404);
// with it, `Authorization: Bearer <ADMIN_TOKEN>` or 401, before any 404 or 405 can answer.

import type { Handler, Route } from "../core/router";
import { openNotices } from "../provider/store/notices";
import { asciiJson } from "../provider/store/one-time/tables/codes";
import { exportEvents, listEvents, pendingEvents } from "./audit";
import { create, disable, enable, list, read, remove, rotate, update } from "./clients";
import type { AdminEnv } from "./config";
import { commitImport, importSubscribers, removeSubscriber, summary } from "./directory";
import { migrateAudit, migrateDirectory } from "./migrate/migrate";
import { requireAdmin } from "./steps";
import { addTestNumber, listTestNumbers, removeTestNumber } from "./test-numbers";

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

const table: Route<AdminEnv>[] = [
  { method: "GET", path: "/admin/clients", handler: list },
  { method: "POST", path: "/admin/clients", handler: create },
  { method: "GET", path: "/admin/clients/:id", handler: read },
  { method: "PATCH", path: "/admin/clients/:id", handler: update },
  { method: "DELETE", path: "/admin/clients/:id", handler: remove },
  { method: "POST", path: "/admin/clients/:id/rotate-secret", handler: rotate },
  { method: "POST", path: "/admin/clients/:id/disable", handler: disable },
  { method: "POST", path: "/admin/clients/:id/enable", handler: enable },
  { method: "GET", path: "/admin/directory", handler: summary },
  { method: "POST", path: "/admin/directory/import", handler: importSubscribers },
  { method: "POST", path: "/admin/directory/import/commit", handler: commitImport },
  { method: "POST", path: "/admin/migrate/directory", handler: migrateDirectory },
  { method: "POST", path: "/admin/migrate/audit", handler: migrateAudit },
  { method: "DELETE", path: "/admin/directory/:phone", handler: removeSubscriber },
  { method: "GET", path: "/admin/test-numbers", handler: listTestNumbers },
  { method: "POST", path: "/admin/test-numbers", handler: addTestNumber },
  { method: "DELETE", path: "/admin/test-numbers/:phone", handler: removeTestNumber },
  { method: "GET", path: "/admin/audit", handler: listEvents },
  { method: "GET", path: "/admin/audit/export", handler: exportEvents },
  { method: "GET", path: "/admin/events", handler: pendingEvents },
];

export const routes: Route<AdminEnv>[] = [
  { method: "ALL", path: "/admin/*", handler: requireAdmin },
  ...table.map((r) => ({ ...r, handler: withNotices(r.handler) })),
];
