// The floors shaped as a deployment runs a route (docs/benchmarks.md "Floors"): a worker of its own
// whose Durable Object class lives in another worker's script (here the app's, through
// `script_name`), as the project's token and user-me route workers reach the one-time store.
// The same code as bench/workers/floor.ts; only where the object runs differs.

import { floorMe, floorToken } from "./floor";

type FloorRouteEnv = Parameters<typeof floorToken>[1];

export default {
  fetch(req: Request, env: FloorRouteEnv): Promise<Response> {
    return new URL(req.url).pathname === "/__floor/me" ? floorMe(req, env) : floorToken(req, env);
  },
};
