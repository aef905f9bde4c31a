#!/usr/bin/env node
// The reconciliation run (docs/capacity.md "Reconciliation under a kill"): the whole service as
// `npm start` serves it (scripts/start.mjs: wrangler dev, local persisted state) in a fresh state
// directory, N whole sign-ins driven over loopback, and half way through the server's process group
// killed with SIGKILL while requests are in flight, then started again on the same state. Once the
// audit outboxes are drained, every hour of the run is compared type by type: the audit trail's
// count (GET /admin/audit/export; a `code.redeemed` event counts its `count`) against the roll-up
// (GET /admin/metrics, step 1h), which must be equal (docs/operations.md "Metrics": the invariant).
// The trail must also hold what the driver was answered: a `signin.success` for each code
// received, a `code.redeemed` count for each token.
//
//   node capacity/reconcile.mjs              10,000 sign-ins; bench/results/reconcile-<date>.json
//   node capacity/reconcile.mjs --short      120 sign-ins (CI); bench/results/reconcile-short.json
//   options: --signins N --concurrency C (16) --subscribers S (300) --quiet S (seconds the trail and
//            the roll-ups stay unchanged before the outboxes count as drained; 10)
//            --kills K   K kills evenly spread instead of one half way (more chances to land on a flush)
// Exits 1 on any mismatch, a bound not met, or a sign-in that failed other than by the kill (or
// wrangler dev's proxy: DEV_PROXY_503).

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { machine } from "../bench/lib/report.mjs";
import { AUTHORIZE_PATH, DEMO, control, firstForm } from "../bench/lib/scenarios.mjs";
import { writeJson } from "../bench/lib/server.mjs";
import { portInUse } from "../scripts/lib/port.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const HOUR_MS = 3_600_000;
const FLUSH_SECONDS = 1;
/** What makes 10,000 sign-ins from one address to a few hundred numbers within minutes feasible. */
const VARS = {
  AUDIT_FLUSH_SECONDS: String(FLUSH_SECONDS),
  SIGNIN_RESEND_COOLDOWN_SECONDS: "0",
  SIGNIN_SENDS_PER_WINDOW: "1000",
  SIGNIN_IP_LIMIT: "1000000",
  // one address, not an attack: its wrong, replayed and killed sign-ins leave codes untyped, which
  // the SMS-abuse guard would judge (and, since blocks are judged service-wide, for every app)
  GUARD_SAFE_BLOCKS: "127.0.0.0/8,::1/128",
};
const FORM = "application/x-www-form-urlencoded";
const BASIC = "Basic " + Buffer.from(`${DEMO.clientId}:${DEMO.secret}`).toString("base64");
const REQUEST_MS = 60_000;
/** Every WRONG_EVERY-th sign-in enters a wrong code first; every REPLAY_EVERY-th redeems its code twice. */
const WRONG_EVERY = 10;
const REPLAY_EVERY = 25;
/**
 * What wrangler dev's proxy (its ProxyWorker, in front of the worker) answers a POST whose hop to
 * the worker broke: a 503 of its own, not the service's answer (the worker may have served the
 * request, or never seen it). 0 to 7 token exchanges in 10,000 sign-ins here; counted apart from
 * the service's failures.
 */
const DEV_PROXY_503 = "Your worker restarted mid-request";

const log = (...a) => console.error(...a);

function parseArgs(argv) {
  const short = argv.includes("--short");
  const o = {
    mode: short ? "short" : "full",
    signins: short ? 120 : 10_000,
    concurrency: 16,
    subscribers: 300,
    quiet: 10,
    kills: 1,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => Number(argv[++i]);
    if (a === "--signins") o.signins = num();
    else if (a === "--concurrency") o.concurrency = num();
    else if (a === "--subscribers") o.subscribers = num();
    else if (a === "--quiet") o.quiet = num();
    else if (a === "--kills") o.kills = num();
    else if (a !== "--short") throw new Error(`unknown option ${a}`);
  }
  return o;
}

