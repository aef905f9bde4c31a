#!/usr/bin/env node
// `npm run bench`: throughput, latency and CPU of the project's workers on plain workerd
// (Miniflare's API, no `wrangler dev` proxy), each figure a ratio to a hello-world Worker served
// the same way in the same run (docs/benchmarks.md explains the method). The workers' sizes are
// the build's (`npm run build`: docs/sizes.json).
//
//   npm run bench                 full run; writes docs/benchmarks.md figures, docs/bench/latest.json,
//                                 docs/bench/ratio.svg (commit them) and bench/results/<date>.json
//   npm run bench -- --short      a few seconds per scenario (CI), then the capacity run's short run
//                                 (capacity/scale.mjs --short: 5,000 subscribers; capacity/metrics-year.mjs
//                                 --short: 3 days × 50 apps of roll-ups) and the reconciliation
//                                 run's (capacity/reconcile.mjs --short: 120 sign-ins, a SIGKILL half way)
//                                 and the abuse run's (capacity/abuse.mjs --short: a tenth of its volume);
//                                 writes bench/results/ only
//   npm run bench -- --scale      the capacity run instead (capacity/scale.mjs: 1,000,000 subscribers)
//   npm run bench -- --abuse      the abuse run instead (capacity/abuse.mjs: leaked numbers against the
//                                 SMS guard, off then on; docs/bench/abuse.json)
//   options: --rounds N --seconds S --slices K --settle S --warmup S --connections C --only token,user-me
//            (the OpenID Connect pair: --only token-route,floor-token-route,token-oidc-route,floor-token-oidc-route)
//            --no-rotate (every slice in the same order)
//            --race-trials N --no-peers --no-profile --no-docs --no-scale --no-reconcile --no-abuse
//            --vars AUDIT_FLUSH_SECONDS=60   other values of the bench's variables (a what-if run)
//            --entry investigations/workers/investigations-entry.ts   its variants (--vars BENCH_VARIANT=no-kv)
//   node bench/run.mjs --render docs/bench/latest.json   rewrite the docs figures from a result file

import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { combineSlices, drive, loop, quiet } from "./lib/load.mjs";
import { floorFractions, formatTable, machine, markdownFigures, ratioSvg, stats } from "./lib/report.mjs";
import { SCENARIOS, checkOnce, urlFor } from "./lib/scenarios.mjs";
import { PROFILES, PROFILE_WORKERS, cryptoMicros } from "./lib/profile.mjs";
import { RACERS, race } from "./lib/race.mjs";
import { BENCH_VARS, startServers, writeJson } from "./lib/server.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const resultsDir = join(root, "bench", "results");

function parseArgs(argv) {
  const short = argv.includes("--short");
  const o = {
    mode: short ? "short" : "full",
    rounds: short ? 1 : 5,
    // the short run (CI) only checks that every scenario still answers and is measured: a quarter of a
    // second (a slice that got no answer at all is measured again, twice as long: `measure`)
    seconds: short ? 0.25 : 5,
    // a round of a scenario is this many slices, interleaved with every other scenario's
    slices: short ? 1 : 5,
    // each slice starts one scenario further on, so no scenario is always first after the previous
    // slice's last; the order is a cycle, so each scenario still follows the same one within a
    // slice. Each slice's figures name the app-isolate scenario before it (docs/benchmarks.md "How
    // it measures")
    rotate: true,
    // after each slice, seconds more of CPU counted with no requests (its deferred work); the short
    // run (CI) only checks that the bench works
    settle: short ? 0.1 : 1.2,
    warmup: short ? 0.15 : 2,
    profileRounds: short ? 1 : 3,
    profileSeconds: short ? 0.25 : 4,
    profileWarmup: short ? 0.15 : 1,
    // both in the short run too (CI: every variant must keep working, the user/me one mints tokens)
    profileScenarios: ["token", "user-me"],
    connections: 32,
    // the race: trials of 50 concurrent redemptions of one code (bench/lib/race.mjs)
    raceTrials: short ? 5 : 20,
    raceConcurrency: 50,
    peers: true,
    /** @type {string[] | null} */
    only: null,
    profile: true,
    docs: !short,
    disk: false,
    // the short run (CI) also runs the capacity run with a tiny directory, so a broken one fails CI
    scale: short,
    // and the reconciliation run with 120 sign-ins (about 30 s), so a broken one, or a roll-up that
    // no longer equals the audit trail after a kill, fails CI
    reconcile: short,
    // and the abuse run with a tenth of its volume (the harness, not the goals), so a broken one fails CI
    abuse: short,
    /** @type {Record<string, string>} variables over bench/lib/server.mjs BENCH_VARS (a what-if run) */
    vars: {},
    /** @type {string | undefined} the app worker's entry: the bench entry, or one built on it */
    entry: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => Number(argv[++i]);
    if (a === "--rounds") o.rounds = num();
    else if (a === "--seconds") o.seconds = num();
    else if (a === "--warmup") o.warmup = num();
    else if (a === "--slices") o.slices = num();
    else if (a === "--no-rotate") o.rotate = false;
    else if (a === "--settle") o.settle = num();
    else if (a === "--connections") o.connections = num();
    else if (a === "--only") o.only = argv[++i].split(",");
    else if (a === "--entry") o.entry = argv[++i];
    else if (a === "--race-trials") o.raceTrials = num();
    else if (a === "--no-peers") o.peers = false;
    else if (a === "--no-profile") o.profile = false;
    else if (a === "--no-docs") o.docs = false;
    else if (a === "--disk") o.disk = true;
    else if (a === "--no-scale") o.scale = false;
    else if (a === "--no-reconcile") o.reconcile = false;
    else if (a === "--no-abuse") o.abuse = false;
    else if (a === "--vars") o.vars = Object.fromEntries(argv[++i].split(",").map((kv) => kv.split("=")));
    else if (a !== "--short") throw new Error(`unknown option ${a}`);
  }
  return o;
}

