#!/usr/bin/env node
// Instructions per request of whole scenarios, workerd run under valgrind's callgrind (Debian's
// `valgrind` package): the same servers, pools and requests as `npm run bench`, instrumentation on
// only while a scenario's requests are answered and its deferred work settles. Instructions, unlike
// CPU time on a shared machine, repeat from run to run, so a change of a few per cent shows
// (docs/benchmarks.md "Instructions"). About fifty times slower than workerd itself.
//
//   node investigations/instructions.mjs [token-route,floor-token-route,user-me-route,floor-me-route | signin,floor-signin | identify
//        | passkey-signin | outbox]
//        [--requests 400] [--rounds 3] [--compare a:b,c:d] [--functions 25]
//        [--base ../other-checkout]    served beside this one: its token and user/me route workers as
//                                      token-route@base, token-oidc-route@base, user-me-route@base, and its app worker for any
//                                      scenario of the app (signin@base, identify@base, token@base, …)
//        [--vars AUDIT_FLUSH_SECONDS=1]   variables of the app worker (and so of the stores it hosts)
//        BENCH_SMS=true in the environment and in --vars: the sign-in's number gets its code by SMS
//        (bench/lib/scenarios.mjs reads it from the dev outbox) instead of a fixed one
//        [--mint-ahead]   mint every round's codes and tokens before the first round, not before each
//                         (so no mint's leftover garbage is collected inside a counted round)
//        [--v8-flags --predictable]   V8's flags for workerd (comma-separated; needs capnp: lib/callgrind.mjs);
//                         --predictable: V8 compiles and collects on the isolate's thread, so rounds repeat
//        [--keep]   keep valgrind's dumps (one per scenario and round) to read with callgrind_annotate
//
// A flow (the sign-in, its floor) counts as one request: its figures are per flow. `identify` is the
// sign-in's step 1 alone (the POST with number, name and carrier, answered with the code page): each
// request spends a sign-in opened beforehand (its first page fetched, uncounted) for a fresh person.
// Each figure is instructions per request, the median of the rounds: "work" (what repeats) and
// "housekeeping" (garbage collection, the allocator, V8's compiler and tasks: these move with
// timing). `--compare a:b` prints b's work against a's by category and the functions that differ most.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  byCategory,
  byFunction,
  counted,
  haveValgrind,
  readDump,
  valgrindPid,
  workerdWrapper,
} from "./lib/callgrind.mjs";
import { stats } from "../bench/lib/report.mjs";
import { Pool, autocannon } from "../bench/lib/load.mjs";
import {
  AUTHORIZE_PATH,
  SCENARIOS,
  SUBSCRIBER_NAME,
  checkOnce,
  control,
  firstForm,
  urlFor,
} from "../bench/lib/scenarios.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, d) => (args.includes(name) ? args[args.indexOf(name) + 1] : d);
const positional = args.filter((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--"));
const ids = (positional[0] ?? "token-route,floor-token-route,user-me-route,floor-me-route").split(",");
const requests = Number(opt("--requests", "400"));
const rounds = Number(opt("--rounds", "3"));
const base = opt("--base", "");
const compare = opt("--compare", "")
  .split(",")
  .filter(Boolean)
  .map((p) => p.split(":"));
const topFunctions = Number(opt("--functions", "25"));
// variables for the app worker (it hosts the stores), e.g. --vars AUDIT_FLUSH_SECONDS=1: a flush
// a second per object, which under valgrind's slowness is many flushes per request
const vars = Object.fromEntries(
  opt("--vars", "")
    .split(",")
    .filter(Boolean)
    .map((kv) => kv.split("=")),
);

if (!haveValgrind()) {
  console.error("investigations/instructions.mjs needs valgrind (apt-get install -y valgrind)");
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), "phone-login-callgrind-"));
// V8's flags for workerd, e.g. --v8-flags --predictable (lib/callgrind.mjs)
const v8Flags = opt("--v8-flags", "").split(",").filter(Boolean);
process.env.MINIFLARE_WORKERD_PATH = workerdWrapper(root, dir, v8Flags);
const { startServers } = await import("../bench/lib/server.mjs");

