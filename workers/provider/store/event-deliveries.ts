// What an app's events did (docs/events.md "Deliveries and pausing"), in D1: the last 100 delivery
// attempts of each app (`event_deliveries`) by status class, never a plid or a timing, and whether
// its events are paused (`clients.events_paused_at`, written through clients.ts). Every statement on
// `event_deliveries` is here.
//
// Invariants:
// - an app keeps at most DELIVERIES_KEPT rows: each insert trims the app's older ones;
// - test events are limited per app and minute in the statement that records them, so concurrent
//   clicks cannot pass the limit.

type DbEnv = { DB: D1Database };

export const DELIVERY_CLASSES = ["delivered", "refused", "failed", "timed_out"] as const;
export type DeliveryClass = (typeof DELIVERY_CLASSES)[number];

/** Rows kept per app: the page lists the last 100 attempts. */
export const DELIVERIES_KEPT = 100;
/** Test events an app may send per minute. */
export const TEST_EVENTS_PER_MINUTE = 3;

export interface Delivery {
  at: number;
  type: string;
  class: DeliveryClass;
  attempt: number;
}

/** Records one attempt and trims the app's older rows. */
export async function recordDelivery(env: DbEnv, clientId: string, d: Delivery): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("INSERT INTO event_deliveries (client_id, type, class, attempt, at) VALUES (?, ?, ?, ?, ?)").bind(
      clientId,
      d.type,
      d.class,
      d.attempt,
      d.at,
    ),
    trim(env, clientId),
  ]);
}

function trim(env: DbEnv, clientId: string): D1PreparedStatement {
  return env.DB.prepare(
    `DELETE FROM event_deliveries WHERE client_id = ? AND id NOT IN
       (SELECT id FROM event_deliveries WHERE client_id = ? ORDER BY id DESC LIMIT ?)`,
  ).bind(clientId, clientId, DELIVERIES_KEPT);
}

/**
 * Takes a test event's place (its row, provisionally `failed`) while the app sent fewer than
 * TEST_EVENTS_PER_MINUTE in the last minute; its id, or null at the limit.
 */
export async function reserveTestEvent(env: DbEnv, clientId: string, now: number): Promise<number | null> {
  const r = await env.DB.prepare(
    `INSERT INTO event_deliveries (client_id, type, class, attempt, at)
     SELECT ?, 'test', 'failed', 1, ? WHERE
       (SELECT COUNT(*) FROM event_deliveries WHERE client_id = ? AND type = 'test' AND at > ?) < ?
     RETURNING id`,
  )
    .bind(clientId, now, clientId, now - 60_000, TEST_EVENTS_PER_MINUTE)
    .first<{ id: number }>();
  return r?.id ?? null;
}

/** The test event's outcome, in the row it reserved. */
export async function settleTestEvent(env: DbEnv, clientId: string, id: number, c: DeliveryClass): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("UPDATE event_deliveries SET class = ? WHERE id = ? AND client_id = ?").bind(c, id, clientId),
    trim(env, clientId),
  ]);
}

/** The app's last attempts, newest first. */
export async function deliveriesOf(env: DbEnv, clientId: string): Promise<Delivery[]> {
  const { results } = await env.DB.prepare(
    "SELECT type, class, attempt, at FROM event_deliveries WHERE client_id = ? ORDER BY id DESC LIMIT ?",
  )
    .bind(clientId, DELIVERIES_KEPT)
    .all<Delivery>();
  return results;
}
