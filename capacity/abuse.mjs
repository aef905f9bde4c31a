#!/usr/bin/env node
// The abuse run (docs/benchmarks.md "Abuse: leaked numbers against the SMS guard"): leaked valid
// name-and-number pairs used by a bot from a few hundred network blocks, and real people signing in
// among them from the same ASNs (some from the same blocks), played twice on the same simulated
// clock against the service in workerd: once with SMS_GUARD=off, once with it on. Reports the codes
// sent to the attack in each, real people's completed sign-ins and challenges, the targeted app's
// budget the attack used and the 원 saved (capacity/lib/abuse-model.mjs; the driver is
// capacity/lib/abuse-drive.mjs, the SMS gateway capacity/lib/sms-receiver.mjs).
//
//   node capacity/abuse.mjs            (or npm run bench -- --abuse) 10,000 pairs, 2,000 people, 20
//                                      simulated minutes; writes docs/bench/abuse.json, the section of
//                                      docs/benchmarks.md and bench/results/abuse-<date>.json
//   node capacity/abuse.mjs --short    a tenth of the volume (CI, via npm run bench -- --short): checks
//                                      the harness, not the goals; bench/results/abuse-short.json
//   options: --pairs N --people N --minutes M --bot-blocks N --apps N --targeted-share X
//            --real-in-bot-blocks X --solver-share X --right-code-share X --retries N --max-wait S
//            --concurrency C --seed N --clock-start ISO --guard both|off|on --app-budget N
//            --signin-cpu-extra X   the extra CPU of a normal sign-in with the guard on, measured apart (0.03)
//            --vars K=V,...   other values of the service's variables --no-docs --max-minutes M
//   node capacity/abuse.mjs --render docs/bench/abuse.json   rewrite the docs section from a result
// Exits 1 when the harness finds a fault (a session failing other than by the guard's answers, an
// SMS refused by the receiver; with the guard off, a code missing or a real person not signed in),
// or when a full run with both phases misses a goal.

import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { machine } from "../bench/lib/report.mjs";
import { writeJson } from "../bench/lib/server.mjs";
import { runPhase } from "./lib/abuse-drive.mjs";
import {
  ASNS,
  DOCS_BEGIN,
  DOCS_END,
  GOALS,
  PACE,
  abuseMarkdown,
  harnessProblems,
  judge,
  parseAbuseArgs,
  phaseFigures,
  plan,
  rngFor,
  shuffle,
} from "./lib/abuse-model.mjs";
import { directoryRows } from "../bench/lib/directory-data.mjs";
import { startSmsReceiver } from "./lib/sms-receiver.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
let t0 = Date.now();
const log = (...a) => console.error(`[${String(Math.round((Date.now() - t0) / 1000)).padStart(4)} s]`, ...a);

