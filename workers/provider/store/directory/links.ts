// Links: one pairwise `plid` per (client, subscriber) with the consented items (spec §2.1), in the
// person's home directory shard (a plid names it: directory-keys.ts).

import { type IdentityItem } from "../../../core/spec";
import { storeConfig, type StoreVars } from "../config";
import { auditAll, auditRecord } from "../one-time/audit";
import { newEvent, type EndReason, type PendingEvent } from "../one-time/tables/ended-plids";
import type { EventType } from "../clients";
import { plidShard, plidShardsAnyCount } from "../one-time/keys";
import { storeAt, type OneTimeStore } from "../one-time/one-time-store";
import { dirAt, type DirectoryShard } from "./directory-shard";
import { toSubscriber, type DirectoryEnv, type Subscriber } from "./directory";
import { dirShards, homeOfId, itemsMask, maskItems, newPlid, plidHome } from "./keys";
import type { EndableLink } from "./tables/common";

type DbEnv = { DB: D1Database };

export interface Link {
  plid: string;
  items: IdentityItem[];
  consentedAt: number;
}

export async function findLink(env: DirectoryEnv, clientId: string, subscriberId: number): Promise<Link | null> {
  return dirAt(env, homeOfId(subscriberId)).findLink(subscriberId, clientId);
}

/**
 * Records consent to `items`: keeps the existing plid, or makes a new UUID v4 plid naming the
 * person's home for a first login or after a disconnect. Null when the subscriber (removed, or the
 * number reassigned) or the client (deleted) went away during the sign-in: both are known to the
 * person's home shard, which refuses the link in the same step (a deletion records the client's
 * end in each shard as it takes the links there), so no read of the client follows.
 */
export async function recordConsent(
  env: DirectoryEnv,
  clientId: string,
  subscriberId: number,
  items: readonly IdentityItem[],
): Promise<string | null> {
  const home = homeOfId(subscriberId);
  return dirAt(env, home).recordConsent(subscriberId, clientId, itemsMask(items), newPlid(home, dirShards(env)));
}

/**
 * `recordConsent` for a sign-in about to mint its code, in one call to the person's home: the link
 * written with its login recorded, and the person as it stands now (what the code carries).
 */
export async function consentForLogin(
  env: DirectoryEnv,
  clientId: string,
  subscriberId: number,
  items: readonly IdentityItem[],
): Promise<{ plid: string; subscriber: Subscriber } | null> {
  const home = homeOfId(subscriberId);
  const r = await dirAt(env, home).consentLogin(
    subscriberId,
    clientId,
    itemsMask(items),
    newPlid(home, dirShards(env)),
  );
  return r && { plid: r.plid, subscriber: toSubscriber(r.person) };
}

/**
 * Calls the shard of a plid's link: the one its first hex digits name, or, for a plid moved from
 * the single database (`found` false there), the home that shard keeps for it.
 */
async function atPlid<T>(
  env: DirectoryEnv,
  plid: string,
  call: (shard: DurableObjectStub<DirectoryShard>) => Promise<T>,
  found: (t: T) => boolean,
): Promise<T> {
  const named = plidHome(plid, dirShards(env));
  const first = await call(dirAt(env, named));
  if (found(first)) return first;
  const [forward] = await dirAt(env, named).plidForwards([plid]);
  return forward && forward.home !== named ? call(dirAt(env, forward.home)) : first;
}

/** Whether the client's link of this plid still exists (no end has deleted it). */
export async function linkExists(env: DirectoryEnv, clientId: string, plid: string): Promise<boolean> {
  return atPlid(env, plid, (s) => s.linkExists(clientId, plid), Boolean);
}

