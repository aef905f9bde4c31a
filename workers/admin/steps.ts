// Steps every admin route shares: the bearer-token gate and JSON bodies.

import { adminConfig } from "./config";
import type { AdminEnv } from "./config";
import { constantTimeEqual } from "../core/crypto";
import { E } from "../core/errors";
import { mediaType, parseBearer, readBodyText } from "../core/http";

/**
 * The admin gate. ADMIN_TOKEN unset: the admin API does not exist (404, for every path
 * and method, so not even its route table shows). Set: `Authorization: Bearer <ADMIN_TOKEN>`,
 * compared in constant time, or 401.
 */
export async function requireAdmin(req: Request, env: AdminEnv): Promise<void> {
  const cfg = adminConfig(env);
  if (cfg.token === null) throw E.notFound();
  const given = parseBearer(req.headers.get("Authorization"));
  if (given === undefined) throw E.authFailed("admin: no bearer token");
  if (!(await constantTimeEqual(given, cfg.token))) throw E.authFailed("admin: wrong token");
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
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw E.invalidBecause("body", "must be a JSON object");
  return body as Record<string, unknown>;
}

/** Refuses fields the endpoint does not know (a typo must not be silently ignored). */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k)) throw E.invalidBecause(k, `unknown field; expected ${allowed.join(", ")}`);
  }
}
