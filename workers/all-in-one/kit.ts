// The relying-party kit inside the all-in-one worker: its route tables (login, callback, session,
// demo page) with the service reached in process. PROVIDER is a Fetcher-like object whose fetch
// calls the provider's route table directly: no network, the same code path a service binding
// takes in a split deployment. It is bound to the request (its waitUntil), so it is added per
// request with `withBindings`, which keeps the configuration cache of the worker's env.

import { withBindings } from "../core/config";
import { checkConfig } from "../provider/store/config";
import { rpClientConfig, rpConfig, rpSealKeyText } from "../../packages/kit/src/config";
import type { RequestContext, Route } from "../core/router";
import type { ProviderFetcher } from "../../packages/kit/src/client";
import { routes as rpCallback } from "../../packages/kit/src/routes/callback";
import { routes as rpLogin } from "../../packages/kit/src/routes/login";
import { routes as rpSession } from "../../packages/kit/src/routes/session";
import type { AllInOneEnv } from "./env";
import { routes as rpDemo } from "./demo";

// the kit's variables are this worker's too: /healthz?deep=1, the console and the alerts check them
checkConfig(rpConfig);
checkConfig(rpClientConfig);
checkConfig(rpSealKeyText);

function inProcess(
  provider: () => ExportedHandler<AllInOneEnv>,
  env: AllInOneEnv,
  rc: RequestContext,
): ProviderFetcher {
  const ctx = {
    waitUntil: (p: Promise<unknown>) => rc.waitUntil(p),
    passThroughOnException() {},
    props: {},
  } as unknown as ExecutionContext;
  return {
    fetch: async (input, init) => provider().fetch!(new Request(input, init) as never, env, ctx),
  };
}

/** The kit's routes for the all-in-one worker, talking to `provider` in process. */
export function kitRoutes(provider: () => ExportedHandler<AllInOneEnv>): Route<AllInOneEnv>[] {
  return [...rpDemo, ...rpLogin, ...rpCallback, ...rpSession].map((r) => ({
    ...r,
    handler: (req: Request, env: AllInOneEnv, rc: RequestContext) =>
      r.handler(req, withBindings(env, { PROVIDER: inProcess(provider, env, rc) }), rc),
  }));
}
