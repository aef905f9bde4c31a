// The metrics' door (docs/operations.md "Metrics"): counting where the work happens (`tally`,
// `timing`), reaching the object, and the roll-ups' series and time units the console and the
// alerts read. Outside this folder, only this module is imported (test/node/architecture.test.ts);
// the class itself is hosted by store/objects.ts.

export { type AlertState, type MetricsRoom, type MetricsStore, type Step } from "./metrics-store";
export { metricsStore } from "./reach";
export { pointsOf, PROVEN_SERIES, provenByCode, provenByPasskey, provenBySmsCode } from "./series";
export { ALL_APPS, DAY_MS, HOUR_MS, KEEP, MINUTE_MS } from "./tables/rollups";
export { tally, timing } from "./tally";
