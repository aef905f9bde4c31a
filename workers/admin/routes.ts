// /admin/* (issue 5; docs/operations.md "Admin API"): the operator's API, behind the bearer
// token of the ADMIN_TOKEN secret; it does not exist (404) when that secret is unset.

import type { Env } from "../core/config";
import type { Route } from "../core/router";
import { listEvents } from "./audit";
import { create, disable, enable, list, read, remove, rotate, update } from "./clients";
import { importSubscribers, removeSubscriber, summary } from "./directory";
import { adminRoutes } from "./steps";

export const routes: Route<Env>[] = adminRoutes({
  "/admin/clients": { GET: list, POST: create },
  "/admin/clients/:id": { GET: read, PATCH: update, DELETE: remove },
  "/admin/clients/:id/rotate-secret": { POST: rotate },
  "/admin/clients/:id/disable": { POST: disable },
  "/admin/clients/:id/enable": { POST: enable },
  "/admin/directory": { GET: summary },
  "/admin/directory/import": { POST: importSubscribers },
  "/admin/directory/:phone": { DELETE: removeSubscriber },
  "/admin/audit": { GET: listEvents },
});
