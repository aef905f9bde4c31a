// Links in D1: one pairwise `plid` per (client, subscriber) with the consented items (spec §2.1).

import { randomUuid } from "../../core/crypto";
import { isIdentityItem, type IdentityItem } from "../../core/spec";
import { plidShard, storeForPlid, type OneTimeStore } from "./one-time-store";

type DbEnv = { DB: D1Database };

export interface Link {
  plid: string;
  items: IdentityItem[];
  consentedAt: number;
}

export async function findLink(env: DbEnv, clientId: string, subscriberId: number): Promise<Link | null> {
  const r = await env.DB.prepare(
    "SELECT plid, items, consented_at FROM links WHERE client_id = ? AND subscriber_id = ?",
  )
    .bind(clientId, subscriberId)
    .first<{ plid: string; items: string; consented_at: number }>();
  return r
    ? { plid: r.plid, items: (JSON.parse(r.items) as string[]).filter(isIdentityItem), consentedAt: r.consented_at }
    : null;
}

/**
 * Records consent to `items`: keeps the existing plid (consent asked again when items grew,
 * docs/architecture.md §4.7), or makes a new UUID v4 plid for a first login or after a disconnect.
 */
export async function recordConsent(
  env: DbEnv,
  clientId: string,
  subscriberId: number,
  items: readonly IdentityItem[],
): Promise<string> {
  const r = await env.DB.prepare(
    `INSERT INTO links (client_id, subscriber_id, plid, items, consented_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (client_id, subscriber_id) DO UPDATE SET items = excluded.items, consented_at = excluded.consented_at
     RETURNING plid`,
  )
    .bind(clientId, subscriberId, randomUuid(), JSON.stringify(items), Date.now())
    .first<{ plid: string }>();
  return r!.plid;
}

type StoreEnv = { DB: D1Database; ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/**
 * Ends plids in the one-time store, one call per object holding them (all of a plid's codes and
 * tokens live in its object): from now on none of their codes redeems and none of their tokens reads.
 */
export async function revokePlids(
  env: Pick<StoreEnv, "ONE_TIME">,
  plids: readonly string[],
  shards: number,
  retainMs: number,
): Promise<void> {
  const byShard = new Map<number, string[]>();
  for (const p of plids) {
    const s = plidShard(p, shards);
    byShard.set(s, [...(byShard.get(s) ?? []), p]);
  }
  await Promise.all(
    [...byShard.values()].map((list) => storeForPlid(env, list[0]!, shards).revokePlids(list, retainMs)),
  );
}

/**
 * A client's disconnect of `plid` (spec §4.4): false when the client has no such link. Its codes
 * and tokens end first (the store), then the link and the client's grants of that subscriber go
 * (D1); a retry after a failure between the two finds the link and completes.
 */
export async function endLink(
  env: StoreEnv,
  clientId: string,
  plid: string,
  shards: number,
  retainMs: number,
): Promise<boolean> {
  const link = await env.DB.prepare("SELECT subscriber_id FROM links WHERE client_id = ? AND plid = ?")
    .bind(clientId, plid)
    .first<{ subscriber_id: number }>();
  if (!link) return false;
  await revokePlids(env, [plid], shards, retainMs);
  await env.DB.batch([
    env.DB.prepare("DELETE FROM auto_login_grants WHERE client_id = ? AND subscriber_id = ?").bind(
      clientId,
      link.subscriber_id,
    ),
    env.DB.prepare("DELETE FROM links WHERE client_id = ? AND plid = ?").bind(clientId, plid),
  ]);
  return true;
}