/** The admin token `npm start` gives the service: .dev.vars, else the example it is copied from. */
function adminToken() {
  const file = [".dev.vars", ".dev.vars.example"].map((f) => join(root, f)).find((p) => existsSync(p));
  const m = file && /^ADMIN_TOKEN\s*=\s*"?([^"\r\n]*)"?\s*$/m.exec(readFileSync(file, "utf8"));
  if (!m) throw new Error("no ADMIN_TOKEN in .dev.vars or .dev.vars.example");
  return m[1];
}

/** A port the system just handed out and that is free wherever `npm start` binds. */
async function freePort() {
  for (let tries = 0; tries < 10; tries++) {
    const s = createServer();
    const port = await new Promise((r) => s.listen(0, "127.0.0.1", () => r(/** @type {any} */ (s.address()).port)));
    await new Promise((r) => s.close(r));
    if (!(await portInUse(port))) return port;
  }
  throw new Error("no free port found in 10 tries");
}

/** The process group of the service running now (0: none): killed when this script ends, however it does. */
let serviceGroup = 0;
function stopService() {
  try {
    if (serviceGroup) process.kill(-serviceGroup, "SIGKILL");
  } catch {
    /* already gone */
  }
  serviceGroup = 0;
}
process.once("exit", stopService);
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.once(signal, () => process.exit(130));

/**
 * `npm start` (scripts/start.mjs) on `port` and the state directory `state`, in a process group of
 * its own (so one signal reaches wrangler and workerd too); resolves once /healthz answers.
 */
async function startService(state, port) {
  const vars = Object.entries(VARS).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const child = spawn(process.execPath, [join(root, "scripts", "start.mjs"), ...vars], {
    cwd: root,
    env: { ...process.env, PORT: String(port), PERSIST_DIR: state },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  serviceGroup = /** @type {number} */ (child.pid);
  let out = "";
  const keep = (/** @type {Buffer} */ d) => (out = (out + d.toString()).slice(-8000));
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let exit = null;
  child.once("exit", (code, signal) => (exit = signal ?? `code ${code}`));
  const base = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    const up = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (exit !== null) throw new Error(`npm start exited (${exit}) before /healthz answered:\n${out}`);
    if (Date.now() - started > 120_000) throw new Error(`/healthz did not answer within 120 s:\n${out}`);
    await sleep(250);
  }
  return { base, port, seconds: (Date.now() - started) / 1000, child };
}

/**
 * Kills the service's whole process group at once; resolves when `npm start` has exited and its
 * port is free (workerd may let go of it a moment after its parent is gone).
 */
async function killService(svc) {
  const gone = new Promise((r) =>
    svc.child.exitCode !== null || svc.child.signalCode ? r(null) : svc.child.once("exit", r),
  );
  stopService();
  await gone;
  for (let tries = 0; await portInUse(svc.port); tries++) {
    if (tries >= 100) throw new Error(`port ${svc.port} still taken 10 s after the kill`);
    await sleep(100);
  }
}

/** Imports `n` subscribers (carrier S) through the admin API; their numbers, 0107000xxxx. */
async function importSubscribers(base, token, n) {
  const rows = Array.from({ length: n }, (_, i) => {
    const ci = Buffer.alloc(64, 7);
    ci.writeUInt32BE(i + 1, 0);
    return {
      telcoCd: "S",
      phoneNo: `0107${String(i).padStart(7, "0")}`,
      name: "대조사용자",
      gender: i % 2 ? "F" : "M",
      birth: "1990-01-01",
      foreign: "L",
      ci: ci.toString("base64"),
    };
  });
  const res = await admin(base, token, "/admin/directory/import", { method: "POST", body: JSON.stringify(rows) });
  const report = await res.json();
  if (report.inserted + report.updated !== n) throw new Error(`import: ${JSON.stringify(report).slice(0, 300)}`);
  return rows.map((r) => ({ telco: r.telcoCd, name: r.name, phone: r.phoneNo }));
}

/** An admin API request (the harness's own: retried on a closed keep-alive connection); throws unless 2xx. */
async function admin(base, token, path, init = {}) {
  const res = await control(base + path, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
  });
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return res;
}

