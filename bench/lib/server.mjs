// Serves the benchmark's workers on plain workerd through Miniflare's API (no `wrangler dev`
// proxy): the hello-world ceiling, the project's all-in-one worker (bench entry, or an entry built
// on it: the capacity run's, the investigations'), the route workers and the peers,
// each on its own direct socket, with real local D1 and Durable Objects (and KV and R2 where wrangler.toml binds them),
// in memory, migrated from migrations/*.sql. The dev worker applies the dev seed itself.

import { existsSync, mkdtempSync, readFileSync, readdirSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } from "wrangler";

export const HOST = "127.0.0.1";

/** Each bundle's exported names, from esbuild's metafile (what a service binding's entrypoint may name). */
const exportsOf = new Map();

/** Bundles a worker entry to one ES module (as wrangler would), returning its path. */
export async function bundle(root, entry, outfile, { minify = false } = {}) {
  const { metafile } = await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    minify,
    metafile: true,
    logLevel: "error",
  });
  const [output] = Object.values(metafile.outputs).filter((o) => o.entryPoint);
  exportsOf.set(outfile, new Set(output?.exports ?? []));
  return outfile;
}

/** Reads a .dev.vars-style file into an object ({} when absent). */
function readVars(path) {
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  const out = {};
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) out[m[1]] = m[2].replace(/^"(.*)"$/, "$1");
  }
  return out;
}

/**
 * The all-in-one worker's Miniflare options from wrangler.toml (bindings follow the file as others
 * add KV namespaces or services), with the bench bundle as its code.
 */
function appOptions(root, scriptPath, name, vars) {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(root, "wrangler.toml"));
  const example = readVars(join(root, ".dev.vars.example")); // clean checkout: no .dev.vars yet
  const contents = readFileSync(scriptPath, "utf8");
  // a binding to an entrypoint of the worker's own (WEBAUTHN, the WebAuthn verifier) only where the
  // bundle exports it: an older checkout's bundle (--base) may not
  const serviceBindings = Object.fromEntries(
    Object.entries(workerOptions.serviceBindings ?? {}).filter(
      ([, t]) => typeof t !== "object" || !("entrypoint" in t) || exportsOf.get(scriptPath)?.has(t.entrypoint),
    ),
  );
  return {
    ...workerOptions,
    name,
    serviceBindings,
    modules: [{ type: "ESModule", path: scriptPath, contents }],
    bindings: { ...example, ...workerOptions.bindings, ...vars },
    // the floors' own store (bench/workers/floor.ts), beside the project's
    durableObjects: { ...workerOptions.durableObjects, FLOOR: { className: "FloorStore", useSQLite: true } },
    unsafeDirectSockets: [{ host: HOST, port: 0 }],
  };
}

/**
 * The hot routes as deployed: the `token` and `user-me` route workers (one route each, no dev
 * seed), on the same D1 database and the app worker's one-time store objects, as wrangler.toml
 * binds them (`script_name` of the worker hosting the store).
 */
async function routeOptions(root, buildDir, app, base) {
  const routes = [
    { name: "route-token", entry: "workers/provider/token/index.ts" },
    { name: "route-user-me", entry: "workers/provider/user-me/index.ts" },
    { name: "route-floor", entry: "bench/workers/floor-route.ts" },
    // hybrids: the routes as deployed, their ONE_TIME bound to the floor's store class
    { name: "route-token-floor-store", entry: "workers/provider/token/index.ts", store: "FloorStore" },
    { name: "route-user-me-floor-store", entry: "workers/provider/user-me/index.ts", store: "FloorStore" },
    // a baseline checkout's route workers, bound to its own app's store (`startServers` `base`)
    ...(base
      ? [
          { name: "route-token-base", entry: "workers/provider/token/index.ts", root: base, script: "app-base" },
          { name: "route-user-me-base", entry: "workers/provider/user-me/index.ts", root: base, script: "app-base" },
        ]
      : []),
  ];
  return Promise.all(
    routes.map(async (r) => {
      const path = await bundle(r.root ?? root, r.entry, join(buildDir, `${r.name}.js`));
      return {
        name: r.name,
        modules: [{ type: "ESModule", path, contents: readFileSync(path, "utf8") }],
        compatibilityDate: app.compatibilityDate,
        compatibilityFlags: app.compatibilityFlags,
        bindings: { ...app.bindings, ...BENCH_VARS },
        d1Databases: app.d1Databases,
        durableObjects: {
          ONE_TIME: { className: r.store ?? "OneTimeStore", scriptName: r.script ?? "app" },
          FLOOR: { className: "FloorStore", scriptName: "app" },
        },
        unsafeDirectSockets: [{ host: HOST, port: 0 }],
      };
    }),
  );
}

