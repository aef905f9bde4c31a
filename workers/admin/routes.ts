// /admin/* (docs/operations.md "Admin API"): the operators' API. The gate (./access.ts) runs first
// for every method and path under /admin/: without the ADMIN_TOKEN secret the API does not exist
// (404); with it, a bearer token (ADMIN_TOKEN or a named one) or the console's session, or 401,
// before any 404 or 405 can answer. Each route then needs its least role, or 403. A service's route
// (`serve`) is its HTTP form: the request read into the service's input, its view written as JSON;
// the console runs the same services (`perform`).

import { clearGuardScope, guardAcrossApps, guardScopes } from "./guard";
import { json } from "../core/http";
import type { Handler, RequestContext, Route } from "../core/router";
import { openNotices } from "../provider/store/notices";
import { asciiJson } from "../provider/store/one-time/index";
import { exportEvents, listEvents, ndjsonResponse, pendingEvents } from "./audit";
import * as clients from "./clients";
import { adminConfig, type AdminEnv } from "./config";
import { E } from "../core/errors";
import { CLIENT_FIELDS } from "./validate";
import { onlyFields, readJsonObject } from "./steps";
import { commitImport, importSubscribers, removeSubscriber, summary } from "./directory";
import { findRun } from "./import-progress";
import { listKeys, rotateKeys } from "./keys";
import { alerts, metrics } from "./metrics";
import { migrateAudit, migrateDirectory } from "./migrate/migrate";
import { actorOf, allow, callerOf, requireAdmin, type Role, type Service } from "./access";
import {
  createApiToken,
  grantOperator,
  listAllOperators,
  listApiTokens,
  revokeApiToken,
  revokeOperator,
  withdrawInvite,
} from "./operators";
import { addTestNumber, listTestNumbers, removeTestNumber, TEST_NUMBER_FIELDS } from "./test-numbers";
import { approveReview, inviteOwner, listReviews, rejectReview, resumeEvents } from "./reviews";
import { readStream } from "./streams";

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

type Read<I> = (req: Request, env: AdminEnv, rc: RequestContext) => I | Promise<I>;

/**
 * The route of a service at `path` (its method and least role are the service's): the request read
 * into its input, the service run for the gate's caller, its view as JSON (or as `write` says).
 */
function serve<I, V>(
  path: string,
  s: Service<I, V>,
  read: Read<I>,
  write: (view: V) => Response = (view) => json(view),
): AdminRoute {
  return {
    method: s.method,
    path,
    role: s.role,
    handler: async (req, env, rc) => write(await s.run(env, callerOf(rc), await read(req, env, rc))),
  };
}

/** The JSON body, with only `fields` (an empty body is `{}`). */
const body =
  <F extends string>(fields: readonly F[]) =>
  async (req: Request, env: AdminEnv): Promise<Partial<Record<F, unknown>>> => {
    const b = await readJsonObject(req, adminConfig(env).maxBodyBytes);
    onlyFields(b, fields);
    return b as Partial<Record<F, unknown>>;
  };
const none: Read<void> = () => undefined;
const app: Read<{ clientId: string }> = (_req, _env, rc) => ({ clientId: rc.params.id! });
const query: Read<URLSearchParams> = (_req, _env, rc) => rc.url.searchParams;
const created = (view: unknown) => json(view, 201);

export const table: AdminRoute[] = [
  serve("/admin/clients", clients.list, none),
  serve("/admin/clients", clients.create, body(CLIENT_FIELDS), created),
  serve("/admin/clients/:id", clients.read, app),
  serve("/admin/clients/:id", clients.update, async (req, env, rc) => ({
    clientId: rc.params.id!,
    fields: await body(CLIENT_FIELDS)(req, env),
  })),
  serve("/admin/clients/:id", clients.remove, app),
  serve("/admin/clients/:id/rotate-secret", clients.rotate, async (req, env, rc) => ({
    clientId: rc.params.id!,
    ...(await body(["grace_seconds"])(req, env)),
  })),
  serve("/admin/clients/:id/disable", clients.disable, app),
  serve("/admin/clients/:id/enable", clients.enable, app),
  serve("/admin/guard", guardAcrossApps, none),
  serve("/admin/clients/:id/guard", guardScopes, app),
  serve("/admin/clients/:id/guard/clear", clearGuardScope, async (req, env, rc) => ({
    clientId: rc.params.id!,
    scope: (await body(["scope"])(req, env)).scope,
  })),
  serve("/admin/directory", summary, none),
  { method: "POST", path: "/admin/directory/import", role: "editor", handler: importSubscribers },
  { method: "POST", path: "/admin/directory/import/commit", role: "editor", handler: commitImport },
  { method: "GET", path: "/admin/directory/import/runs", role: "editor", handler: findRun },
  { method: "POST", path: "/admin/migrate/directory", role: "admin", handler: migrateDirectory },
  { method: "POST", path: "/admin/migrate/audit", role: "admin", handler: migrateAudit },
  { method: "DELETE", path: "/admin/directory/:phone", role: "admin", handler: removeSubscriber },
  serve("/admin/test-numbers", listTestNumbers, (_req, _env, rc) => ({
    after: rc.url.searchParams.get("after") ?? "",
  })),
  serve("/admin/test-numbers", addTestNumber, body(TEST_NUMBER_FIELDS), (v) => json(v.number, v.replaced ? 200 : 201)),
  serve("/admin/test-numbers/:phone", removeTestNumber, (_req, _env, rc) => ({ phone: rc.params.phone! })),
  serve("/admin/audit", listEvents, query),
  serve("/admin/audit/export", exportEvents, query, (v) => ndjsonResponse(v.ndjson)),
  { method: "GET", path: "/admin/events", role: "viewer", handler: pendingEvents },
  serve("/admin/reviews", listReviews, none),
  serve("/admin/reviews/:id/approve", approveReview, async (req, env, rc) => {
    if ((await body(["reason"])(req, env)).reason !== undefined)
      throw E.invalidBecause("reason", "only a rejection takes one");
    return { id: rc.params.id ?? "" };
  }),
  serve("/admin/reviews/:id/reject", rejectReview, async (req, env, rc) => ({
    id: rc.params.id ?? "",
    reason: (await body(["reason"])(req, env)).reason,
  })),
  serve(
    "/admin/clients/:id/owner",
    inviteOwner,
    async (req, env, rc) => ({ clientId: rc.params.id!, phone: (await body(["phone"])(req, env)).phone }),
    created,
  ),
  serve("/admin/clients/:id/events/resume", resumeEvents, app),
  serve("/admin/clients/:id/stream", readStream, app),
  serve("/admin/operators", listAllOperators, none),
  serve("/admin/operators", grantOperator, body(["phone", "role"]), created),
  serve("/admin/operators/invites/:phone", withdrawInvite, (_req, _env, rc) => ({ phone: rc.params.phone })),
  serve("/admin/operators/:id", revokeOperator, (_req, _env, rc) => ({ id: rc.params.id! })),
  serve("/admin/tokens", listApiTokens, none),
  serve("/admin/tokens", createApiToken, body(["name", "role"]), created),
  serve("/admin/tokens/:name", revokeApiToken, (_req, _env, rc) => ({ name: rc.params.name! })),
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
