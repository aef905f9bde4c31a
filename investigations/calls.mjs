#!/usr/bin/env node
// Platform calls per request of the flows and their floors (docs/benchmarks.md "Where a flow's
// time goes"): the `count` variant of the investigations' entry
// (investigations/workers/investigations-entry.ts) counts every Durable Object stub the worker
// takes (by class; the stores' helpers take one per call), D1 statement, KV and R2 operation; each
// flow runs `--runs` times (after one unmeasured run) and the calls are printed per run. Calls the objects make themselves (a
// directory shard's own jobs, the store's R2 flush) are not the worker's and are not counted.
//
//   node investigations/calls.mjs [signin,floor-signin,rp-callback,floor-rp-callback,token,floor-token,user-me,floor-me] [--runs 20]

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SCENARIOS, checkOnce, control } from "../bench/lib/scenarios.mjs";
import { startServers } from "../bench/lib/server.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const runs = Number(args.includes("--runs") ? args[args.indexOf("--runs") + 1] : "20");
const ids = (
  args.find((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--")) ??
  "signin,floor-signin,rp-callback,floor-rp-callback,token,floor-token,user-me,floor-me"
).split(",");

const srv = await startServers(
  root,
  join(root, "bench", "results", "build"),
  [{ name: "app", vars: { BENCH_VARIANT: "count" } }],
  { peers: false, entry: "investigations/workers/investigations-entry.ts" },
);
try {
  const ctx = { url: srv.urls.app, helloUrl: srv.urls.hello, pid: null, urls: srv.urls, rateGuess: {} };
  const counts = async () => (await control(`${ctx.url}/__bench/counts`)).json();
  for (const id of ids) {
    const s = SCENARIOS.find((x) => x.id === id);
    if (!s) throw new Error(`no scenario ${id}`);
    await checkOnce(ctx, s); // prepares, mints and runs it once: nothing of this is counted
    if (s.prepare) await s.prepare(ctx, runs);
    await counts();
    for (let i = 0; i < runs; i++) {
      if (s.flow) await s.flow(ctx);
      else if (s.request) {
        const r = { method: s.request.method, path: s.request.path, headers: { ...(s.request.headers ?? {}) } };
        if (s.request.setup) s.request.setup(r);
        const res = await control(ctx.url + r.path, {
          method: r.method,
          headers: r.headers,
          body: /** @type {any} */ (r).body,
          redirect: "manual",
        });
        const text = await res.text();
        if (res.status !== (s.request.okStatus ?? 200)) throw new Error(`${id}: ${res.status} ${text.slice(0, 200)}`);
      }
    }
    const c = await counts();
    const total = Object.values(c).reduce((a, b) => a + b, 0) / runs;
    console.log(`\n${id}: ${total.toFixed(1)} platform calls per ${s.flow ? "flow" : "request"}`);
    for (const [k, v] of Object.entries(c).sort((a, b) => b[1] - a[1]))
      console.log(`  ${(v / runs).toFixed(1).padStart(5)}  ${k}`);
  }
} catch (err) {
  console.error(srv.stderr.join("").slice(-3000));
  throw err;
} finally {
  await srv.dispose();
}
