#!/usr/bin/env node
// Where a scenario's workerd CPU goes outside JavaScript and workerd's own code: its user and
// system time apart, and, with Linux's `perf` (Debian's `linux-perf`), the system calls, context
// switches and page faults of workerd's threads, per request (docs/benchmarks.md "The route
// worker's request as workerd serves it"). The bench's CPU figure is user + system time of the
// whole process; instructions (investigations/instructions.mjs) see only user-space code, so a
// difference between two scenarios that instructions do not show may lie here.
//
//   node investigations/kernel.mjs [floor-token-route,token-route+floor-store] [--requests 4000] [--rounds 3]
//        [--no-perf]   user and system time only
//
// After one warm-up of each scenario, each round runs every scenario in turn (a round starts with
// another scenario): its requests once untraced, for the times, and once traced, for the counts
// (perf's tracepoints add to the system time of every call). The requests go 32 at a time through
// autocannon, as the bench's slices do.

import { spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stats } from "../bench/lib/report.mjs";
import { autocannon } from "../bench/lib/load.mjs";
import { SCENARIOS, checkOnce, urlFor } from "../bench/lib/scenarios.mjs";
import { cpuTimes, startServers } from "../bench/lib/server.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, d) => (args.includes(name) ? args[args.indexOf(name) + 1] : d);
const positional = args.filter((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--"));
const ids = (positional[0] ?? "floor-token-route,token-route+floor-store").split(",");
const requests = Number(opt("--requests", "4000"));
const rounds = Number(opt("--rounds", "3"));
const usePerf = !args.includes("--no-perf") && spawnSync("perf", ["--version"]).status === 0;

const scenarios = ids.map((id) => {
  const s = SCENARIOS.find((x) => x.id === id);
  if (!s?.request) throw new Error(`no single-request scenario ${id}`);
  return s;
});

/** user and system µs of workerd so far (it runs while we measure: never null then). */
const times = (pid) => /** @type {{ user: number; system: number }} */ (cpuTimes(pid));

/**
 * Runs `fn` with `perf stat` (software events) and `perf trace -s` (system calls) attached to every
 * thread of `pid`; their counts, or {} without perf.
 */
async function traced(pid, fn) {
  if (!usePerf) {
    await fn();
    return {};
  }
  const stat = spawn(
    "perf",
    ["stat", "-x", ",", "-e", "context-switches,page-faults,cpu-migrations", "-p", String(pid)],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const trace = spawn("perf", ["trace", "-s", "-p", String(pid)], { stdio: ["ignore", "pipe", "pipe"] });
  let statOut = "";
  let traceOut = "";
  stat.stderr.on("data", (d) => (statOut += d));
  trace.stdout.on("data", (d) => (traceOut += d));
  trace.stderr.on("data", (d) => (traceOut += d));
  await new Promise((r) => setTimeout(r, 1000)); // attached before the first request
  await fn();
  const done = (p) => new Promise((r) => p.on("close", r));
  stat.kill("SIGINT");
  trace.kill("SIGINT");
  await Promise.all([done(stat), done(trace)]);
  /** @type {Record<string, number>} */
  const counts = {};
  for (const line of statOut.split("\n")) {
    const [value, , event] = line.split(",");
    if (event && /^\d+$/.test(value ?? "")) counts[event] = Number(value);
  }
  // perf trace -s: per thread, lines of "syscall calls errors total min avg max stddev"
  for (const line of traceOut.split("\n")) {
    const m = /^\s+([a-z_0-9]+)\s+(\d+)\s+\d+\s/.exec(line);
    if (m) counts[`sys:${m[1]}`] = (counts[`sys:${m[1]}`] ?? 0) + Number(m[2]);
  }
  return counts;
}

const srv = await startServers(root, join(root, "bench", "results", "build"), [{ name: "app", vars: {} }], {
  peers: false,
});
try {
  const pid = srv.pid;
  if (pid === null) throw new Error("no workerd process found");
  const ctx = { url: srv.urls.app, worker: "app", helloUrl: srv.urls.hello, pid, urls: srv.urls, rateGuess: {} };
  const send = async (s, n) => {
    const req = { method: s.request.method, path: s.request.path, headers: s.request.headers ?? {} };
    if (s.request.body !== undefined) req.body = s.request.body;
    if (s.request.setup) req.setupRequest = (r) => s.request.setup(r);
    const r = await autocannon({ url: urlFor(ctx, s), connections: 32, amount: n, requests: [req], timeout: 60 });
    const ok = (s.request.okStatus ?? 200) >= 300 ? r["3xx"] : r["2xx"];
    if (ok < n) throw new Error(`${s.id}: ${n - ok} of ${n} failed`);
  };
  for (const s of scenarios) {
    await checkOnce(ctx, s);
    if (s.prepare) await s.prepare(ctx, requests);
    await send(s, requests);
  }
  /** @type {Record<string, Record<string, number>[]>} */
  const got = Object.fromEntries(scenarios.map((s) => [s.id, []]));
  for (let r = 0; r < rounds; r++) {
    for (const s of [...scenarios.slice(r % scenarios.length), ...scenarios.slice(0, r % scenarios.length)]) {
      // the times untraced (perf's tracepoints add to the system time of every call), then the counts
      if (s.prepare) await s.prepare(ctx, 2 * requests);
      const before = times(pid);
      await send(s, requests);
      const after = times(pid);
      const counts = await traced(pid, () => send(s, requests));
      const per = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / requests]));
      per["user µs"] = (after.user - before.user) / requests;
      per["system µs"] = (after.system - before.system) / requests;
      got[s.id].push(per);
      console.error(
        `  round ${r + 1}/${rounds} ${s.id.padEnd(24)} user ${per["user µs"].toFixed(0)} µs, system ${per["system µs"].toFixed(0)} µs a request`,
      );
    }
  }
  const keys = [...new Set(Object.values(got).flatMap((rs) => rs.flatMap((x) => Object.keys(x))))].sort(
    (a, b) => Number(a.startsWith("sys:")) - Number(b.startsWith("sys:")) || a.localeCompare(b),
  );
  const median = (xs) => stats(xs)?.median ?? 0;
  console.log(`\nper request, median of ${rounds} rounds of ${requests} requests`);
  console.log(`${"".padEnd(26)}${scenarios.map((s) => s.id.padStart(26)).join("")}`);
  for (const k of keys) {
    const row = scenarios.map((s) => median(got[s.id].map((x) => x[k] ?? 0)));
    if (row.every((v) => v < 0.005)) continue;
    console.log(`${k.padEnd(26)}${row.map((v) => v.toFixed(2).padStart(26)).join("")}`);
  }
} finally {
  await srv.dispose();
}
