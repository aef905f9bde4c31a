// The app's hooks into the kit's lifecycle (`createPhoneLogin`'s onLogin and onLogout): where an app
// keeps a user table of its own in step with the logins. The kit calls them with the plid, never
// with the client secret or a token.

import { describe } from "./core/errors.js";
import type { KitUser } from "./sessions.js";

/** Why a person's session (or every session of a plid) ended. */
export type LogoutReason =
  /** The person logged out (POST {basePath}/logout): this session only. */
  | "logout"
  /** The person disconnected the app (POST {basePath}/disconnect): every session, and the link at the service. */
  | "disconnect"
  /** The service said the plid was deleted (a signed event to {basePath}/events): every session. */
  | "deleted";

export interface KitHooks {
  /**
   * After a login made its session, before the browser is sent on (or `/token` answers). A throw
   * ends that session and fails the login (500).
   */
  onLogin?(user: KitUser, info: { via: "callback" | "token" }): Promise<void> | void;
  /** After a session (or a plid's sessions) ended. A throw is logged; the ending stands. */
  onLogout?(event: { plid: string; reason: LogoutReason }): Promise<void> | void;
}

/** Calls the app's onLogout, if any; a failure is returned for the log line, never thrown. */
export async function notifyLogout(
  hooks: KitHooks | undefined,
  plid: string,
  reason: LogoutReason,
): Promise<string | undefined> {
  if (!hooks?.onLogout) return undefined;
  try {
    await hooks.onLogout({ plid, reason });
    return undefined;
  } catch (err) {
    return `onLogout failed: ${describe(err)}`;
  }
}
