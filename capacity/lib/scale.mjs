// The scale bench (`npm run bench -- --scale`, `node capacity/scale.mjs`; docs/capacity.md): loads a
// directory of N subscribers through the admin import, with links and automatic-login grants, into
// the directory shards of a plain workerd (bench/lib/server.mjs), and measures what the capacity
// model needs: bytes per subscriber, link and grant as stored, rows and bytes per shard, the import's
// rows per second, the cost of the directory's requests at a small and at the full directory (CPU
// ratio to hello world in the same run), the shard calls each makes, and one shard's sustained
// write rate.

import { existsSync, mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { combineSlices, drive, loop, Pool, quiet } from "../../bench/lib/load.mjs";
import { machine, stats } from "../../bench/lib/report.mjs";
import { SCENARIOS, checkOnce, control, firstForm, urlFor } from "../../bench/lib/scenarios.mjs";
import { cpuMicros, startServers, writeJson } from "../../bench/lib/server.mjs";
import { directoryRows } from "../../bench/lib/directory-data.mjs";

/** The capacity run's app worker: the bench entry with the scale routes and the counting directory shard. */
export const ENTRY = "capacity/workers/capacity-entry.ts";

const FORM = "application/x-www-form-urlencoded";
/** The admin token of the test vars (.dev.vars.example): the bench's workerd is local only. */
const ADMIN_TOKEN = "devAdminToken-local-only-0123456789abcdef";
const FIXED_CODE = "000000";
const BENCH_REDIRECT = "https://bench.example/cb";
/** Rows per import request: the admin API's ADMIN_MAX_IMPORT_ROWS default. */
const FILE_ROWS = 10_000;

/** The national target the capacity model projects to (docs/capacity.md). */
export const TARGET = {
  subscribers: 50_000_000,
  links: 250_000_000,
  grants: 100_000_000,
  /** A Durable Object's storage limit, and the share of it no directory shard should pass. */
  limitBytes: 10e9,
  goalShare: 0.25,
  signInsPerDay: 10_000_000,
  peakSignInsPerSecond: 5000,
};

/** Production's directory shard count (workers/provider/store/config.ts DEFAULT_DIRECTORY_SHARDS). */
export const PRODUCTION_SHARDS = 64;

export function parseScaleArgs(argv) {
  const short = argv.includes("--short");
  const o = {
    mode: short ? "short" : "full",
    n: short ? 5000 : 1_000_000,
    small: 1000,
    shards: PRODUCTION_SHARDS,
    linksPer: 5,
    grantsPer: 2,
    importConcurrency: 2,
    rounds: short ? 1 : 3,
    seconds: short ? 1 : 3,
    slices: short ? 1 : 3,
    settle: short ? 0.2 : 0.5,
    // autocannon runs whole seconds: a slice is at least one
    warmup: short ? 0 : 1,
    connections: 32,
    counted: short ? 5 : 20,
    writeSeconds: short ? 1 : 5,
    insideWrites: short ? 500 : 5000,
    costs: true,
    /** @type {string | undefined} a directory to keep the loaded state in (capacity/lib/scale-instructions.mjs reads it) */
    state: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => Number(argv[++i]);
    if (a === "--n") o.n = num();
    else if (a === "--small") o.small = num();
    else if (a === "--shards") o.shards = num();
    else if (a === "--links") o.linksPer = num();
    else if (a === "--grants") o.grantsPer = num();
    else if (a === "--import-concurrency") o.importConcurrency = num();
    else if (a === "--rounds") o.rounds = num();
    else if (a === "--seconds") o.seconds = num();
    else if (a === "--slices") o.slices = num();
    else if (a === "--settle") o.settle = num();
    else if (a === "--warmup") o.warmup = num();
    else if (a === "--write-seconds") o.writeSeconds = num();
    else if (a === "--no-costs") o.costs = false;
    else if (a === "--state") o.state = argv[++i];
    else if (a !== "--short") throw new Error(`unknown scale option ${a}`);
  }
  if (!(o.small >= 100 && o.n > o.small)) throw new Error("--n must be above --small (at least 100)");
  return o;
}

// ---- the capacity model: pure arithmetic over what was measured (test/node/bench-report.test.ts)

/**
 * Bytes per shard at the target with `shards` shards, the largest shard from the measured skew
 * (largest over mean), and the fewest shards that keep the largest within the goal share of the
 * limit. `emptyShardBytes` is what a shard holds with no row (its schema).
 */
export function capacityModel(m, shards = PRODUCTION_SHARDS, t = TARGET) {
  const dataBytes = t.subscribers * m.bytesPerSubscriber + t.links * m.bytesPerLink + t.grants * m.bytesPerGrant;
  const meanShardBytes = dataBytes / shards + m.emptyShardBytes;
  const largestShardBytes = meanShardBytes * m.skew;
  const goalBytes = t.limitBytes * t.goalShare;
  const shardsForGoal = Math.ceil((dataBytes * m.skew) / (goalBytes - m.emptyShardBytes * m.skew));
  return {
    shards,
    dataBytes,
    meanShardBytes,
    largestShardBytes,
    shareOfLimit: largestShardBytes / t.limitBytes,
    goalBytes,
    meetsGoal: largestShardBytes <= goalBytes,
    shardsForGoal,
  };
}

/** Directory writes per second per shard at the sign-in peak, against one shard's measured rate. */
export function surgeModel(m, shards = PRODUCTION_SHARDS, t = TARGET) {
  const meanWrites = (t.peakSignInsPerSecond * m.writesPerSignIn) / shards;
  const largestWrites = meanWrites * m.skew;
  return {
    shards,
    peakSignInsPerSecond: t.peakSignInsPerSecond,
    writesPerSignIn: m.writesPerSignIn,
    meanWritesPerShard: meanWrites,
    largestWritesPerShard: largestWrites,
    shardWriteRate: m.shardWriteRate,
    headroom: m.shardWriteRate / largestWrites,
    averageSignInsPerSecond: t.signInsPerDay / 86400,
  };
}

// ---- talking to the bench worker

let t0 = Date.now();
/** Progress on stderr, each line with the seconds since the run started. */
const log = (...a) => console.error(`[${String(Math.round((Date.now() - t0) / 1000)).padStart(4)} s]`, ...a);

async function getJson(url, init) {
  const res = await control(url, init);
  const text = await res.text();
  if (res.status < 200 || res.status >= 300)
    throw new Error(`${init?.method ?? "GET"} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const admin = (ctx, method, path, body) =>
  getJson(ctx.url + path, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });

export const scale = (ctx, what, params = {}) =>
  getJson(
    `${ctx.url}/__bench/scale/${what}?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`,
  );

/** The directory's size and rows, summed over the shards, with each shard's. */
async function shardStats(ctx) {
  const per = await scale(ctx, "stats");
  const sum = (f) => per.reduce((a, s) => a + f(s), 0);
  return {
    bytes: sum((s) => s.bytes),
    rows: Object.fromEntries(Object.keys(per[0].rows).map((k) => [k, sum((s) => s.rows[k])])),
    per,
  };
}

/** Largest over mean of `xs`. */
const skewOf = (xs) => Math.max(...xs) / (xs.reduce((a, b) => a + b, 0) / xs.length);

// ---- loading

/**
 * Imports `rows` (a generator) through `POST /admin/directory/import` in files of FILE_ROWS, up to
 * `concurrency` requests at once (the import lease runs them one at a time). Times it.
 */
async function importAll(ctx, rows, count, concurrency) {
  const files = [];
  let made = 0;
  const nextFile = () => {
    if (made >= count) return null;
    const list = [];
    while (list.length < FILE_ROWS && made < count) {
      const r = rows.next();
      if (r.done) throw new Error("the directory generator ran out");
      list.push(r.value);
      made++;
    }
    return list;
  };
  const cpu0 = cpuMicros(ctx.pid);
  const t0 = performance.now();
  let inserted = 0;
  const worker = async () => {
    for (let list = nextFile(); list; list = nextFile()) {
      const body = JSON.stringify(list);
      const s = performance.now();
      const r = await admin(ctx, "POST", "/admin/directory/import", body);
      files.push({ rows: list.length, seconds: (performance.now() - s) / 1000 });
      if (r.inserted !== list.length || r.rejected_count !== 0)
        throw new Error(`import: ${JSON.stringify({ ...r, rejected: r.rejected?.slice(0, 3) })}`);
      inserted += r.inserted;
      if (files.length % 10 === 0) log(`    imported ${inserted.toLocaleString("en-US")} rows`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuMicros(ctx.pid);
  return {
    rows: inserted,
    files: files.length,
    concurrency,
    seconds,
    rowsPerSecond: inserted / seconds,
    cpuUsPerRow: cpu0 === null || cpu === null ? null : (cpu - cpu0) / inserted,
    fileSeconds: stats(files.map((f) => f.seconds)),
  };
}

/** Links, then grants, for every person not yet given theirs; the directory's size before and after each. */
async function loadKinds(ctx, o, before) {
  // shard by shard, 2,000 people a call, two shards at a time: bounded transactions and memory
  const fill = async (kind, per, seed) => {
    let added = 0;
    await parallel(o.shards, 2, async (shard) => {
      for (;;) {
        const r = await scale(ctx, kind, { shard, per, seed, limit: 2000 });
        added += r.added;
        if (r.people === 0) return;
      }
    });
    return added;
  };
  const t0 = performance.now();
  const links = await fill("links", o.linksPer, 7);
  const afterLinks = await shardStats(ctx);
  const t1 = performance.now();
  const grants = await fill("grants", o.grantsPer, 11);
  const afterGrants = await shardStats(ctx);
  const t2 = performance.now();
  return {
    links,
    grants,
    linkSeconds: (t1 - t0) / 1000,
    grantSeconds: (t2 - t1) / 1000,
    bytesPerLink: links ? (afterLinks.bytes - before.bytes) / links : null,
    bytesPerGrant: grants ? (afterGrants.bytes - afterLinks.bytes) / grants : null,
    afterLinks,
    afterGrants,
  };
}

// ---- the directory's requests: identify, a whole sign-in, and the automatic login

const authorizePath = (client) =>
  "/oauth2/authorize?" +
  new URLSearchParams({
    response_type: "code",
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    state: "bench-state-0123456789",
    lang: "ko",
  });

class Jar {
  constructor(initial = {}) {
    this.c = new Map(Object.entries(initial));
  }
  keep(res) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair.indexOf("=");
      this.c.set(pair.slice(0, i), pair.slice(i + 1));
    }
  }
  header() {
    return [...this.c].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

const post = (ctx, action, jar, body) =>
  fetch(new URL(action, ctx.url), {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": FORM, Cookie: jar.header(), Origin: ctx.url, "Accept-Language": "ko-KR" },
    body: body.toString(),
  });

/**
 * One sign-in of `person` to `client` through the pages (authorize → identify → code → consent when
 * asked → 302 with the code). Returns the steps taken, the code and the automatic-login device
 * cookie when `optIn` set one.
 */
export async function signIn(ctx, person, client, { optIn = false } = {}) {
  const jar = new Jar();
  let res = await control(ctx.url + authorizePath(client), {
    redirect: "manual",
    headers: { "Accept-Language": "ko-KR" },
  });
  jar.keep(res);
  const steps = [];
  for (let i = 0; i < 4 && res.status === 200; i++) {
    const form = firstForm(await res.text());
    const body = form.fields;
    if (form.names.has("phoneNo")) {
      body.set("telcoCd", person.telco);
      body.set("name", person.name);
      body.set("phoneNo", person.phone);
      body.set("carrierTerms", "Y"); // the agreements' box (docs/signin.md "The agreements")
      steps.push("identify");
    } else if (form.names.has("otp")) {
      body.set("otp", FIXED_CODE);
      if (optIn) {
        if (!form.names.has("autoLogin")) throw new Error("no automatic-login box on the code page");
        body.set("autoLogin", "Y");
      }
      steps.push("code");
    } else if (form.names.has("agree")) {
      body.set("agree", "Y");
      steps.push("consent");
    } else throw new Error(`unknown step: ${[...form.names].join(",")}`);
    res = await post(ctx, form.action, jar, body);
    jar.keep(res);
  }
  const location = res.headers.get("Location") ?? "";
  await res.arrayBuffer();
  if (res.status !== 302 || !location.startsWith(client.redirectUri + "?"))
    throw new Error(`sign-in ended with ${res.status} after ${steps.join(",")}`);
  const code = new URL(location).searchParams.get("code");
  if (!code) throw new Error(`no code in ${location}`);
  return { requests: steps.length + 1, steps, code, device: jar.c.get("__Host-pl_auto") ?? null };
}

/** An automatic login: the authorize request of a browser holding a device cookie, answered with the code. */
async function autoLogin(ctx, client, device) {
  const res = await control(ctx.url + authorizePath(client), {
    redirect: "manual",
    headers: { "Accept-Language": "ko-KR", Cookie: `__Host-pl_auto=${device}` },
  });
  await res.arrayBuffer();
  if (res.status !== 302 || !(res.headers.get("Location") ?? "").includes("code="))
    throw new Error(`automatic login answered ${res.status}`);
}

/** A sign-in opened at the identify page: its form (hidden fields, action) and cookies, for `person`. */
export async function openIdentify(ctx, client, person) {
  const jar = new Jar();
  const res = await control(ctx.url + authorizePath(client), { headers: { "Accept-Language": "ko-KR" } });
  jar.keep(res);
  const form = firstForm(await res.text());
  if (!form.names.has("phoneNo")) throw new Error("the authorize page is not the identify step");
  const body = form.fields;
  body.set("telcoCd", person.telco);
  body.set("name", person.name);
  body.set("phoneNo", person.phone);
  body.set("carrierTerms", "Y"); // the agreements' box (docs/signin.md "The agreements")
  return { path: new URL(form.action, ctx.url).pathname, cookie: jar.header(), body: body.toString() };
}

/** `f(i)` for i < n, `width` at a time. */
export async function parallel(n, width, f) {
  const out = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await f(i);
      }
    }),
  );
  return out;
}

/**
 * The scenarios measured at each directory size: hello world, identify (the step-1 POST that reads
 * the number's shard; each request spends a sign-in opened beforehand), the whole sign-in to the
 * redirect with the code (a person's first to that app, so consent is asked and the link written),
 * and the token and user/me requests (which read no shard: their cost must not move at all).
 */
function scaleScenarios(state) {
  const hello = SCENARIOS.find((s) => s.id === "hello");
  const token = SCENARIOS.find((s) => s.id === "token");
  const userMe = SCENARIOS.find((s) => s.id === "user-me");
  const identifyPool = new Pool();
  /** @type {import("../../bench/lib/scenarios.mjs").Scenario} */
  const identify = {
    id: "identify",
    title: "identify (step 1: the number's shard read)",
    worker: "app",
    guess: 800,
    pool: identifyPool,
    async prepare(ctx, n) {
      const people = state.identifyPeople;
      const opened = await parallel(n, 16, (i) =>
        openIdentify(ctx, state.demo, people[(state.identifyNext + i) % people.length]),
      );
      state.identifyNext += n;
      identifyPool.refill(opened);
    },
    request: {
      method: "POST",
      path: "/oauth2/authorize",
      headers: { "Content-Type": FORM, "Accept-Language": "ko-KR" },
      setup(r) {
        const e = identifyPool.next();
        if (typeof e === "string") return r; // dry: sent without a sign-in, it fails
        r.path = e.path;
        r.headers = { ...r.headers, Cookie: e.cookie, Origin: state.url };
        r.body = e.body;
        return r;
      },
    },
  };
  /** @type {import("../../bench/lib/scenarios.mjs").Scenario} */
  const signin = {
    id: "signin",
    title: "full sign-in (authorize → identify → code → consent → redirect with the code)",
    worker: "app",
    unit: "sign-ins/s",
    concurrency: 16,
    guess: 150,
    pool: state.pairs,
    async flow(ctx) {
      const pair = state.pairs.next();
      if (typeof pair === "string") throw new Error("no fresh (person, app) pair left");
      const r = await signIn(ctx, pair.person, pair.client);
      if (!r.steps.includes("consent")) throw new Error("consent was not asked: not a first sign-in");
      return r.requests;
    },
  };
  return [hello, identify, signin, token, userMe];
}

const need = (rate, seconds, connections) => Math.ceil(rate * seconds * 2) + connections * 2 + 50;

/** One measured slice of a scenario (its pool prepared first); repeated once with a bigger pool if it ran dry. */
async function measure(s, ctx, seconds, o, settle) {
  for (let attempt = 0; ; attempt++) {
    if (s.prepare && !s.flow) {
      await s.prepare(ctx, need(ctx.rateGuess[s.id] ?? s.guess ?? 3000, seconds, o.connections));
      await quiet(ctx.pid);
    }
    const r = s.flow
      ? await loop({
          flow: () => s.flow(ctx),
          concurrency: s.concurrency ?? o.connections,
          seconds,
          pid: ctx.pid,
          settle,
        })
      : await drive({
          url: urlFor(ctx, s),
          request: s.request,
          connections: o.connections,
          seconds,
          pid: ctx.pid,
          settle,
        });
    r.exhausted = s.flow ? 0 : (s.pool?.exhausted ?? 0);
    // autocannon runs whole seconds: the rate is over the time it ran
    ctx.rateGuess[s.id] = Math.max(ctx.rateGuess[s.id] ?? 0, r.exhausted ? (r.responses / r.duration) * 1.5 : r.rps);
    if (!r.exhausted || attempt >= 1) return r;
  }
}

/** Every scenario at one directory size: warm-up, then rounds of slices interleaved with hello world. */
async function measurePoint(label, scenarios, ctx, o) {
  for (const s of scenarios) {
    if (s.flow) continue;
    await checkOnce(ctx, s);
  }
  for (const s of scenarios) {
    if (o.warmup <= 0) break;
    log(`  ${label}: warm-up ${s.id}`);
    await measure(s, ctx, o.warmup, o, 0);
  }
  const rounds = scenarios.map(() => []);
  for (let r = 0; r < o.rounds; r++) {
    const slices = scenarios.map(() => []);
    for (let k = 0; k < o.slices; k++)
      for (const [i, s] of scenarios.entries())
        slices[i].push(await measure(s, ctx, o.seconds / o.slices, o, o.settle));
    for (const [i, s] of scenarios.entries()) {
      const res = combineSlices(slices[i]);
      rounds[i].push(res);
      log(
        `  ${label} round ${r + 1}/${o.rounds} ${s.id.padEnd(9)} ${Math.round(res.rps)}/s cpu ${res.cpuUs === null ? "-" : Math.round(res.cpuUs)} µs${res.failed ? ` failed ${res.failed}` : ""}`,
      );
    }
  }
  const hello = rounds[0];
  return scenarios.map((s, i) => ({
    id: s.id,
    title: s.title,
    unit: s.unit ?? "req/s",
    rate: stats(rounds[i].map((r) => r.rps)),
    cpuUs: stats(rounds[i].map((r) => r.cpuUs)),
    // hello world's CPU per request ÷ the scenario's, round by round
    cpuRatio: stats(rounds[i].map((r, k) => (hello[k]?.cpuUs && r.cpuUs ? hello[k].cpuUs / r.cpuUs : null))),
    responses: rounds[i].reduce((a, r) => a + r.responses, 0),
    failed: rounds[i].reduce((a, r) => a + r.failed, 0),
    exhausted: rounds[i].reduce((a, r) => a + (r.exhausted ?? 0), 0),
    firstError: rounds[i].find((r) => r.firstError)?.firstError ?? null,
  }));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The shard calls `count` runs of `f` make, per run (the touch of a link runs after the answer: waited for). */
async function callsOf(ctx, count, f) {
  await scale(ctx, "calls", { reset: 1 });
  for (let i = 0; i < count; i++) await f(i);
  await sleep(300);
  const c = await scale(ctx, "calls", { reset: 1 });
  const per = (m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v / count]));
  const total = (m) => Object.values(m).reduce((a, b) => a + b, 0) / count;
  return { reads: per(c.reads), writes: per(c.writes), readCalls: total(c.reads), writeCalls: total(c.writes) };
}

/** Shard calls per request of each kind, counted in the shard objects over `o.counted` requests each. */
async function countCalls(ctx, state, o) {
  const k = o.counted;
  // automatic login is offered to SKT and KT subscribers only (docs/signin.md)
  const people = state.countPeople.filter((p) => p.telco !== "L");
  if (people.length < 3 * k) throw new Error("not enough people to count calls");
  const demo = state.demo;
  const out = {};
  out.identify = await callsOf(ctx, k, async (i) => {
    const e = await openIdentify(ctx, demo, people[i]);
    const res = await control(ctx.url + e.path, {
      method: "POST",
      headers: { "Content-Type": FORM, Cookie: e.cookie, Origin: ctx.url, "Accept-Language": "ko-KR" },
      body: e.body,
    });
    if (!(await res.text()).includes('name="otp"')) throw new Error("identify did not reach the code step");
  });
  out.signin = await callsOf(ctx, k, (i) => signIn(ctx, people[k + i], demo));
  const devices = [];
  out.signinOptIn = await callsOf(ctx, k, async (i) => {
    const r = await signIn(ctx, people[2 * k + i], demo, { optIn: true });
    if (!r.device) throw new Error("no device cookie after the opt-in");
    devices.push(r.device);
  });
  out.returning = await callsOf(ctx, k, async (i) => {
    const r = await signIn(ctx, people[k + i], demo);
    if (r.steps.includes("consent")) throw new Error("consent asked again");
  });
  out.autoLogin = await callsOf(ctx, k, (i) => autoLogin(ctx, demo, devices[i]));
  return out;
}

/** One shard's sustained writes: `k` writes a request through the RPC, and the same writes inside the object. */
async function writeRate(ctx, shard, o) {
  const out = {};
  const k = 8;
  for (const kind of ["link", "grant"]) {
    await scale(ctx, "write", { shard, k, kind }); // its people read once
    const r = await drive({
      url: ctx.url,
      request: { method: "GET", path: `/__bench/scale/write?shard=${shard}&k=${k}&kind=${kind}` },
      connections: 16,
      seconds: o.writeSeconds,
      pid: ctx.pid,
      settle: o.settle,
    });
    const c0 = cpuMicros(ctx.pid);
    const t0 = performance.now();
    const done = await scale(ctx, "inside", { shard, kind, n: o.insideWrites });
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuMicros(ctx.pid);
    out[kind] = {
      rpc: {
        writesPerSecond: r.rps * k,
        cpuUsPerWrite: r.cpuUs === null ? null : r.cpuUs / k,
        cpuLoad: r.cpuLoad,
        failed: r.failed,
        p99Ms: r.p99,
      },
      inside: {
        writes: done,
        writesPerSecond: done / wall,
        cpuUsPerWrite: c0 === null || cpu === null ? null : (cpu - c0) / done,
      },
    };
    log(
      `  shard ${shard} ${kind} writes: ${Math.round(r.rps * k)}/s through the RPC (${out[kind].rpc.cpuUsPerWrite?.toFixed(0)} µs CPU each), inside the object ${out[kind].inside.cpuUsPerWrite?.toFixed(0)} µs CPU each`,
    );
  }
  return out;
}

/** D1's size as it reports it, and its rows that grow. */
const d1Stats = (ctx) => scale(ctx, "d1");

// ---- the run

export async function runScale(root, o) {
  if (o.state && existsSync(join(o.state, "d1"))) throw new Error(`--state ${o.state}: it already holds a directory`);
  const started = Date.now();
  t0 = started;
  const m = machine(root, ["workers", "packages", "bench", "capacity", "migrations", "wrangler.toml"]);
  const resultsDir = join(root, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  log(
    `scale bench (${o.mode}): ${o.n.toLocaleString("en-US")} subscribers (costs also at ${o.small.toLocaleString("en-US")}), ${o.shards} directory shards, ${o.linksPer} links and ${o.grantsPer} grants a subscriber`,
  );
  const srv = await startServers(
    root,
    join(resultsDir, "build"),
    [
      {
        name: "app",
        vars: {
          DIRECTORY_SHARDS: String(o.shards),
          // the identify scenario opens many sign-ins of each armed number
          SIGNIN_RESEND_COOLDOWN_SECONDS: "0",
          SIGNIN_SENDS_PER_WINDOW: "1000",
        },
      },
    ],
    { peers: false, state: o.state, entry: ENTRY },
  );
  const ctx = { url: srv.urls.app, helloUrl: srv.urls.hello, pid: srv.pid, urls: srv.urls, rateGuess: {} };
  const failures = [];
  try {
    await control(ctx.url + "/healthz");
    const empty = await shardStats(ctx);
    const emptyShardBytes = empty.bytes / o.shards;
    // the people the token and user/me scenarios spend codes of (bench/workers/bench-entry.ts)
    const subjects = o.costs ? (await (await control(`${ctx.url}/__bench/mint?kind=subjects`)).json()).people : 0;
    const rows = directoryRows(o.n);
    const demo = {
      clientId: "demo-client",
      secret: "demoSecret0123456789abcdefABCDEF",
      redirectUri: "https://demo.example/callback",
    };
    // apps a person signs in to for the first time: the dev seed's demo client and seven more
    const clients = [demo];
    for (let i = 1; i < 8; i++) {
      const c = await admin(ctx, "POST", "/admin/clients", {
        name: `Bench App ${i}`,
        redirect_uris: [BENCH_REDIRECT],
        items: ["name", "phoneNo", "ci", "birthday", "gender"],
        auto_login: true,
      });
      clients.push({ clientId: c.client_id, secret: c.client_secret, redirectUri: BENCH_REDIRECT });
    }
    const state = { url: ctx.url, demo, identifyPeople: [], identifyNext: 0, pairs: new Pool(), countPeople: [] };
    const scenarios = scaleScenarios(state);

    /** Arms people for a point's requests: `ids` for identify (cycled), the rest each a first sign-in per app. */
    const arm = async (identifyCount, signinCount) => {
      // Counting takes 3 × `counted` people who can be offered automatic login (SKT and KT, not
      // LG U+), picked from all those armed: the last ones of the list all come from the last
      // shards, where LG U+ can happen to be more than a third.
      const counting = 3 * o.counted;
      const got = await scale(ctx, "arm", { n: identifyCount + signinCount });
      const offered = got.filter((p) => p.telco !== "L");
      const picked = offered.slice(Math.max(0, offered.length - counting));
      state.countPeople = picked;
      const counted = new Set(picked);
      const rest = got.filter((p) => !counted.has(p));
      state.identifyPeople = rest.slice(0, Math.min(identifyCount, Math.floor(rest.length * 0.4)));
      const signers = rest.slice(state.identifyPeople.length);
      state.pairs.refill(clients.flatMap((client) => signers.map((person) => ({ person, client }))));
      state.identifyNext = 0;
    };

    const points = [];
    const pointAt = async (label, people) => {
      if (!o.costs) return;
      const d0 = await d1Stats(ctx);
      const results = await measurePoint(label, scenarios, ctx, o);
      const d1 = await d1Stats(ctx);
      const calls = await countCalls(ctx, state, o);
      points.push({ label, subscribers: people, scenarios: results, calls, d1: { before: d0, after: d1 } });
    };

    // 1. the small directory: its import, links and grants, then the requests' costs
    log(`  import ${o.small.toLocaleString("en-US")} rows`);
    const smallImport = await importAll(ctx, rows, o.small, 1);
    const small = await shardStats(ctx);
    const smallKinds = await loadKinds(ctx, o, small);
    if (o.costs) await arm(400, o.small);
    await pointAt("small", small.rows.people);

    // 2. the rest, through the import at `importConcurrency` requests at a time
    const before = await shardStats(ctx);
    log(`  import ${(o.n - o.small).toLocaleString("en-US")} rows, ${o.importConcurrency} requests at a time`);
    const bulkImport = await importAll(ctx, rows, o.n - o.small, o.importConcurrency);
    log(`    ${Math.round(bulkImport.rowsPerSecond).toLocaleString("en-US")} rows/s`);
    const afterPeople = await shardStats(ctx);
    log(`  links (${o.linksPer} a subscriber) and grants (${o.grantsPer})`);
    const kinds = await loadKinds(ctx, o, afterPeople);
    const loaded = kinds.afterGrants;
    const newPeople = afterPeople.rows.people - before.rows.people;
    const bytesPerSubscriber = (afterPeople.bytes - before.bytes) / newPeople;
    const perShard = loaded.per.map((s, i) => ({ shard: i, bytes: s.bytes, ...s.rows }));
    const skew = {
      bytes: skewOf(perShard.map((s) => s.bytes)),
      people: skewOf(perShard.map((s) => s.people)),
      numbers: skewOf(perShard.map((s) => s.numbers)),
      links: skewOf(perShard.map((s) => s.links)),
      grants: skewOf(perShard.map((s) => s.grants)),
    };
    const largestShard = perShard.reduce((a, s) => (s.bytes > a.bytes ? s : a));
    log(
      `  stored: ${bytesPerSubscriber.toFixed(0)} bytes a subscriber, ${kinds.bytesPerLink?.toFixed(0)} a link, ${kinds.bytesPerGrant?.toFixed(0)} a grant; largest shard ${skew.bytes.toFixed(3)}× the mean`,
    );

    if (o.costs) await arm(20_000, 10_000);
    await pointAt("full", loaded.rows.people);

    log(`  one shard's writes (shard ${largestShard.shard}, the largest)`);
    const writes = await writeRate(ctx, largestShard.shard, o);
    const d1 = await d1Stats(ctx);

    // ---- the model
    const measured = {
      bytesPerSubscriber,
      bytesPerLink: kinds.bytesPerLink,
      bytesPerGrant: kinds.bytesPerGrant,
      emptyShardBytes,
      skew: skew.bytes,
    };
    const capacity = capacityModel(measured, PRODUCTION_SHARDS);
    const full = points.find((p) => p.label === "full");
    const writesPerSignIn = full ? Math.max(full.calls.signin.writeCalls, full.calls.signinOptIn.writeCalls) : 3;
    const surge = surgeModel(
      { writesPerSignIn, shardWriteRate: writes.link.rpc.writesPerSecond, skew: skew.people },
      capacity.meetsGoal ? PRODUCTION_SHARDS : capacity.shardsForGoal,
    );
    const costs = comparePoints(points);

    // ---- checks: a scale bench that measured nothing, or wrong things, fails
    const want = o.n + 5 + subjects; // the dev seed's five people and the hot routes' people
    if (loaded.rows.people !== want) failures.push(`people: ${loaded.rows.people} stored, ${want} expected`);
    if (loaded.rows.numbers !== want) failures.push(`numbers: ${loaded.rows.numbers} stored, ${want} expected`);
    if (loaded.rows.jobs !== 0) failures.push(`${loaded.rows.jobs} cross-shard jobs left after the imports`);
    if (loaded.rows.by_ci < o.n) failures.push(`ci index: ${loaded.rows.by_ci} entries for ${o.n} imported people`);
    for (const p of points)
      for (const s of p.scenarios)
        if (!s.rate?.median || s.failed - s.exhausted > s.responses * 0.01)
          failures.push(
            `${p.label}/${s.id}: ${s.failed} of ${s.responses} failed${s.firstError ? ` (${s.firstError})` : ""}`,
          );
    for (const kind of ["link", "grant"])
      if (!writes[kind].rpc.writesPerSecond || writes[kind].rpc.failed) failures.push(`${kind} writes failed`);

    const result = {
      version: 1,
      date: new Date().toISOString(),
      mode: o.mode,
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine: { ...m, loadEnd: loadavg()[0].toFixed(2) },
      settings: o,
      target: TARGET,
      directory: {
        shards: o.shards,
        subscribers: loaded.rows.people,
        rows: loaded.rows,
        bytes: loaded.bytes,
        emptyShardBytes,
        bytesPerSubscriber,
        bytesPerLink: kinds.bytesPerLink,
        bytesPerGrant: kinds.bytesPerGrant,
        small: {
          subscribers: small.rows.people,
          bytes: small.bytes,
          bytesPerLink: smallKinds.bytesPerLink,
          bytesPerGrant: smallKinds.bytesPerGrant,
        },
        loadSeconds: { links: kinds.linkSeconds, grants: kinds.grantSeconds },
        skew,
        largestShard,
        perShard,
      },
      import: { small: smallImport, bulk: bulkImport },
      points,
      costs,
      writes,
      d1,
      capacity,
      capacityAtShards: [16, 32, 64, 128, 256].map((n) => capacityModel(measured, n)),
      surge,
      failures,
    };
    if (o.state) writeJson(join(o.state, "scale.json"), { shards: o.shards, subscribers: loaded.rows.people });
    const stamp = result.date.replace(/[:.]/g, "-");
    const name = o.mode === "short" ? "scale-short" : `scale-${stamp}`;
    writeJson(join(resultsDir, `${name}.json`), result);
    console.log("\n" + formatScale(result));
    log(`\nfinished in ${result.durationSeconds} s; wrote bench/results/${name}.json`);
    for (const f of failures) log(`FAILED: ${f}`);
    return failures.length ? 1 : 0;
  } catch (err) {
    if (srv.stderr.length) log(`workerd output (last lines):\n${srv.stderr.join("").slice(-4000)}`);
    throw err;
  } finally {
    await srv.dispose();
  }
}

/** Each scenario's cost at the full directory over its cost at the small one: CPU per request, and normalized by hello world. */
export function comparePoints(points) {
  const small = points.find((p) => p.label === "small");
  const full = points.find((p) => p.label === "full");
  if (!small || !full) return [];
  return full.scenarios
    .filter((s) => s.id !== "hello")
    .map((s) => {
      const a = small.scenarios.find((x) => x.id === s.id);
      const cpuUs = a?.cpuUs?.median && s.cpuUs?.median ? s.cpuUs.median / a.cpuUs.median : null;
      // a hello-world ratio that fell is a cost that grew: small's ratio over full's
      const normalized = a?.cpuRatio?.median && s.cpuRatio?.median ? a.cpuRatio.median / s.cpuRatio.median : null;
      return {
        id: s.id,
        title: s.title,
        smallCpuUs: a?.cpuUs?.median ?? null,
        fullCpuUs: s.cpuUs?.median ?? null,
        smallCpuRatio: a?.cpuRatio?.median ?? null,
        fullCpuRatio: s.cpuRatio?.median ?? null,
        growth: normalized,
        growthCpuUs: cpuUs,
        flat: normalized !== null && normalized <= 1.1,
      };
    });
}

const int = (n) => (n === null || n === undefined ? "-" : Math.round(n).toLocaleString("en-US"));
const gb = (b) => `${(b / 1e9).toFixed(2)} GB`;
const x = (n, d = 2) => (n === null || n === undefined ? "-" : `${n.toFixed(d)}×`);

/** The terminal summary of a scale run. */
export function formatScale(r) {
  const d = r.directory;
  const out = [];
  out.push(
    `Scale bench (${r.mode}), ${r.date} at ${r.machine.commit}: ${int(d.subscribers)} subscribers over ${d.shards} shards`,
  );
  out.push("");
  out.push("Stored (SQLite databaseSize deltas, whole pages):");
  out.push(`  ${d.bytesPerSubscriber.toFixed(0)} bytes a subscriber (person, number entry, ci entry)`);
  out.push(`  ${d.bytesPerLink?.toFixed(0)} bytes a link, ${d.bytesPerGrant?.toFixed(0)} bytes a grant`);
  out.push(`  ${int(d.rows.people)} people, ${int(d.rows.links)} links, ${int(d.rows.grants)} grants: ${gb(d.bytes)}`);
  out.push(
    `  largest shard over the mean: bytes ${x(d.skew.bytes, 3)}, people ${x(d.skew.people, 3)}, links ${x(d.skew.links, 3)}, grants ${x(d.skew.grants, 3)} (goal ≤ 1.5×)`,
  );
  const b = r.import.bulk;
  out.push("");
  out.push(
    `Import: ${int(b.rows)} rows in ${b.seconds.toFixed(1)} s = ${int(b.rowsPerSecond)} rows/s (${b.files} requests of ≤ 10,000, ${b.concurrency} at a time; ${b.cpuUsPerRow?.toFixed(0)} µs workerd CPU a row; goal 1,000,000 in ≤ 60 s)`,
  );
  if (r.costs.length) {
    out.push("");
    out.push("Cost at the small and the full directory (CPU per request; ratio = hello world's CPU ÷ the scenario's):");
    for (const c of r.costs)
      out.push(
        `  ${c.id.padEnd(9)} ${int(c.smallCpuUs).padStart(7)} µs (${x(c.smallCpuRatio, 3)})  →  ${int(c.fullCpuUs).padStart(7)} µs (${x(c.fullCpuRatio, 3)}): ${x(c.growth, 3)} ${c.flat ? "flat" : "NOT within 10%"}`,
      );
    const full = r.points.find((p) => p.label === "full");
    if (full) {
      out.push("Shard calls per request (full directory):");
      for (const [k, v] of Object.entries(full.calls))
        out.push(
          `  ${k.padEnd(11)} reads ${v.readCalls.toFixed(2)} ${JSON.stringify(v.reads)}  writes ${v.writeCalls.toFixed(2)} ${JSON.stringify(v.writes)}`,
        );
    }
  }
  out.push("");
  for (const kind of ["link", "grant"]) {
    const w = r.writes[kind];
    out.push(
      `One shard's ${kind} writes: ${int(w.rpc.writesPerSecond)}/s through the RPC (${w.rpc.cpuUsPerWrite?.toFixed(0)} µs CPU each, worker and object in one process); inside the object ${w.inside.cpuUsPerWrite?.toFixed(0)} µs CPU each (${int(1e6 / (w.inside.cpuUsPerWrite ?? Infinity))}/s of one core)`,
    );
  }
  const c = r.capacity;
  out.push("");
  out.push(
    `Projection to ${int(r.target.subscribers)} subscribers, ${int(r.target.links)} links, ${int(r.target.grants)} grants: ${gb(c.dataBytes)}`,
  );
  for (const m of r.capacityAtShards)
    out.push(
      `  ${String(m.shards).padStart(4)} shards: mean ${gb(m.meanShardBytes)}, largest ${gb(m.largestShardBytes)} = ${(m.shareOfLimit * 100).toFixed(1)}% of 10 GB ${m.meetsGoal ? "(within 25%)" : "(ABOVE 25%)"}`,
    );
  out.push(`  fewest shards with the largest within 25%: ${c.shardsForGoal}`);
  const s = r.surge;
  out.push(
    `Surge: ${int(s.peakSignInsPerSecond)} sign-ins/s × ${s.writesPerSignIn.toFixed(2)} shard writes over ${s.shards} shards = ${int(s.largestWritesPerShard)} writes/s on the largest; one shard measured ${int(s.shardWriteRate)}/s: ${x(s.headroom, 1)} headroom`,
  );
  return out.join("\n");
}
