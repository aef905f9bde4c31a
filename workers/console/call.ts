// The console's pages call the admin API's handlers in process, as the operator (the gate named
// them the request's caller): the same validation, role checks and audit events as the API.

import type { Handler, RequestContext } from "../core/router";
import { allow, type Role } from "../admin/access";
import type { AdminEnv } from "../admin/config";

/** Calls an admin handler for `role` with a JSON body (or none) and answers its JSON. */
export async function callAdmin<T>(
  role: Role,
  handler: Handler<AdminEnv>,
  req: Request,
  env: AdminEnv,
  rc: RequestContext,
  method: "GET" | "POST" | "PATCH" | "DELETE" = "GET",
  body?: unknown,
): Promise<T> {
  const init: RequestInit =
    body === undefined
      ? { method }
      : { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const res = await allow(role, handler)(new Request(req.url, init), env, rc);
  if (!res) throw new Error("console: the admin handler answered nothing");
  return (res.status === 204 ? {} : await res.json()) as T;
}
