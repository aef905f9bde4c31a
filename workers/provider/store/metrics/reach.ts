// How a worker reaches the metrics store: its one object. Apart from the class's module, so a route
// worker that only counts (user-me) does not bundle the class, its tables and its alerts.

import type { MetricsStore } from "./metrics-store";

/** A worker's binding of the metrics store. */
export type MetricsEnv = { METRICS: DurableObjectNamespace<MetricsStore> };

/** The one metrics object. */
export function metricsStore(env: MetricsEnv): DurableObjectStub<MetricsStore> {
  return env.METRICS.get(env.METRICS.idFromName("metrics"));
}
