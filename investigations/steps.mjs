#!/usr/bin/env node
// The sign-in's CPU step by step, against its floor's (docs/benchmarks.md "Where a flow's time
// goes"): `--n` fresh people of each flow are taken through it in lockstep (every person's first
// page, then every identify, and so on, `--concurrency` at a time), and each step is charged the
// workerd CPU it took (with `--settle` seconds after it, its deferred work), divided by its
// requests. Hello world's CPU per request is measured the same way in each round, as the ratio's
// reference. Same plain workerd as `npm run bench`; the figures are medians over `--rounds`.
//
//   node investigations/steps.mjs [--n 1000] [--rounds 3] [--concurrency 16] [--settle 0.3]

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SCENARIOS, checkOnce, control } from "../bench/lib/scenarios.mjs";
import { cpuMicros, startServers } from "../bench/lib/server.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, d) => Number(args.includes(name) ? args[args.indexOf(name) + 1] : d);
const n = opt("--n", 1000);
const rounds = opt("--rounds", 3);
const concurrency = opt("--concurrency", 16);
const settleMs = opt("--settle", 0.3) * 1000;
const FLOWS = ["signin", "floor-signin"];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs `tasks` (functions returning promises), `concurrency` at a time; their results in order. */
async function pool(tasks) {
  const out = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
  return out;
}

/** CPU µs per request of one batch of `tasks`, its deferred work included. */
async function charged(pid, tasks) {
  const before = cpuMicros(pid) ?? NaN;
  const out = await pool(tasks);
  await sleep(settleMs);
  return { us: ((cpuMicros(pid) ?? NaN) - before) / tasks.length, out };
}

/** The scenario `id`, which must have `steps`. */
function flowOf(id) {
  const s = SCENARIOS.find((x) => x.id === id);
  if (!s?.steps || !s.prepare) throw new Error(`${id}: no such sign-in flow`);
  return { ...s, steps: s.steps, prepare: s.prepare };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const srv = await startServers(root, join(root, "bench", "results", "build"), [{ name: "app", vars: {} }], {
  peers: false,
});
try {
  const ctx = { url: srv.urls.app, helloUrl: srv.urls.hello, pid: srv.pid, urls: srv.urls, rateGuess: {} };
  /** @type {Record<string, Record<string, number[]>>} µs per request, by flow and step, per round */
  const perStep = {};
  const hello = [];
  for (const id of FLOWS) {
    const s = flowOf(id);
    await checkOnce(ctx, s);
    await s.prepare(ctx, n * rounds);
    perStep[id] = {};
  }
  for (let round = 0; round < rounds; round++) {
    const h = await charged(
      srv.pid,
      Array.from({ length: n }, () => async () => (await control(ctx.helloUrl)).arrayBuffer()),
    );
    hello.push(h.us);
    for (const id of FLOWS) {
      const s = flowOf(id);
      let people = Array.from({ length: n }, () => s.steps(ctx));
      while (people.length > 0) {
        const { us, out } = await charged(
          srv.pid,
          people.map((g) => () => g.next()),
        );
        const names = new Set(out.filter((r) => !r.done).map((r) => r.value));
        if (names.size === 0) break;
        if (names.size > 1) throw new Error(`${id}: people at different steps (${[...names].join(", ")})`);
        const [step] = names;
        (perStep[id][step] ??= []).push(us);
        people = people.filter((_, i) => !out[i].done);
      }
    }
    console.log(`round ${round + 1}/${rounds} done`);
  }
  const hw = median(hello);
  const steps = [...new Set(FLOWS.flatMap((id) => Object.keys(perStep[id])))];
  const row = (cells) => `| ${cells.join(" | ")} |`;
  console.log(
    `\nhello world ${hw.toFixed(0)} µs a request; ${n} people a flow, ${rounds} rounds, median µs of workerd CPU a request\n`,
  );
  console.log(row(["step", "sign-in", "floor", "more than the floor"]));
  console.log(row(["---", "---:", "---:", "---:"]));
  let total = [0, 0];
  for (const step of steps) {
    const a = median(perStep.signin[step] ?? [0]);
    const b = median(perStep["floor-signin"][step] ?? [0]);
    total = [total[0] + a, total[1] + b];
    console.log(row([step, a.toFixed(0), b.toFixed(0), (a - b).toFixed(0)]));
  }
  console.log(row(["whole sign-in", total[0].toFixed(0), total[1].toFixed(0), (total[0] - total[1]).toFixed(0)]));
  console.log(`\nfraction of the floor: ${(total[1] / total[0]).toFixed(2)}×`);
} catch (err) {
  console.error(srv.stderr.join("").slice(-3000));
  throw err;
} finally {
  await srv.dispose();
}
