// The all-in-one worker for `npm start`, tests and small installs: every route table mounted on
// one origin, plus /healthz and, with DEV_MODE on, the dev seed.

import { commonConfig } from "../core/config";
import { configProblems } from "../provider/store/config";
import type { AllInOneEnv } from "./env";
import { describe, errorResponse } from "../core/errors";
import { json } from "../core/http";
import { createWorker, type Route } from "../core/router";
import { ensureDevSeed } from "./seed";
import { routes as authorize } from "../provider/authorize/routes";
import { routes as account } from "../provider/account/routes";
import { routes as inbound } from "../provider/inbound/routes";
import { devRoutes as smsOutbox } from "./outbox";
import { routes as token } from "../provider/token/routes";
import { routes as ssf } from "../provider/ssf/routes";
import { routes as userMe } from "../provider/user-me/routes";
import { routes as disconnect } from "../provider/disconnect/routes";
import { routes as admin } from "../admin/routes";
import { routes as operationsConsole } from "../console/routes";
import { routes as developerConsole } from "../developers/routes";
import { kitRoutes } from "./kit";
import turnstileFake from "./turnstile-fake.js";

export { DirectoryShard, GuardStore, MetricsStore, OneTimeStore } from "../provider/store/objects";
export { PhoneLoginStore } from "../../packages/kit/src/login-store";
// the passkey library's checks, reached by this worker's own WEBAUTHN binding
export { WebAuthnVerifier } from "../provider/webauthn/index";

/**
 * GET /healthz: liveness, answered without reading anything. `?deep=1`: the configuration checked
 * (docs/operations.md "Checking the configuration"): every variable of this worker found malformed
 * or missing, by name only, never its value; 503 while there is one.
 */
function healthz(req: Request, env: AllInOneEnv): Response {
  if (new URL(req.url).searchParams.get("deep") !== "1") return json({ status: "ok" });
  const problems = configProblems(env);
  return json({ status: problems.length ? "misconfigured" : "ok", problems }, problems.length ? 503 : 200);
}

const health: Route<AllInOneEnv>[] = [{ method: "GET", path: "/healthz", handler: healthz }];

// The relying-party kit (/, /auth/*) reaches this same route table in process (workers/all-in-one/kit.ts).
// The two API routes an app calls on every login come first: the router tries routes in order.
const worker: ExportedHandler<AllInOneEnv> = createWorker<AllInOneEnv>("dev", [
  ...token,
  ...userMe,
  ...health,
  ...authorize,
  ...account,
  ...inbound,
  ...smsOutbox,
  ...disconnect,
  ...ssf,
  ...admin,
  ...operationsConsole,
  ...developerConsole,
  ...kitRoutes(() => worker),
]);

/** The dev seed could not be applied: the request is answered with the error, its cause logged. */
function startupFailed(err: unknown): Response {
  console.error(JSON.stringify({ worker: "dev", event: "startup_failed", cause: describe(err) }));
  return errorResponse(err);
}

/**
 * DEV_MODE's local stand-ins for what Cloudflare's edge gives a request: `X-Dev-Address` as the
 * client's address (CF-Connecting-IP: the per-address limit and the guard's network block); the
 * guard reads `X-Dev-Asn`, `X-Dev-Country` and `X-Dev-Clock` itself (signin/guard.ts).
 */
function devRequest(req: Request): Request {
  const address = req.headers.get("X-Dev-Address");
  if (!address) return req;
  const headers = new Headers(req.headers);
  headers.set("CF-Connecting-IP", address);
  return new Request(req, { headers });
}

export default {
  // Once the seed is in (or with DEV_MODE off), a request goes straight to the route table.
  fetch(req, env, ctx) {
    // the deep check reads only the variables: it answers whatever they hold, seed or not
    if (req.method === "GET" && req.url.endsWith("/healthz?deep=1") && new URL(req.url).pathname === "/healthz")
      return healthz(req, env);
    let seeding: Promise<void> | undefined;
    let devMode: boolean;
    try {
      devMode = commonConfig(env).devMode;
      seeding = devMode ? ensureDevSeed(env) : undefined;
    } catch (err) {
      return startupFailed(err);
    }
    if (devMode) {
      // the local Turnstile (widget and siteverify) the guard's challenge uses in DEV_MODE
      if (new URL(req.url).pathname.startsWith("/_dev/turnstile/")) return turnstileFake.fetch(req);
      req = devRequest(req) as typeof req;
    }
    if (!seeding) return worker.fetch!(req as never, env, ctx);
    return seeding.then(() => worker.fetch!(req as never, env, ctx), startupFailed);
  },
} satisfies ExportedHandler<AllInOneEnv>;
