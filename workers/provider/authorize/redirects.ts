// The protocol's answers that send the browser back to the app (spec §4.1): the redirect URI with
// its parameters appended, the state byte for byte, and the error redirects with their messages.

import { redirect } from "../../core/http";

/**
 * `redirect_uri` with the parameters appended. Values are encoded with encodeURIComponent (space
 * as %20), so every URL decoder returns the state exactly as the app sent it.
 */
export function redirectLocation(redirectUri: string, params: readonly (readonly [string, string])[]): string {
  // a `state` of "" is an OpenID Connect request's that sent none (validate.ts): none is sent back
  const query = params
    .filter(([k, v]) => !(k === "state" && v === ""))
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join("&");
  const hash = redirectUri.indexOf("#");
  const base = hash < 0 ? redirectUri : redirectUri.slice(0, hash);
  return base + (base.includes("?") ? "&" : "?") + query;
}

export const DENIED_MESSAGE = "The user cancelled the sign-in.";
export const LOGIN_REQUIRED_MESSAGE = "Login is required: no automatic login is available.";
/** The `message` of the `login_required` answer a stop page's "back to the app" sends. */
export const RESTART_MESSAGE = "The sign-in expired or could not continue. Start a new login.";

/** `302 redirect_uri?error=...&message=...&state=...` (spec §4.1 style: message, not error_description). */
export function errorRedirect(
  redirectUri: string,
  state: string,
  error: "access_denied" | "login_required",
  message: string,
): Response {
  return redirect(
    302,
    redirectLocation(redirectUri, [
      ["error", error],
      ["message", message],
      ["state", state],
    ]),
  );
}
