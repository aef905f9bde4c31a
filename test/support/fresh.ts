// Every workers test file starts as on a fresh workerd, from the migrated schema and the dev seed.
// The project hands one workerd, its isolate and its module cache from file to file (`isolate:
// false` in vitest.config.ts), so ./setup.ts calls `startFresh` before each file to drop what the
// previous one left (docs/testing.md "Where the time goes"); test/all-in-one/fresh-state.test.ts
// checks that it does.
import { applyD1Migrations, listDurableObjectIds, reset, runInDurableObject } from "cloudflare:test";
import { env } from "./env";
import { carrierControl } from "./fake-carrier";
import { siteverifyMode } from "./turnstile";
import { applyDevSeed } from "../../workers/all-in-one/seed";
import { forgetIsolateMemory } from "../../workers/provider/store/config";

/** The Durable Object namespaces of the worker under test (wrangler.toml). */
export function namespaces(): DurableObjectNamespace[] {
  return [env.ONE_TIME, env.DIRECTORY, env.METRICS, env.GUARD, env.RP_STORE] as unknown as DurableObjectNamespace[];
}

/**
 * Drops what a previous file left, then migrates and seeds:
 * - the storage and the objects' memory, by `reset` (D1, KV, R2 and every Durable Object's, each
 *   object ended with what it held). It empties only the objects running at the time: one ended
 *   since (evicted, or aborted by a test) keeps its storage through it, so each is woken first;
 * - what the worker's modules keep in the isolate (workers/provider/store/config.ts);
 * - the state of the fakes that keep some (the carrier's table, Turnstile's mode).
 */
export async function startFresh(): Promise<void> {
  for (const ns of namespaces())
    for (const id of await listDurableObjectIds(ns)) await runInDurableObject(ns.get(id), () => {});
  // D1, KV and R2 are objects too, in Miniflare: each is woken by a read
  await Promise.all([env.DB.prepare("SELECT 1").first(), env.RP_KV.get("fresh"), env.AUDIT.head("fresh")]);
  await reset();
  forgetIsolateMemory();
  await Promise.all([carrierControl("/_carrier/reset", {}), siteverifyMode("ok")]);
  await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
  await applyDevSeed(env);
}
