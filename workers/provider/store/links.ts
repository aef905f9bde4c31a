// Links in D1: one pairwise `plid` per (client, subscriber) with the consented items (spec §2.1).

import { isIdentityItem, type IdentityItem } from "../../core/spec";
import { MAX_SHARDS, storeConfig, type StoreVars } from "./config";
import { auditAll, auditRecord } from "./audit";
import { newEvent, type EndReason, type PendingEvent } from "./events";
import { plidShard, storeAt, type OneTimeStore } from "./one-time-store";

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
 * Null when the subscriber (removed, or the number reassigned) or the client (deleted) went away
 * during the sign-in.
 */
export async function recordConsent(
  env: DbEnv,
  clientId: string,
  subscriberId: number,
  items: readonly IdentityItem[],
): Promise<string | null> {
  const r = await env.DB.prepare(
    `INSERT INTO links (client_id, subscriber_id, plid, items, consented_at, linked_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?5
       WHERE EXISTS (SELECT 1 FROM subscribers WHERE id = ?2) AND EXISTS (SELECT 1 FROM clients WHERE client_id = ?1)
     ON CONFLICT (client_id, subscriber_id) DO UPDATE SET items = excluded.items, consented_at = excluded.consented_at
     RETURNING plid`,
  )
    .bind(clientId, subscriberId, crypto.randomUUID(), JSON.stringify(items), Date.now())
    .first<{ plid: string }>();
  return r?.plid ?? null;
}

/** Whether the client's link of this plid still exists (no end has deleted it). */
export async function linkExists(env: DbEnv, clientId: string, plid: string): Promise<boolean> {
  const r = await env.DB.prepare("SELECT 1 AS one FROM links WHERE client_id = ? AND plid = ?")
    .bind(clientId, plid)
    .first<{ one: number }>();
  return r !== null;
}

/** Records a login of the link (shown on the person's /account page). */
export async function touchLink(env: DbEnv, clientId: string, plid: string): Promise<void> {
  await env.DB.prepare("UPDATE links SET last_login_at = ? WHERE client_id = ? AND plid = ?")
    .bind(Date.now(), clientId, plid)
    .run();
}

/** One of the person's connections, as their /account page shows it. */
export interface Connection {
  clientId: string;
  appName: string;
  items: IdentityItem[];
  connectedAt: number;
  lastLoginAt: number | null;
  /** When automatic login ends (the latest live grant), or null when it is off. */
  autoLoginUntil: number | null;
}

/** Every app the subscriber is connected to, by app name. */
export async function connectionsOf(env: DbEnv, subscriberId: number): Promise<Connection[]> {
  const rows = (
    await env.DB.prepare(
      `SELECT l.client_id, c.name, l.items, COALESCE(l.linked_at, l.consented_at) AS connected_at, l.last_login_at,
         (SELECT max(g.expires_at) FROM auto_login_grants g
           WHERE g.client_id = l.client_id AND g.subscriber_id = l.subscriber_id AND g.expires_at > ?) AS auto_until
       FROM links l JOIN clients c ON c.client_id = l.client_id
       WHERE l.subscriber_id = ? ORDER BY c.name, l.client_id`,
    )
      .bind(Date.now(), subscriberId)
      .all<{
        client_id: string;
        name: string;
        items: string;
        connected_at: number;
        last_login_at: number | null;
        auto_until: number | null;
      }>()
  ).results;
  return rows.map((r) => ({
    clientId: r.client_id,
    appName: r.name,
    items: (JSON.parse(r.items) as string[]).filter(isIdentityItem),
    connectedAt: r.connected_at,
    lastLoginAt: r.last_login_at,
    autoLoginUntil: r.auto_until,
  }));
}

