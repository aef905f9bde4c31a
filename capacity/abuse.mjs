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
//   node capacity/abuse.mjs --profile all   every bot profile in turn (PROFILES in the model), and
//                                      the attacked app's share swept; docs/bench/abuse.json `profiles`, `sweeps`
//   options: --profile NAME --pairs N --people N --minutes M --bot-blocks N --apps N --targeted-share X
//            --real-in-bot-blocks X --solver-share X --right-code-share X --retries N --max-wait S
//            --returning-share X   people returning on a browser that proved their number (0; swept at 0.3)
//            --passkey-share X     people with a passkey on their phone, made at an earlier sign-in (0; swept at 0.1)
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
  PEOPLE,
  PROFILES,
  PROFILE_GOALS,
  WON_PER_INBOUND,
  WON_PER_SMS,
  WON_PER_SOLVE,
  abuseMarkdown,
  harnessProblems,
  judge,
  parseAbuseArgs,
  phaseFigures,
  plan,
  profileRow,
  rngFor,
  shuffle,
  withProfile,
} from "./lib/abuse-model.mjs";
import { directoryRows } from "../bench/lib/directory-data.mjs";
import { startSmsReceiver } from "./lib/sms-receiver.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
let t0 = Date.now();
const log = (...a) => console.error(`[${String(Math.round((Date.now() - t0) / 1000)).padStart(4)} s]`, ...a);

/** The attacked app's share of all sign-ins, swept on the baseline bot (`sweeps`). */
const SWEEP_SHARES = [0.15, 0.3];
/** The share of people returning on a browser that proved their number, swept on the baseline bot. */
const SWEEP_RETURNING = [0.3];
/** The share of people with a passkey on their phone, swept on the baseline bot. */
const SWEEP_PASSKEY = [0.1];