/**
 * The peers (bench/workers/peer-*.ts): other token services for Workers, each bundled with its
 * library and given what its documentation asks for (a KV namespace; nodejs_compat for OpenAuth).
 */
async function peerOptions(root, buildDir, compatibilityDate) {
  const peers = [
    { name: "wop", entry: "bench/workers/peer-wop.ts", kv: "OAUTH_KV", flags: [] },
    { name: "openauth", entry: "bench/workers/peer-openauth.ts", kv: "OPENAUTH_KV", flags: ["nodejs_compat"] },
  ];
  return Promise.all(
    peers.map(async (p) => {
      const path = await bundle(root, p.entry, join(buildDir, `${p.name}.js`));
      return {
        name: p.name,
        modules: [{ type: "ESModule", path, contents: readFileSync(path, "utf8") }],
        compatibilityDate,
        compatibilityFlags: p.flags,
        kvNamespaces: { [p.kv]: `${p.name}-kv` },
        unsafeDirectSockets: [{ host: HOST, port: 0 }],
      };
    }),
  );
}

/** The variables every benchmarked app worker gets (see docs/benchmarks.md). */
export const BENCH_VARS = {
  DEV_MODE: "true",
  // One structured line per request goes to workerd's stdout and through a pipe into this Node
  // process here, which a deployed worker does not pay; measured separately as a variant.
  LOG_REQUESTS: "false",
  // Codes are minted before a round; the default 60 s would expire some in long runs.
  CODE_TTL_SECONDS: "600",
  // Every virtual user of the sign-in flow comes from 127.0.0.1: one address, not an attack.
  SIGNIN_IP_LIMIT: "1000000",
  // The one-time store writes its audit outbox to R2 once a minute per object, as a deployment
  // does (the default): the load spreads over every object, as many people's codes do, and a flush
  // a second would write 16 R2 objects a second where a deployment writes one per object a minute
  // (docs/benchmarks.md "The audit flush": that alone measured 0.81× against 0.97× of the floor).
  // A flush lands in whichever slice runs then; over a full run that spreads its cost over all.
  AUDIT_FLUSH_SECONDS: "60",
};

/**
 * Starts one workerd with the hello worker and one app worker per variant
 * (`{ name, vars, scriptPath? }`). Returns URLs per worker, the workerd pid and a dispose function.
 */
/**
 * @param {string} root
 * @param {string} buildDir
 * @param {{ name: string; vars: Record<string, string>; scriptPath?: string }[]} variants
 * `base`: another checkout of the project (a path), served beside this one as `app-base` (its bench
 * entry and store) with its token and user/me route workers (`route-token-base`,
 * `route-user-me-base`), so that a change is compared with what it changes in one run.
 * `state`: a directory for the local D1, Durable Objects and KV that outlives the run (the scale
 * bench loads a directory once and measures it again under callgrind); migrated only when new.
 * `entry`: the app worker's entry, the bench entry or one built on it
 * (capacity/workers/capacity-entry.ts, investigations/workers/investigations-entry.ts).
 * @param {{ disk?: boolean; inspectorPort?: number; peers?: boolean; base?: string; state?: string; entry?: string }} [options]
 */
