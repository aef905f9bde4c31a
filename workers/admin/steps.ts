// Steps every admin route shares: JSON bodies (the gate is ./access.ts).

import { E } from "../core/errors";
import { mediaType, readBodyText } from "../core/http";

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
