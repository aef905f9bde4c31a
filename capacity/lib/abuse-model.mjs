// The abuse run's traffic and what is judged of it (docs/benchmarks.md "Abuse: leaked numbers
// against the SMS guard"): who signs in, from which network, when and how they behave, drawn from
// one seed so that the guard-off and guard-on phases replay the same traffic; then the figures of
// each phase, the goals and the section of docs/benchmarks.md. Pure: nothing here talks to the
// service (capacity/lib/abuse-drive.mjs does).

import { createHash } from "node:crypto";
import { rng } from "../../bench/lib/directory-data.mjs";

/** KT, SK Broadband, LG U+: the bot's networks, and every real person's. */
export const ASNS = [4766, 9318, 3786];
export const COUNTRY = "KR";
/** The turnstile action of the identify step (the guard's widget). */
export const ACTION = "identify";

/** What one SMS costs the service: the issue's figure, in 원. */
export const WON_PER_SMS = 30;

/** The issue's goals; each figure is judged on the full run only (the short run checks the harness). */
export const GOALS = {
  /** codes sent to the attack with the guard on, at most this share of those with it off */
  attackSmsShare: 0.05,
  /** real people's completed sign-ins with the guard on, at least */
  realSuccessOn: 0.99,
  /** real people asked for a challenge with the guard on, at most */
  realChallengedOn: 0.05,
  /** the targeted app's daily SMS budget the attack consumed with the guard on, at most */
  attackBudgetShare: 0.1,
  /** the extra CPU of a normal sign-in with the guard on, at most (measured apart from this run) */
  cpuExtra: 0.05,
};

/**
 * Seconds of simulated time each behaviour takes, [min, max) drawn uniformly. A real person reads
 * and fills the first page, solves a challenge by a click, types the code 10-40 s after it was
 * sent (the issue's figure) and agrees; the bot posts at once, its solver farm takes longer.
 */
export const PACE = {
  real: { fill: [8, 20], solve: [2, 6], type: [10, 40], consent: [2, 6] },
  bot: { fill: [0.2, 1], solve: [5, 20], type: [10, 40], consent: [0.5, 2] },
};

/** First octets of blocks held by Korean networks (KRNIC): the addresses look like the country's. */
const KR_FIRST_OCTETS = [1, 14, 27, 39, 42, 49, 58, 59, 61, 106, 110, 112, 114, 115, 116, 118, 119, 121, 175, 211];

export function parseAbuseArgs(argv) {
  const short = argv.includes("--short");
  const o = {
    mode: short ? "short" : "full",
    /** leaked valid name-and-number pairs, each used by one session of the bot */
    pairs: short ? 1000 : 10_000,
    /** real people, each signing in once */
    people: short ? 200 : 2000,
    /** the simulated span over which both arrive */
    minutes: 20,
    /** the bot's /24 blocks (the short run keeps the bot's sessions a block as the full run has them) */
    botBlocks: short ? 20 : 200,
    /** apps real people sign in to, evenly; the first is the one the bot targets */
    apps: 20,
    /** share of real people signing in to the targeted app (null: 1/apps, evenly) */
    targetedShare: /** @type {number | null} */ (null),
    /** share of real people whose network is one of the bot's blocks */
    realInBotBlocks: 0.3,
    /** share of the bot's sessions that get a challenge solved (a solver farm) */
    solverShare: 0.2,
    /** share of the bot's sends for which it types the right code */
    rightCodeShare: 0.02,
    /** times a session refused with Retry-After (429, 503) tries again after it, real or bot */
    retries: 1,
    /** the longest Retry-After (s) a session waits for; past it, it gives up */
    maxWait: 600,
    /** sessions in flight at once (each one request at a time) */
    concurrency: 16,
    seed: 20261201,
    /** the simulated clock's start (the guard's X-Dev-Clock): a Tuesday 10:00 in Korea */
    clockStart: Date.parse("2026-12-01T01:00:00Z"),
    /** which phases: both (the comparison), or one of them */
    guard: /** @type {"both" | "off" | "on"} */ ("both"),
    /** the targeted app's own daily SMS budget (sms_daily_budget; null: SMS_APP_DAILY_BUDGET's) */
    appBudget: /** @type {number | null} */ (null),
    /** the extra CPU of a normal sign-in with the guard on (0.03: 3%), measured apart and recorded here */
    signinCpuExtra: /** @type {number | null} */ (null),
    /** other values of the service's variables (a what-if run) */
    vars: /** @type {Record<string, string>} */ ({}),
    docs: !short,
    /** a phase is stopped (a failure) when it runs longer than this, in real minutes */
    maxMinutes: short ? 5 : 30,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v)) throw new Error(`${a} takes a number`);
      return v;
    };
    if (a === "--pairs") o.pairs = num();
    else if (a === "--people") o.people = num();
    else if (a === "--minutes") o.minutes = num();
    else if (a === "--bot-blocks") o.botBlocks = num();
    else if (a === "--apps") o.apps = num();
    else if (a === "--targeted-share") o.targetedShare = num();
    else if (a === "--real-in-bot-blocks") o.realInBotBlocks = num();
    else if (a === "--solver-share") o.solverShare = num();
    else if (a === "--right-code-share") o.rightCodeShare = num();
    else if (a === "--retries") o.retries = num();
    else if (a === "--max-wait") o.maxWait = num();
    else if (a === "--concurrency") o.concurrency = num();
    else if (a === "--seed") o.seed = num();
    else if (a === "--clock-start") o.clockStart = Date.parse(argv[++i]);
    else if (a === "--app-budget") o.appBudget = num();
    else if (a === "--signin-cpu-extra") o.signinCpuExtra = num();
    else if (a === "--max-minutes") o.maxMinutes = num();
    else if (a === "--guard") {
      const g = argv[++i];
      if (g !== "both" && g !== "on" && g !== "off") throw new Error("--guard takes both, on or off");
      o.guard = g;
    } else if (a === "--vars") o.vars = Object.fromEntries(argv[++i].split(",").map((kv) => kv.split("=")));
    else if (a === "--no-docs") o.docs = false;
    else if (a !== "--short" && a !== "--abuse") throw new Error(`unknown option ${a}`);
  }
  if (!Number.isFinite(o.clockStart)) throw new Error("--clock-start takes an ISO date");
  if (o.apps < 1 || o.botBlocks < 1 || o.pairs < 0 || o.people < 0) throw new Error("apps and blocks: at least 1");
  return o;
}