const log = (...a) => console.error(...a);

/** How many single-use values a run of `seconds` at up to `rate` needs, with headroom. */
const need = (rate, seconds, connections) => Math.ceil(rate * seconds * 2) + connections * 2 + 50;

/**
 * One measured run of a scenario against `url`. Prepares its pool first; a run whose pool ran dry
 * (requests went out without a fresh code or token) is not a measurement: it is repeated with a
 * pool sized from what it reached, up to twice. A run that got no answer at all is not one either:
 * on a loaded machine the short run's quarter second can end before a scenario's first answers
 * (the CI run once saw `token-route` answer nothing in it, its four capacity checks beside it); it
 * is repeated twice as long, up to twice, and only then counted as the failure it is.
 */
async function measure(s, ctx, seconds, connections, { retries = 2, settle = 0 } = {}) {
  for (let attempt = 0, silent = 0; ; attempt++) {
    if (s.prepare) {
      await s.prepare(ctx, need(ctx.rateGuess[s.key] ?? s.guess ?? 3000, seconds, connections));
      await quiet(ctx.pid);
    }
    const r = s.flow
      ? await loop({
          flow: () => s.flow(ctx),
          concurrency: s.concurrency ?? connections,
          seconds,
          pid: ctx.pid,
          settle,
        })
      : await drive({
          url: urlFor(ctx, s),
          request: s.request,
          connections,
          seconds,
          pid: ctx.pid,
          settle,
        });
    if (r.responses === 0 && silent < 2) {
      log(`    ${s.key}: no answer in ${seconds} s, measuring again for ${seconds * 2} s`);
      seconds *= 2;
      silent++;
      attempt--;
      continue;
    }
    r.exhausted = s.pool?.exhausted ?? 0;
    // failed requests are cheap: the response rate bounds what a full pool needs
    ctx.rateGuess[s.key] = Math.max(ctx.rateGuess[s.key] ?? 0, r.exhausted ? (r.responses / seconds) * 1.5 : r.rps);
    if (!r.exhausted || attempt >= retries) return r;
    log(
      `    ${s.key}: pool ran dry (${r.exhausted} requests), repeating with ${need(ctx.rateGuess[s.key], seconds, connections)}`,
    );
  }
}

