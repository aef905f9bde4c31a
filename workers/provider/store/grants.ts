// Automatic-login grants in D1: (device hash, client) → subscriber, expiry. A grant's "first report
// pending" flag lives with its plid's codes in the one-time store (firstReportKey), where
// /v1/user/me takes it in the same call that spends the token's read; the D1 column is unused.

type DbEnv = { DB: D1Database };

export interface AutoLoginGrant {
  deviceHash: string;
  clientId: string;
  subscriberId: number;
  expiresAt: number;
}

/** Expired grants deleted per opt-in: nothing else removes a grant whose device never returns. */
const GRANT_PURGE_BATCH = 50;

/** Creates or renews the grant of (device, client); purges a few expired grants. */
export async function putAutoLoginGrant(env: DbEnv, g: AutoLoginGrant): Promise<void> {
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO auto_login_grants (device_hash, client_id, subscriber_id, expires_at, first_report_pending, created_at)
       VALUES (?, ?, ?, ?, 1, ?)
       ON CONFLICT (device_hash, client_id) DO UPDATE SET subscriber_id = excluded.subscriber_id,
         expires_at = excluded.expires_at, first_report_pending = 1, created_at = excluded.created_at`,
    ).bind(g.deviceHash, g.clientId, g.subscriberId, g.expiresAt, now),
    env.DB.prepare(
      "DELETE FROM auto_login_grants WHERE rowid IN (SELECT rowid FROM auto_login_grants WHERE expires_at <= ? LIMIT ?)",
    ).bind(now, GRANT_PURGE_BATCH),
  ]);
}

/**
 * A fresh device id replaces the one a browser held (an automatic-login opt-in): the subscriber's
 * grants move to the new id, and whatever stays on the old id (another subscriber's grants, for
 * every client) ends: that person's automatic login must not answer from this browser again, even
 * if the new cookie never reaches it (a lost response). The old id itself is never promoted to a
 * new grant (it may have been planted).
 */
export async function replaceDevice(env: DbEnv, oldHash: string, newHash: string, subscriberId: number): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("UPDATE auto_login_grants SET device_hash = ? WHERE device_hash = ? AND subscriber_id = ?").bind(
      newHash,
      oldHash,
      subscriberId,
    ),
    env.DB.prepare("DELETE FROM auto_login_grants WHERE device_hash = ?").bind(oldHash),
  ]);
}

/**
 * Every grant on the device that is not `subscriberId`'s ends, for every client: that subscriber
 * has just proven their number on the browser holding the device id. Grants are only ever created
 * on (or moved to) a fresh device id, so none of another subscriber can land on this one later.
 */
export async function endOthersOnDevice(env: DbEnv, deviceHash: string, subscriberId: number): Promise<void> {
  await env.DB.prepare("DELETE FROM auto_login_grants WHERE device_hash = ? AND subscriber_id <> ?")
    .bind(deviceHash, subscriberId)
    .run();
}

/**
 * `endOthersOnDevice`, then the subscriber's own live grant of (device, client), or null, in one
 * batch: what an interactive login without the opt-in keeps and reports.
 */
export async function keepOwnGrant(
  env: DbEnv,
  deviceHash: string,
  subscriberId: number,
  clientId: string,
): Promise<AutoLoginGrant | null> {
  const [, own] = await env.DB.batch<{ expires_at: number }>([
    env.DB.prepare("DELETE FROM auto_login_grants WHERE device_hash = ? AND subscriber_id <> ?").bind(
      deviceHash,
      subscriberId,
    ),
    env.DB.prepare(
      "SELECT expires_at FROM auto_login_grants WHERE device_hash = ? AND client_id = ? AND subscriber_id = ? AND expires_at > ?",
    ).bind(deviceHash, clientId, subscriberId, Date.now()),
  ]);
  const r = own?.results[0];
  return r ? { deviceHash, clientId, subscriberId, expiresAt: r.expires_at } : null;
}

/** The live grant of (device, client), or null. */
export async function findAutoLoginGrant(
  env: DbEnv,
  deviceHash: string,
  clientId: string,
): Promise<AutoLoginGrant | null> {
  const r = await env.DB.prepare(
    "SELECT subscriber_id, expires_at FROM auto_login_grants WHERE device_hash = ? AND client_id = ? AND expires_at > ?",
  )
    .bind(deviceHash, clientId, Date.now())
    .first<{ subscriber_id: number; expires_at: number }>();
  return r ? { deviceHash, clientId, subscriberId: r.subscriber_id, expiresAt: r.expires_at } : null;
}

/** Ends the grant of (device, client), if any (its link ended while it was being stored). */
export async function deleteAutoLoginGrant(env: DbEnv, deviceHash: string, clientId: string): Promise<void> {
  await env.DB.prepare("DELETE FROM auto_login_grants WHERE device_hash = ? AND client_id = ?")
    .bind(deviceHash, clientId)
    .run();
}

/** Ends every automatic-login grant of the person for the app (every device); returns how many. */
export async function endAutoLogin(env: DbEnv, clientId: string, subscriberId: number): Promise<number> {
  const r = await env.DB.prepare("DELETE FROM auto_login_grants WHERE client_id = ? AND subscriber_id = ?")
    .bind(clientId, subscriberId)
    .run();
  return r.meta.changes ?? 0;
}