/** A generator of its own for each thing drawn, from the run's seed and the thing's name. */
export function rngFor(seed, name) {
  return rng(createHash("sha256").update(`${seed}:${name}`).digest().readUInt32BE(0));
}

const between = (r, [lo, hi]) => lo + r() * (hi - lo);
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];

/** A /24 (its first three octets) drawn among Korean networks' first octets. */
function block24(r) {
  return `${pick(r, KR_FIRST_OCTETS)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`;
}

/** A host address inside a /24 (1 to 254). */
const hostIn = (r, block) => `${block}.${1 + Math.floor(r() * 254)}`;

/**
 * @typedef {{ telcoCd: string; phoneNo: string; name: string }} Person
 * @typedef {{
 *   kind: "bot" | "real"; index: number; person: Person; app: number; start: number;
 *   block: string; inBotBlock: boolean; asn: number; addresses: string[];
 *   solves: boolean; typesCode: boolean;
 *   pace: { fill: number; solve: number; type: number; consent: number };
 * }} Session
 */

/**
 * The run's traffic: the bot's blocks (each with its ASN, in turn over ASNS), then one session per
 * leaked pair (the targeted app, a random moment of the span, a random block of the bot's and a
 * random address in it for each attempt; a solver-farm session with `solverShare`; the right code
 * typed for `rightCodeShare` of its sends) and one per real person (the apps in turn, the targeted
 * one first, at `targetedShare` when given; `realInBotBlocks` of them in a block of the bot's, the
 * others each in a /24 of their own; one address for both attempts; every challenge solved, every
 * code typed). Every choice of a session is drawn when it is made here, so both phases replay it
 * whatever the service answers.
 * @param {ReturnType<typeof parseAbuseArgs>} o
 * @param {Person[]} botList
 * @param {Person[]} realPeople
 * @returns {{ sessions: Session[]; botBlocks: { block: string; asn: number }[] }}
 */