/** The newest code the dev SMS outbox holds for `phone` (no other sign-in uses the number meanwhile). */
async function outboxCode(base, phone) {
  const res = await fetch(`${base}/dev/outbox`, {
    headers: { Accept: "application/json" },
    signal: AbortSignal.timeout(REQUEST_MS),
  });
  const { messages } = await res.json();
  const m = messages.find((x) => x.to === phone);
  if (!m) throw new Error(`no SMS to ${phone} in the dev outbox`);
  return /\d{6}/.exec(m.text)?.[0] ?? "";
}

/**
 * One whole sign-in of `who` through the pages' form contract (docs/signin.md), a wrong code first
 * when `wrongFirst`, then the token exchange, and the same code once more when `replay` (refused:
 * `code.refused`). What the driver was answered is counted in `seen` as it comes: a code (its
 * `signin.success` is recorded with it), a token (a redemption).
 */
async function signIn(base, who, { wrongFirst, replay }, seen) {
  const jar = new Map();
  const send = async (url, init = {}) => {
    const res = await fetch(url, {
      ...init,
      redirect: "manual",
      signal: AbortSignal.timeout(REQUEST_MS),
      headers: {
        ...init.headers,
        Cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "),
        "Accept-Language": "ko-KR",
      },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      jar.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
    }
    return res;
  };
  let wrong = wrongFirst;
  let res = await send(base + AUTHORIZE_PATH);
  for (let step = 0; step < 5 && res.status === 200; step++) {
    const form = firstForm(await res.text());
    const body = form.fields;
    if (form.names.has("phoneNo")) {
      body.set("telcoCd", who.telco);
      body.set("name", who.name);
      body.set("phoneNo", who.phone);
      body.set("carrierTerms", "Y"); // the agreements' box (docs/signin.md "The agreements")
    } else if (form.names.has("otp")) {
      const code = await outboxCode(base, who.phone);
      body.set("otp", wrong ? String((Number(code) + 1) % 1e6).padStart(6, "0") : code);
      wrong = false;
    } else if (form.names.has("agree")) body.set("agree", "Y");
    else throw new Error(`unknown step: ${[...form.names].join(",")}`);
    res = await send(new URL(form.action, base), {
      method: "POST",
      headers: { "Content-Type": FORM },
      body: body.toString(),
    });
  }
  if (res.status !== 302) throw new Error(`sign-in ended with ${res.status}: ${(await res.text()).slice(0, 200)}`);
  const code = new URL(res.headers.get("Location") ?? "").searchParams.get("code");
  if (!code) throw new Error(`no code in ${res.headers.get("Location")}`);
  seen.codes++;
  const exchange = () =>
    fetch(`${base}/oauth2/token`, {
      method: "POST",
      headers: { Authorization: BASIC, "Content-Type": FORM },
      body: `grant_type=authorization_code&code=${encodeURIComponent(code)}`,
      signal: AbortSignal.timeout(REQUEST_MS),
    });
  res = await exchange();
  if (res.status !== 200) throw new Error(`token: ${res.status} ${(await res.text()).slice(0, 200)}`);
  await res.arrayBuffer();
  seen.tokens++;
  if (replay) {
    res = await exchange();
    // refused as RFC 6749 answers (400 invalid_grant) or as the reference does (500, "Invalid
    // authorization code": packages/kit/src/core/errors.ts `invalidCode`)
    const text = await res.text();
    if (res.status !== 400 && !(res.status === 500 && text.includes("Invalid authorization code")))
      throw new Error(`a code redeemed twice answered ${res.status}: ${text.slice(0, 200)}`);
  }
}

/**
 * Drives `o.signins` sign-ins, `o.concurrency` at a time, each with a number no other one in
 * flight uses. When the sign-in half way is due (or each of `o.kills` evenly spread), `kill()` runs
 * while the others are in flight, and none starts until it resolved (the service answers again). A
 * sign-in in flight at a kill that fails is the kill's, one cut by wrangler dev's proxy is counted
 * as such (DEV_PROXY_503), any other failure apart.
 */
async function drive(base, people, o, kill) {
  const free = [...people];
  const tally = {
    started: 0,
    completed: 0,
    killed: 0,
    devProxy: 0,
    failed: 0,
    /** @type {{ at: string; error: string }[]} the first ten failures other than the kill's */
    errors: [],
    codes: 0,
    tokens: 0,
    wrongCodes: 0,
    replays: 0,
  };
  let kills = 0;
  /** @type {Promise<void> | null} */
  let down = null;
  const killAt = new Set(Array.from({ length: o.kills }, (_, k) => Math.floor((o.signins * (k + 1)) / (o.kills + 1))));
  async function worker() {
    for (;;) {
      if (down) await down;
      if (tally.started >= o.signins) return;
      const i = tally.started++;
      if (killAt.has(i)) {
        down = kill(tally).then(() => {
          kills++;
          down = null;
        });
        await down;
      }
      if (i % 1000 === 0 && i > 0) log(`  ${i} sign-ins started, ${tally.completed} completed`);
      const before = kills;
      const who = free.shift();
      if (!who) throw new Error("more sign-ins in flight than subscribers");
      const opts = { wrongFirst: i % WRONG_EVERY === 3, replay: i % REPLAY_EVERY === 7 };
      try {
        await signIn(base, who, opts, tally);
        tally.completed++;
        if (opts.wrongFirst) tally.wrongCodes++;
        if (opts.replay) tally.replays++;
      } catch (err) {
        const message = String(/** @type {Error} */ (err)?.message ?? err);
        if (before !== kills || down) tally.killed++;
        else if (message.includes(DEV_PROXY_503)) tally.devProxy++;
        else {
          tally.failed++;
          if (tally.errors.length < 10)
            tally.errors.push({
              at: new Date().toISOString(),
              error: message.slice(0, 300),
            });
        }
      } finally {
        free.push(who);
      }
    }
  }
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  return tally;
}

/** The trail's count of each type in each hour of [from, to) (a `code.redeemed` event: its `count`). */
async function trailCounts(base, token, from, to) {
  /** @type {Map<number, Map<string, number>>} */
  const out = new Map();
  for (let h = from; h < to; h += HOUR_MS) {
    const q = new URLSearchParams({ from: new Date(h).toISOString(), to: new Date(h + HOUR_MS).toISOString() });
    const text = await (await admin(base, token, `/admin/audit/export?${q}`)).text();
    const counts = new Map();
    for (const line of text.split("\n").filter(Boolean)) {
      const e = JSON.parse(line);
      const n = e.type === "code.redeemed" ? e.detail.count : 1;
      counts.set(e.type, (counts.get(e.type) ?? 0) + n);
    }
    out.set(h, counts);
  }
  return out;
}

/**
 * The audited event types (workers/provider/store/one-time/audit.ts `AuditType`): the series named
 * by one counts that type's events. The metrics store holds other series (finer ones, by reason or
 * gateway; approximate ones no event records), which the invariant does not cover.
 */
function auditTypes() {
  const src = readFileSync(join(root, "workers", "provider", "store", "one-time", "audit.ts"), "utf8");
  const union = /export type AuditType =([^;]+);/.exec(src)?.[1] ?? "";
  const types = new Set([...union.matchAll(/"([a-z._]+)"/g)].map((m) => m[1]));
  if (types.size === 0) throw new Error("no AuditType in workers/provider/store/one-time/audit.ts");
  return types;
}

/** The roll-up of each type in each hour of [from, to), all apps (GET /admin/metrics, step 1h). */
async function rolledUp(base, token, from, to, types) {
  const q = new URLSearchParams({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), step: "1h" });
  const { series } = await (await admin(base, token, `/admin/metrics?${q}`)).json();
  /** @type {Map<number, Map<string, number>>} */
  const out = new Map();
  for (let h = from; h < to; h += HOUR_MS) out.set(h, new Map());
  for (const [name, points] of Object.entries(series)) {
    if (!types.has(name)) continue;
    for (const [t, n] of points) out.get(Date.parse(t))?.set(name, n);
  }
  return out;
}

