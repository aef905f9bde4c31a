// Load generation: autocannon (a dependency of the bench package, installed by the root's `npm ci`)
// at a fixed concurrency for a fixed time, with workerd's CPU time sampled around each run.

import autocannon from "autocannon";
import { cpuMicros } from "./server.mjs";

/** autocannon itself, for tools that drive it their own way (investigations/instructions.mjs: a number of requests). */
export { autocannon };

/**
 * A pool of single-use values (codes, tokens) handed out one per request. When it runs dry the
 * request is sent with `fallback` (it fails, and the shortfall is reported as `exhausted`).
 */
export class Pool {
  constructor(values = [], fallback = "exhausted") {
    this.values = values;
    this.i = 0;
    this.exhausted = 0;
    this.fallback = fallback;
  }
  refill(values) {
    this.values = values;
    this.i = 0;
    this.exhausted = 0;
  }
  next() {
    if (this.i < this.values.length) return this.values[this.i++];
    this.exhausted++;
    return this.fallback;
  }
}

/**
 * Runs one autocannon measurement. `request` is { method, path, headers, body, setup, check } where
 * `setup(req)` may rewrite the request (a distinct code or token each time) and `check(body)`, when
 * given, must hold for every answer: one it refuses (an id_token missing) counts as failed, not ok.
 * Returns throughput, latency and workerd CPU per request.
 */
export async function drive({ url, request, connections, seconds, pid, settle = 0 }) {
  const req = { method: request.method ?? "GET", path: request.path ?? "/", headers: request.headers ?? {} };
  if (request.body !== undefined) req.body = request.body;
  if (request.setup) req.setupRequest = (r) => request.setup(r);
  const cpu0 = cpuMicros(pid);
  const t0 = process.hrtime.bigint();
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    // autocannon stops at the first sample tick after `duration`: a run shorter than its default
    // tick (1 s; the short run's warm-ups) samples at its own length, or it would last the second
    sampleInt: Math.min(1000, seconds * 1000),
    requests: [req],
    timeout: 10,
    ...(request.check && { verifyBody: request.check }),
  });
  await settled(settle);
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = cpuMicros(pid);
  const responses = r["1xx"] + r["2xx"] + r["3xx"] + r["4xx"] + r["5xx"];
  // answers of the right status whose body fails `check` (autocannon's mismatches) are not ok
  const ok = ((request.okStatus ?? 200) >= 300 ? r["3xx"] : r["2xx"]) - (r.mismatches ?? 0);
  return {
    rps: ok / r.duration,
    duration: r.duration,
    responses,
    ok,
    failed: responses - ok + r.errors + r.timeouts,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuTotal: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
    cpuUs: cpu0 === null || cpu1 === null || responses === 0 ? null : (cpu1 - cpu0) / responses,
    // share of one core workerd used while driven (over 1: it used more than one thread)
    cpuLoad: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / 1e6 / wallS,
  };
}

/**
 * A closed loop of `concurrency` virtual users each repeating `flow()` for `seconds`: for
 * multi-request scenarios (a whole sign-in) that autocannon cannot express. Counts completed flows.
 */
export async function loop({ flow, concurrency, seconds, pid, settle = 0 }) {
  const cpu0 = cpuMicros(pid);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const latencies = [];
  let ok = 0;
  let failed = 0;
  /** @type {any} */
  let firstError = null;
  let requests = 0;
  const user = async () => {
    while (performance.now() < end) {
      const s = performance.now();
      try {
        requests += await flow();
        ok++;
        latencies.push(performance.now() - s);
      } catch (e) {
        failed++;
        firstError ??= e;
        if (failed > 50 && ok === 0) return; // broken, not slow
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, user));
  const loadS = (performance.now() - t0) / 1000;
  await settled(settle);
  const wallS = (performance.now() - t0) / 1000;
  const cpu1 = cpuMicros(pid);
  latencies.sort((a, b) => a - b);
  const q = (p) =>
    latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] : null;
  return {
    flow: true,
    rps: ok / loadS,
    duration: loadS,
    responses: ok + failed,
    ok,
    failed,
    requests,
    firstError: firstError ? String(firstError.message ?? firstError).slice(0, 300) : null,
    p50: q(0.5),
    p99: q(0.99),
    cpuTotal: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
    cpuUs: cpu0 === null || cpu1 === null || ok === 0 ? null : (cpu1 - cpu0) / ok,
    cpuLoad: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / 1e6 / wallS,
  };
}

/**
 * After the load, the CPU counted goes on for `seconds` with no requests sent: what the requests
 * left for later (the one-time store's audit flush, a second on) is charged to them, not to
 * whichever scenario runs next.
 */
const settled = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/**
 * Waits until workerd is idle (under 1 ms of CPU in 50 ms, twice running; 3 s at most): what a
 * preparation left running (its collections on V8's threads, an object's deferred work) ends
 * before the slice it prepared starts counting.
 */
export async function quiet(pid, maxSeconds = 3) {
  const end = performance.now() + maxSeconds * 1000;
  let calm = 0;
  let before = cpuMicros(pid);
  while (before !== null && calm < 2 && performance.now() < end) {
    await settled(0.05);
    const now = cpuMicros(pid);
    if (now === null) return;
    calm = now - before < 1000 ? calm + 1 : 0;
    before = now;
  }
}

/**
 * One round of a scenario from its slices (`measure` calls spread over the round, interleaved with
 * the other scenarios'): totals over the slices; latency is the median of the slices'.
 */
export function combineSlices(slices) {
  const sum = (k) => slices.reduce((a, r) => a + (r[k] ?? 0), 0);
  const median = (k) => {
    const v = slices
      .map((r) => r[k])
      .filter((x) => x !== null && x !== undefined)
      .sort((a, b) => a - b);
    return v.length ? v[v.length >> 1] : null;
  };
  const responses = sum("responses");
  const cpuKnown = slices.every((r) => r.cpuTotal !== null && r.cpuTotal !== undefined);
  const cpuTotal = cpuKnown ? sum("cpuTotal") : null;
  const duration = sum("duration");
  const per = slices[0]?.flow ? sum("ok") : responses;
  return {
    rps: duration > 0 ? sum("ok") / duration : 0,
    duration,
    responses,
    ok: sum("ok"),
    failed: sum("failed"),
    requests: sum("requests"),
    exhausted: sum("exhausted"),
    firstError: slices.find((r) => r.firstError)?.firstError ?? null,
    p50: median("p50"),
    p99: median("p99"),
    cpuTotal,
    // CPU per request (drive), or per completed flow (loop), as each slice counts it
    cpuUs: cpuTotal === null || per === 0 ? null : cpuTotal / per,
    cpuLoad: median("cpuLoad"),
    slices: slices.length,
    // each slice's CPU a request (or flow), and the app-isolate scenario that ran before it
    sliceCpuUs: slices.map((r) => (r.cpuUs === null || r.cpuUs === undefined ? null : Math.round(r.cpuUs))),
    sliceAfter: slices.map((r) => r.afterApp ?? null),
  };
}
