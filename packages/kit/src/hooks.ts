// The app's hooks into the kit's lifecycle (`createPhoneLogin`'s onLogin and onLogout): where an app
// keeps a user table of its own in step with the logins. The kit calls them with the plid and the
// request they happen in, never with the client secret or a token; `createPhoneLogin` adds the
// app's env.

import { describe } from "./core/errors.js";
import type { RequestContext } from "./core/router.js";
import type { KitUser } from "./user.js";

/** Why a person's session (or every session of a plid) ended. */
export type LogoutReason =
  /** The person logged out (POST {basePath}/logout): this session only. */
  | "logout"
  /** The person disconnected the app (POST {basePath}/disconnect): every session, and the link at the service. */
  | "disconnect"
  /** The service said the plid was deleted (a signed event to {basePath}/events): every session. */
  | "deleted";

/** The request a hook is called in, and its `waitUntil`: work that may finish after the answer. */
export interface HookRequest {
  request: Request;
  waitUntil(promise: Promise<unknown>): void;
}

export interface KitHooks {
  /**
   * After a login made its session, before the browser is sent on (or `/token` answers). A throw
   * ends that session and fails the login (500).
   */
  onLogin?(user: KitUser, info: { via: "callback" | "token" } & HookRequest): Promise<void> | void;
  /** After a session (or a plid's sessions) ended. A throw is logged; the ending stands. */
  onLogout?(event: { plid: string; reason: LogoutReason } & HookRequest): Promise<void> | void;
}

/** The request `req` as the hooks see it, its `waitUntil` the request context's. */
export function hookRequest(req: Request, rc: RequestContext): HookRequest {
  return { request: req, waitUntil: (p) => rc.waitUntil(p) };
}

/** Calls the app's onLogout, if any; a failure is returned for the log line, never thrown. */
export async function notifyLogout(
  hooks: KitHooks,
  req: Request,
  rc: RequestContext,
  plid: string,
  reason: LogoutReason,
): Promise<string | undefined> {
  if (!hooks.onLogout) return undefined;
  try {
    await hooks.onLogout({ plid, reason, ...hookRequest(req, rc) });
    return undefined;
  } catch (err) {
    return `onLogout failed: ${describe(err)}`;
  }
}