async function main() {
  const o = parseAbuseArgs(process.argv.slice(2));
  const started = Date.now();
  t0 = started;
  const m = machine(root, ["workers", "packages", "bench", "capacity", "migrations", "wrangler.toml"]);
  // the directory: the bot's leaked pairs and the real people, drawn from one carrier-like file
  const rows = shuffle([...directoryRows(o.pairs + o.people, o.seed)], rngFor(o.seed, "directory"));
  const person = (r) => ({ telcoCd: r.telcoCd, phoneNo: r.phoneNo, name: r.name });
  const { sessions, botBlocks } = plan(o, rows.slice(0, o.pairs).map(person), rows.slice(o.pairs).map(person));
  const secret = randomBytes(32).toString("hex");
  const receiver = await startSmsReceiver(secret);
  const devHeaders = honoursDevHeaders();
  /**
   * The service's variables: the `webhook` gateway to the receiver, every limit at its default.
   * @type {Record<string, string>}
   */
  const vars = {
    SMS_SENDER: "webhook",
    SMS_WEBHOOK_URL: receiver.url,
    SMS_WEBHOOK_SECRET: secret,
    // the bench's harness raises it (its virtual users share one address); here each session has
    // its own, unless the service cannot be told it: then every session is 127.0.0.1
    SIGNIN_IP_LIMIT: devHeaders ? "100" : "1000000",
    // The run plays 20 simulated minutes in about 15 real seconds: an isolate's 100 ms of gathering
    // counts (GUARD_FLUSH_MS) would be 8 simulated seconds here, against 0.1 in service. Sent at once,
    // the counts arrive as soon, relative to the guard's clock, as they do at the real pace.
    GUARD_FLUSH_MS: "0",
    // The simulated people and bot answer the challenge, not the text the person sends
    // (SIGNIN_MO, docs/signin.md "A text the person sends"): the text is not simulated yet, so the
    // run measures the guard as it answers without it. `--vars SIGNIN_MO=guard` turns it on.
    SIGNIN_MO: "off",
    ...o.vars,
  };
  if (!devHeaders)
    log(
      "this service does not honour X-Dev-Address (no file under workers/ names it): every session comes from 127.0.0.1, with SIGNIN_IP_LIMIT raised; the goals are not judged",
    );
  log(
    `abuse run (${o.mode}): ${o.pairs.toLocaleString("en-US")} leaked pairs from ${o.botBlocks} blocks, ${o.people.toLocaleString("en-US")} real people, ${o.apps} apps, ${o.minutes} simulated minutes, ${o.concurrency} sessions at a time; guard ${o.guard}`,
  );
  const phases = /** @type {("off" | "on")[]} */ (o.guard === "both" ? ["off", "on"] : [o.guard]);
  /** @type {Record<string, any>} */
  const ran = {};
  const problems = [];
  /** @type {(number | null)[]} */
  const budgets = [];
  try {
    for (const guard of phases) {
      const r = await runPhase(root, o, { sessions, rows, vars }, guard, receiver, log);
      const f = phaseFigures(r.outcomes, r.sms);
      budgets.push(r.targetedBudget);
      ran[guard] = {
        ...f,
        wallSeconds: Number(r.wallSeconds.toFixed(1)),
        cpuSeconds: r.cpuSeconds === null ? null : Number(r.cpuSeconds.toFixed(1)),
        requests: r.requests,
        tokenRequests: r.tokenRequests,
        simulatedMinutes: Number(r.simulatedMinutes.toFixed(2)),
        receiver: r.receiver,
      };
      const found = harnessProblems(guard, f, r.receiver);
      for (const p of found) problems.push(`guard ${guard}: ${p}`);
      if (found.length && r.workerdOutput) log(`workerd output (last lines):\n${r.workerdOutput}`);
      log(
        `  guard ${guard}: ${f.attackSms} codes to the attack, ${f.realSms} to real people; real people signed in ${f.real.completed}/${f.real.people}, challenged ${f.real.challenged}; ${r.requests} requests in ${r.wallSeconds.toFixed(0)} s`,
      );
    }
  } finally {
    await receiver.close();
  }
  const unjudged =
    o.mode === "short"
      ? "the short run checks the harness; the goals need the full volume"
      : o.guard !== "both"
        ? `one phase (--guard ${o.guard}); the goals compare both`
        : !devHeaders
          ? "this service does not honour X-Dev-Address (no guard yet)"
          : null;
  // the targeted app's budget as the guard applies it: its own, else SMS_APP_DAILY_BUDGET's
  const appBudget =
    budgets.find((b) => b !== null) ??
    (vars.SMS_APP_DAILY_BUDGET ? Number(vars.SMS_APP_DAILY_BUDGET) : defaultAppBudget());
  const verdict = judge({ off: ran.off, on: ran.on, appBudget, signinCpuExtra: o.signinCpuExtra, unjudged });
  m.loadEnd = loadavg()[0].toFixed(2);
  const result = {
    version: 1,
    date: new Date(started).toISOString(),
    mode: o.mode,
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: m,
    settings: {
      pairs: o.pairs,
      people: o.people,
      minutes: o.minutes,
      botBlocks: o.botBlocks,
      botBlocksSample: botBlocks.slice(0, 5),
      asns: ASNS,
      apps: o.apps,
      targetedShare: o.targetedShare ?? 1 / o.apps,
      realInBotBlocks: o.realInBotBlocks,
      solverShare: o.solverShare,
      rightCodeShare: o.rightCodeShare,
      retries: o.retries,
      maxWaitSeconds: o.maxWait,
      concurrency: o.concurrency,
      seed: o.seed,
      clockStart: new Date(o.clockStart).toISOString(),
      guard: o.guard,
      devHeaders,
      pace: PACE,
      vars: { ...vars, SMS_WEBHOOK_URL: "(the run's receiver)", SMS_WEBHOOK_SECRET: "(random)" },
    },
    goalsSet: GOALS,
    figures: verdict.figures,
    goals: verdict.goals,
    allGoalsMet: verdict.allMet,
    problems,
    phases: ran,
  };
  console.log("\n" + abuseMarkdown(result));
  for (const g of result.goals)
    console.log(
      `${g.name}: ${g.value === null ? "-" : Number(g.value.toFixed(4))} (${g.rule} ${g.limit}): ${g.met === null ? (g.note ?? "not judged") : g.met ? "met" : "NOT MET"}`,
    );
  for (const p of problems) log(`FAILED: ${p}`);
  const resultsDir = join(root, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  const name = o.mode === "short" ? "short" : result.date.replace(/[:.]/g, "-");
  writeJson(join(resultsDir, `abuse-${name}.json`), result);
  log(`wrote bench/results/abuse-${name}.json in ${result.durationSeconds} s`);
  if (o.docs && !unjudged) {
    writeDocs(result);
    log("wrote docs/bench/abuse.json and the abuse section of docs/benchmarks.md");
  }
  const missed = verdict.goals.some((g) => g.met === false);
  return problems.length || missed ? 1 : 0;
}

/**
 * Whether the service honours the DEV_MODE request headers the run sets each session's network
 * with (X-Dev-Address and the rest): some file of workers/ names the header. Without them every
 * session would come from 127.0.0.1 and the guard could not tell one network from another.
 */
function honoursDevHeaders() {
  const dir = join(root, "workers");
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).some(
    (f) => f.endsWith(".ts") && readFileSync(join(dir, f), "utf8").includes("X-Dev-Address"),
  );
}

