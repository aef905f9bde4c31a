// Who calls the admin API, and what they may do (docs/operations.md "Operators and roles"). Three
// kinds of caller, each with a role:
// - `Authorization: Bearer <ADMIN_TOKEN>`: the bootstrap, an admin, audited as `token:ADMIN_TOKEN`;
// - `Authorization: Bearer plt_…`: a named API token, audited as `token:<name>`;
// - the console's session cookie with its CSRF token in `X-CSRF-Token`: the operator the signed-in
//   person is, audited as `operator:<id>`; an admin route also asks their proof to be at most 10
//   minutes old.
// The gate runs for every /admin/ path before any 404 or 405, and leaves the caller on the request's
// context; each route's `role` is checked by `allow` around its handler.

import { ApiError, E } from "../core/errors";
import { constantTimeEqual } from "../core/crypto";
import { parseBearer } from "../core/http";
import type { Handler, RequestContext } from "../core/router";
import {
  CONSOLE_FRESH_MS,
  hasConsoleCookie,
  loadConsoleSession,
  consoleCsrfHolds,
  type ConsoleHandle,
} from "../provider/store/console-session";
import { storeConfig } from "../provider/store/config";
import { journaledChange } from "../provider/store/flows/journaled-change";
import { dirAt, homeOfId } from "../provider/store/directory/index";
import { audit, type AuditType } from "../provider/store/one-time/index";
import {
  endOperator,
  findToken,
  operatorOf,
  operatorSeen,
  roleCovers,
  type Operator,
  type Role,
} from "../provider/store/operators";
import { adminConfig, type AdminEnv } from "./config";

export type { Role } from "../provider/store/operators";

export interface Actor {
  /** What the audit names the caller by: `operator:<id>` or `token:<name>`; never a number or a name. */
  id: string;
  role: Role;
  /** For an operator in the console: when they last proved their number. */
  provenAt?: number;
}

/** The audit's name of the bootstrap token. */
export const BOOTSTRAP_ACTOR = "token:ADMIN_TOKEN";

const actors = new WeakMap<RequestContext, Actor>();

/** The caller the gate found for this request. */
export function actorOf(rc: RequestContext): Actor {
  const a = actors.get(rc);
  if (!a) throw new Error("admin: no actor (the gate did not run)");
  return a;
}

/** A 403 naming the least role a route needs (or the fresh proof it asks for). */
export function forbidden(message: string, cause: string, headers?: Record<string, string>): ApiError {
  return new ApiError("access_denied", message, { status: 403, cause, headers });
}

/** The header of a 403 that a fresh sign-in would lift (the console sends the person to sign in again). */
export const REAUTH_HEADER = "Console-Reauth";

/** The header the console sends its CSRF token in. */
export const CSRF_HEADER = "X-CSRF-Token";

/**
 * Whether a change made with a console session's cookie (the operations console's, the developer
 * console's; their forms and the admin API) came from this site: no Origin (not a browser), or this
 * one. A foreign Origin, or `null` (a sandboxed frame, a redirect from elsewhere, a no-referrer
 * page), is refused; both consoles' pages use the `same-origin` referrer policy so that their own
 * forms send theirs.
 */
export function fromThisSite(req: Request): boolean {
  const origin = req.headers.get("Origin");
  return origin === null || origin === new URL(req.url).origin;
}

/**
 * The operator a console session's person is, or null (no role, or a role that ended because the
 * person left the directory: their number passed to another person). Records their last use.
 */
export async function operatorOfSession(
  env: AdminEnv,
  rc: RequestContext,
  h: ConsoleHandle,
): Promise<(Actor & { operator: Operator }) | null> {
  const op = await operatorOf(env, h.session.subscriberId);
  if (!op) return null;
  // the role is the person's: a person who left the directory has none, nor a fixed-code test number
  const person = await dirAt(env, homeOfId(op.subscriberId)).subscriber(op.subscriberId);
  if (!person || person.test_otp_hash !== null) {
    if (await endOperator(env, op.id))
      rc.waitUntil(audit(env, "operator.ended", null, "ok", { operator: op.id, reason: "person_left" }));
    return null;
  }
  if (op.lastSeenAt === null || Date.now() - op.lastSeenAt > 60_000) rc.waitUntil(operatorSeen(env, op.id));
  return { id: `operator:${op.id}`, role: op.role, provenAt: h.session.provenAt, operator: op };
}

/** The console's operator behind a session cookie, or an error saying why not. */
async function consoleActor(req: Request, env: AdminEnv, rc: RequestContext): Promise<Actor> {
  const h = await loadConsoleSession(req, env, storeConfig(env).oneTimeShards);
  if (!h) throw E.authFailed("admin: console session ended");
  if (h.touch) rc.waitUntil(h.touch);
  if (!SAFE.has(req.method) && !fromThisSite(req)) throw E.crossOrigin("console: another origin");
  if (!(await consoleCsrfHolds(h, req.headers.get(CSRF_HEADER))))
    throw forbidden("The request must carry the console's CSRF token.", "console csrf");
  const actor = await operatorOfSession(env, rc, h);
  if (!actor) throw forbidden("You have no role in this service's console.", "console: no role");
  return { id: actor.id, role: actor.role, provenAt: actor.provenAt };
}

