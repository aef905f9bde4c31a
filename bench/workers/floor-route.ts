// The floors shaped as a deployment runs a route (docs/benchmarks.md "Floors"): a worker of its own
// whose Durable Object class lives in another worker's script (here the app's, through
// `script_name`), as the project's token and user-me route workers reach the one-time store.
// The same code as bench/workers/floor.ts; only where the object runs differs. Two hybrids of
// floor-token and one of floor-me are served here too (docs/benchmarks.md "Hybrids"): with the
// project's store (`/__floor/token-store`, `/__floor/me-store`) and inside the project's router
// (`/__floor/token-routed`). And floor-token for an OpenID Connect client, its answer with an
// id_token (`/__floor/token-oidc`).

import { createWorker } from "../../workers/core/router";
import { floorMe, floorMeWithProjectStore, floorToken, floorTokenOidc, floorTokenWithProjectStore } from "./floor";

type FloorRouteEnv = Parameters<typeof floorToken>[1];

/** floor-token behind the router every project worker has (request id, exact paths, HTTPS, errors). */
const routed = createWorker<FloorRouteEnv & { DEV_MODE?: string }>("floor", [
  { method: "POST", path: "/__floor/token-routed", handler: (req, env) => floorToken(req, env) },
]);

export default {
  fetch(req: Request, env: FloorRouteEnv, ctx: ExecutionContext): Promise<Response> {
    switch (new URL(req.url).pathname) {
      case "/__floor/me":
        return floorMe(req, env);
      case "/__floor/me-store":
        return floorMeWithProjectStore(req, env);
      case "/__floor/token-store":
        return floorTokenWithProjectStore(req, env);
      case "/__floor/token-oidc":
        return floorTokenOidc(req, env);
      case "/__floor/token-routed":
        return routed.fetch!(req as never, env, ctx) as Promise<Response>;
      default:
        return floorToken(req, env);
    }
  },
};
