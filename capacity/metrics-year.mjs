#!/usr/bin/env node
// The metrics year (docs/capacity.md "Metrics at national volume"): a year of roll-ups at national
// volume generated into the metrics store of a plain workerd served by the bench's harness
// (bench/lib/server.mjs), then what the goal asks measured on it: the store's bytes with each
// table's rows, and the CPU of the console's 30-day overview and of a 30-day app page (the largest
// app and a median one): the real pages with an operator signed in, the admin API's reads with the
// same arguments, and the same reads inside the object.
//
// The apps are registered through the admin API (the pages list and read them); the rows are written
// inside the object by the entry's subclass of the product's store
// (capacity/workers/metrics-year-store.ts, the counts from metrics-year-model.ts), a tier at a time
// so each table's bytes are the database's growth while it was written. CPU is workerd's process
// CPU over K requests after a warm-up, the median of the rounds.
//
//   node capacity/metrics-year.mjs                  365 days × 1,000 apps × 10,000,000 sign-ins a day
//   node capacity/metrics-year.mjs --short          3 days × 50 apps (CI, via npm run bench -- --short)
//   options: --days D --apps N --per-day S --requests K --rounds R
//   writes bench/results/metrics-year-<date>.json (metrics-year-short.json for --short)

import { mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { quiet } from "../bench/lib/load.mjs";
import { machine, stats } from "../bench/lib/report.mjs";
import { control, firstForm } from "../bench/lib/scenarios.mjs";
import { cpuMicros, startServers, writeJson } from "../bench/lib/server.mjs";
import { parallel } from "./lib/scale.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const resultsDir = join(root, "bench", "results");
const ENTRY = "capacity/workers/metrics-year-entry.ts";
/** The admin token of the test vars (.dev.vars.example): the bench's workerd is local only. */
const ADMIN_TOKEN = "devAdminToken-local-only-0123456789abcdef";
/** A person of the dev seed, invited as a viewer: the pages are read as an operator reads them. */
const OPERATOR = { telco: "K", name: "박서준", phone: "01056789012" };
const GOALS = { maxPageCpuMs: 300, maxYearBytes: 1e9 };
const HOUR = 3_600_000;
const DAY = 86_400_000;
const KST = 9 * HOUR;
/** The series the overview reads of the month (overview.ts DELIVERED): each gateway's deliveries, for the spend. */
const DELIVERED = ["naver-sens", "nhn-cloud", "webhook", "outbox"].map((g) => `sms.${g}.delivered`);
/** Reads in one call when timed inside the object (process CPU is counted in 10 ms ticks). */
const INSIDE_REPEATS = 200;

function parseArgs(argv) {
  const short = argv.includes("--short");
  const o = {
    mode: short ? "short" : "full",
    days: short ? 3 : 365,
    apps: short ? 50 : 1000,
    perDay: 10_000_000,
    requests: short ? 3 : 20,
    rounds: short ? 1 : 3,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => Number(argv[++i]);
    if (a === "--days") o.days = num();
    else if (a === "--apps") o.apps = num();
    else if (a === "--per-day") o.perDay = num();
    else if (a === "--requests") o.requests = num();
    else if (a === "--rounds") o.rounds = num();
    else if (a !== "--short") throw new Error(`unknown option ${a}`);
  }
  if (!(o.days >= 1 && o.apps >= 2 && o.perDay > 0)) throw new Error("--days ≥ 1, --apps ≥ 2, --per-day > 0");
  return o;
}

const started = Date.now();
/** Progress on stderr, each line with the seconds since the run started. */
const log = (...a) => console.error(`[${String(Math.round((Date.now() - started) / 1000)).padStart(5)} s]`, ...a);

/** workerd's CPU (µs) since `c0` (cpuMicros); the bench needs Linux's /proc. */
function cpuSince(ctx, c0) {
  const c = cpuMicros(ctx.pid);
  if (c0 === null || c === null) throw new Error("no workerd CPU time (/proc/<pid>/stat) on this machine");
  return c - c0;
}

async function ok(res, what) {
  const text = await res.text();
  if (res.status < 200 || res.status >= 300) throw new Error(`${what}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

/** A method of the metrics object through the entry (metrics-year-entry.ts). */
const call = async (ctx, method, ...args) =>
  JSON.parse(
    await ok(
      await control(`${ctx.url}/__bench/metrics-year/${method}`, { method: "POST", body: JSON.stringify(args) }),
      method,
    ),
  );

const admin = async (ctx, method, path, body) =>
  JSON.parse(
    await ok(
      await control(ctx.url + path, {
        method,
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      `${method} ${path}`,
    ),
  );

/** `n` apps registered through the admin API; their client ids, the first the largest. */
async function registerApps(ctx, n) {
  return parallel(n, 4, async (i) => {
    const c = await admin(ctx, "POST", "/admin/clients", {
      name: `Year App ${i + 1}`,
      redirect_uris: ["https://year.example/cb"],
      items: ["name", "phoneNo", "ci"],
      auto_login: true,
    });
    return c.client_id;
  });
}

// ---- generation

/**
 * The year's rows, a tier at a time (days, hours, minutes, then the batches' names), each day in a
 * call of its own (the days tier ten at once); each tier's rows, time, workerd CPU and the bytes
 * the database grew by.
 */
async function generate(ctx, spec, days) {
  const tiers = [];
  let bytes = (await call(ctx, "yearStats")).bytes;
  const step = async (tier, f) => {
    const t0 = performance.now();
    const c0 = cpuMicros(ctx.pid);
    const rows = await f();
    const after = (await call(ctx, "yearStats")).bytes;
    tiers.push({
      tier,
      rows,
      seconds: (performance.now() - t0) / 1000,
      cpuSeconds: cpuSince(ctx, c0) / 1e6,
      bytes: after - bytes,
    });
    bytes = after;
    log(`  ${tier}: ${rows.toLocaleString("en-US")} rows in ${tiers.at(-1).seconds.toFixed(1)} s, ${mb(after)} stored`);
  };
  const byDays = async (tier, list, per) => {
    let rows = 0;
    for (let i = 0; i < list.length; i += per) {
      rows += await call(ctx, "yearRows", spec, list.slice(i, i + per), tier);
      if (i % 30 < per && i > 0) log(`    ${tier}: ${i} of ${list.length} days`);
    }
    return rows;
  };
  await step("days", () => byDays("days", days, 10));
  await step("hours", () => byDays("hours", days, 1));
  await step("minutes", () => byDays("minutes", days.slice(-15), 1));
  await step("applied", () => call(ctx, "yearBatches", spec));
  return tiers;
}

// ---- an operator's console session

/** The cookies a response sets, added to `jar`. */
function keep(jar, res) {
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(";");
    const i = pair.indexOf("=");
    jar.set(pair.slice(0, i), pair.slice(i + 1));
  }
}

const cookie = (jar) => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");

/** The newest code the dev outbox holds for `phone`. */
async function codeFor(ctx, phone) {
  for (let i = 0; i < 50; i++) {
    const res = await control(`${ctx.url}/dev/outbox`, { headers: { Accept: "application/json" } });
    const m = (await res.json()).messages.find((x) => x.to === phone);
    const code = m && /\d{6}/.exec(m.text)?.[0];
    if (code) return code;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no code for ${phone} in the dev outbox`);
}

/** The operator invited as a viewer and signed in to /console (identify, then the code); the cookie header. */
async function consoleSession(ctx) {
  await admin(ctx, "POST", "/admin/operators", { phone: OPERATOR.phone, role: "viewer" });
  const jar = new Map();
  const headers = () => ({ Cookie: cookie(jar), "Accept-Language": "ko-KR" });
  let res = await control(`${ctx.url}/console`, { headers: headers() });
  keep(jar, res);
  for (let step = 0; step < 2; step++) {
    const form = firstForm(await ok(res, "console sign-in"));
    const body = form.fields;
    if (form.names.has("phoneNo")) {
      body.set("telcoCd", OPERATOR.telco);
      body.set("name", OPERATOR.name);
      body.set("phoneNo", OPERATOR.phone);
      body.set("carrierTerms", "Y"); // the agreements' box (docs/signin.md "The agreements")
    } else body.set("otp", await codeFor(ctx, OPERATOR.phone));
    res = await control(new URL(form.action, ctx.url), {
      method: "POST",
      redirect: "manual",
      headers: { ...headers(), "Content-Type": "application/x-www-form-urlencoded", Origin: ctx.url },
      body: body.toString(),
    });
    keep(jar, res);
  }
  if (res.status !== 303 && res.status !== 302) throw new Error(`console sign-in ended with ${res.status}`);
  return cookie(jar);
}

// ---- what is measured

/** The reads of the pages (workers/console/overview.ts range=30d, apps.ts appStats), at `now`. */
function pageReads(now, apps) {
  const from = now - 30 * DAY;
  const month = Date.parse(new Date(now + KST).toISOString().slice(0, 8) + "01T00:00:00+09:00");
  const lastMonth = Date.parse(new Date(month - DAY + KST).toISOString().slice(0, 8) + "01T00:00:00+09:00");
  const days30 = (client) => ({ step: "1d", from: from - (from % DAY), to: now, client, series: null });
  return {
    overview30d: { step: "1d", from: from - (from % DAY), to: now, client: "", series: null },
    overviewMonth: { step: "1h", from: month, to: now, client: "", series: DELIVERED },
    // the month's read on its last day (the page's largest): last month, whole
    overviewWholeMonth: { step: "1h", from: lastMonth, to: month, client: "", series: DELIVERED },
    appLargest: days30(apps[0]),
    appMedian: days30(apps[Math.floor(apps.length / 2)]),
  };
}

/** workerd's CPU (ms) per call of `once`: `rounds` rounds of `k` calls after 3, the median; and the wall time. */
async function cpuPer(ctx, o, once) {
  for (let i = 0; i < 3; i++) await once();
  const cpu = [];
  const wall = [];
  for (let r = 0; r < o.rounds; r++) {
    await quiet(ctx.pid);
    const c0 = cpuMicros(ctx.pid);
    const t0 = performance.now();
    for (let i = 0; i < o.requests; i++) await once();
    wall.push((performance.now() - t0) / o.requests);
    cpu.push(cpuSince(ctx, c0) / o.requests / 1000);
  }
  return { cpuMs: stats(cpu), wallMs: stats(wall) };
}

/** A GET whose answer must be 200 and hold `mark` (the page drew what it reads). */
const getter = (ctx, path, headers, mark) => async () => {
  const text = await ok(await control(ctx.url + path, { headers }), path);
  if (!text.includes(mark)) throw new Error(`${path}: no ${mark} in the answer`);
};

/** The pages as an operator opens them, GET /admin/metrics with the same reads, and the reads inside the object. */
async function measure(ctx, o, apps, consoleCookie) {
  const now = Date.now();
  const q = pageReads(now, apps);
  const page = { Cookie: consoleCookie, "Accept-Language": "ko-KR" };
  const api = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const metrics = (r) =>
    "/admin/metrics?" +
    new URLSearchParams({
      step: r.step,
      from: new Date(r.from).toISOString(),
      to: new Date(r.to).toISOString(),
      ...(r.client ? { client_id: r.client } : {}),
      ...(r.series ? { series: r.series.join(",") } : {}),
    });
  const inside = (r) => async () => {
    await call(ctx, "readRepeated", r.step, r.from, r.to, r.client, r.series, INSIDE_REPEATS);
  };
  const rowsOf = (r) => call(ctx, "readRepeated", r.step, r.from, r.to, r.client, r.series, 1);
  const out = { now: new Date(now).toISOString(), pages: {}, api: {}, inside: {}, rows: {} };
  const pages = {
    overview30d: getter(ctx, "/console?range=30d", page, 'id="c-signins"'),
    appLargest: getter(ctx, `/console/apps/${q.appLargest.client}`, page, 'id="c-app-signins"'),
    appMedian: getter(ctx, `/console/apps/${q.appMedian.client}`, page, 'id="c-app-signins"'),
  };
  for (const [k, f] of Object.entries(pages)) {
    out.pages[k] = await cpuPer(ctx, o, f);
    log(`  page ${k}: ${out.pages[k].cpuMs?.median.toFixed(1)} ms CPU`);
  }
  // what the overview counts over its 30 days (main checks it against the volume generated)
  const answer = JSON.parse(await ok(await control(ctx.url + metrics(q.overview30d), { headers: api }), "metrics"));
  out.signins30d = (answer.series["signin.success"] ?? []).reduce((a, [, n]) => a + n, 0);
  for (const [k, r] of Object.entries(q)) {
    out.rows[k] = await rowsOf(r);
    out.api[k] = await cpuPer(ctx, o, getter(ctx, metrics(r), api, '"series"'));
    // INSIDE_REPEATS reads in one call: its CPU over them is one read's
    const each = await cpuPer(ctx, { ...o, requests: 1 }, inside(r));
    out.inside[k] = { cpuMs: scaleStats(each.cpuMs, 1 / INSIDE_REPEATS) };
    log(
      `  read ${k}: ${out.rows[k]} points; admin API ${out.api[k].cpuMs?.median.toFixed(1)} ms, inside ${out.inside[k].cpuMs?.median.toFixed(2)} ms CPU`,
    );
  }
  return out;
}

const scaleStats = (s, f) => s && { median: s.median * f, min: s.min * f, max: s.max * f };

/**
 * The alarm's work that grows with the tables: the minute's judgement of the rules (flows/alerts.ts),
 * of which the search for apps with failing events, and the daily drop of what each tier outlives.
 */
async function upkeep(ctx, o) {
  const now = Date.now();
  const hourAgo = now - HOUR;
  const once = { ...o, requests: 1 };
  const judge = await cpuPer(ctx, once, () => call(ctx, "judgeRepeated", now, 1));
  const search = await cpuPer(ctx, once, () => call(ctx, "clientsWithRepeated", hourAgo - (hourAgo % HOUR), 1));
  const c0 = cpuMicros(ctx.pid);
  await call(ctx, "pruneAt", now);
  const prune = cpuSince(ctx, c0) / 1000;
  log(`  the alarm: ${ms(judge.cpuMs)} a minute (the search ${ms(search.cpuMs)}); the daily drop ${prune} ms`);
  return { judgeCpuMs: judge.cpuMs, searchCpuMs: search.cpuMs, pruneCpuMs: prune };
}

// ---- the result

/**
 * The stored bytes of a year: as measured after 365 days; after fewer, the hourly and daily tiers'
 * bytes × 365 / days and the minutes' × 14 days / the minutes generated (the rest does not grow).
 */
function yearBytes(r) {
  if (r.settings.days >= 365) return r.stored.bytes;
  const t = Object.fromEntries(r.generation.tiers.map((x) => [x.tier, x.bytes]));
  const rest = r.stored.bytes - t.hours - t.days - t.minutes;
  return ((t.hours + t.days) * 365) / r.settings.days + (t.minutes * 14 * 1440) / r.stored.tables.minutes.rows + rest;
}

const int = (n) => Math.round(n).toLocaleString("en-US");
const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
const ms = (s) => (s ? `${s.median.toFixed(1)} ms` : "-");

/** The terminal summary of a run. */
function format(r) {
  const out = [];
  const s = r.settings;
  const apart = s.apps === 1000 && s.perDay === 10_000_000 ? "" : " (the goal is for 1,000 apps)";
  out.push(
    `Metrics year (${r.mode}), ${r.date} at ${r.machine.commit}: ${s.days} days × ${int(s.apps)} apps, ${int(s.perDay)} sign-ins a day`,
  );
  const g = r.generation;
  out.push(
    `Generated ${int(g.rows)} rows in ${g.seconds.toFixed(0)} s (${int(g.rows / g.seconds)} rows/s; workerd CPU ${g.cpuSeconds.toFixed(0)} s)`,
  );
  out.push("");
  out.push(`Stored: ${mb(r.stored.bytes)} (SQLite databaseSize)`);
  out.push(
    `  ${"table".padEnd(8)} ${"rows".padStart(11)} ${"bytes".padStart(10)} ${"share".padStart(6)}  bytes/row  counts bytes/row`,
  );
  for (const t of g.tiers) {
    const rows = r.stored.tables[t.tier].rows;
    out.push(
      `  ${t.tier.padEnd(8)} ${int(rows).padStart(11)} ${mb(t.bytes).padStart(10)} ${((100 * t.bytes) / r.stored.bytes).toFixed(1).padStart(5)}%  ${(t.bytes / rows).toFixed(1).padStart(9)}  ${(r.stored.tables[t.tier].payloadBytes / rows).toFixed(1).padStart(16)}`,
    );
  }
  out.push(
    `  a year: ${mb(r.goals.yearBytes)}${s.days < 365 ? ` (extrapolated from ${s.days} days)` : ""}, goal ≤ 1,000 MB: ${r.goals.bytesMet ? "met" : "NOT met"}${apart}`,
  );
  const m = r.measured;
  out.push("");
  out.push(`CPU per request (workerd process, median of ${s.rounds} rounds of ${s.requests}):`);
  out.push(`  ${"".padEnd(34)} ${"page".padStart(9)} ${"admin API".padStart(10)} ${"inside".padStart(9)}  points`);
  const line = (label, page, reads) =>
    out.push(
      `  ${label.padEnd(34)} ${ms(page?.cpuMs).padStart(9)} ${reads
        .map((k) => ms(m.api[k].cpuMs))
        .join(" + ")
        .padStart(10)} ${reads
        .map((k) => `${m.inside[k].cpuMs?.median.toFixed(2)} ms`)
        .join(" + ")
        .padStart(9)}  ${reads.map((k) => m.rows[k]).join(" + ")}`,
    );
  line("overview, 30 days (1d + month 1h)", m.pages.overview30d, ["overview30d", "overviewMonth"]);
  line("  the month's read on its last day", null, ["overviewWholeMonth"]);
  line("app page, largest app (1d × 30)", m.pages.appLargest, ["appLargest"]);
  line("app page, median app (1d × 30)", m.pages.appMedian, ["appMedian"]);
  out.push(`  goal ≤ ${GOALS.maxPageCpuMs} ms a page: ${r.goals.pagesMet ? "met" : "NOT met"}${apart}`);
  out.push("");
  out.push(
    `The alarm: the minute's judgement of the rules ${ms(r.upkeep.judgeCpuMs)} CPU, of which the search for apps with failing events ${ms(r.upkeep.searchCpuMs)}; the daily drop ${r.upkeep.pruneCpuMs.toFixed(0)} ms`,
  );
  return out.join("\n");
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const m = machine(root, ["workers", "capacity", "bench", "wrangler.toml"]);
  mkdirSync(resultsDir, { recursive: true });
  log(`metrics year (${o.mode}): ${o.days} days × ${o.apps} apps × ${o.perDay.toLocaleString("en-US")} sign-ins a day`);
  const srv = await startServers(root, join(resultsDir, "build"), [{ name: "app", vars: {} }], {
    peers: false,
    entry: ENTRY,
  });
  const ctx = { url: srv.urls.app, pid: srv.pid };
  try {
    await ok(await control(`${ctx.url}/healthz`), "healthz"); // the dev seed
    log(`  registering ${o.apps} apps`);
    const apps = await registerApps(ctx, o.apps);
    const now = Date.now();
    const today = Math.floor(now / DAY);
    const days = Array.from({ length: o.days }, (_, i) => today - o.days + 1 + i);
    const spec = { apps, perDay: o.perDay, now };
    const t0 = performance.now();
    const tiers = await generate(ctx, spec, days);
    const stored = await call(ctx, "yearStats");
    log("  signing an operator in to the console");
    const consoleCookie = await consoleSession(ctx);
    const measured = await measure(ctx, o, apps, consoleCookie);
    const result = {
      version: 1,
      date: new Date().toISOString(),
      mode: o.mode,
      machine: { ...m, loadEnd: loadavg()[0].toFixed(2) },
      settings: o,
      generation: {
        rows: tiers.reduce((a, t) => a + t.rows, 0),
        seconds: tiers.reduce((a, t) => a + t.seconds, 0),
        cpuSeconds: tiers.reduce((a, t) => a + t.cpuSeconds, 0),
        wallSeconds: (performance.now() - t0) / 1000,
        tiers,
      },
      stored,
      measured,
      upkeep: await upkeep(ctx, o),
      durationSeconds: Math.round((Date.now() - started) / 1000),
    };
    const pageCpu = ["overview30d", "appLargest", "appMedian"].map((k) => measured.pages[k].cpuMs?.median ?? Infinity);
    result.goals = {
      yearBytes: yearBytes(result),
      bytesMet: yearBytes(result) <= GOALS.maxYearBytes,
      pagesMet: pageCpu.every((x) => x <= GOALS.maxPageCpuMs),
      ...GOALS,
    };
    // a run that generated less than it was asked measured nothing: the overview's 30 days hold
    // every whole day generated in them
    const least = 0.8 * (Math.min(o.days, 30) - 1) * o.perDay;
    if (measured.signins30d < least)
      throw new Error(`the overview counts ${int(measured.signins30d)} sign-ins over 30 days, under ${int(least)}`);
    const name = o.mode === "short" ? "metrics-year-short" : `metrics-year-${result.date.replace(/[:.]/g, "-")}`;
    writeJson(join(resultsDir, `${name}.json`), result);
    console.log("\n" + format(result));
    log(`finished in ${result.durationSeconds} s; wrote bench/results/${name}.json`);
    return 0;
  } catch (err) {
    if (srv.stderr.length) log(`workerd output (last lines):\n${srv.stderr.join("").slice(-4000)}`);
    throw err;
  } finally {
    await srv.dispose();
  }
}

main()
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