function summarise(s, rounds, helloRounds) {
  const ratios = rounds.map((r, i) => (helloRounds[i]?.rps ? r.rps / helloRounds[i].rps : null));
  const cpuRatios = rounds.map((r, i) => (helloRounds[i]?.cpuUs && r.cpuUs ? helloRounds[i].cpuUs / r.cpuUs : null));
  return {
    rate: stats(rounds.map((r) => r.rps)),
    ratio: stats(ratios),
    cpuUs: stats(rounds.map((r) => r.cpuUs)),
    cpuRatio: stats(cpuRatios),
    p50: stats(rounds.map((r) => r.p50)),
    p99: stats(rounds.map((r) => r.p99)),
    failedTotal: rounds.reduce((a, r) => a + r.failed, 0),
    exhaustedTotal: rounds.reduce((a, r) => a + (r.exhausted ?? 0), 0),
    firstError: rounds.find((r) => r.firstError)?.firstError ?? null,
    rounds,
  };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const m = machine(root, ["workers", "packages", "bench", "migrations", "wrangler.toml"]);
  mkdirSync(resultsDir, { recursive: true });
  // The short runs of capacity/ check that each harness still works, and judge no figure. They run
  // at once, each in a process of its own, beside this run's scenarios (whose short figures are a
  // check that each answers, not a measurement), their output printed whole at the end, in this
  // order. On the 2-core CI machine they took 121 s one after the other, after the scenarios' 94 s;
  // the reconciliation run mostly waits, on its killed service's restart and on its outboxes.
  const runs = [];
  if (o.scale && !o.only)
    runs.push(
      ["capacity run (short): capacity/scale.mjs --short", "scale.mjs"],
      ["metrics year (short): capacity/metrics-year.mjs --short", "metrics-year.mjs"],
    );
  if (o.reconcile && !o.only)
    runs.push(["reconciliation run (short): capacity/reconcile.mjs --short", "reconcile.mjs"]);
  if (o.abuse && !o.only) runs.push(["abuse run (short): capacity/abuse.mjs --short", "abuse.mjs"]);
  const running = runs.map(([title, script]) => ({ title, done: capacityCaptured(script, ["--short"]) }));
  log(
    `bench (${o.mode}): ${o.rounds} round(s) × ${o.seconds} s, ${o.connections} connections; load average ${m.loadStart}`,
  );

  /** @type {{ name: string; vars: Record<string, string> }[]} */
  const workers = [{ name: "app", vars: {} }, ...(o.profile ? /** @type {any[]} */ (PROFILE_WORKERS) : [])];
  Object.assign(BENCH_VARS, o.vars);
  const srv = await startServers(root, join(resultsDir, "build"), workers, {
    disk: o.disk,
    peers: o.peers,
    entry: o.entry,
  });
  log(
    `workerd ${m.workerd} (pid ${srv.pid ?? "?"}) serving ${Object.keys(srv.urls).join(", ")} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  const base = { helloUrl: srv.urls.hello, pid: srv.pid, rateGuess: {}, urls: srv.urls, settings: o };
  const ctxFor = (worker) => ({ ...base, url: srv.urls[worker], worker });

  let exitCode = 0;
  try {
    // ---- main scenarios: check, warm up, then rounds interleaved with the hello ceiling ----
    const hello = SCENARIOS.find((s) => s.id === "hello");
    if (!hello) throw new Error("no hello scenario");
    const chosen = SCENARIOS.filter(
      (s) => s.id !== "hello" && (!o.only || o.only.includes(s.id)) && (o.peers || s.kind !== "peer"),
    );
    /** @type {{ s: any; ctx: any; available: boolean; reason: string | null; rounds: any[] }[]} */
    const entries = [];
    for (const s of [hello, ...chosen]) {
      const ctx = ctxFor("app");
      /** @type {{ s: any; ctx: any; available: boolean; reason: string | null; rounds: any[] }} */
      const e = { s: { ...s, key: s.id }, ctx, available: true, reason: null, rounds: [] };
      const reason = s.available ? await s.available(ctx) : null;
      if (reason) {
        Object.assign(e, { available: false, reason });
      } else {
        try {
          await checkOnce(ctx, s);
        } catch (err) {
          if (!s.optional) throw err;
          // optional: the scenario may be missing (available() says so); present but failing is a defect
          Object.assign(e, {
            available: false,
            reason: String(/** @type {Error} */ (err).message ?? err).slice(0, 120),
          });
          log(`FAILED: ${s.id}: ${e.reason}`);
          exitCode = 1;
        }
      }
      if (!e.available) log(`  ${s.id}: not available (${e.reason})`);
      entries.push(e);
    }
    const live = entries.filter((e) => e.available);
    // the short run (CI) gives a scenario with a `shortShare` that share of its warm-up and slices:
    // it is there to be exercised (every answer checked), not measured
    const share = (e) => (o.mode === "short" ? (e.s.shortShare ?? 1) : 1);
    for (const e of live) {
      log(`  warm-up ${e.s.id}`);
      await measure(e.s, e.ctx, o.warmup * share(e), o.connections, { retries: 0 }); // also sizes the pools
    }
    // A round is `slices` slices of every scenario in turn (hello world among them), so what the
    // machine or a periodic job does at some moment falls on every scenario of the round alike;
    // each slice's CPU is counted until its own deferred work is done (`settle`).
    let lastApp = "";
    for (let r = 0; r < o.rounds; r++) {
      const slices = live.map(() => /** @type {any[]} */ ([]));
      for (let k = 0; k < o.slices; k++)
        for (let j = 0; j < live.length; j++) {
          const i = o.rotate ? (j + k + r * o.slices) % live.length : j;
          const e = live[i];
          if (!e) continue;
          const res = await measure(e.s, e.ctx, (o.seconds / o.slices) * share(e), o.connections, {
            settle: o.settle,
          });
          // the last scenario served by the app isolate before this slice (its heap, its garbage)
          res.afterApp = lastApp;
          if (e.s.worker === "app") lastApp = e.s.id;
          slices[i]?.push(res);
        }
      for (const [i, e] of live.entries()) {
        const res = combineSlices(slices[i] ?? []);
        e.rounds.push(res);
        log(
          `  round ${r + 1}/${o.rounds} ${e.s.id.padEnd(12)} ${Math.round(res.rps)}/s cpu ${res.cpuUs === null ? "-" : Math.round(res.cpuUs)} µs${res.failed ? ` failed ${res.failed}` : ""}${res.exhausted ? ` exhausted ${res.exhausted}` : ""}`,
        );
      }
    }
    const helloRounds = entries[0].rounds;
    const scenarios = entries.map((e) => {
      const base = {
        id: e.s.id,
        title: e.s.title,
        label: e.s.label ?? e.s.title,
        unit: e.s.unit ?? "req/s",
        kind: e.s.kind ?? null,
        goal: e.s.goal ?? null,
        available: e.available,
        reason: e.reason,
      };
      if (!e.available) return base;
      const sum = summarise(e.s, e.rounds, helloRounds);
      return { ...base, ...sum, meetsGoal: e.s.goal ? (sum.ratio?.median ?? 0) >= e.s.goal : null };
    });

    // ---- the race: exactly one winner of concurrent redemptions of one code ----
    const races = [];
    for (const racer of RACERS) {
      const e = live.find((x) => x.s.id === racer.id);
      if (!e || o.raceTrials <= 0) continue;
      const r = await race(e.s, e.ctx, { trials: o.raceTrials, concurrency: o.raceConcurrency });
      races.push({ ...r, mustBeAtomic: racer.mustBeAtomic });
      log(
        `  race ${r.id.padEnd(14)} ${r.exactlyOne}/${r.trials} trials with exactly one winner, ${r.moreThanOne} with more (at most ${r.maxWinners}), ${r.refused} refused, ${r.other} other answers`,
      );
    }

    // ---- profile: which part of the hot path costs what ----
    const profiles = [];
    if (o.profile) {
      for (const p of PROFILES.filter(
        (p) => o.profileScenarios.includes(p.scenario) && (!o.only || o.only.includes(p.scenario)),
      )) {
        log(`  profile ${p.scenario}`);
        const rows = p.rows.map((row) => ({
          ...row,
          s: { ...row.s, key: `${p.scenario}/${row.id}` },
          ctx: ctxFor(row.worker),
          rounds: /** @type {any[]} */ ([]),
        }));
        for (const row of rows)
          if (o.profileWarmup > 0) await measure(row.s, row.ctx, o.profileWarmup, o.connections, { retries: 0 });
        for (let r = 0; r < o.profileRounds; r++) {
          for (const row of rows)
            row.rounds.push(await measure(row.s, row.ctx, o.profileSeconds, o.connections, { settle: o.settle }));
        }
        const helloR = rows.find((row) => row.id === "hello")?.rounds ?? [];
        const summed = rows.map((row) => ({ id: row.id, title: row.title, ...summarise(row.s, row.rounds, helloR) }));
        // a variant that answers nothing right measures nothing: the bench entry's stand-in is broken
        for (const row of summed.filter((r) => !r.rate?.median)) {
          log(
            `FAILED: profile ${p.scenario}/${row.id}: ${row.failedTotal} failed${row.firstError ? ` (${row.firstError})` : ""}`,
          );
          exitCode = 1;
        }
        const crypto = await cryptoMicros(ctxFor("app"), p.scenario);
        const shares = p.shares(summed, crypto);
        for (const row of summed) delete row.rounds;
        profiles.push({ scenario: p.scenario, rows: summed, crypto, shares });
      }
    }

    m.loadEnd = loadavg()[0].toFixed(2);
    const result = {
      version: 1,
      date: new Date().toISOString(),
      mode: o.mode,
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine: m,
      settings: {
        rounds: o.rounds,
        seconds: o.seconds,
        slices: o.slices,
        settleSeconds: o.settle,
        warmupSeconds: o.warmup,
        connections: o.connections,
        raceTrials: o.raceTrials,
        raceConcurrency: o.raceConcurrency,
        profileRounds: o.profileRounds,
        profileSeconds: o.profileSeconds,
      },
      scenarios,
      races,
      profiles,
    };
    // the goal lines: each route against its floor of the same shape (then the other comparisons)
    result.floors = floorFractions(result);
    console.log("\n" + formatTable(result));
    log(`\nfinished in ${result.durationSeconds} s`);

    const stamp = result.date.replace(/[:.]/g, "-");
    const name = o.mode === "short" ? "short" : stamp;
    writeJson(join(resultsDir, `${name}.json`), result);
    writeFileSync(join(resultsDir, `${name}.svg`), ratioSvg(result));
    log(`wrote bench/results/${name}.json and .svg`);
    if (o.docs && o.mode === "full" && !o.only) {
      writeDocs(result);
      log("wrote docs/bench/latest.json, docs/bench/ratio.svg and the figures in docs/benchmarks.md");
    }
    // Ours must be atomic: any trial whose winners are not exactly one is a defect.
    for (const r of races.filter((r) => r.mustBeAtomic && (r.exactlyOne !== r.trials || r.other > 0))) {
      log(
        `FAILED: race ${r.id}: winners per trial ${r.winners.join(",")} (each must be exactly 1), ${r.other} answers neither a token nor an error (first status ${r.otherStatus})`,
      );
      exitCode = 1;
    }
    // A scenario that answered nothing right, or failed more than 1% of its requests (beyond a
    // pool that ran dry), is a broken bench or a broken worker: fail, so CI notices.
    for (const s of scenarios.filter((s) => s.available)) {
      const responses = s.rounds.reduce((a, r) => a + r.responses, 0);
      if (!s.rate?.median || s.failedTotal - s.exhaustedTotal > responses * 0.01) {
        log(
          `FAILED: ${s.id}: ${s.failedTotal} of ${responses} responses failed${s.firstError ? ` (${s.firstError})` : ""}`,
        );
        exitCode = 1;
      }
    }
  } catch (err) {
    if (srv.stderr.length) log(`workerd stderr (last lines):\n${srv.stderr.join("").slice(-4000)}`);
    throw err;
  } finally {
    await srv.dispose();
  }
  for (const { title, done } of running) {
    const { status, output } = await done;
    log(`\n${title}`);
    process.stderr.write(output);
    if (status !== 0) exitCode = 1;
  }
  process.exitCode = exitCode;
}

const BEGIN = "<!-- FIGURES:BEGIN (written by npm run bench) -->";
const END = "<!-- FIGURES:END -->";

function writeDocs(result) {
  const dir = join(root, "docs", "bench");
  mkdirSync(dir, { recursive: true });
  writeJson(join(dir, "latest.json"), result);
  writeFileSync(join(dir, "ratio.svg"), ratioSvg(result));
  const mdPath = join(root, "docs", "benchmarks.md");
  let md = "";
  try {
    md = readFileSync(mdPath, "utf8");
  } catch {
    md = `# Benchmarks\n\n${BEGIN}\n${END}\n`;
  }
  const a = md.indexOf(BEGIN);
  const b = md.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/benchmarks.md lacks the ${BEGIN} … ${END} markers`);
  writeFileSync(mdPath, md.slice(0, a + BEGIN.length) + "\n" + markdownFigures(result) + "\n" + md.slice(b));
}

/** A run of capacity/ (`script`: scale.mjs, metrics-year.mjs, reconcile.mjs or abuse.mjs) with `args`, in a process of its own; its exit code. */
function capacity(script, args) {
  return spawnSync(process.execPath, [join(root, "capacity", script), ...args], { stdio: "inherit" }).status ?? 1;
}

/** The same, its output (stdout and stderr, interleaved as written) kept rather than printed; its exit code and output. */
function capacityCaptured(script, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, "capacity", script), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", (e) => resolve({ status: 1, output: `${output}${e.message}\n` }));
    child.on("close", (code) => resolve({ status: code ?? 1, output }));
  });
}

const render = process.argv.indexOf("--render");
/** `--scale` and `--abuse` hand the rest of the options to their own script. */
const other = process.argv.includes("--scale") ? "scale" : process.argv.includes("--abuse") ? "abuse" : null;
const run = other
  ? async () => {
      process.exitCode = capacity(
        `${other}.mjs`,
        process.argv.slice(2).filter((a) => a !== `--${other}`),
      );
    }
  : render >= 0
    ? async () => writeDocs(JSON.parse(readFileSync(process.argv[render + 1], "utf8")))
    : main;
run().catch((err) => {
  console.error(err);
  process.exit(1);
});
