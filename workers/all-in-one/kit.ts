// The relying-party kit inside the all-in-one worker: its route tables (login, callback, session,
// demo page) with the service reached in process. PROVIDER is a Fetcher-like object whose fetch
// calls the provider's route table directly: no network, the same code path a service binding
// takes in a split deployment.

import type { Env } from "../core/config";
import type { ProviderFetcher } from "../kit/client";
import type { RpEnv } from "../kit/config";
import type { RequestContext, Route } from "../core/router";
import { routes as rpLogin } from "../kit/login/routes";
import { routes as rpCallback } from "../kit/callback/routes";
import { routes as rpSession } from "../kit/session/routes";
import { routes as rpDemo } from "./demo";

function inProcess(provider: () => ExportedHandler<Env>, env: Env, rc: RequestContext): ProviderFetcher {
  const ctx = { waitUntil: (p: Promise<unknown>) => rc.waitUntil(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
  return {
    fetch: async (input, init) => provider().fetch!(new Request(input, init) as never, env, ctx),
  };
}

/** The kit's routes for the all-in-one worker, talking to `provider` in process. */
export function kitRoutes(provider: () => ExportedHandler<Env>): Route<Env>[] {
  return [...rpDemo, ...rpLogin, ...rpCallback, ...rpSession].map((r) => ({
    method: r.method,
    path: r.path,
    handler: (req: Request, env: Env, rc: RequestContext) =>
      r.handler(req, { ...env, PROVIDER: inProcess(provider, env, rc) } as unknown as RpEnv, rc),
  }));
}