/** Sign-ins opened at the identify step, one a request, for bench people from 01098000000 (the sign-in scenario's start at 01090000000). */
const identifyPool = new Pool();
let identifyFrom = 8_000_000;
/** @type {import("../bench/lib/scenarios.mjs").Scenario} */
const IDENTIFY = {
  id: "identify",
  title: "identify (sign-in step 1)",
  worker: "app",
  pool: identifyPool,
  async prepare(ctx, n) {
    const res = await control(`${ctx.url}/__bench/mint?kind=subscribers&from=${identifyFrom}&n=${n}`);
    if (res.status !== 200) throw new Error(`identify's people: ${res.status} ${(await res.text()).slice(0, 200)}`);
    const phones = /** @type {string[]} */ (await res.json());
    identifyFrom += n;
    const opened = [];
    for (let i = 0; i < phones.length; i += 8)
      opened.push(
        ...(await Promise.all(
          phones.slice(i, i + 8).map(async (phone) => {
            const page = await control(ctx.url + AUTHORIZE_PATH, { headers: { "Accept-Language": "ko-KR" } });
            const cookie = page.headers
              .getSetCookie()
              .map((c) => c.split(";")[0])
              .join("; ");
            const form = firstForm(await page.text());
            if (!form.names.has("phoneNo")) throw new Error("the first page is not the identify step");
            for (const [k, v] of [
              ["telcoCd", "S"],
              ["name", SUBSCRIBER_NAME],
              ["phoneNo", phone],
              ["carrierTerms", "Y"],
            ])
              form.fields.set(k, v);
            return {
              path: new URL(form.action, ctx.url).pathname,
              cookie,
              body: form.fields.toString(),
              origin: ctx.url,
            };
          }),
        )),
      );
    identifyPool.refill(opened);
  },
  request: {
    method: "POST",
    path: "/oauth2/authorize",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "Accept-Language": "ko-KR" },
    setup(r) {
      const e = identifyPool.next();
      if (typeof e === "string") return r; // dry: sent without a sign-in, it fails
      r.path = e.path;
      r.headers = { ...r.headers, Cookie: e.cookie, Origin: e.origin };
      r.body = e.body;
      return r;
    },
  },
};

/**
 * The dev outbox read alone (`GET /dev/outbox`, JSON): what the SMS sign-in's flow spends, under
 * BENCH_SMS, reading its code, which a person's phone does in production; measured to take it out.
 */
/** @type {import("../bench/lib/scenarios.mjs").Scenario} */
const OUTBOX = {
  id: "outbox",
  title: "the dev outbox read (BENCH_SMS's code lookup)",
  worker: "app",
  request: { method: "GET", path: "/dev/outbox", headers: { Accept: "application/json" } },
};

/** `id` or `id@base`: a scenario, or the same requests against the baseline checkout. */
const scenarios = ids.map((id) => {
  const [name, at] = id.split("@");
  const s = [...SCENARIOS, IDENTIFY, OUTBOX].find((x) => x.id === name);
  if (!s || !(s.flow || s.request)) throw new Error(`no scenario ${name}`);
  if (!at) return { ...s, key: id, onBase: false };
  if (at !== "base" || !base) throw new Error(`${id}: only @base, with --base`);
  if (s.worker === "app") return { ...s, key: id, onBase: true }; // the baseline's app worker
  const worker = {
    "token-route": "route-token-base",
    "token-oidc-route": "route-token-base",
    "user-me-route": "route-user-me-base",
  }[name];
  if (!worker)
    throw new Error(
      `${id}: on the baseline, the app worker's scenarios and token-route, token-oidc-route, user-me-route`,
    );
  return { ...s, key: id, worker, onBase: true };
});