export function plan(o, botList, realPeople) {
  const span = o.minutes * 60_000;
  const rb = rngFor(o.seed, "blocks");
  const taken = new Set();
  const botBlocks = [];
  while (botBlocks.length < o.botBlocks) {
    const block = block24(rb);
    if (taken.has(block)) continue;
    taken.add(block);
    botBlocks.push({ block, asn: ASNS[botBlocks.length % ASNS.length] });
  }
  const attempts = 1 + o.retries;
  /** @type {Session[]} */
  const sessions = [];
  botList.forEach((person, index) => {
    const r = rngFor(o.seed, `bot:${index}`);
    const home = pick(r, botBlocks);
    sessions.push({
      kind: "bot",
      index,
      person,
      app: 0,
      start: Math.floor(r() * span),
      block: home.block,
      inBotBlock: true,
      asn: home.asn,
      addresses: Array.from({ length: attempts }, () => hostIn(r, home.block)),
      solves: r() < o.solverShare,
      typesCode: r() < o.rightCodeShare,
      pace: paceOf(r, PACE.bot),
    });
  });
  const targeted = o.targetedShare ?? 1 / o.apps;
  realPeople.forEach((person, index) => {
    const r = rngFor(o.seed, `real:${index}`);
    // the targeted app takes its share of people; the others share the rest evenly, in turn
    const onTarget = (index + 0.5) / realPeople.length < targeted;
    const others = Math.max(1, o.apps - 1);
    const app = onTarget || o.apps === 1 ? 0 : 1 + (index % others);
    const inBotBlock = r() < o.realInBotBlocks;
    let block;
    let asn;
    if (inBotBlock) ({ block, asn } = pick(r, botBlocks));
    else {
      do block = block24(r);
      while (taken.has(block));
      asn = pick(r, ASNS);
    }
    const address = hostIn(r, block);
    sessions.push({
      kind: "real",
      index,
      person,
      app,
      start: Math.floor(r() * span),
      block,
      inBotBlock,
      asn,
      addresses: Array.from({ length: attempts }, () => address),
      solves: true,
      typesCode: true,
      pace: paceOf(r, PACE.real),
    });
  });
  return { sessions, botBlocks };
}

function paceOf(r, p) {
  return {
    fill: Math.round(between(r, p.fill) * 1000),
    solve: Math.round(between(r, p.solve) * 1000),
    type: Math.round(between(r, p.type) * 1000),
    consent: Math.round(between(r, p.consent) * 1000),
  };
}

