#!/usr/bin/env node
// A V8 CPU profile of one scenario, taken through workerd's inspector while autocannon drives it
// (the same servers and pools as `npm run bench`). Prints self time by source module of the
// bundle and by function, per workerd isolate (the app worker with its Durable Object, Miniflare's
// D1 and KV workers), and writes bench/results/<scenario>.cpuprofile (open it in Chrome DevTools).
//
//   node investigations/cpu-profile.mjs token|signin|… [--seconds 8] [--connections 32] [--variant no-d1] [--all-isolates]
//        [--after signin,rp-callback]   run these scenarios (3 s each) first, in the same isolate,
//                    as a full run does between slices (their type feedback and heap stay)
//        [--alloc]   instead of time: bytes allocated a request by function (V8's sampling heap
//                    profiler, objects later collected included), what the collector will have to sweep
// (--all-isolates also profiles the D1 and KV isolates; their samples overlap the app's, since
// they share its thread, so read their figures as rough.)

import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

if (typeof WebSocket === "undefined") {
  // Node 20 has WebSocket behind a flag: run again with it.
  const r = spawnSync(process.execPath, ["--experimental-websocket", ...process.argv.slice(1)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}

const { drive, loop } = await import("../bench/lib/load.mjs");
const { SCENARIOS, checkOnce, urlFor } = await import("../bench/lib/scenarios.mjs");
const { startServers } = await import("../bench/lib/server.mjs");

process.env.WRANGLER_SEND_METRICS = "false";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, d) => (args.includes(name) ? args[args.indexOf(name) + 1] : d);
const id = args.find((a) => !a.startsWith("--") && !args[args.indexOf(a) - 1]?.startsWith("--")) ?? "token";
const seconds = Number(opt("--seconds", "8"));
const connections = Number(opt("--connections", "32"));
const variant = opt("--variant", "");
const alloc = args.includes("--alloc");
const PORT = 9339;

/** @type {import("../bench/lib/scenarios.mjs").Scenario} the router floor */
const HEALTHZ = { id: "healthz", title: "/healthz", worker: "app", request: { method: "GET", path: "/healthz" } };
const s = [...SCENARIOS, HEALTHZ].find((x) => x.id === id);
if (!s) throw new Error(`no scenario ${id}`);
const buildDir = join(root, "bench", "results", "build");
const srv = await startServers(root, buildDir, [{ name: "app", vars: variant ? { BENCH_VARIANT: variant } : {} }], {
  peers: false,
  inspectorPort: PORT,
});

/** Module of each line of the unminified bundle, from esbuild's `// path` section comments. */
function moduleLines(file) {
  const lines = readFileSync(file, "utf8").split("\n");
  const out = [];
  let current = "(bundle)";
  for (const l of lines) {
    const m = /^\/\/ ((?:workers|packages|bench|node_modules)\/\S+)$/.exec(l);
    if (m) current = m[1].replace(/^node_modules\//, "npm:");
    out.push(current);
  }
  return out;
}

/** Bytes allocated a request (or flow) by function, from sampling heap profiles. */
function printAllocations(profiles, r, unit) {
  const per = (b) => (b / Math.max(1, r.responses)).toFixed(0);
  for (const { t, profile } of profiles) {
    const byFn = new Map();
    let total = 0;
    const walk = (n) => {
      const f = n.callFrame;
      const fn = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\//, "")}:${f.lineNumber + 1}`;
      byFn.set(fn, (byFn.get(fn) ?? 0) + n.selfSize);
      total += n.selfSize;
      for (const c of n.children) walk(c);
    };
    walk(profile.head);
    console.log(`\n== ${t.id}: ${per(total)} bytes allocated a ${unit} (sampled)`);
    for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 30))
      console.log(`  ${per(v).padStart(8)} B  ${k}`);
  }
}