/**
 * The admin gate. ADMIN_TOKEN unset: the admin API does not exist (404, for every path and method,
 * so not even its route table shows). Set: a bearer token (ADMIN_TOKEN, compared in constant time,
 * or a named token) or the console's session, else 401.
 */
export async function requireAdmin(req: Request, env: AdminEnv, rc: RequestContext): Promise<void> {
  const cfg = adminConfig(env);
  if (cfg.token === null) throw E.notFound();
  const given = parseBearer(req.headers.get("Authorization"));
  let actor: Actor;
  if (given !== undefined) {
    if (await constantTimeEqual(given, cfg.token)) actor = { id: BOOTSTRAP_ACTOR, role: "admin" };
    else {
      const found = await findToken(env, given, cfg.clientCacheMs);
      if (!found) throw E.authFailed("admin: wrong token");
      if (found.seen) rc.waitUntil(found.seen);
      actor = { id: `token:${found.token.name}`, role: found.token.role };
    }
  } else if (hasConsoleCookie(req)) actor = await consoleActor(req, env, rc);
  else throw E.authFailed("admin: no bearer token");
  actors.set(rc, actor);
}

const SAFE = new Set(["GET", "HEAD"]);

/** Whether an admin action may go on: a token, or an operator whose proof is at most 10 minutes old. */
export function proofFresh(actor: Actor): boolean {
  return actor.provenAt === undefined || Date.now() - actor.provenAt <= CONSOLE_FRESH_MS;
}

/** Who calls an admin service: the actor, and their request's context (its log, its work after the answer). */
export interface Caller {
  actor: Actor;
  rc: RequestContext;
}

/** The caller the gate found for this request, as a service takes them. */
export const callerOf = (rc: RequestContext): Caller => ({ actor: actorOf(rc), rc });

/** Names the caller of a request the console answers (its own gate found them). */
export function setActor(rc: RequestContext, actor: Actor): void {
  actors.set(rc, actor);
}

/**
 * The one gate of an admin action, the API's routes' and the console's: the caller's role covers
 * `role`, an admin change has a proof from the last 10 minutes, and a change (any method but GET and
 * HEAD) runs under a journal row naming the caller (store/change-journal.ts).
 */
export async function gated<T>(
  env: AdminEnv,
  { actor, rc }: Caller,
  role: Role,
  method: string,
  run: () => Promise<T>,
): Promise<T> {
  if (!roleCovers(actor.role, role))
    throw forbidden(`This needs the ${role} role; yours is ${actor.role}.`, `role ${actor.role} < ${role}`);
  if (role === "admin" && !SAFE.has(method) && !proofFresh(actor))
    throw forbidden("Sign in again to confirm: admin actions need a sign-in from the last 10 minutes.", "stale proof", {
      [REAUTH_HEADER]: "1",
    });
  if (SAFE.has(method)) return run();
  return journaledChange(env, rc, actor.id, method, run);
}

/** A route's handler, run only for a caller whose role covers `role` (through `gated`). */
export function allow(role: Role, h: Handler<AdminEnv>): Handler<AdminEnv> {
  return (req, env, rc) => gated(env, callerOf(rc), role, req.method, async () => h(req, env, rc));
}

/**
 * An admin service: what a route of the API does, typed (its input, its view), for a caller of at
 * least `role`. Its route reads the request into the input and writes the view as JSON
 * (./routes.ts); the console runs it with `perform`. Both pass the same gate.
 */
export interface Service<I, V> {
  role: Role;
  /** The method of its route: anything but GET is a change. */
  method: "GET" | "POST" | "PATCH" | "DELETE";
  run(env: AdminEnv, caller: Caller, input: I): Promise<V>;
}

export const service = <I, V>(
  role: Role,
  method: Service<I, V>["method"],
  run: Service<I, V>["run"],
): Service<I, V> => ({
  role,
  method,
  run,
});

/** Runs a service for a caller through the gate: the console's way to the admin API. */
export function perform<I, V>(s: Service<I, V>, env: AdminEnv, caller: Caller, input: I): Promise<V> {
  return gated(env, caller, s.role, s.method, () => s.run(env, caller, input));
}

/** An audit event of an admin call, naming its caller (`actor`). */
export function auditBy(
  env: AdminEnv,
  caller: Caller,
  type: AuditType,
  clientId: string | null,
  outcome: "ok" | "refused" = "ok",
  detail: Record<string, string | number | boolean> = {},
): Promise<void> {
  return audit(env, type, clientId, outcome, { actor: caller.actor.id, ...detail });
}