export async function startServers(
  root,
  buildDir,
  variants,
  { disk = false, inspectorPort, peers = true, base, state: keep, entry = "bench/workers/bench-entry.ts" } = {},
) {
  mkdirSync(buildDir, { recursive: true });
  const appPath = await bundle(root, entry, join(buildDir, `${basename(entry, ".ts")}.js`));
  const helloPath = join(root, "bench/workers/hello.js");
  const app = appOptions(root, appPath, "app", {});
  const peerWorkers = peers ? await peerOptions(root, buildDir, app.compatibilityDate) : [];
  const routeWorkers = await routeOptions(root, buildDir, app, base);
  if (base)
    variants = [
      ...variants,
      {
        name: "app-base",
        vars: variants[0]?.vars ?? {}, // the same variables as this checkout's app worker
        scriptPath: await bundle(base, "bench/workers/bench-entry.ts", join(buildDir, "bench-entry-base.js")),
      },
    ];
  /** @type {import("miniflare").WorkerOptions[]} */
  const workers = /** @type {any[]} */ ([
    {
      name: "hello",
      modules: [{ type: "ESModule", path: helloPath, contents: readFileSync(helloPath, "utf8") }],
      compatibilityDate: app.compatibilityDate,
      unsafeDirectSockets: [{ host: HOST, port: 0 }],
    },
    // a variant may bring its own bundle (an A/B comparison of two builds)
    ...variants.map((v) => appOptions(root, v.scriptPath ?? appPath, v.name, { ...BENCH_VARS, ...v.vars })),
    ...routeWorkers,
    ...peerWorkers,
  ]);
  const stderr = [];
  // Local D1, DO and KV are SQLite files; on a disk, every commit waits for fsync, which blocks
  // workerd and measures this machine's disk, not the Worker. In memory (tmpfs) unless --disk.
  const fresh = !keep || !existsSync(join(keep, "d1"));
  if (keep) mkdirSync(keep, { recursive: true });
  const state =
    keep ?? mkdtempSync(join(!disk && existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "phone-login-bench-"));
  const mf = new Miniflare({
    host: HOST,
    port: 0,
    d1Persist: join(state, "d1"),
    durableObjectsPersist: join(state, "do"),
    kvPersist: join(state, "kv"),
    r2Persist: join(state, "r2"),
    logRequests: false,
    ...(inspectorPort ? { inspectorPort } : {}),
    // Drain workerd's output (it would otherwise interleave with the table); keep the last lines for failures.
    handleRuntimeStdio(stdout, err) {
      const keep = (d) => {
        stderr.push(String(d));
        if (stderr.length > 50) stderr.shift();
      };
      stdout.on("data", keep);
      err.on("data", keep);
    },
    workers,
  });
  try {
    await mf.ready;
  } catch (err) {
    console.error(`workerd output:\n${stderr.join("").slice(-4000)}`);
    throw err;
  }
  const urls = {};
  for (const w of workers) urls[w.name] = String(await mf.unsafeGetDirectURL(w.name)).replace(/\/$/, "");
  if (fresh) await migrate(root, mf, variants[0].name);
  const pid = findWorkerd();
  const dispose = async () => {
    await mf.dispose();
    if (!keep) rmSync(state, { recursive: true, force: true });
  };
  return { mf, urls, pid, stderr, state, dispose };
}

/** Applies migrations/*.sql in order to the (shared) local D1 database. */
async function migrate(root, mf, workerName) {
  const db = await mf.getD1Database("DB", workerName);
  const dir = join(root, "migrations");
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    const queries = unstable_splitSqlQuery(readFileSync(join(dir, file), "utf8"));
    await db.batch(queries.map((q) => db.prepare(q)));
  }
}

/** The workerd child of this process (for its CPU time), or null. */
export function findWorkerd() {
  for (const d of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (Number(fields[1]) === process.pid && comm.startsWith("workerd")) return Number(d);
    } catch {
      /* gone or not ours */
    }
  }
  return null;
}

const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux

/** CPU time (µs, all threads) of a process so far, user and system apart, or null off Linux. */
export function cpuTimes(pid) {
  if (pid === null) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { user: Number(f[11]) * TICK_US, system: Number(f[12]) * TICK_US };
  } catch {
    return null;
  }
}

/** CPU time (µs, user + system, all threads) of a process so far, or null off Linux. */
export function cpuMicros(pid) {
  const t = cpuTimes(pid);
  return t === null ? null : t.user + t.system;
}

export function writeJson(path, value) {
  writeFileSync(path, JSON.stringify(value, null, 2) + "\n");
}
