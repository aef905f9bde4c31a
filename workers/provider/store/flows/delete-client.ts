// Deleting a client (docs/storage.md "Changes across shards", the paragraph on client deletion): a
// flow over three stores. The client's links leave every directory shard first, each shard
// recording the client's end in the step that first takes its links there, so a consent landing
// there afterwards is refused in its own step (directory/tables/links.ts `takeClientLinks`) and
// one that landed before is among the links taken; their plids end in the one-time store (no
// events: the app is the one leaving); the client's row in D1 goes last. A deletion that dies
// midway leaves the client in D1, and the next deletion finishes it: taking links again is
// idempotent, and the end is kept. The test numbers the service allocated to the app (a developer's,
// docs/developers.md) leave the directory before the row: they sign in to that app only.

import { deleteClientRow, getClient } from "../clients";
import { storeConfig } from "../config";
import { dirAt, dirShards, subscriberRowAtNumber } from "../directory/index";
import { revokePlids, type StoresEnv } from "./end-plids";
import { testNumbersOf } from "../developers";
import { removeHolder } from "./directory-write";

/** Links taken from a shard per call, and ended per revocation. */
const CLIENT_LINKS_CHUNK = 200;

/** Deletes a client with its links and automatic-login grants; false when absent. */
export async function deleteClient(env: StoresEnv, clientId: string): Promise<boolean> {
  if (!(await getClient(env, clientId))) return false;
  await endClientLinks(env, clientId);
  await removeTestNumbers(env, clientId);
  return deleteClientRow(env, clientId);
}

/** A deleted client's links, in every shard: taken 200 at a time, their plids ended (no events). */
async function endClientLinks(env: StoresEnv, clientId: string): Promise<void> {
  const cfg = storeConfig(env);
  await Promise.all(
    Array.from({ length: dirShards(env) }, async (_, s) => {
      for (;;) {
        const plids = await dirAt(env, s).takeClientLinks(clientId, CLIENT_LINKS_CHUNK);
        if (plids.length) await revokePlids(env, plids, cfg.oneTimeShards, cfg.revocationRetainMs);
        if (plids.length < CLIENT_LINKS_CHUNK) return;
      }
    }),
  );
}

/** The app's own test numbers leave the directory (their D1 rows go with the client's). */
async function removeTestNumbers(env: StoresEnv, clientId: string): Promise<void> {
  for (const n of await testNumbersOf(env, clientId)) {
    const row = await subscriberRowAtNumber(env, n.phone);
    if (row && row.test_clients !== null) await removeHolder(env, n.phone, row.id);
  }
}
