// The service's router: the kit package's (packages/kit/src/core/router.ts) with itty-router
// compiling the route tables, for its path syntax (`:id`, wildcards) in the admin API.

import { IttyRouter } from "itty-router";
import {
  createWorker as createKitWorker,
  type CompiledRoute,
  type Route,
  type Step,
} from "../../packages/kit/src/core/router";
import type { CommonVars } from "./config";

export * from "../../packages/kit/src/core/router";

/** itty keeps `[method, regex, steps, path]` per registered route: the table `createWorker` matches. */
function ittyCompile<E>(registrations: [method: string, path: string, step: Step<E>][]): CompiledRoute<E>[] {
  const router = IttyRouter();
  for (const [method, path, step] of registrations) router[method.toLowerCase()](path, step);
  return router.routes as unknown as CompiledRoute<E>[];
}

/** Builds a worker's fetch handler from its route table, compiled by itty-router. */
export function createWorker<E extends CommonVars>(worker: string, routes: readonly Route<E>[]): ExportedHandler<E> {
  return createKitWorker(worker, routes, ittyCompile);
}