const total = (byHour) => [...byHour.values()].reduce((a, m) => a + [...m.values()].reduce((x, y) => x + y, 0), 0);

/**
 * Waits until neither the trail nor the roll-ups changed for `quiet` seconds (polled each second):
 * every outbox flushed, and its retries over. Returns both, read last.
 */
async function drained(base, token, from, quiet, types) {
  let last = "";
  let since = Date.now();
  for (;;) {
    const to = Date.now() - (Date.now() % HOUR_MS) + HOUR_MS;
    const trail = await trailCounts(base, token, from, to);
    // a type the trail holds is compared even if the list above lacks it
    const named = new Set([...types, ...[...trail.values()].flatMap((c) => [...c.keys()])]);
    const rolled = await rolledUp(base, token, from, to, named);
    const now = `${to}:${total(trail)}:${total(rolled)}`;
    if (now !== last) [last, since] = [now, Date.now()];
    else if (Date.now() - since >= quiet * 1000) return { trail, rolled, to };
    await sleep(1000);
  }
}

/** Per hour, per type: the trail's count, the roll-up's, and whether they are equal. */
function compare(trail, rolled, closedBefore) {
  return [...trail.keys()].map((hour) => {
    const t = trail.get(hour) ?? new Map();
    const r = rolled.get(hour) ?? new Map();
    const types = [...new Set([...t.keys(), ...r.keys()])].sort();
    return {
      hour: new Date(hour).toISOString(),
      closed: hour + HOUR_MS <= closedBefore,
      rows: types.map((type) => ({
        type,
        trail: t.get(type) ?? 0,
        rollup: r.get(type) ?? 0,
        equal: (t.get(type) ?? 0) === (r.get(type) ?? 0),
      })),
    };
  });
}

