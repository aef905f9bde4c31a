// phone-login-kit/hono: the kit in a Hono app, as a middleware (`app.use(phoneLogin(kit))`) or a
// sub-app (`app.route(kit.basePath, phoneLoginApp(kit))`), and `withSession(kit)`, which puts the
// signed-in person (or null) in `c.var.session` for the app's own routes.

import { Hono, type MiddlewareHandler } from "hono";
import type { KitUser, PhoneLogin, WaitUntil } from "./index.js";

/** What `withSession` adds to the context: `c.var.session`, `c.get("session")`. */
export type SessionVariables = { session: KitUser | null };

/** The request's ExecutionContext; Hono throws when it has none (`app.request()` in tests). */
function executionCtx(c: { executionCtx: WaitUntil }): WaitUntil | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

/** Answers the kit's routes (`{basePath}/*`); every other request goes on to the app's routes. */
export function phoneLogin<Bindings extends object>(
  kit: PhoneLogin<Bindings>,
): MiddlewareHandler<{ Bindings: Bindings }> {
  return async (c, next) => {
    if (!kit.handles(c.req.raw)) return next();
    return kit.fetch(c.req.raw, c.env, executionCtx(c));
  };
}

/**
 * The kit's routes as a Hono app, to mount at the kit's base path:
 * `app.route(kit.basePath, phoneLoginApp(kit))`.
 */
export function phoneLoginApp<Bindings extends object>(kit: PhoneLogin<Bindings>): Hono<{ Bindings: Bindings }> {
  const app = new Hono<{ Bindings: Bindings }>();
  app.all("*", (c) => kit.fetch(c.req.raw, c.env, executionCtx(c)));
  return app;
}

/** Puts the signed-in person, or null, in `c.var.session` (one KV read or two per request). */
export function withSession<Bindings extends object>(
  kit: PhoneLogin<Bindings>,
): MiddlewareHandler<{ Bindings: Bindings; Variables: SessionVariables }> {
  return async (c, next) => {
    c.set("session", await kit.getSession(c.req.raw, c.env));
    await next();
  };
}