const srv = await startServers(root, join(root, "bench", "results", "build"), [{ name: "app", vars }], {
  peers: false,
  base: base ? resolve(base) : undefined,
});
try {
  const pid = valgrindPid(dir);
  const ctx = { url: srv.urls.app, helloUrl: srv.urls.hello, pid: null, urls: srv.urls };
  const baseCtx = { ...ctx, url: srv.urls["app-base"] }; // the baseline's routes spend its own codes
  const ctxOf = (s) => (s.onBase ? baseCtx : ctx);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  /** `n` requests (or flows), 8 at a time (under valgrind more would only queue); the answers counted. */
  const send = async (s, n) => {
    if (s.flow) {
      let next = 0;
      let ok = 0;
      let retried = 0;
      const one = async () => {
        while (next < n) {
          next++;
          // a flow throws on any wrong answer; one whose request met a keep-alive socket that workerd
          // had just closed or reset is run again with another person (its earlier requests stay counted)
          for (let tries = 0; ; tries++)
            try {
              await s.flow(ctxOf(s));
              break;
            } catch (err) {
              const code = /** @type {any} */ (err)?.cause?.code;
              if (tries >= 3 || (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET")) throw err;
              retried++;
            }
          ok++;
        }
      };
      await Promise.all(Array.from({ length: Math.min(8, n) }, one));
      if (retried > 0) console.error(`  ${s.key}: ${retried} flows run again after a closed socket`);
      return { ok, answered: ok };
    }
    const req = { method: s.request.method, path: s.request.path, headers: s.request.headers ?? {} };
    if (s.request.body !== undefined) req.body = s.request.body;
    if (s.request.setup) req.setupRequest = (r) => s.request.setup(r);
    const r = await autocannon({ url: urlFor(ctxOf(s), s), connections: 8, amount: n, requests: [req], timeout: 120 });
    const ok = (s.request.okStatus ?? 200) >= 300 ? r["3xx"] : r["2xx"];
    return { ok, answered: r["1xx"] + r["2xx"] + r["3xx"] + r["4xx"] + r["5xx"] };
  };
  // warm-up: the JIT tiers up, caches fill (three times the measured requests)
  for (const s of scenarios) {
    await checkOnce(ctxOf(s), s);
    if (s.prepare) await s.prepare(ctxOf(s), 3 * requests + 50);
    await send(s, 3 * requests);
  }
  const mintAhead = args.includes("--mint-ahead");
  if (mintAhead)
    for (const s of scenarios) if (s.prepare && !s.flow) await s.prepare(ctxOf(s), rounds * (requests + 50));
  await sleep(3000);
  /** @type {Record<string, { work: number; housekeeping: number; total: number; dump: any }[]>} */
  const got = Object.fromEntries(scenarios.map((s) => [s.key, []]));
  for (let r = 0; r < rounds; r++) {
    // each round starts with another scenario: the first after a pause counts apart from the rest
    for (const s of [...scenarios.slice(r % scenarios.length), ...scenarios.slice(0, r % scenarios.length)]) {
      if (s.prepare && !(mintAhead && !s.flow)) await s.prepare(ctxOf(s), requests + 50);
      // a flow's fetch may hold keep-alive sockets workerd closed during the other scenarios' rounds:
      // 8 flows first, uncounted, renew them (from the pool's spare 50 people)
      if (s.flow) await send(s, 8);
      let res = { ok: 0, answered: 0 };
      const file = await counted(pid, dir, async () => {
        res = await send(s, requests);
        await sleep(2500); // its deferred work (the store's sweeps; the audit flush when set to a second) is its own
      });
      if (res.ok < res.answered) throw new Error(`${s.key}: ${res.answered - res.ok} of ${res.answered} failed`);
      const dump = readDump(file, res.answered);
      got[s.key]?.push({ work: dump.work, housekeeping: dump.housekeeping, total: dump.total, dump });
      const k = (x) => `${Math.round(x / 1000)}k`;
      console.error(`  round ${r + 1}/${rounds} ${s.key.padEnd(22)} ${k(dump.total)} (work ${k(dump.work)})`);
    }
  }
  const median = (xs) => stats(xs)?.median ?? NaN;
  const k = (x) => `${(x / 1000).toFixed(1)}k`;
  console.log(`\ninstructions per request, median of ${rounds} rounds of ${requests} requests`);
  console.log(
    `${"scenario".padEnd(24)} ${"total".padStart(9)} ${"work".padStart(9)} ${"housekeeping".padStart(13)}  work per round`,
  );
  for (const s of scenarios) {
    const rs = got[s.key] ?? [];
    console.log(
      `${s.key.padEnd(24)} ${k(median(rs.map((x) => x.total))).padStart(9)} ${k(median(rs.map((x) => x.work))).padStart(9)} ${k(median(rs.map((x) => x.housekeeping))).padStart(13)}  ${rs.map((x) => k(x.work)).join(" ")}`,
    );
  }
  for (const [a, b] of compare) {
    const ra = got[a ?? ""];
    const rb = got[b ?? ""];
    if (!ra?.length || !rb?.length) throw new Error(`--compare ${a}:${b}: both must be measured`);
    // the round whose work is the median, of each
    const pick = (rs) => [...rs].sort((x, y) => x.work - y.work)[rs.length >> 1].dump;
    const da = pick(ra);
    const db = pick(rb);
    const ratio = median(ra.map((x) => x.total)) / median(rb.map((x) => x.total));
    console.log(`\n${b} against ${a}: ${a} does ${ratio.toFixed(3)}× the instructions of ${b} (totals, medians)`);
    for (const [cat, x, y] of byCategory(da, db))
      console.log(`  ${cat.padEnd(28)} ${k(x).padStart(8)} ${k(y).padStart(8)} ${(y - x >= 0 ? "+" : "") + k(y - x)}`);
    console.log("  functions that differ most:");
    for (const [fn, x, y] of byFunction(da, db, topFunctions))
      console.log(`  ${((y - x >= 0 ? "+" : "") + Math.round(y - x)).padStart(8)}  ${fn.slice(0, 110)}`);
  }
} finally {
  await srv.dispose();
  if (args.includes("--keep")) console.log(`\ncallgrind dumps kept in ${dir} (callgrind_annotate --tree=caller)`);
  else rmSync(dir, { recursive: true, force: true });
}