/**
 * SMS_APP_DAILY_BUDGET's default, as the service has it (workers/provider/store/config.ts
 * `DEFAULT_SMS_APP_DAILY_BUDGET`): what an app without a budget of its own may be sent in a day.
 */
function defaultAppBudget() {
  const src = readFileSync(join(root, "workers", "provider", "store", "config.ts"), "utf8");
  const m = /DEFAULT_SMS_APP_DAILY_BUDGET = ([\d_]+)/.exec(src);
  if (!m) throw new Error("no DEFAULT_SMS_APP_DAILY_BUDGET in workers/provider/store/config.ts");
  return Number(m[1].replace(/_/g, ""));
}

function writeDocs(result) {
  mkdirSync(join(root, "docs", "bench"), { recursive: true });
  writeJson(join(root, "docs", "bench", "abuse.json"), result);
  const mdPath = join(root, "docs", "benchmarks.md");
  const md = readFileSync(mdPath, "utf8");
  const a = md.indexOf(DOCS_BEGIN);
  const b = md.indexOf(DOCS_END);
  if (a < 0 || b < a) throw new Error(`docs/benchmarks.md lacks the ${DOCS_BEGIN} … ${DOCS_END} markers`);
  writeFileSync(mdPath, md.slice(0, a + DOCS_BEGIN.length) + "\n" + abuseMarkdown(result) + "\n" + md.slice(b));
}

const render = process.argv.indexOf("--render");
(render >= 0
  ? async () => {
      writeDocs(JSON.parse(readFileSync(process.argv[render + 1], "utf8")));
      return 0;
    }
  : main)()
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
