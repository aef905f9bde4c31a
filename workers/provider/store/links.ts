// Links in D1: one pairwise `plid` per (client, subscriber) with the consented items (spec §2.1).

import { randomUuid } from "../../core/crypto";
import { isIdentityItem, type IdentityItem } from "../../core/spec";
import { toSubscriber, type Subscriber, type SubscriberRow } from "./directory";

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

/** The subscriber and consented items behind a client's plid, or null when the link is gone. */
export async function linkedSubscriber(
  env: DbEnv,
  clientId: string,
  plid: string,
): Promise<{ subscriber: Subscriber; items: IdentityItem[] } | null> {
  const r = await env.DB.prepare(
    "SELECT s.*, l.items AS link_items FROM links l JOIN subscribers s ON s.id = l.subscriber_id WHERE l.client_id = ? AND l.plid = ?",
  )
    .bind(clientId, plid)
    .first<SubscriberRow & { link_items: string }>();
  return r
    ? { subscriber: toSubscriber(r), items: (JSON.parse(r.link_items) as string[]).filter(isIdentityItem) }
    : null;
}

/** Removes a client's link for `plid` and that subscriber's automatic-login grants for the client. */
export async function disconnectLink(env: DbEnv, clientId: string, plid: string): Promise<boolean> {
  const [grants, links] = await env.DB.batch([
    env.DB.prepare(
      "DELETE FROM auto_login_grants WHERE client_id = ?1 AND subscriber_id = (SELECT subscriber_id FROM links WHERE client_id = ?1 AND plid = ?2)",
    ).bind(clientId, plid),
    env.DB.prepare("DELETE FROM links WHERE client_id = ? AND plid = ?").bind(clientId, plid),
  ]);
  void grants;
  return (links?.meta.changes ?? 0) > 0;
}
