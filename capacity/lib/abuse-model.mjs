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

/**
 * How real people behave, as they are (the issue's figures): not everyone types the code that
 * came, not everyone passes a challenge (and some have JavaScript off, so cannot), most give up
 * when told to come back later, phones and desktops text at different rates.
 */
export const PEOPLE = {
  /** share who type the code they were sent (both phases) */
  typeCode: 0.9,
  /** share who pass a challenge they are asked for (the rest give up) */
  passChallenge: 0.97,
  /** share with JavaScript off: a challenge cannot be answered */
  jsOff: 0.02,
  /** share on phones (the rest on desktops) */
  phone: 0.6,
  /** share who send the text they are asked for, by device */
  text: { phone: 0.9, desktop: 0.75 },
  /** seconds from the text page to the text arriving, [min, max) */
  textSeconds: /** @type {[number, number]} */ ([5, 30]),
  /** share who come back after a refusal (429 or Retry-After), and after how many minutes */
  returnAfterRefusal: 0.3,
  returnMinutes: /** @type {[number, number]} */ ([1, 30]),
};

/** What an inbound text costs the operator, in 원 (a representative number's MO fee; assumed). */
export const WON_PER_INBOUND = 10;
/** A solved challenge at $0.40 per 1,000 from a solving service, at 1,380 원 to the dollar. */
export const WON_PER_SOLVE = 0.552;

/**
 * The bot profiles (docs/bench/abuse.json `profiles`), each the options it changes. `baseline` is
 * the bot the guard was first tuned on; each other profile is one cheap change an attacker makes.
 */
export const PROFILES = {
  baseline: {},
  "solver-farm": { solverShare: 1 },
  // solves everything, and never comes from the same /24 twice (on the one app)
  "fresh-blocks": { solverShare: 1, botBlocks: "pairs" },
  // blocks reused as in the baseline, the sessions spread over every app
  "every-app": { botApps: "all" },
  // interleaves sign-ins of numbers it holds (its SIMs), typing their codes, within
  // SIGNIN_SENDS_PER_WINDOW per number, to lift its blocks' conversion
  padding: { paddingShare: 0.35, sims: 200 },
  // fires its sessions in the first seconds after each 10-minute clock boundary
  boundaries: { boundaries: true },
  // paced as a person: fills, solves and answers as slowly
  "human-paced": { humanPaced: true },
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
    /** share of real people returning on a browser that proved their number before (its cookie) */
    returningShare: 0,
    /** share of real people with a passkey on their phone, made at an earlier sign-in (its offer) */
    passkeyShare: 0,
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
    /** the bot profile (PROFILES), or "all": each in turn, with the sweeps */
    profile: "baseline",
    /** "all": the bot's sessions spread over every app; else the targeted one */
    botApps: /** @type {"one" | "all"} */ ("one"),
    /** extra bot sessions, a share of `pairs`, for numbers it holds (padding), and how many SIMs */
    paddingShare: 0,
    sims: 0,
    /** the bot's sessions start in the first seconds after each 10-minute boundary */
    boundaries: false,
    /** the bot is paced as a person */
    humanPaced: false,
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
    else if (a === "--returning-share") o.returningShare = num();
    else if (a === "--passkey-share") o.passkeyShare = num();
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
    else if (a === "--profile") {
      o.profile = argv[++i];
      if (o.profile !== "all" && !(o.profile in PROFILES))
        throw new Error(`--profile takes all or one of ${Object.keys(PROFILES).join(", ")}`);
    } else if (a === "--guard") {
      const g = argv[++i];
      if (g !== "both" && g !== "on" && g !== "off") throw new Error("--guard takes both, on or off");
      o.guard = g;
    } else if (a === "--vars") o.vars = Object.fromEntries(argv[++i].split(",").map((kv) => kv.split("=")));
    else if (a === "--no-docs") o.docs = false;
    else if (a !== "--short" && a !== "--abuse") throw new Error(`unknown option ${a}`);
  }
  if (o.profile !== "all") Object.assign(o, withProfile(o, o.profile));
  if (!Number.isFinite(o.clockStart)) throw new Error("--clock-start takes an ISO date");
  if (o.apps < 1 || o.botBlocks < 1 || o.pairs < 0 || o.people < 0) throw new Error("apps and blocks: at least 1");
  return o;
}

