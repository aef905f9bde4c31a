// The directory shards as tests inspect them: SQL run inside every shard object (the real Durable
// Objects of the dev worker), rows concatenated. Tables are those of
// workers/provider/store/directory/tables/ (people, numbers, by_ci, links, grants, jobs).
import { runInDurableObject } from "cloudflare:test";
import { env } from "./env";
import { dirAt, type DirectoryShard } from "../../workers/provider/store/directory/directory-shard";
import { ciShard, dirShards, homeOfId, numberShard } from "../../workers/provider/store/directory/keys";
import { sha256 } from "../../workers/core/crypto";
import type { Device } from "../../workers/provider/store/directory/grants";

/** Rows of `sql` from every directory shard. */
export async function shardRows<T extends Record<string, unknown>>(sql: string, ...binds: unknown[]): Promise<T[]> {
  const out: T[] = [];
  for (let s = 0; s < dirShards(env); s++) {
    const rows = await runInDurableObject(dirAt(env, s), (_o, state: DurableObjectState) =>
      state.storage.sql.exec(sql, ...(binds as SqlStorageValue[])).toArray(),
    );
    out.push(...(rows as T[]));
  }
  return out;
}

/** Runs a write in every directory shard. */
export async function shardExec(sql: string, ...binds: unknown[]): Promise<void> {
  await shardRows(sql, ...binds);
}

/** A device hash placed in a subscriber's home shard, as a device id made for them is. */
export function deviceOfSubscriber(subscriberId: number, hash: string): Device {
  return { shard: homeOfId(subscriberId), hash };
}

/** A directory person written straight into their number's shard (ci indexed), as the seed does; their id. */
export async function insertSubscriber(p: {
  telco: string;
  phone: string;
  name: string;
  gender?: string;
  birth?: string;
  foreign?: string;
  ci: string;
  code?: string;
}): Promise<number> {
  const n = dirShards(env);
  const s = numberShard(p.phone, n);
  const row = {
    telco: p.telco,
    phone: p.phone,
    name: p.name,
    gender: p.gender ?? "F",
    birth: p.birth ?? "1990-01-01",
    foreign: p.foreign ?? "L",
    ci: p.ci,
    testOtpHash: p.code === undefined ? null : await sha256(p.code),
    ciShard: ciShard(p.ci, n),
  };
  const [made] = await dirAt(env, s).seed(s, [row]);
  if (!made) throw new Error(`insertSubscriber: ${p.phone} is taken`);
  await dirAt(env, made.ciShard).indexCi(made.ci, made.id);
  return made.id;
}

/**
 * A Durable Object namespace whose stubs await `before(method, args, id)` ahead of each call and
 * `after(method, args, id)` once it answered (`id`: the object's): another request's step landing
 * between two of this one's.
 * The method is called on the stub itself (an RPC method given the stub as `this` would send it).
 */
export function aroundCalls<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
  before: (method: string, args: unknown[], id: DurableObjectId) => Promise<unknown> | void = () => {},
  after: (method: string, args: unknown[], id: DurableObjectId) => Promise<unknown> | void = () => {},
): DurableObjectNamespace<T> {
  const wrapStub = (stub: DurableObjectStub<T>, id: DurableObjectId) =>
    new Proxy(stub, {
      get(target, prop) {
        const v = (target as unknown as Record<string | symbol, unknown>)[prop];
        if (typeof prop !== "string" || typeof v !== "function") return v;
        return async (...args: unknown[]) => {
          await before(prop, args, id);
          const out = await (target as unknown as Record<string, (...a: unknown[]) => unknown>)[prop]!(...args);
          await after(prop, args, id);
          return out;
        };
      },
    });
  const wrapped = {
    idFromName: (name: string) => ns.idFromName(name),
    idFromString: (id: string) => ns.idFromString(id),
    newUniqueId: () => ns.newUniqueId(),
    get: (id: DurableObjectId) => wrapStub(ns.get(id), id),
    getByName: (name: string) => wrapStub(ns.get(ns.idFromName(name)), ns.idFromName(name)),
    jurisdiction: () => wrapped,
  };
  return wrapped as unknown as DurableObjectNamespace<T>;
}

/**
 * The directory namespace, running `meanwhile` once right before the first shard call that `pick`
 * chooses from its method name, arguments and place among the calls (0 first): another request
 * landing between two steps of one operation.
 */
export function beforeShardCall(
  ns: DurableObjectNamespace<DirectoryShard>,
  pick: (method: string, args: unknown[], n: number) => boolean,
  meanwhile: () => Promise<unknown>,
): DurableObjectNamespace<DirectoryShard> & { landed: () => boolean; calls: string[] } {
  let done = false;
  let n = 0;
  const calls: string[] = [];
  const wrapped = aroundCalls(ns, async (method, args) => {
    calls.push(method);
    if (!done && pick(method, args, n++)) {
      done = true;
      await meanwhile();
    }
  });
  return Object.assign(wrapped, { landed: () => done, calls });
}

/** The directory namespace, running `meanwhile` once right after the first call of `method` returns (it held its answer). */
export function afterShardCall(
  ns: DurableObjectNamespace<DirectoryShard>,
  method: string,
  meanwhile: () => Promise<unknown>,
): DurableObjectNamespace<DirectoryShard> {
  let done = false;
  return aroundCalls(ns, undefined, async (called) => {
    if (called !== method || done) return;
    done = true;
    await meanwhile();
  });
}