/** Records a login of the link (shown on the person's /account page). */
export async function touchLink(env: DirectoryEnv, clientId: string, plid: string): Promise<void> {
  await atPlid(env, plid, (s) => s.touchLink(clientId, plid), Boolean);
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

/** Every app the subscriber is connected to, by app name (links of a deleted client are not shown). */
export async function connectionsOf(env: DirectoryEnv & DbEnv, subscriberId: number): Promise<Connection[]> {
  const rows = await dirAt(env, homeOfId(subscriberId)).connections(subscriberId);
  if (rows.length === 0) return [];
  const names = new Map(
    (
      await env.DB.prepare("SELECT client_id, name FROM clients WHERE client_id IN (SELECT value FROM json_each(?))")
        .bind(JSON.stringify(rows.map((r) => r.client_id)))
        .all<{ client_id: string; name: string }>()
    ).results.map((c) => [c.client_id, c.name]),
  );
  return rows
    .filter((r) => names.has(r.client_id))
    .map((r) => ({
      clientId: r.client_id,
      appName: names.get(r.client_id)!,
      items: maskItems(r.items),
      connectedAt: r.connected_at,
      lastLoginAt: r.last_login_at,
      autoLoginUntil: r.auto_until,
    }))
    .sort((a, b) => (a.appName < b.appName ? -1 : a.appName > b.appName ? 1 : a.clientId < b.clientId ? -1 : 1));
}

type StoreEnv = DbEnv & DirectoryEnv & { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

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
 * Ends a person's links (with every client, or one) as a disconnect does, for a reason other than
 * the client's own disconnect (docs/events.md): `endRows`. Returns the links ended.
 */
export async function endLinksOf(
  env: StoreEnv & StoreVars,
  subscriberId: number,
  clientId: string | null,
  reason: EndReason,
): Promise<EndedLink[]> {
  const rows = await dirAt(env, homeOfId(subscriberId)).linksOf(subscriberId, clientId);
  return endRows(env, rows, reason);
}

/**
 * Ends links: their codes and tokens end and an event for each client with an `events_uri` that
 * takes `plid-deleted` events is recorded, in one store call per object; then the links (consent,
 * plid) and those subscribers' grants for those clients go from their shards, audited without
 * personal data. Each part is idempotent: a retry after a failure anywhere ends what is left, and
 * records no second event.
 */
export async function endRows(
  env: StoreEnv & StoreVars,
  rows: readonly EndableLink[],
  reason: EndReason,
): Promise<EndedLink[]> {
  if (rows.length === 0) return [];
  const cfg = storeConfig(env);
  const clients = JSON.stringify([...new Set(rows.map((r) => r.client_id))]);
  // the clients to tell: those with an events_uri that take plid-deleted events
  const told = new Set(
    (
      await env.DB.prepare(
        `SELECT client_id FROM clients WHERE client_id IN (SELECT value FROM json_each(?))
           AND events_uri <> '' AND EXISTS (SELECT 1 FROM json_each(event_types) WHERE value = ?)`,
      )
        .bind(clients, "plid-deleted" satisfies EventType)
        .all<{ client_id: string }>()
    ).results.map((c) => c.client_id),
  );
  const events = rows.filter((r) => told.has(r.client_id)).map((r) => newEvent(r.client_id, r.plid, reason));
  await revokePlids(
    env,
    rows.map((r) => r.plid),
    cfg.oneTimeShards,
    cfg.revocationRetainMs,
    events,
  );
  const byHome = new Map<number, EndableLink[]>();
  for (const r of rows) {
    const h = homeOfId(r.subscriber_id);
    byHome.set(h, [...(byHome.get(h) ?? []), r]);
  }
  await Promise.all([...byHome].map(([h, links]) => dirAt(env, h).deleteLinks(links)));
  await auditAll(
    env,
    rows.map((r) => auditRecord("plid.ended", r.client_id, "ok", { reason, event: told.has(r.client_id) })),
  );
  return rows.map((r) => ({ clientId: r.client_id, plid: r.plid, subscriberId: r.subscriber_id }));
}

/**
 * A client's disconnect of `plid` (spec §4.4): false when the client has no such link. Its codes
 * and tokens end first (the store), then the link and the client's grants of that subscriber go
 * (the plid's shard); a retry after a failure between the two finds the link and completes.
 */
export async function endLink(
  env: StoreEnv,
  clientId: string,
  plid: string,
  shards: number,
  retainMs: number,
): Promise<boolean> {
  const link = await atPlid(env, plid, (s) => s.linkByPlid(clientId, plid), Boolean);
  if (!link) return false;
  await revokePlids(env, [plid], shards, retainMs);
  await dirAt(env, homeOfId(link.subscriber_id)).deleteLinks([link]);
  return true;
}
