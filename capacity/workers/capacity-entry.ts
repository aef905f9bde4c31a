// The capacity run's entry: the bench entry (bench/workers/bench-entry.ts) with `/__bench/scale/*`
// (scale.ts) and the directory shard with the capacity run's own methods (scale-shard.ts) exported
// in the product's place. Compiled into the capacity run's bundle only (capacity/lib/scale.mjs
// passes it to bench/lib/server.mjs `startServers`); never deployed.

import bench, { type BenchEnv } from "../../bench/workers/bench-entry";
import { scaleWork } from "./scale";

export { ScaleDirectoryShard as DirectoryShard } from "./scale-shard";
export {
  FloorStore,
  GuardStore,
  MetricsStore,
  OneTimeStore,
  PhoneLoginStore,
  WebAuthnVerifier,
} from "../../bench/workers/bench-entry";

export default {
  async fetch(req, env, ctx) {
    if (req.url.includes("/__bench/scale/")) {
      const url = new URL(req.url);
      await bench.fetch(new Request(new URL("/healthz", url)), env, ctx); // the dev seed's clients
      return scaleWork(url, env);
    }
    return bench.fetch(req, env, ctx);
  },
} satisfies ExportedHandler<BenchEnv>;