type StoreEnv = { DB: D1Database; ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/**
 * Every object a plid's codes and tokens can be in, whichever ONE_TIME_SHARDS the worker that
 * minted them had: a power of two up to MAX_SHARDS, so at most 7 objects. A worker ending a plid
 * need not share the minting worker's setting (or the setting changed since): its own shard alone
 * would leave the plid's tokens reading in another object.
 */
export function plidShardsAnyCount(plid: string): Set<number> {
  const out = new Set<number>();
  for (let k = 1; k <= MAX_SHARDS; k *= 2) out.add(plidShard(plid, k));
  return out;
}

/**
 * Ends plids in the one-time store, one call per object that may hold them (all of a plid's codes
 * and tokens live in its object): from now on none of their codes redeems and none of their tokens
 * reads. The events go to the plid's object under this worker's `shards` only, so each is sent once.
 */
export async function revokePlids(
  env: Pick<StoreEnv, "ONE_TIME">,
  plids: readonly string[],
  shards: number,
  retainMs: number,
  events: readonly PendingEvent[] = [],
): Promise<void> {
  const byShard = new Map<number, { plids: string[]; events: PendingEvent[] }>();
  const at = (s: number) => {
    const g = byShard.get(s) ?? { plids: [], events: [] };
    byShard.set(s, g);
    return g;
  };
  for (const p of plids) for (const s of plidShardsAnyCount(p)) at(s).plids.push(p);
  for (const e of events) at(plidShard(e.plid, shards)).events.push(e);
  // Object 0 gets every ended plid (a setting of 1 maps them all there): a bulk end (a client
  // deleted) goes in calls of REVOKE_CHUNK, so the object serves codes and tokens in between. The
  // calls that record events go last, once every other object has the ends: an app is never told
  // of an end that failed somewhere (a retry of the whole end records no second event).
  const plain: (() => Promise<void>)[] = [];
  const withEvents: (() => Promise<void>)[] = [];
  for (const [s, g] of byShard) {
    for (let i = 0; i < Math.max(g.plids.length, 1); i += REVOKE_CHUNK) {
      const events = i === 0 ? g.events : [];
      const call = () => storeAt(env, s).revokePlids(g.plids.slice(i, i + REVOKE_CHUNK), retainMs, events);
      (events.length ? withEvents : plain).push(call);
    }
  }
  await Promise.all(plain.map((c) => c()));
  await Promise.all(withEvents.map((c) => c()));
}

/** Plids per revocation call into one object. */
const REVOKE_CHUNK = 200;

/** A link being ended. */
export interface EndedLink {
  clientId: string;
  plid: string;
  subscriberId: number;
}

/**
 * Ends the links `where` selects (an SQL condition on `l`, the links table) as a disconnect does,
 * for a reason other than the client's own disconnect (docs/events.md): their codes and tokens end
 * and an event for each client with an `events_uri` is recorded, in one store call per object;
 * then the links (consent, plid) and those subscribers' grants for those clients go, audited
 * without personal data. Returns the links ended.
 */
export async function endLinks(
  env: StoreEnv & StoreVars,
  where: string,
  binds: readonly unknown[],
  reason: EndReason,
): Promise<EndedLink[]> {
  const rows = (
    await env.DB.prepare(
      `SELECT l.client_id, l.plid, l.subscriber_id, c.events_uri FROM links l JOIN clients c ON c.client_id = l.client_id WHERE ${where}`,
    )
      .bind(...binds)
      .all<{ client_id: string; plid: string; subscriber_id: number; events_uri: string | null }>()
  ).results;
  return endRows(env, rows, reason);
}

/**
 * Ends links deleted by the statement that removed their subscriber (`DELETE FROM links …
 * RETURNING client_id, plid, subscriber_id`), which `endLinks` did not see: made by a consent that
 * landed between its read and the removal. Their codes and tokens end as any other's.
 */
export async function endLateLinks(
  env: StoreEnv & StoreVars,
  late: readonly { client_id: string; plid: string; subscriber_id: number }[],
  reason: EndReason,
): Promise<EndedLink[]> {
  if (late.length === 0) return [];
  const clients = JSON.stringify([...new Set(late.map((r) => r.client_id))]);
  const uris = new Map(
    (
      await env.DB.prepare(
        "SELECT client_id, events_uri FROM clients WHERE client_id IN (SELECT value FROM json_each(?))",
      )
        .bind(clients)
        .all<{ client_id: string; events_uri: string | null }>()
    ).results.map((c) => [c.client_id, c.events_uri]),
  );
  return endRows(
    env,
    late.map((r) => ({ ...r, events_uri: uris.get(r.client_id) ?? null })),
    reason,
  );
}

/** Revokes the links' plids with their events, then deletes what is left of them, audited. */
async function endRows(
  env: StoreEnv & StoreVars,
  rows: readonly { client_id: string; plid: string; subscriber_id: number; events_uri: string | null }[],
  reason: EndReason,
): Promise<EndedLink[]> {
  if (rows.length === 0) return [];
  const cfg = storeConfig(env);
  const events = rows.filter((r) => r.events_uri).map((r) => newEvent(r.client_id, r.plid, reason));
  await revokePlids(
    env,
    rows.map((r) => r.plid),
    cfg.oneTimeShards,
    cfg.revocationRetainMs,
    events,
  );
  await env.DB.batch(
    rows.flatMap((r) => [
      env.DB.prepare("DELETE FROM auto_login_grants WHERE client_id = ? AND subscriber_id = ?").bind(
        r.client_id,
        r.subscriber_id,
      ),
      env.DB.prepare("DELETE FROM links WHERE client_id = ? AND plid = ?").bind(r.client_id, r.plid),
    ]),
  );
  await auditAll(
    env,
    rows.map((r) => auditRecord("plid.ended", r.client_id, "ok", { reason, event: r.events_uri !== null })),
  );
  return rows.map((r) => ({ clientId: r.client_id, plid: r.plid, subscriberId: r.subscriber_id }));
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
