// What the hot scenarios spend their time on. The same bench bundle runs as extra workers whose
// BENCH_VARIANT replaces one part with an in-memory stand-in (bench/workers/bench-entry.ts); the
// difference in workerd CPU per request is that part's cost. Crypto is timed by repeating the
// route's crypto calls inside the worker (/__bench/crypto) and reading workerd's CPU time around it.

import { stats } from "./report.mjs";
import { cpuMicros } from "./server.mjs";
import { SCENARIOS, control } from "./scenarios.mjs";

export const PROFILE_WORKERS = [
  { name: "app-stubbed", vars: { BENCH_VARIANT: "no-d1,no-do" } },
  { name: "app-no-do", vars: { BENCH_VARIANT: "no-do" } },
  { name: "app-no-d1", vars: { BENCH_VARIANT: "no-d1" } },
  { name: "app-logs", vars: { LOG_REQUESTS: "true" } },
];

/** @param {string} id */
const byId = (id) => {
  const s = SCENARIOS.find((x) => x.id === id);
  if (!s) throw new Error(`no scenario ${id}`);
  return s;
};
const HEALTHZ = {
  id: "healthz",
  title: "router floor (/healthz)",
  worker: "app",
  request: { method: "GET", path: "/healthz" },
};

function rowsFor(id) {
  const s = byId(id);
  return [
    { id: "hello", title: "hello world (ceiling)", worker: "app", s: byId("hello") },
    { id: "router", title: "router floor: /healthz through the dev worker", worker: "app", s: HEALTHZ },
    { id: "stubbed", title: `${s.title}, D1 and DO in memory`, worker: "app-stubbed", s },
    { id: "no-do", title: `${s.title}, DO in memory`, worker: "app-no-do", s },
    { id: "no-d1", title: `${s.title}, D1 in memory`, worker: "app-no-d1", s },
    { id: "full", title: `${s.title} (as measured above)`, worker: "app", s },
    { id: "logs", title: `${s.title} with the request log line on`, worker: "app-logs", s },
  ];
}

/**
 * Splits the full scenario's CPU per request into parts (µs and share of the whole). A part's cost
 * is the median over rounds of (with it − without it) measured in the same round, so slow drifts
 * of a shared machine cancel out.
 */
function shares(rows, cryptoUs) {
  const row = (id) => rows.find((r) => r.id === id);
  const median = (xs) => stats(xs)?.median ?? null;
  const diff = (a, b) => median(row(a).rounds.map((r, i) => r.cpuUs - (row(b).rounds[i]?.cpuUs ?? NaN)));
  const full = row("full")?.cpuUs?.median ?? null;
  const hello = row("hello")?.cpuUs?.median ?? null;
  if (full === null || hello === null) return null;
  const parts = {
    "workerd HTTP (hello world)": hello,
    "router, dev-seed check": Math.max(0, diff("router", "hello")),
    "Durable Object (one-time store, with what it writes to R2)": Math.max(0, diff("full", "no-do")),
    D1: Math.max(0, diff("full", "no-d1")),
    crypto: cryptoUs,
  };
  const known = Object.values(parts).reduce((a, b) => a + (b ?? 0), 0);
  parts["handler: parsing, JSON, rest"] = Math.max(0, full - known);
  const out = {};
  for (const [k, v] of Object.entries(parts)) out[k] = { us: v, share: v === null ? null : v / full };
  const logs = diff("logs", "full");
  out["(not in the run) request log line"] = { us: logs, share: logs === null ? null : logs / full };
  return out;
}

export const PROFILES = ["token", "user-me"].map((scenario) => ({ scenario, rows: rowsFor(scenario), shares }));

/** workerd CPU µs of the crypto work of one request of `route` (repeated in one request). */
export async function cryptoMicros(ctx, route) {
  if (ctx.pid === null) return null;
  const run = async (n) => {
    const c0 = cpuMicros(ctx.pid) ?? 0;
    const res = await control(`${ctx.url}/__bench/crypto?route=${route}&n=${n}`);
    if (res.status !== 200) throw new Error(`crypto ${route}: ${res.status}`);
    await res.text();
    return ((cpuMicros(ctx.pid) ?? c0) - c0) / n;
  };
  const probe = await run(500);
  const n = Math.max(500, Math.min(200_000, Math.round(1e6 / Math.max(probe, 1)))); // about 1 s
  return run(n);
}
