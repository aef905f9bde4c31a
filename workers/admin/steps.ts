// Steps every admin route shares: the bearer-token gate, JSON bodies, and the route-table builder
// that puts the gate before method dispatch.

import { adminConfig, type AdminConfig } from "./config";
import type { Env } from "../core/config";
import { constantTimeEqual } from "../core/crypto";
import { E } from "../core/errors";
import { mediaType, parseBearer, readBodyText } from "../core/http";
import type { Handler, RequestContext, Route } from "../core/router";

/**
 * The admin gate (issue 5). ADMIN_TOKEN unset: the admin API does not exist (404, for every path
 * and method, so not even its route table shows). Set: `Authorization: Bearer <ADMIN_TOKEN>`,
 * compared in constant time, or 401.
 */
export async function requireAdmin(req: Request, env: Env): Promise<AdminConfig> {
  const cfg = adminConfig(env);
  if (cfg.token === null) throw E.notFound();
  const given = parseBearer(req.headers.get("Authorization"));
  if (given === undefined) throw E.authFailed("admin: no bearer token");
  if (!(await constantTimeEqual(given, cfg.token))) throw E.authFailed("admin: wrong token");
  return cfg;
}

/** The request body as a JSON object; an empty body is `{}`. Other media types are refused. */
export async function readJsonObject(req: Request, maxBytes: number): Promise<Record<string, unknown>> {
  const text = await readBodyText(req, maxBytes);
  if (text.trim() === "") return {};
  if (mediaType(req) !== "application/json") throw E.invalidBecause("Content-Type", "send application/json");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw E.invalidBecause("body", "not JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw E.invalidBecause("body", "must be a JSON object");
  return body as Record<string, unknown>;
}

/** Refuses fields the endpoint does not know (a typo must not be silently ignored). */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k)) throw E.invalidBecause(k, `unknown field; expected ${allowed.join(", ")}`);
  }
}

export type AdminHandler = (req: Request, env: Env, rc: RequestContext, cfg: AdminConfig) => Promise<Response>;

/** Methods routed for every admin path, so that the gate answers before any 405 could. */
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/**
 * Builds the route table: for each path, every method goes to one dispatcher that runs the gate
 * first, then the handler for the method or 405 with `Allow`.
 */
export function adminRoutes(table: Record<string, Partial<Record<"GET" | "POST" | "PATCH" | "DELETE", AdminHandler>>>): Route<Env>[] {
  const routes: Route<Env>[] = [];
  for (const [path, handlers] of Object.entries(table)) {
    const dispatch: Handler<Env> = async (req, env, rc) => {
      const cfg = await requireAdmin(req, env);
      const h = handlers[(req.method === "HEAD" ? "GET" : req.method) as keyof typeof handlers];
      if (!h) throw E.methodNotAllowed(Object.keys(handlers));
      return h(req, env, rc, cfg);
    };
    for (const method of METHODS) routes.push({ method, path, handler: dispatch });
  }
  return routes;
}
