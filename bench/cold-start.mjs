#!/usr/bin/env node
// `node bench/cold-start.mjs`: the CPU a fresh isolate costs, per route worker, beside hello world's. Each
// worker is bundled minified as `npm run build` bundles it (esbuild, one ES module), then served by a
// fresh workerd through Miniflare's API in COPIES isolates at once (the same script under COPIES
// names: workerd gives each worker its own isolate), and the workerd process's CPU time (user +
// system, /proc, 10 ms ticks: hence the copies) is read
//   - once workerd is ready: each isolate's script compiled and its top level evaluated (load);
//   - after one request to each isolate, its first (first request).
// Hello world is measured the same way in the same round, and its figures subtracted: what is left
// is the worker's own cost of a cold start. The medians over ROUNDS rounds are printed and written
// to bench/results/cold-start-<date>.json (docs/benchmarks.md "Cold start" quotes a run).
// The first requests read no binding: the service's bindings are not given (a request that would
// read one answers 500 and is shown as such), so the figures are the script's and its router's.
//
//   node bench/cold-start.mjs [--rounds 5] [--copies 20] [--only token,authorize]

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { HOST, bundle, cpuMicros, findWorkerd, writeJson } from "./lib/server.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The workers measured: wrangler.toml's env (null: the bench's hello world) and a first request. */
const WORKERS = [
  { name: "hello", env: null, path: "/" },
  { name: "token", env: "token", path: "/.well-known/openid-configuration" },
  { name: "authorize", env: "authorize", path: "/oauth2/authorize" },
  { name: "console", env: "console", path: "/console" },
  { name: "developers", env: "developers", path: "/developers" },
];

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}
const ROUNDS = Number(option("rounds", "5"));
const COPIES = Number(option("copies", "20"));
const only = option("only", null)?.split(",");

/** The env's entry and variables (loopback http is a page's only in DEV_MODE: the requests are http). */
function envOf(env) {
  const c = unstable_readConfig({ config: join(root, "wrangler.toml"), env }, { hideWarnings: true });
  return {
    main: relative(root, c.main ?? ""),
    compatibilityDate: c.compatibility_date,
    vars: { ...c.vars, DEV_MODE: "true" },
  };
}

/** One fresh workerd with `copies` isolates of a script: CPU µs at ready and after each one's first request. */
async function coldRun(script, compatibilityDate, vars, path, copies) {
  const names = Array.from({ length: copies }, (_, i) => `w${i}`);
  const state = mkdtempSync(join(tmpdir(), "phone-login-cold-"));
  const output = [];
  const mf = new Miniflare({
    host: HOST,
    port: 0,
    logRequests: false,
    handleRuntimeStdio(stdout, stderr) {
      stdout.on("data", (d) => output.push(String(d)));
      stderr.on("data", (d) => output.push(String(d)));
    },
    workers: names.map((name) => ({
      name,
      modulesRoot: state,
      modules: [{ type: "ESModule", path: join(state, "index.js"), contents: script }],
      compatibilityDate,
      // the secrets' stand-ins: the console is 404 without an ADMIN_TOKEN
      bindings: { ...vars, SEAL_KEY: STAND_IN, ADMIN_TOKEN: STAND_IN },
      unsafeDirectSockets: [{ host: HOST, port: 0 }],
    })),
  });
  try {
    await mf.ready.catch((err) => {
      console.error(output.join("").slice(-3000));
      throw err;
    });
    const pid = findWorkerd();
    const urls = [];
    for (const n of names) urls.push(String(await mf.unsafeGetDirectURL(n)).replace(/\/$/, ""));
    const ready = cpuMicros(pid);
    if (ready === null) throw new Error("no workerd CPU time to read (Linux /proc only)");
    const statuses = new Set();
    for (const u of urls) {
      const res = await fetch(`${u}${path}`, { redirect: "manual" });
      await res.arrayBuffer();
      statuses.add(res.status);
    }
    const after = cpuMicros(pid) ?? ready;
    return { ready, first: after - ready, statuses: [...statuses] };
  } finally {
    await mf.dispose();
    rmSync(state, { recursive: true, force: true });
  }
}

const STAND_IN = "Y29sZC1zdGFydC1iZW5jaC1zZWFsLWtleS0zMi1ieXRlcw==";

/** @param {number[]} xs */
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : 0;
};

async function main() {
  const build = mkdtempSync(join(tmpdir(), "phone-login-cold-build-"));
  const workers = WORKERS.filter((w) => w.env === null || !only || only.includes(w.name));
  const scripts = {};
  for (const w of workers) {
    const e = w.env
      ? envOf(w.env)
      : { main: "bench/workers/hello.js", compatibilityDate: envOf(undefined).compatibilityDate, vars: {} };
    const out = await bundle(root, e.main, join(build, `${w.name}.js`), { minify: true });
    const text = readFileSync(out, "utf8");
    scripts[w.name] = { text, e, gzip: gzipSync(text).length };
  }
  rmSync(build, { recursive: true, force: true });
  /** @type {Record<string, { load: number[]; first: number[]; statuses: Set<number> }>} */
  const raw = Object.fromEntries(workers.map((w) => [w.name, { load: [], first: [], statuses: new Set() }]));
  for (let r = 0; r < ROUNDS; r++) {
    // hello world first in each round, so the subtraction pairs runs that were close in time
    const perRound = {};
    for (const w of workers) {
      const s = scripts[w.name];
      perRound[w.name] = await coldRun(s.text, s.e.compatibilityDate, s.e.vars, w.path, COPIES);
      for (const st of perRound[w.name].statuses) raw[w.name].statuses.add(st);
    }
    for (const w of workers) {
      raw[w.name].load.push((perRound[w.name].ready - perRound.hello.ready) / COPIES);
      raw[w.name].first.push((perRound[w.name].first - perRound.hello.first) / COPIES);
    }
    process.stdout.write(`round ${r + 1}/${ROUNDS}\n`);
  }
  const rows = workers.map((w) => {
    const load = median(raw[w.name].load);
    const first = median(raw[w.name].first);
    return {
      worker: w.name,
      request: `GET ${w.path}`,
      statuses: [...raw[w.name].statuses],
      gzipKiB: Number((scripts[w.name].gzip / 1024).toFixed(1)),
      loadMs: Number((load / 1000).toFixed(2)),
      firstRequestMs: Number((first / 1000).toFixed(2)),
      coldMs: Number(((load + first) / 1000).toFixed(2)),
    };
  });
  console.log(`\nCPU of a fresh isolate beyond hello world's (medians of ${ROUNDS} rounds × ${COPIES} isolates; ms)`);
  console.log("worker       gzip KiB   load  first request   cold   (first request, its status)");
  for (const r of rows)
    console.log(
      `${r.worker.padEnd(12)} ${String(r.gzipKiB).padStart(8)} ${r.loadMs.toFixed(2).padStart(6)} ${r.firstRequestMs
        .toFixed(2)
        .padStart(14)} ${r.coldMs.toFixed(2).padStart(6)}   ${r.request} ${r.statuses.join("/")}`,
    );
  const dir = join(root, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `cold-start-${new Date().toISOString().slice(0, 10)}.json`);
  writeJson(file, { rounds: ROUNDS, copies: COPIES, rows });
  console.log(`\nwritten to ${file}`);
}

await main();