/** The options of a run of `profile`: the run's, with what the profile changes. */
export function withProfile(o, profile) {
  const p = PROFILES[profile];
  return {
    ...o,
    profile,
    ...p,
    botBlocks: p.botBlocks === "pairs" ? o.pairs : (p.botBlocks ?? o.botBlocks),
    // the short run keeps a tenth of the SIMs as of the rest
    sims: p.sims ? (o.mode === "short" ? Math.ceil(p.sims / 10) : p.sims) : 0,
  };
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
 *   solves: boolean; typesCode: boolean; holdsNumber: boolean; device: "phone" | "desktop"; jsOff: boolean;
 *   texts: boolean; textDelay: number; returns: boolean; returnDelay: number;
 *   pace: { fill: number; solve: number; type: number; consent: number };
 *   returning?: boolean; passkeyHolder?: boolean; enrolPasskey?: boolean;
 *   passkeyKey?: import("./abuse-passkeys.mjs").Passkey;
 *   jar?: { header(): string; keep(res: Response): void };
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
export function plan(o, botList, realPeople, sims = []) {
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
  const padding = sims.length ? Math.round(botList.length * o.paddingShare) : 0;
  const botSessions = [
    ...botList.map((person) => ({ person, holds: false })),
    ...Array.from({ length: padding }, (_, i) => ({ person: sims[i % sims.length], holds: true })),
  ];
  // fresh blocks: each session its own, in turn (none reused while there are blocks)
  const fresh = o.botBlocks >= botSessions.length;
  const boundaryMs = 600_000;
  botSessions.forEach(({ person, holds }, index) => {
    const r = rngFor(o.seed, `bot:${index}`);
    const home = fresh ? botBlocks[index % botBlocks.length] : pick(r, botBlocks);
    const start = o.boundaries
      ? Math.min(span - 1, Math.floor(r() * (span / boundaryMs)) * boundaryMs + Math.floor(r() * 5_000))
      : Math.floor(r() * span);
    sessions.push({
      kind: "bot",
      index,
      person,
      app: o.botApps === "all" ? Math.floor(r() * o.apps) : 0,
      start,
      block: home.block,
      inBotBlock: true,
      asn: home.asn,
      addresses: Array.from({ length: attempts }, () => hostIn(r, home.block)),
      solves: r() < o.solverShare,
      typesCode: holds || r() < o.rightCodeShare,
      holdsNumber: holds,
      device: "desktop",
      jsOff: false,
      // it can send a text only from a SIM it holds
      texts: holds,
      textDelay: Math.round(between(r, PEOPLE.textSeconds) * 1000),
      // a bot told to wait comes back, as often as its retries allow
      returns: true,
      returnDelay: 0,
      pace: paceOf(r, o.humanPaced ? PACE.real : PACE.bot),
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
    const device = r() < PEOPLE.phone ? "phone" : "desktop";
    const jsOff = r() < PEOPLE.jsOff;
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
      solves: !jsOff && r() < PEOPLE.passChallenge,
      typesCode: r() < PEOPLE.typeCode,
      holdsNumber: true,
      device,
      jsOff,
      texts: r() < PEOPLE.text[device],
      textDelay: Math.round(between(r, PEOPLE.textSeconds) * 1000),
      returns: r() < PEOPLE.returnAfterRefusal,
      returnDelay: Math.round(between(r, PEOPLE.returnMinutes) * 60_000),
      pace: paceOf(r, PACE.real),
      // drawn apart, so every other choice is the same at any returning or passkey share
      returning: rngFor(o.seed, `returning:${index}`)() < o.returningShare,
      passkeyHolder: rngFor(o.seed, `passkey:${index}`)() < o.passkeyShare,
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
 *   kind: "bot" | "real"; app: number; inBotBlock: boolean; solves: boolean; holdsNumber: boolean;
 *   typesCode: boolean; device: "phone" | "desktop";
 *   result: "completed" | "sent" | "abandoned" | "refused" | "failed";
 *   challenged: number; tokens: number; textsAsked: number; texted: number; sends: number; sentAt: number[];
 *   refusals: number[]; retried: boolean; reason: string | null;
 *   passkey?: import("./abuse-passkeys.mjs").Passkey; passkeyUsed?: boolean;
 * }} Outcome
 */

const share = (n, d) => (d > 0 ? n / d : null);

/**
 * One phase's figures from its sessions' outcomes and the SMS the receiver took, by number.
 * A real person's sign-in is **completed** when it reached the app's redirect with an
 * authorization code, on the first attempt or on the one after waiting a Retry-After of at most
 * `maxWait` (10 minutes).
 * @param {Outcome[]} outcomes
 * @param {{ attackSms: number; simSms?: number; realSms: number }} sms
 */
export function phaseFigures(outcomes, sms) {
  const bot = outcomes.filter((x) => x.kind === "bot");
  const real = outcomes.filter((x) => x.kind === "real");
  const targeted = real.filter((x) => x.app === 0);
  const count = (xs, f) => xs.filter(f).length;
  const asked = (x) => x.challenged > 0 || x.textsAsked > 0;
  const group = (xs) => ({
    people: xs.length,
    askedMore: count(xs, asked),
    askedMoreShare: share(count(xs, asked), xs.length),
    texted: count(xs, (x) => x.texted > 0),
    // signed in with a passkey made at an earlier sign-in: no code, no guard
    byPasskey: count(xs, (x) => x.passkeyUsed === true && x.result === "completed"),
    waited: count(xs, (x) => x.refusals.length > 0),
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
  /** codes sent per app (each session's own count): what each app's budget paid */
  const sendsByApp = {};
  for (const x of outcomes) sendsByApp[x.app] = (sendsByApp[x.app] ?? 0) + x.sends;
  const attackByApp = {};
  for (const x of bot) attackByApp[x.app] = (attackByApp[x.app] ?? 0) + x.sends;
  const held = bot.filter((x) => x.holdsNumber);
  return {
    attackSms: sms.attackSms,
    simSms: sms.simSms ?? 0,
    realSms: sms.realSms,
    sendsByApp,
    attackByApp,
    bot: {
      sessions: bot.length,
      sims: {
        sessions: held.length,
        completed: count(held, (x) => x.result === "completed"),
        texted: count(held, (x) => x.texted > 0),
      },
      texted: bot.reduce((a, x) => a + x.texted, 0),
      results: results(bot),
      challenged: count(bot, (x) => x.challenged > 0),
      solverSessions: count(bot, (x) => x.solves),
      tokensSolved: bot.reduce((a, x) => a + x.tokens, 0),
      refusals: statuses(bot),
      completed: count(bot, (x) => x.result === "completed"),
      // codes to numbers the bot does not hold (a SIM's own codes are its padding, not strangers')
      sendsByMinute: byMinute(bot.filter((x) => !x.holdsNumber)),
    },
    real: {
      ...group(real),
      results: results(real),
      refusals: statuses(real),
      inBotBlocks: group(real.filter((x) => x.inBotBlock)),
      targetedApp: group(targeted),
      atRisk: group(targeted.filter((x) => x.inBotBlock)),
      otherApps: group(real.filter((x) => x.app !== 0)),
      byDevice: {
        phone: group(real.filter((x) => x.device === "phone")),
        desktop: group(real.filter((x) => x.device === "desktop")),
      },
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

/** The goals of every bot profile (docs/bench/abuse.json `profiles`), in the issue's order. */
export const PROFILE_GOALS = [
  ["attackSmsShare", "at most", 0.05],
  ["attackFirstMinute", "at most", 50],
  ["peopleWaited", "at most", 0],
  ["successRatio", "at least", 0.99],
  ["attackedAppSuccessRatio", "at least", 0.9],
  ["atRiskSuccessRatio", "at least", 0.9],
  ["unattackedChallengedShare", "at most", 0.01],
  ["attackBudgetShare", "at most", 0.1],
  ["appsPaused", "at most", 0],
  ["attackWonShare", "at most", 0.05],
];

/**
 * One bot profile's row from its two phases: the figures by the issue's names, what the attack
 * cost each side, and which goals are met.
 * @param {string} name
 * @param {ReturnType<typeof phaseFigures>} off
 * @param {ReturnType<typeof phaseFigures>} on
 * @param {{ appBudget: number; apps: number; botApps: "one" | "all"; botBlocks: number; sims: number }} o
 */
export function profileRow(name, off, on, o) {
  const ratio = (a, b) => (b ? a / b : null);
  const won = (f) => (f.attackSms + f.simSms) * WON_PER_SMS + f.bot.texted * WON_PER_INBOUND;
  const maxAttack = Math.max(0, ...Object.values(on.attackByApp));
  const row = {
    name,
    attackSmsShare: ratio(on.attackSms, off.attackSms),
    attackFirstMinute: on.bot.sendsByMinute[0] ?? 0,
    peopleWaited: on.real.waited,
    successRatio: ratio(on.real.completed, off.real.completed),
    attackedAppSuccessRatio: ratio(on.real.targetedApp.completed, off.real.targetedApp.completed),
    atRiskSuccessRatio: ratio(on.real.atRisk.completed, off.real.atRisk.completed),
    unattackedChallengedShare: o.botApps === "all" ? null : on.real.otherApps.askedMoreShare,
    attackBudgetShare: ratio(maxAttack, o.appBudget),
    appsPaused: Object.values(on.sendsByApp).filter((n) => n >= o.appBudget).length,
    attackWon: won(on),
    attackWonOff: won(off),
    attackWonShare: ratio(won(on), won(off)),
    askedMore: {
      attackedApp: on.real.targetedApp.askedMoreShare,
      atRisk: on.real.atRisk.askedMoreShare,
      serviceWide: on.real.askedMoreShare,
      texted: on.real.texted,
    },
    attackCost: {
      solves: on.bot.tokensSolved,
      blocks: o.botBlocks,
      sims: o.sims,
      codesToStrangers: on.attackSms,
      wonPerCode: on.attackSms ? (on.bot.tokensSolved * WON_PER_SOLVE) / on.attackSms : null,
    },
  };
  const goals = PROFILE_GOALS.map(([k, rule, limit]) => {
    const v = row[k];
    return { name: k, value: v, rule, limit, met: v === null ? null : rule === "at most" ? v <= limit : v >= limit };
  });
  return { ...row, goals, allMet: goals.every((g) => g.met !== false) };
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
    const strangers = f.bot.sessions - f.bot.sims.sessions;
    if (f.attackSms < strangers) out.push(`guard off: ${f.attackSms} codes for ${strangers} bot sessions`);
    // people who type their code all get in with the guard off; the others (PEOPLE.typeCode) do not
    if (f.real.results.completed + f.real.results.sent < f.real.people)
      out.push(
        `guard off: ${f.real.people - f.real.results.completed - f.real.results.sent} of ${f.real.people} real people neither got in nor a code`,
      );
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
  if (r.profiles?.length) lines.push("", ...profilesMarkdown(r));
  return lines.join("\n");
}

/** The bot profiles' table (`profiles`, then `sweeps`): each goal's figure, in bold where it is missed. */
function profilesMarkdown(r) {
  const fmt = (k, v) =>
    v === null || v === undefined
      ? "n/a"
      : ["attackFirstMinute", "peopleWaited", "appsPaused"].includes(k)
        ? int(v)
        : pct(v);
  const head = PROFILE_GOALS.map(([k, rule, limit]) => `\`${k}\` (${rule === "at most" ? "≤" : "≥"} ${fmt(k, limit)})`);
  const rows = [...r.profiles, ...(r.sweeps ?? [])].map((p) => {
    const cells = p.goals.map((g) => (g.met === false ? `**${fmt(g.name, g.value)}**` : fmt(g.name, g.value)));
    return `| ${p.name} | ${cells.join(" | ")} | ${pct(p.askedMore.attackedApp)}, ${pct(p.askedMore.serviceWide)} | ${int(p.attackWon)} / ${int(p.attackWonOff)} 원 | ${p.attackCost.wonPerCode === null ? "n/a" : p.attackCost.wonPerCode.toFixed(1)} 원 |`;
  });
  return [
    "Bot profiles (guard on against guard off, same traffic; a missed goal in bold):",
    "",
    `| profile | ${head.join(" | ")} | asked more: attacked app, service-wide | attack's SMS and texts, on / off | the bot's solves per code |`,
    `|---|${head.map(() => "---:").join("|")}|---:|---:|---:|`,
    ...rows,
  ];
}