async function main() {
  const base = parseAbuseArgs(process.argv.slice(2));
  const started = Date.now();
  t0 = started;
  const m = machine(root, ["workers", "packages", "bench", "capacity", "migrations", "wrangler.toml"]);
  const devHeaders = honoursDevHeaders();
  if (!devHeaders)
    log(
      "this service does not honour X-Dev-Address (no file under workers/ names it): every session comes from 127.0.0.1, with SIGNIN_IP_LIMIT raised; the goals are not judged",
    );
  const names = base.profile === "all" ? Object.keys(PROFILES) : [base.profile];
  const runs = names.map((name) => ({ name, o: base.profile === "all" ? withProfile(base, name) : base }));
  if (base.profile === "all" && base.mode === "full")
    for (const share of SWEEP_SHARES)
      runs.push({ name: `baseline@${share}`, o: { ...withProfile(base, "baseline"), targetedShare: share } });
  if (base.profile === "all" && base.mode === "full")
    for (const share of SWEEP_RETURNING)
      runs.push({ name: `baseline@returning${share}`, o: { ...withProfile(base, "baseline"), returningShare: share } });
  if (base.profile === "all" && base.mode === "full")
    for (const share of SWEEP_PASSKEY)
      runs.push({ name: `baseline@passkey${share}`, o: { ...withProfile(base, "baseline"), passkeyShare: share } });
  const problems = [];
  const results = [];
  for (const { name, o } of runs) {
    log(`profile ${name}`);
    const r = await runProfile(o, devHeaders);
    for (const p of r.problems) problems.push(`${name}: ${p}`);
    results.push({ name, ...r });
  }
  const first = results[0];
  const unjudged =
    base.mode === "short"
      ? "the short run checks the harness; the goals need the full volume"
      : base.guard !== "both"
        ? `one phase (--guard ${base.guard}); the goals compare both`
        : !devHeaders
          ? "this service does not honour X-Dev-Address (no guard yet)"
          : null;
  const verdict = judge({
    off: first.ran.off,
    on: first.ran.on,
    appBudget: first.appBudget,
    signinCpuExtra: base.signinCpuExtra,
    unjudged,
  });
  const rows = results
    .filter((r) => r.row !== null)
    .map((r) => ({ .../** @type {ReturnType<typeof profileRow>} */ (r.row), name: r.name, settings: r.settings }));
  m.loadEnd = loadavg()[0].toFixed(2);
  const result = {
    version: 2,
    date: new Date(started).toISOString(),
    mode: base.mode,
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: m,
    settings: first.settings,
    people: PEOPLE,
    costs: { wonPerSms: WON_PER_SMS, wonPerInbound: WON_PER_INBOUND, wonPerSolve: WON_PER_SOLVE },
    goalsSet: GOALS,
    figures: verdict.figures,
    goals: verdict.goals,
    allGoalsMet: verdict.allMet,
    profileGoals: PROFILE_GOALS,
    profiles: rows.filter((r) => !r.name.includes("@")),
    sweeps: rows.filter((r) => r.name.includes("@")),
    problems,
    phases: first.ran,
  };
  console.log("\n" + abuseMarkdown(result));
  for (const r of result.profiles)
    console.log(
      `${r.name}: ${r.goals.map((g) => `${g.name} ${g.value === null ? "-" : Number(g.value.toFixed(4))}${g.met === false ? " NOT MET" : ""}`).join(", ")}`,
    );
  for (const p of problems) log(`FAILED: ${p}`);
  const resultsDir = join(root, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  const name = base.mode === "short" ? "short" : result.date.replace(/[:.]/g, "-");
  writeJson(join(resultsDir, `abuse-${name}.json`), result);
  log(`wrote bench/results/abuse-${name}.json in ${result.durationSeconds} s`);
  if (base.docs && !unjudged) {
    writeDocs(result);
    log("wrote docs/bench/abuse.json and the abuse section of docs/benchmarks.md");
  }
  // a full run judges the goals; the profiles' are reported (docs/abuse.md says which are met)
  const missed = !unjudged && base.profile !== "all" && verdict.goals.some((g) => g.met === false);
  return problems.length || missed ? 1 : 0;
}

/**
 * One profile's run: its traffic (the bot's leaked pairs, its SIMs, the real people, drawn from
 * one carrier-like file), then each phase on a fresh service.
 * @param {ReturnType<typeof parseAbuseArgs>} o
 * @param {boolean} devHeaders
 */
async function runProfile(o, devHeaders) {
  const rows = shuffle([...directoryRows(o.pairs + o.people + o.sims, o.seed)], rngFor(o.seed, "directory"));
  const person = (r) => ({ telcoCd: r.telcoCd, phoneNo: r.phoneNo, name: r.name });
  const { sessions, botBlocks } = plan(
    o,
    rows.slice(0, o.pairs).map(person),
    rows.slice(o.pairs, o.pairs + o.people).map(person),
    rows.slice(o.pairs + o.people).map(person),
  );
  const secret = randomBytes(32).toString("hex");
  const receiver = await startSmsReceiver(secret);
  /**
   * The service's variables: the `webhook` gateway to the receiver, the text the person sends on
   * where the guard would challenge, slow or pause (SIGNIN_MO=guard), every limit at its default.
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
    // the text the person sends (docs/signin.md "A text the person sends"), through the run's
    // inbound gateway (capacity/lib/sms-receiver.mjs `inboundGateway`)
    SIGNIN_MO: "guard",
    SMS_INBOUND_NUMBER: "1544-1234",
    SMS_INBOUND_SECRET: randomBytes(24).toString("hex"),
    // the passkey holders made theirs "two days before" on the simulated clock; a passkey's pending
    // day (docs/passkeys.md "Enrolment") runs on the service's real one: over at once here
    PASSKEY_ACTIVATION_SECONDS: "0",
    ...o.vars,
  };
  log(
    `  ${o.pairs.toLocaleString("en-US")} leaked pairs from ${o.botBlocks} blocks on ${o.botApps === "all" ? "every app" : "one app"}${o.sims ? `, ${o.sims} SIMs padding ${Math.round(o.paddingShare * 100)}%` : ""}, ${o.people.toLocaleString("en-US")} real people, ${o.apps} apps, ${o.minutes} simulated minutes; guard ${o.guard}`,
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
        inbound: r.inbound,
      };
      const found = harnessProblems(guard, f, r.receiver);
      for (const p of found) problems.push(`guard ${guard}: ${p}`);
      if (found.length && r.workerdOutput) log(`workerd output (last lines):\n${r.workerdOutput}`);
      log(
        `  guard ${guard}: ${f.attackSms} codes to strangers, ${f.simSms} to the bot's SIMs, ${f.realSms} to real people; real people signed in ${f.real.completed}/${f.real.people}, asked more ${f.real.askedMore}, texted ${f.real.texted}, by passkey ${f.real.byPasskey}, told to wait ${f.real.waited}; ${r.requests} requests in ${r.wallSeconds.toFixed(0)} s`,
      );
    }
  } finally {
    await receiver.close();
  }
  // the targeted app's budget as the guard applies it: its own, else SMS_APP_DAILY_BUDGET's
  const appBudget =
    budgets.find((b) => b !== null) ??
    (vars.SMS_APP_DAILY_BUDGET ? Number(vars.SMS_APP_DAILY_BUDGET) : defaultAppBudget());
  const row =
    ran.off && ran.on
      ? profileRow(o.profile, ran.off, ran.on, {
          appBudget,
          apps: o.apps,
          botApps: o.botApps,
          botBlocks: o.botBlocks,
          sims: o.sims,
        })
      : null;
  const settings = {
    profile: o.profile,
    pairs: o.pairs,
    people: o.people,
    minutes: o.minutes,
    botBlocks: o.botBlocks,
    botBlocksSample: botBlocks.slice(0, 5),
    botApps: o.botApps,
    sims: o.sims,
    paddingShare: o.paddingShare,
    boundaries: o.boundaries,
    humanPaced: o.humanPaced,
    asns: ASNS,
    apps: o.apps,
    targetedShare: o.targetedShare ?? 1 / o.apps,
    returningShare: o.returningShare,
    passkeyShare: o.passkeyShare,
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
    vars: {
      ...vars,
      SMS_WEBHOOK_URL: "(the run's receiver)",
      SMS_WEBHOOK_SECRET: "(random)",
      SMS_INBOUND_SECRET: "(random)",
    },
  };
  return { ran, problems, appBudget, row, settings };
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
