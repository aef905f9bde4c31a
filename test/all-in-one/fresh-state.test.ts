// The workers tests share one workerd from file to file (vitest.config.ts `isolate: false`), and
// each file starts from what test/support/fresh.ts leaves: the migrated schema and the dev seed,
// nothing of a previous file. This file leaves something in every place a file can (D1, KV, a
// running Durable Object and one that has ended, an object's memory, the module caches of the
// isolate), starts fresh again, and finds none of it.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { env } from "../support/env";
import { startFresh } from "../support/fresh";
import { findClient } from "../../workers/provider/store/clients";

type Counter = { hit(key: string, windowMs: number): Promise<{ count: number }> };
const store = (name: string) => env.ONE_TIME.get(env.ONE_TIME.idFromName(name)) as unknown as Counter;
const hits = async (name: string, n: number) => {
  let count = 0;
  for (let i = 0; i < n; i++) count = (await store(name).hit("fresh-probe", 600_000)).count;
  return count;
};

describe("a file's fresh start (test/support/fresh.ts)", () => {
  it("drops the storage, the objects' memory and the isolate's caches of what ran before", async () => {
    // D1 and the isolate's client cache: the seed's client renamed, read (and cached) so
    await env.DB.prepare("UPDATE clients SET name = 'Renamed before' WHERE client_id = 'demo-client'").run();
    expect((await findClient(env, "demo-client", 600_000))?.name).toBe("Renamed before");
    await env.DB.prepare("CREATE TABLE left_behind (x INTEGER)").run();
    await env.RP_KV.put("left-behind", "1");
    // an object that ends before the fresh start (as an evicted one), one still running, one's memory
    expect(await hits("ended", 3)).toBe(3);
    await abortAllDurableObjects();
    expect(await hits("running", 4)).toBe(4);
    await runInDurableObject(env.ONE_TIME.get(env.ONE_TIME.idFromName("running")), (instance) => {
      (instance as unknown as { leftBehind: number }).leftBehind = 1;
    });

    await startFresh();

    expect((await findClient(env, "demo-client", 600_000))?.name).not.toBe("Renamed before");
    const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE name = 'left_behind'").all();
    expect(tables.results).toEqual([]);
    expect(await env.RP_KV.get("left-behind")).toBeNull();
    expect(await hits("ended", 1)).toBe(1);
    expect(await hits("running", 1)).toBe(1);
    const memory = await runInDurableObject(env.ONE_TIME.get(env.ONE_TIME.idFromName("running")), (instance) =>
      String((instance as unknown as { leftBehind?: number }).leftBehind),
    );
    expect(memory).toBe("undefined");
  });
});
