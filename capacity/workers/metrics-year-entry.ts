// The metrics year's entry (`node capacity/metrics-year.mjs`, docs/capacity.md "Metrics at national
// volume"): the bench entry (bench/workers/bench-entry.ts) with the metrics store that generates a
// year of roll-ups (metrics-year-store.ts) exported in the product's place, and
// `POST /__bench/metrics-year/<method>` calling that method of the one metrics object with the
// body's JSON array as its arguments. Compiled into the metrics year's bundle only; never deployed.

import bench, { type BenchEnv } from "../../bench/workers/bench-entry";
import type { MetricsYear } from "./metrics-year-store";

export { MetricsYear as MetricsStore } from "./metrics-year-store";
export {
  DirectoryShard,
  FloorStore,
  GuardStore,
  OneTimeStore,
  PhoneLoginStore,
  WebAuthnVerifier,
} from "../../bench/workers/bench-entry";

const PREFIX = "/__bench/metrics-year/";
const METHODS = [
  "yearRows",
  "yearBatches",
  "yearStats",
  "readRepeated",
  "judgeRepeated",
  "clientsWithRepeated",
  "pruneAt",
] as const;
type Method = (typeof METHODS)[number];

function store(env: BenchEnv): DurableObjectStub<MetricsYear> {
  const ns = env.METRICS as unknown as DurableObjectNamespace<MetricsYear>;
  return ns.get(ns.idFromName("metrics")); // metrics-store.ts metricsStore's object
}

export default {
  async fetch(req, env, ctx) {
    const url = new URL(req.url);
    if (!url.pathname.startsWith(PREFIX)) return bench.fetch(req, env, ctx);
    const method = url.pathname.slice(PREFIX.length) as Method;
    if (!METHODS.includes(method)) return new Response("no such method", { status: 404 });
    const args = (await req.json()) as unknown[];
    const stub = store(env) as unknown as Record<Method, (...a: unknown[]) => Promise<unknown>>;
    return Response.json((await stub[method](...args)) ?? null);
  },
} satisfies ExportedHandler<BenchEnv>;