/** Self time a request (or flow) by module and by function, from CPU profiles; the app's profile is written out. */
function printTimes(profiles, r, own, unit) {
  console.log(
    `${id}${variant ? ` (${variant})` : ""}: ${Math.round(r.rps)}/s, workerd ${Math.round(r.cpuUs ?? 0)} µs CPU per ${unit}, ${r.failed} failed`,
  );

  mkdirSync(join(root, "bench", "results"), { recursive: true });
  const lines = { app: moduleLines(join(buildDir, "bench-entry.js")) };
  for (const w of own) lines[w] = moduleLines(join(buildDir, `${w.slice("core:user:".length)}.js`));
  for (const { t, profile } of profiles) {
    const bundleLines = lines[t.id] ?? lines.app;
    const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map();
    profile.samples.forEach((nodeId, i) => {
      self.set(nodeId, (self.get(nodeId) ?? 0) + (profile.timeDeltas[i] ?? 0));
    });
    const total = [...self.values()].reduce((a, b) => a + b, 0);
    const byModule = new Map();
    const byFn = new Map();
    let idle = 0;
    for (const [nodeId, us] of self) {
      const f = byNode.get(nodeId).callFrame;
      if (f.functionName === "(idle)") {
        idle += us;
        continue;
      }
      const mod = /(bench-entry|route-[a-z-]+)\.js$/.test(f.url)
        ? (bundleLines[f.lineNumber] ?? "(bundle)")
        : f.url
          ? f.url.replace(/^.*\//, "")
          : f.functionName;
      byModule.set(mod, (byModule.get(mod) ?? 0) + us);
      const fn = `${f.functionName || "(anonymous)"} ${mod}:${f.lineNumber + 1}`;
      byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    }
    const busy = total - idle;
    const perReq = (us) => (us / Math.max(1, r.responses)).toFixed(1);
    console.log(
      `\n== ${t.id}: busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s sampled (${perReq(busy)} µs per request)`,
    );
    const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
    for (const [k, v] of top(byModule, 14))
      console.log(`  ${((v / busy) * 100).toFixed(1).padStart(5)}%  ${perReq(v).padStart(7)} µs  ${k}`);
    console.log("  -- functions");
    for (const [k, v] of top(byFn, 18))
      console.log(`  ${((v / busy) * 100).toFixed(1).padStart(5)}%  ${perReq(v).padStart(7)} µs  ${k}`);
    if (t.id === "core:user:app")
      writeFileSync(
        join(root, "bench", "results", `${id}${variant ? "-" + variant : ""}.cpuprofile`),
        JSON.stringify(profile),
      );
  }
}

class Cdp {
  constructor(url) {
    this.ws = new WebSocket(url);
    this.id = 0;
    this.waiting = new Map();
    this.ws.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.id && this.waiting.has(msg.id)) {
        this.waiting.get(msg.id)(msg);
        this.waiting.delete(msg.id);
      }
    };
    this.open = new Promise((res, rej) => {
      this.ws.onopen = res;
      this.ws.onerror = rej;
    });
  }
  send(method, params = {}) {
    const id = ++this.id;
    this.ws.send(JSON.stringify({ id, method, params }));
    return new Promise((res) => this.waiting.set(id, (m) => res(m.result)));
  }
}

try {
  const ctx = { url: srv.urls.app, helloUrl: srv.urls.hello, pid: srv.pid, urls: srv.urls };
  const url = s.flow ? null : urlFor(ctx, s);
  await checkOnce(ctx, s);
  if (s.prepare) await s.prepare(ctx, 2000);
  // a flow (several requests, as a sign-in) runs in closed loops, as `npm run bench` runs it
  const flow = s.flow;
  const run = (secs) =>
    flow
      ? loop({ flow: () => flow(ctx), concurrency: s.concurrency ?? connections, seconds: secs, pid: srv.pid })
      : drive({ url, request: s.request, connections, seconds: secs, pid: srv.pid });
  const warm = await run(1);
  for (const other of (opt("--after", "") || "").split(",").filter(Boolean)) {
    const o = SCENARIOS.find((x) => x.id === other);
    if (!o) throw new Error(`no scenario ${other}`);
    await checkOnce(ctx, o);
    if (o.prepare) await o.prepare(ctx, 20000);
    const flowOf = o.flow;
    if (flowOf)
      await loop({ flow: () => flowOf(ctx), concurrency: o.concurrency ?? connections, seconds: 3, pid: srv.pid });
    else await drive({ url: urlFor(ctx, o), request: o.request, connections, seconds: 3, pid: srv.pid });
  }

  // the app isolate (the one-time store's objects live there) and, for a route worker, its own
  const own = s.worker && s.worker !== "app" && s.worker !== "hello" ? [`core:user:${s.worker}`] : [];
  const targets = (await (await fetch(`http://127.0.0.1:${PORT}/json/list`)).json()).filter(
    (t) =>
      ["core:user:app", ...own].includes(t.id) || (args.includes("--all-isolates") && /^(d1:db:|kv:ns:)/.test(t.id)),
  );
  const sessions = [];
  for (const t of targets) {
    const c = new Cdp(t.webSocketDebuggerUrl);
    await c.open;
    if (alloc) await c.send("HeapProfiler.enable");
    else {
      await c.send("Profiler.enable");
      await c.send("Profiler.setSamplingInterval", { interval: 100 });
    }
    sessions.push({ t, c });
  }
  if (s.prepare) await s.prepare(ctx, Math.ceil(warm.rps * seconds * 2) + 2 * connections + 50);
  for (const { c } of sessions)
    await (alloc
      ? c.send("HeapProfiler.startSampling", {
          samplingInterval: 256,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        })
      : c.send("Profiler.start"));
  const r = await run(seconds);
  const profiles = [];
  for (const { t, c } of sessions)
    profiles.push({
      t,
      profile: alloc
        ? (await c.send("HeapProfiler.getSamplingProfile")).profile
        : (await c.send("Profiler.stop")).profile,
    });
  if (alloc) {
    for (const { c } of sessions) await c.send("HeapProfiler.stopSampling");
    printAllocations(profiles, r, s.flow ? "flow" : "request");
  } else printTimes(profiles, r, own, s.flow ? "flow" : "request");
  for (const { c } of sessions) c.ws.close();
} catch (err) {
  if (srv.stderr.length) console.error(`workerd stderr (last lines):\n${srv.stderr.join("").slice(-4000)}`);
  throw err;
} finally {
  await srv.dispose();
}
