// HTTP rules of the relying-party kit (docs/architecture.md §4.6, §4.7): its cookies, the `return_to`
// check, the Origin check on POSTs, the dev host redirect.

import { E } from "./core/errors.js";
import { redirect } from "./core/http.js";

/** Binds a state to the browser that started the login (sent as `__Host-rp_state`). */
export const BINDING_COOKIE = "rp_state";
/** The browser session (sent as `__Host-rp_session`). */
export const SESSION_COOKIE = "rp_session";

const MAX_RETURN_TO = 2048;

/**
 * A same-origin path to return to after login, normalised, or null when refused: anything not a
 * single-slash path (`//evil`, `/\evil`, `https:...`, `javascript:`), control characters, spaces
 * or backslashes anywhere, and anything whose normalised form would leave the origin
 * (`/.//evil` normalises to `//evil`). Absent or empty means "/".
 */
export function safeReturnTo(value: string | undefined, origin: string): string | null {
  if (value === undefined || value === "") return "/";
  if (value.length > MAX_RETURN_TO) return null;
  if (value[0] !== "/" || value[1] === "/") return null;
  if (/[\x00-\x20\x7f\\]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value, origin);
  } catch {
    return null;
  }
  if (url.origin !== origin) return null;
  const out = url.pathname + url.search + url.hash;
  if (out[0] !== "/" || out[1] === "/" || out[1] === "\\") return null;
  return out;
}

/**
 * docs/architecture.md §4.7: a cross-origin or `null` Origin is refused on every POST; a missing Origin only
 * where the request is not cookie-authenticated (native apps send none).
 */
export function checkOrigin(req: Request, publicOrigin: string, missingAllowed: boolean): void {
  const origin = req.headers.get("Origin");
  if (origin === null) {
    if (!missingAllowed) throw E.crossOrigin("no Origin on a cookie-authenticated POST");
    return;
  }
  if (origin !== publicOrigin) throw E.crossOrigin(origin === "null" ? "Origin null" : "cross-origin POST");
}

/** True when the client asked for a page (a form post from a browser), not JSON. */
export function wantsHtml(req: Request): boolean {
  return (req.headers.get("Accept") ?? "").includes("text/html");
}

/** The kit's redirects: never cached, Referer kept same-origin (core/http.ts `redirect`). */
export function kitRedirect(status: 302 | 303, location: string, cookies: readonly string[] = []): Response {
  return redirect(status, location, { cookies, referrer: "same-origin" });
}
