// The investigations' entry: the bench entry (bench/workers/bench-entry.ts) with what only the
// investigation tools ask of it. Compiled into their bundle only (investigations/calls.mjs and
// investigations/parts.mjs pass it to bench/lib/server.mjs `startServers`, and
// `node bench/run.mjs --entry investigations/workers/investigations-entry.ts` runs the benchmark on
// it); never deployed.
//   BENCH_VARIANT=count   every Durable Object stub the worker takes (by class), D1 statement, KV and
//                         R2 operation is counted; `/__bench/counts` answers the counts and resets them
//   BENCH_VARIANT=no-kv   the relying party's KV in this isolate's memory (the kit's flows with free
//                         storage); with the bench entry's own variants (no-d1, no-do) besides
//   /__bench/parts        the hot routes' steps, the floor's way against the project's (parts.ts),
//                         with the stores' own loops (parts-store.ts, exported here in their place)

import bench, { type BenchEnv } from "../../bench/workers/bench-entry";
import { partsWork } from "./parts";

export { PartsFloorStore as FloorStore, PartsOneTimeStore as OneTimeStore } from "./parts-store";
export {
  DirectoryShard,
  GuardStore,
  MetricsStore,
  PhoneLoginStore,
  WebAuthnVerifier,
} from "../../bench/workers/bench-entry";

/** Platform calls by kind since the last read (variant `count`, investigations/calls.mjs). */
let counts: Record<string, number> = {};
const count = (k: string) => void (counts[k] = (counts[k] ?? 0) + 1);

/** `target`'s methods, each call counted under `prefix.method`. */
function counting<T extends object>(target: T, prefix: string, methods?: readonly string[]): T {
  return new Proxy(target, {
    get(t, prop) {
      const v = Reflect.get(t, prop, t) as unknown;
      if (typeof v !== "function" || typeof prop !== "string" || (methods && !methods.includes(prop))) return v;
      return (...a: unknown[]) => {
        count(`${prefix}.${prop}`);
        return (v as (...x: unknown[]) => unknown).apply(t, a);
      };
    },
  });
}

/** The statements behind counted ones (a batch is given the real statements). */
const realStatements = new WeakMap<object, D1PreparedStatement>();

/** A D1 statement whose runs are counted, through `bind` (which returns a new statement). */
function countedStatement(st: D1PreparedStatement, name: string): D1PreparedStatement {
  const proxy = new Proxy(st, {
    get(t, prop) {
      const v = Reflect.get(t, prop, t) as unknown;
      if (typeof v !== "function") return v;
      if (prop === "bind") return (...a: unknown[]) => countedStatement(t.bind(...a), name);
      if (prop === "first" || prop === "run" || prop === "all" || prop === "raw")
        return (...a: unknown[]) => {
          count(name);
          return (v as (...x: unknown[]) => unknown).apply(t, a);
        };
      return (v as (...x: unknown[]) => unknown).bind(t);
    },
  });
  realStatements.set(proxy, st);
  return proxy;
}

