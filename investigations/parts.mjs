#!/usr/bin/env node
// The hot routes' steps, the floor's way against the project's, inside one isolate
// (investigations/workers/parts.ts): each part runs `--calls` times in one request while this reads
// workerd's CPU time around it; rounds alternate the parts, and each figure is the median over
// rounds of CPU µs per call (min–max). Prints a table; writes nothing.
//
//   node investigations/parts.mjs [--rounds 7] [--calls 20000] [--only parse,route,redeem]

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stats } from "../bench/lib/report.mjs";
import { control } from "../bench/lib/scenarios.mjs";
import { cpuMicros, startServers } from "../bench/lib/server.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, d) => (args.includes(name) ? args[args.indexOf(name) + 1] : d);
const rounds = Number(opt("--rounds", "7"));
const calls = Number(opt("--calls", "20000"));
const only = opt("--only", "").split(",").filter(Boolean);

const srv = await startServers(root, join(root, "bench", "results", "build"), [{ name: "app", vars: {} }], {
  peers: false,
  entry: "investigations/workers/investigations-entry.ts",
});
try {
  if (srv.pid === null) throw new Error("workerd's process was not found: no CPU time to read");
  const url = srv.urls.app;
  const run = async (part, n) => {
    const c0 = cpuMicros(srv.pid) ?? 0;
    const res = await control(`${url}/__bench/parts?part=${encodeURIComponent(part)}&n=${n}`);
    const body = await res.json();
    if (res.status !== 200) throw new Error(`${part}: ${res.status} ${JSON.stringify(body)}`);
    return ((cpuMicros(srv.pid) ?? c0) - c0) / n;
  };
  const { parts } = await (await control(`${url}/__bench/parts`)).json();
  const chosen = parts.filter((p) => only.length === 0 || only.includes(p.split("/")[0]));
  for (const p of chosen) await run(p, Math.max(100, calls / 10)); // warm-up: JIT, caches, the dev seed
  const per = Object.fromEntries(chosen.map((p) => [p, []]));
  for (let r = 0; r < rounds; r++) for (const p of chosen) per[p].push(await run(p, calls));
  const f = (n) => n.toFixed(1);
  console.log(`${rounds} rounds × ${calls} calls; workerd CPU µs per call, median (min–max)`);
  for (const p of chosen) {
    const s = stats(per[p]) ?? { median: NaN, min: NaN, max: NaN };
    console.log(`${p.padEnd(28)} ${f(s.median).padStart(7)}  (${f(s.min)}–${f(s.max)})`);
  }
  // Paired by round: each part against the first of its step (`<step>/…`), round by round, which
  // cancels a round's load (the machines are shared).
  for (const p of chosen) {
    const base = chosen.find((q) => q.split("/")[0] === p.split("/")[0]);
    if (base === p) continue;
    const s = stats(per[p].map((v, r) => v - per[base][r])) ?? { median: NaN, min: NaN, max: NaN };
    console.log(
      `${p.padEnd(28)} ${f(s.median).padStart(7)}  (${f(s.min)}–${f(s.max)})  more than ${base}, paired by round`,
    );
  }
} finally {
  await srv.dispose();
}
