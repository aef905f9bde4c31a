// Ending plids (docs/storage.md "Durable Object OneTimeStore", docs/events.md): a flow over three
// stores. A plid ends by a client's disconnect, the person's termination on /account, a number
// reassigned, a subscriber removed (directory jobs) or a client deleted (delete-client.ts). Its
// end is written into every one-time-store object that may hold its codes and tokens, with the
// events for the apps that take them (read from D1 `clients`), and only then its link leaves the
// person's home shard: so a link never outlives an end that failed, and a retry ends what is left.

import { sha256 } from "../../../core/crypto";
import {
  auditAll,
  auditOnce,
  auditRecord,
  onceKey,
  plidShard,
  plidShardsAnyCount,
  storeAt,
  type OneTimeEnv,
  changeEvent,
  newEvent,
  stampedEvent,
  type StreamReason,
  type EndReason,
  type PendingEvent,
} from "../one-time/index";
import { type DirectoryEnv, dirAt, homeOfId, linkByPlid, type EndableLink } from "../directory/index";
import { clientsTold } from "../clients";
import { storeConfig, type StoreVars } from "../config";
import { appsTold, streamApps } from "./ssf-events";

/** What a flow over the stores binds: D1 (`clients`), the one-time store, the directory, and their variables. */
export type StoresEnv = { DB: D1Database } & OneTimeEnv & DirectoryEnv & StoreVars;

/**
 * Ends plids in the one-time store, one call per object that may hold them (all of a plid's codes
 * and tokens live in its object): from now on none of their codes redeems and none of their tokens
 * reads. The events go to the plid's object under this worker's `shards` only, so each is sent once.
 */
export async function revokePlids(
  env: OneTimeEnv,
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

/**
 * A SIM change or a port at `at` opened person `subscriberId`'s risk window (directory/risk.ts):
 * each app of theirs that takes `credential-change` events is sent one (a CAEP credential-change
 * carrying its plid), recorded in the plid's one-time-store object as an end's events are; the
 * links stay, and each link's `risk.window_opened` is audited. Idempotent: the same change
 * records no second event and no second audit event (`auditOnce`). How many apps are told.
 */
export async function tellCredentialChange(env: StoresEnv, subscriberId: number, at: number): Promise<number> {
  const rows = await dirAt(env, homeOfId(subscriberId)).linksOf(subscriberId, null);
  if (rows.length === 0) return 0;
  const ids = [...new Set(rows.map((r) => r.client_id))];
  const told = await appsTold(env, ids, "credential_change", await clientsTold(env, ids, "credential-change"));
  const events = await Promise.all(
    rows.filter((r) => told.has(r.client_id)).map((r) => changeEvent(r.client_id, r.plid, at)),
  );
  const cfg = storeConfig(env);
  if (events.length) await revokePlids(env, [], cfg.oneTimeShards, cfg.revocationRetainMs, events);
  // once per link and change, however often the job runs (a kill before it was marked done, or
  // two runs at once): the trail counts each opened window once
  const keyed = await Promise.all(
    rows.map(
      async (r) =>
        [
          await onceKey(`risk.window_opened:${r.plid}:${at}`),
          auditRecord("risk.window_opened", r.client_id, "ok", { event: told.has(r.client_id) }),
        ] as const,
    ),
  );
  await auditOnce(env, await sha256(`credential_change:${subscriberId}:${at}`), keyed);
  return events.length;
}

/**
 * A change at `at` of person `subscriberId` that only stream apps are told of (automatic login
 * ended with app `clientId`; a passkey made or removed: every app, `clientId` null): each of the
 * person's apps (or that one) whose Shared Signals stream takes what `reason` maps to is sent it,
 * recorded in the plid's one-time-store object as an end's events are. An app without a stream is
 * told nothing. Idempotent: the same change records no second event. How many apps are told.
 */
export async function tellStreams(
  env: StoresEnv,
  subscriberId: number,
  clientId: string | null,
  reason: StreamReason,
  at: number,
): Promise<number> {
  const rows = await dirAt(env, homeOfId(subscriberId)).linksOf(subscriberId, clientId);
  if (rows.length === 0) return 0;
  const { told } = await streamApps(env, [...new Set(rows.map((r) => r.client_id))], reason);
  const events = await Promise.all(
    rows.filter((r) => told.has(r.client_id)).map((r) => stampedEvent(r.client_id, r.plid, reason, at)),
  );
  const cfg = storeConfig(env);
  if (events.length) await revokePlids(env, [], cfg.oneTimeShards, cfg.revocationRetainMs, events);
  return events.length;
}

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
  env: StoresEnv,
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
export async function endRows(env: StoresEnv, rows: readonly EndableLink[], reason: EndReason): Promise<EndedLink[]> {
  if (rows.length === 0) return [];
  const cfg = storeConfig(env);
  // the clients to tell: those with an events_uri that take plid-deleted events
  const ids = [...new Set(rows.map((r) => r.client_id))];
  // and those whose Shared Signals stream takes what this end maps to (ssf-events.ts)
  const told = await appsTold(env, ids, reason, await clientsTold(env, ids, "plid-deleted"));
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
 * and tokens end first (the store), with, when the client's Shared Signals stream takes what
 * `client_disconnected` maps to, its event (to that client alone; an app without a stream is told
 * nothing); then the link and the client's grants of that subscriber go (the plid's shard); a
 * retry after a failure between the two finds the link and completes, recording no second event.
 */
export async function endLink(
  env: StoresEnv,
  clientId: string,
  plid: string,
  shards: number,
  retainMs: number,
): Promise<boolean> {
  const link = await linkByPlid(env, clientId, plid);
  if (!link) return false;
  const { told } = await streamApps(env, [clientId], "client_disconnected");
  const events = told.has(clientId) ? [newEvent(clientId, plid, "client_disconnected")] : [];
  await revokePlids(env, [plid], shards, retainMs, events);
  await dirAt(env, homeOfId(link.subscriber_id)).deleteLinks([link]);
  return true;
}