function printHour(h) {
  console.log(
    `\n${h.hour.slice(0, 13)}:00Z, ${h.closed ? "closed" : "still open, compared once the outboxes were drained"}`,
  );
  console.log(`${"type".padEnd(22)} ${"trail".padStart(8)} ${"roll-up".padStart(8)}  equal?`);
  for (const r of h.rows)
    console.log(
      `${r.type.padEnd(22)} ${String(r.trail).padStart(8)} ${String(r.rollup).padStart(8)}  ${r.equal ? "yes" : "NO"}`,
    );
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const started = Date.now();
  // the service as `npm start` serves it
  const m = machine(root, ["workers", "packages", "migrations", "scripts", "wrangler.toml"]);
  const token = adminToken();
  const state = mkdtempSync(join(tmpdir(), "reconcile-"));
  // after the service is killed (the handler registered first), however this script ends
  process.once("exit", () => rmSync(state, { recursive: true, force: true }));
  const port = await freePort();
  const from = started - (started % HOUR_MS);
  log(
    `reconcile (${o.mode}): ${o.signins} sign-ins, ${o.concurrency} at a time, ${o.subscribers} subscribers; state ${state}, port ${port}`,
  );
  try {
    let svc = await startService(state, port);
    log(`service up in ${svc.seconds.toFixed(1)} s`);
    const people = await importSubscribers(svc.base, token, o.subscribers);
    /** @type {{ at: string; started: number; completed: number; inFlight: number; restartSeconds: number }[]} */
    const kills = [];
    const tally = await drive(svc.base, people, o, async (t) => {
      const at = new Date().toISOString();
      const [started, completed] = [t.started - 1, t.completed];
      const inFlight = started - completed - t.killed - t.devProxy - t.failed;
      log(`SIGKILL to the service's process group after ${started} sign-ins started (${inFlight} in flight)`);
      await killService(svc);
      svc = await startService(state, port);
      kills.push({ at, started, completed, inFlight, restartSeconds: Number(svc.seconds.toFixed(1)) });
      log(`service up again in ${svc.seconds.toFixed(1)} s`);
    });
    const driven = (Date.now() - started) / 1000;
    log(
      `${tally.completed} sign-ins completed, ${tally.killed} failed by the kill, ${tally.devProxy} by wrangler dev's proxy, ${tally.failed} otherwise; draining the audit outboxes`,
    );
    const drainStart = Date.now();
    const { trail, rolled } = await drained(svc.base, token, from, o.quiet, auditTypes());
    // an hour is closed once it ended a flush interval and a retry before the drain began
    const hours = compare(trail, rolled, drainStart - 2 * FLUSH_SECONDS * 1000);
    for (const h of hours) printHour(h);
    const sum = (type) => [...trail.values()].reduce((a, c) => a + (c.get(type) ?? 0), 0);
    const bounds = [
      { type: "signin.success", trail: sum("signin.success"), atLeast: tally.codes },
      { type: "code.redeemed", trail: sum("code.redeemed"), atLeast: tally.tokens },
    ].map((b) => ({ ...b, met: b.trail >= b.atLeast }));
    console.log("\nthe trail holds what the driver was answered:");
    for (const b of bounds)
      console.log(`${b.type.padEnd(22)} ${String(b.trail).padStart(8)} >= ${b.atLeast}  ${b.met ? "yes" : "NO"}`);
    const mismatches = hours.flatMap((h) => h.rows.filter((r) => !r.equal).map((r) => `${h.hour} ${r.type}`));
    const seconds = Math.round((Date.now() - started) / 1000);
    m.loadEnd = loadavg()[0].toFixed(2);
    console.log(
      `\n${tally.completed} sign-ins completed, ${tally.killed} failed by the kill (after ${kills.map((k) => k.started).join(", ")} started), ${tally.devProxy} by wrangler dev's proxy, ${tally.failed} otherwise; ` +
        `${hours.filter((h) => h.closed).length} closed hour(s) and ${hours.filter((h) => !h.closed).length} open compared; ` +
        `${mismatches.length ? `MISMATCH: ${mismatches.join(", ")}` : "every type equal"}; ${seconds} s (driving ${Math.round(driven)} s)`,
    );
    for (const e of tally.errors) log(`failed at ${e.at}: ${e.error}`);
    const result = {
      version: 1,
      date: new Date(started).toISOString(),
      mode: o.mode,
      durationSeconds: seconds,
      drivingSeconds: Math.round(driven),
      drainSeconds: Math.round((Date.now() - drainStart) / 1000),
      machine: m,
      settings: { ...o, vars: VARS, wrongEvery: WRONG_EVERY, replayEvery: REPLAY_EVERY },
      signins: tally,
      kills,
      hours,
      bounds,
      mismatches,
    };
    mkdirSync(join(root, "bench", "results"), { recursive: true });
    const name = o.mode === "short" ? "short" : result.date.replace(/[:.]/g, "-");
    writeJson(join(root, "bench", "results", `reconcile-${name}.json`), result);
    log(`wrote bench/results/reconcile-${name}.json`);
    return mismatches.length || tally.failed || bounds.some((b) => !b.met) ? 1 : 0;
  } finally {
    // its state is thrown away: no need to stop it gently
    stopService();
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
