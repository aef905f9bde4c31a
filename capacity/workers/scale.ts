// `/__bench/scale/*`: what the scale bench (`node capacity/scale.mjs`, docs/capacity.md) asks of the
// directory shards beside the project's own routes: their sizes, links and grants loaded in bulk,
// people armed with the fixed code, the shard calls counted, one shard's writes. Compiled into the
// capacity run's bundle only (capacity-entry.ts).

import { randomToken, sha256 } from "../../workers/core/crypto";
import { dirShards } from "../../workers/provider/store/directory/keys";
import { type DirectoryEnv } from "../../workers/provider/store/directory/directory";
import { newPlid } from "../../workers/provider/store/directory/keys";
import { benchClientIds, type ScaleDirectoryShard } from "./scale-shard";

type Env = DirectoryEnv & { DB: D1Database };

/** Clients the loaded links and grants belong to (a national service's apps; a few hold most). */
const LOAD_CLIENTS = benchClientIds(1000);

function shard(env: Env, n: number): DurableObjectStub<ScaleDirectoryShard> {
  const ns = env.DIRECTORY as unknown as DurableObjectNamespace<ScaleDirectoryShard>;
  return ns.get(ns.idFromName(`dir-${n}`));
}

const all = <T>(env: Env, f: (s: DurableObjectStub<ScaleDirectoryShard>, i: number) => Promise<T>): Promise<T[]> =>
  Promise.all(Array.from({ length: dirShards(env) }, (_, i) => f(shard(env, i), i)));

const num = (url: URL, name: string, d: number) => {
  const v = Number(url.searchParams.get(name) ?? d);
  if (!Number.isFinite(v)) throw new Error(`${name} must be a number`);
  return v;
};

/** People of one shard the write bench writes for, read once. */
const writeIds = new Map<number, Promise<number[]>>();

/** `k` writes to shard `s` at once, each its own call (the requests' concurrency does the rest). */
async function writes(env: Env, s: number, k: number, kind: string): Promise<number> {
  let ids = writeIds.get(s);
  if (!ids) writeIds.set(s, (ids = shard(env, s).scaleIds(1000)));
  const list = await ids;
  const stub = shard(env, s);
  const n = dirShards(env);
  const one = async (): Promise<void> => {
    const id = list[Math.floor(Math.random() * list.length)]!;
    const client = LOAD_CLIENTS[Math.floor(Math.random() * LOAD_CLIENTS.length)]!;
    if (kind === "link") await stub.recordConsent(id, client, 0x1ff, newPlid(s, n));
    else await stub.putGrant(randomToken(32), client, id, Date.now() + 86400_000);
  };
  await Promise.all(Array.from({ length: k }, one));
  return k;
}

/** The D1 database's size as D1 reports it, and its rows that grow with sign-ins. */
async function d1Stats(env: Env): Promise<{ bytes: number | null; clients: number; auditEvents: number }> {
  const r = await env.DB.prepare(
    "SELECT (SELECT count(*) FROM clients) AS clients, (SELECT count(*) FROM audit_events) AS audit",
  ).all<{ clients: number; audit: number }>();
  const meta = r.meta as { size_after?: number };
  return { bytes: meta.size_after ?? null, clients: r.results[0]!.clients, auditEvents: r.results[0]!.audit };
}

export async function scaleWork(url: URL, env: Env): Promise<Response> {
  const what = url.pathname.slice("/__bench/scale/".length);
  const seed = num(url, "seed", 1);
  switch (what) {
    case "stats":
      return Response.json(await all(env, (s) => s.scaleStats()));
    // one shard, up to `limit` people a call: the caller calls again until no one is left
    case "links": {
      const s = num(url, "shard", 0);
      const limit = num(url, "limit", 2000);
      return Response.json(
        await shard(env, s).scaleAddLinks(s, dirShards(env), LOAD_CLIENTS, num(url, "per", 1), seed, limit),
      );
    }
    case "grants": {
      const s = num(url, "shard", 0);
      const limit = num(url, "limit", 2000);
      return Response.json(await shard(env, s).scaleAddGrants(s, LOAD_CLIENTS, num(url, "per", 0.4), seed, limit));
    }
    case "arm": {
      // spread over the shards in proportion: each arms its share, the rest by those that have more
      const want = num(url, "n", 100);
      const otpHash = await sha256(url.searchParams.get("code") ?? "000000");
      const per = Math.ceil(want / dirShards(env));
      const got = (await all(env, (s) => s.scaleArm(per, otpHash))).flat();
      return Response.json(got.slice(0, want));
    }
    case "calls": {
      const reset = url.searchParams.get("reset") === "1";
      const got = await all(env, (s) => s.scaleCalls(reset));
      const sum = (k: "reads" | "writes") => {
        const out: Record<string, number> = {};
        for (const g of got) for (const [m, v] of Object.entries(g[k])) out[m] = (out[m] ?? 0) + v;
        return out;
      };
      return Response.json({ reads: sum("reads"), writes: sum("writes") });
    }
    case "write":
      return Response.json(
        await writes(env, num(url, "shard", 0), num(url, "k", 1), url.searchParams.get("kind") ?? "link"),
      );
    case "inside": {
      const s = num(url, "shard", 0);
      const kind = url.searchParams.get("kind") === "grant" ? "grant" : "link";
      return Response.json(await shard(env, s).scaleWriteInside(s, dirShards(env), kind, num(url, "n", 1000)));
    }
    case "d1":
      return Response.json(await d1Stats(env));
  }
  return new Response("unknown scale work", { status: 404 });
}