/** Variant `count`: the worker's Durable Object stubs taken (by class), D1 statements, KV and R2 operations counted. */
function countCalls(v: BenchEnv): void {
  for (const [binding, name] of [
    ["ONE_TIME", "one-time"],
    ["DIRECTORY", "directory"],
    ["FLOOR", "floor"],
    ["RP_STORE", "kit store"],
  ] as const) {
    const ns = v[binding] as unknown as DurableObjectNamespace;
    v[binding] = new Proxy(ns, {
      get(t, prop) {
        const f = Reflect.get(t, prop, t) as unknown;
        // the stub itself (a proxy of it cannot be passed on in a call): one count per stub taken,
        // which is one call wherever the code takes a stub per call, as the stores' helpers do
        if (prop === "get")
          return (id: DurableObjectId) => {
            count(`${name} object call`);
            return t.get(id);
          };
        return typeof f === "function" ? (f as (...x: unknown[]) => unknown).bind(t) : f;
      },
    }) as never;
  }
  const db = v.DB;
  v.DB = new Proxy(db, {
    get(t, prop) {
      const f = Reflect.get(t, prop, t) as unknown;
      if (prop === "prepare") return (sql: string) => countedStatement(t.prepare(sql), `d1 ${sql.split(/\s/)[0]}`);
      if (prop === "batch")
        return (list: D1PreparedStatement[]) => {
          count(`d1 batch (${list.length})`);
          return t.batch(list.map((st) => realStatements.get(st) ?? st));
        };
      return typeof f === "function" ? (f as (...x: unknown[]) => unknown).bind(t) : f;
    },
  });
  const kv = v as unknown as { RP_KV: KVNamespace; AUDIT: R2Bucket };
  kv.RP_KV = counting(kv.RP_KV, "kv", ["get", "put", "delete", "list", "getWithMetadata"]);
  if (kv.AUDIT) kv.AUDIT = counting(kv.AUDIT, "r2", ["get", "put", "list", "delete", "head"]);
}

/**
 * The relying party's KV in this isolate's memory (variant `no-kv`): what the kit's flows cost with
 * storage that costs nothing, the least any storage design of theirs could reach. Values keep their
 * expiry (KV's, whole seconds); `list` walks the keys in order, as KV does.
 */
function memoryKv(): KVNamespace {
  const m = new Map<string, { value: string; until: number }>();
  const live = (key: string) => {
    const e = m.get(key);
    if (e && e.until <= Date.now()) m.delete(key);
    return e && e.until > Date.now() ? e : undefined;
  };
  const read = (v: string, type: unknown) =>
    type === "json" || (typeof type === "object" && (type as { type?: string } | null)?.type === "json")
      ? (JSON.parse(v) as unknown)
      : v;
  return {
    async get(key: string, type?: unknown) {
      const e = live(key);
      return e ? read(e.value, type) : null;
    },
    async getWithMetadata(key: string, type?: unknown) {
      const e = live(key);
      return { value: e ? read(e.value, type) : null, metadata: null, cacheStatus: null };
    },
    async put(key: string, value: string, opts?: { expirationTtl?: number }) {
      m.set(key, { value: String(value), until: Date.now() + (opts?.expirationTtl ?? 1e9) * 1000 });
    },
    async delete(key: string) {
      m.delete(key);
    },
    async list(opts?: { prefix?: string; limit?: number }) {
      const names = [...m.keys()].filter((k) => k.startsWith(opts?.prefix ?? "") && live(k)).sort();
      const keys = names.slice(0, opts?.limit ?? 1000).map((name) => ({ name }));
      return { keys, list_complete: keys.length === names.length, cacheStatus: null };
    },
  } as unknown as KVNamespace;
}

const variantEnvs = new WeakMap<object, BenchEnv>();

/** The env with this entry's variants of BENCH_VARIANT applied (the bench entry's own apply after). */
function envFor(env: BenchEnv): BenchEnv {
  const parts = env.BENCH_VARIANT?.split(",") ?? [];
  if (!parts.includes("count") && !parts.includes("no-kv")) return env;
  let v = variantEnvs.get(env);
  if (!v) {
    v = { ...env };
    if (parts.includes("no-kv")) (v as unknown as { RP_KV: KVNamespace }).RP_KV = memoryKv();
    if (parts.includes("count")) countCalls(v);
    variantEnvs.set(env, v);
  }
  return v;
}

export default {
  async fetch(req, env, ctx) {
    if (req.url.includes("/__bench/")) {
      const url = new URL(req.url);
      if (url.pathname === "/__bench/counts") {
        const out = counts;
        counts = {};
        return Response.json(out);
      }
      if (url.pathname === "/__bench/parts") {
        await bench.fetch(new Request(new URL("/healthz", url)), env, ctx); // the client the parts authenticate
        return partsWork(url, env);
      }
    }
    return bench.fetch(req, envFor(env), ctx);
  },
} satisfies ExportedHandler<BenchEnv>;