/** Shuffles in place with the run's generator (Fisher-Yates). */
export function shuffle(xs, r) {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

/**
 * @typedef {{
 *   kind: "bot" | "real"; app: number; inBotBlock: boolean; solves: boolean;
 *   result: "completed" | "sent" | "abandoned" | "refused" | "failed";
 *   challenged: number; tokens: number; sends: number; sentAt: number[]; refusals: number[]; retried: boolean;
 *   reason: string | null;
 * }} Outcome
 */

const share = (n, d) => (d > 0 ? n / d : null);

/**
 * One phase's figures from its sessions' outcomes and the SMS the receiver took, by number.
 * A real person's sign-in is **completed** when it reached the app's redirect with an
 * authorization code, on the first attempt or on the one after waiting a Retry-After of at most
 * `maxWait` (10 minutes).
 * @param {Outcome[]} outcomes
 * @param {{ attackSms: number; realSms: number }} sms
 */
export function phaseFigures(outcomes, sms) {
  const bot = outcomes.filter((x) => x.kind === "bot");
  const real = outcomes.filter((x) => x.kind === "real");
  const targeted = real.filter((x) => x.app === 0);
  const count = (xs, f) => xs.filter(f).length;
  const group = (xs) => ({
    people: xs.length,
    completed: count(xs, (x) => x.result === "completed"),
    success: share(
      count(xs, (x) => x.result === "completed"),
      xs.length,
    ),
    challenged: count(xs, (x) => x.challenged > 0),
    challengedShare: share(
      count(xs, (x) => x.challenged > 0),
      xs.length,
    ),
    refusedOnce: count(xs, (x) => x.refusals.length > 0),
    failed: count(xs, (x) => x.result !== "completed"),
  });
  const results = (xs) =>
    Object.fromEntries(
      ["completed", "sent", "abandoned", "refused", "failed"].map((k) => [k, count(xs, (x) => x.result === k)]),
    );
  const statuses = (xs) => {
    /** @type {Record<string, number>} */
    const out = {};
    for (const x of xs) for (const s of x.refusals) out[s] = (out[s] ?? 0) + 1;
    return out;
  };
  /** codes sent in each simulated minute (when the code page came), from the sessions' own count */
  const byMinute = (xs) => {
    /** @type {number[]} */
    const out = [];
    for (const x of xs) for (const t of x.sentAt) out[Math.floor(t / 60_000)] = (out[Math.floor(t / 60_000)] ?? 0) + 1;
    return Array.from(out, (n) => n ?? 0);
  };
  return {
    attackSms: sms.attackSms,
    realSms: sms.realSms,
    bot: {
      sessions: bot.length,
      results: results(bot),
      challenged: count(bot, (x) => x.challenged > 0),
      solverSessions: count(bot, (x) => x.solves),
      tokensSolved: bot.reduce((a, x) => a + x.tokens, 0),
      refusals: statuses(bot),
      completed: count(bot, (x) => x.result === "completed"),
      sendsByMinute: byMinute(bot),
    },
    real: {
      ...group(real),
      results: results(real),
      refusals: statuses(real),
      inBotBlocks: group(real.filter((x) => x.inBotBlock)),
      targetedApp: group(targeted),
      sendsByMinute: byMinute(real),
    },
    /** the first reasons of sessions that failed other than by the guard's answers (the harness's) */
    errors: outcomes
      .filter((x) => x.result === "failed")
      .slice(0, 10)
      .map((x) => x.reason),
  };
}

/**
 * The report's figures and goals from the phases run. `off` and `on` are `phaseFigures` (either
 * may be missing when only one phase ran).
 * `unjudged` says why the goals are not judged (a short run, one phase), or is null.
 * `signinCpuExtra` is measured apart from the run (null: not given).
 * @param {{ off?: ReturnType<typeof phaseFigures>; on?: ReturnType<typeof phaseFigures>; appBudget: number | null; signinCpuExtra?: number | null; unjudged: string | null }} p
 */
export function judge({ off, on, appBudget, signinCpuExtra = null, unjudged }) {
  const attackSmsOff = off?.attackSms ?? null;
  const attackSmsOn = on?.attackSms ?? null;
  const figures = {
    attackSmsOff,
    attackSmsOn,
    attackSmsShare: attackSmsOff && attackSmsOn !== null ? attackSmsOn / attackSmsOff : null,
    realSuccessOff: off?.real.success ?? null,
    realSuccessOn: on?.real.success ?? null,
    realChallengedOff: off?.real.challengedShare ?? null,
    realChallengedOn: on?.real.challengedShare ?? null,
    targetedRealSuccessOn: on?.real.targetedApp.success ?? null,
    targetedRealChallengedOn: on?.real.targetedApp.challengedShare ?? null,
    attackBudgetShare: appBudget && attackSmsOn !== null ? attackSmsOn / appBudget : null,
    appBudget,
    wonPerSms: WON_PER_SMS,
    wonSaved: attackSmsOff !== null && attackSmsOn !== null ? (attackSmsOff - attackSmsOn) * WON_PER_SMS : null,
    attackWonOff: attackSmsOff === null ? null : attackSmsOff * WON_PER_SMS,
    attackWonOn: attackSmsOn === null ? null : attackSmsOn * WON_PER_SMS,
    /** the extra CPU of a normal sign-in with the guard on: measured apart from this run */
    signinCpuExtra,
  };
  /** @param {string} name @param {number | null} value @param {number} limit @param {boolean} atMost @param {string | null} [note] */
  const goal = (name, value, limit, atMost, note = null) => ({
    name,
    value,
    limit,
    rule: atMost ? "at most" : "at least",
    met: value === null ? null : atMost ? value <= limit : value >= limit,
    note,
  });
  const goals = [
    goal("attackSmsOn ÷ attackSmsOff", figures.attackSmsShare, GOALS.attackSmsShare, true),
    goal("realSuccessOn", figures.realSuccessOn, GOALS.realSuccessOn, false),
    goal("realChallengedOn", figures.realChallengedOn, GOALS.realChallengedOn, true),
    goal("attackBudgetShare", figures.attackBudgetShare, GOALS.attackBudgetShare, true),
    goal(
      "signinCpuExtra",
      figures.signinCpuExtra,
      GOALS.cpuExtra,
      true,
      "measured apart from this run (--signin-cpu-extra)",
    ),
  ];
  // the goals need the full volume and both phases: otherwise the figures are reported, not judged
  if (unjudged) for (const g of goals) [g.met, g.note] = [null, `not judged: ${unjudged}`];
  return { figures, goals, allMet: !unjudged && goals.every((g) => g.met !== false) };
}

/**
 * What a phase must show whatever the guard does, else the harness (or the service) is broken:
 * no session failed for a reason other than the guard's answers, every code sent reached the
 * receiver with a right signature, and with the guard off every bot session got its code and
 * every real person got in.
 * @param {"off" | "on"} guard
 * @param {ReturnType<typeof phaseFigures>} f
 * @param {{ refused: number; firstRefusal: string | null }} receiver
 */
export function harnessProblems(guard, f, receiver) {
  const out = [];
  if (f.errors.length) out.push(`${f.errors.length}+ sessions failed: ${f.errors[0]}`);
  if (receiver.refused) out.push(`the SMS receiver refused ${receiver.refused} messages (${receiver.firstRefusal})`);
  if (guard === "off") {
    if (f.attackSms < f.bot.sessions) out.push(`guard off: ${f.attackSms} codes for ${f.bot.sessions} bot sessions`);
    if (f.real.completed < f.real.people)
      out.push(`guard off: ${f.real.people - f.real.completed} of ${f.real.people} real people did not get in`);
  }
  return out;
}

// ---- the section of docs/benchmarks.md

export const DOCS_BEGIN = "<!-- ABUSE:BEGIN (written by npm run bench -- --abuse) -->";
export const DOCS_END = "<!-- ABUSE:END -->";

const int = (n) => (n === null || n === undefined ? "-" : Math.round(n).toLocaleString("en-US"));
const pct = (n) => (n === null || n === undefined ? "-" : `${(n * 100).toFixed(n < 0.1 ? 2 : 1)}%`);
const yes = (g) => (g.met === null ? "not judged" : g.met ? "**met**" : "**not met**");

/** The generated block of docs/benchmarks.md from a result (docs/bench/abuse.json). */
export function abuseMarkdown(r) {
  const f = r.figures;
  const off = r.phases.off;
  const on = r.phases.on;
  const s = r.settings;
  const lines = [
    `Run at \`${r.machine.commit}\` on ${r.date.slice(0, 10)} (${r.machine.cpus} × ${r.machine.cpuModel}; load average ${r.machine.loadStart} at the start, ${r.machine.loadEnd} at the end): ` +
      `${int(s.pairs)} leaked pairs from ${int(s.botBlocks)} /24 blocks and ${int(s.people)} real people over ${s.minutes} simulated minutes, ` +
      `${int(r.durationSeconds)} s in all.`,
    "",
    "| | guard off | guard on | goal | |",
    "|---|---:|---:|---|---|",
    `| codes sent to the attack (\`attackSmsOff\`, \`attackSmsOn\`) | ${int(f.attackSmsOff)} | ${int(f.attackSmsOn)} (${pct(f.attackSmsShare)}) | at most 5% of off | ${yes(r.goals[0])} |`,
    `| real people signed in (\`realSuccessOn\`) | ${pct(f.realSuccessOff)} | ${pct(f.realSuccessOn)} | at least 99% | ${yes(r.goals[1])} |`,
    `| real people asked for a challenge (\`realChallengedOn\`) | ${pct(f.realChallengedOff)} | ${pct(f.realChallengedOn)} | at most 5% | ${yes(r.goals[2])} |`,
    `| the targeted app's real people: signed in, challenged | ${pct(off?.real.targetedApp.success)}, ${pct(off?.real.targetedApp.challengedShare)} | ${pct(on?.real.targetedApp.success)}, ${pct(on?.real.targetedApp.challengedShare)} | | |`,
    `| real people from the bot's blocks: signed in, challenged | ${pct(off?.real.inBotBlocks.success)}, ${pct(off?.real.inBotBlocks.challengedShare)} | ${pct(on?.real.inBotBlocks.success)}, ${pct(on?.real.inBotBlocks.challengedShare)} | | |`,
    `| the targeted app's daily budget used by the attack (\`attackBudgetShare\`) | | ${pct(f.attackBudgetShare)}${f.appBudget ? ` of ${int(f.appBudget)}` : ""} | at most 10% | ${yes(r.goals[3])} |`,
    `| the attack's SMS at ${f.wonPerSms} 원 | ${int(f.attackWonOff)} 원 | ${int(f.attackWonOn)} 원 | | saved ${int(f.wonSaved)} 원 |`,
    `| the attack's completed sign-ins (right code typed) | ${int(off?.bot.completed)} | ${int(on?.bot.completed)} | | |`,
    `| the extra CPU of a normal sign-in | | ${f.signinCpuExtra === null ? "measured apart" : pct(f.signinCpuExtra)} | within 5% | ${yes(r.goals[4])} |`,
    "",
    "| phase | wall | workerd CPU | requests | bot sessions: sent, abandoned at a challenge, refused, completed | real: refused once |",
    "|---|---:|---:|---:|---|---:|",
    ...["off", "on"]
      .filter((k) => r.phases[k])
      .map((k) => {
        const p = r.phases[k];
        const b = p.bot.results;
        return `| guard ${k} | ${int(p.wallSeconds)} s | ${int(p.cpuSeconds)} s | ${int(p.requests)} | ${int(b.sent)}, ${int(b.abandoned)}, ${int(b.refused)}, ${int(b.completed)} | ${int(p.real.refusedOnce)} |`;
      }),
    "",
    ...["off", "on"]
      .filter((k) => r.phases[k]?.bot.sendsByMinute)
      .map(
        (k) =>
          `Codes to the attack by simulated minute, guard ${k}: ${r.phases[k].bot.sendsByMinute.map(int).join(", ")}.`,
      ),
  ];
  return lines.join("\n");
}
