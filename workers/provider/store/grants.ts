// Automatic-login grants in D1: (device hash, client) → subscriber, expiry, first-report flag.

type DbEnv = { DB: D1Database };

export interface AutoLoginGrant {
  deviceHash: string;
  clientId: string;
  subscriberId: number;
  expiresAt: number;
  firstReportPending: boolean;
}

/** Expired grants deleted per opt-in: nothing else removes a grant whose device never returns. */
const GRANT_PURGE_BATCH = 50;

/** Creates or renews the grant of (device, client) with a pending first report; purges a few expired grants. */
export async function putAutoLoginGrant(env: DbEnv, g: Omit<AutoLoginGrant, "firstReportPending">): Promise<void> {
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
 * A fresh device id replaces the one a browser held (an automatic-login opt-in): the same
 * subscriber's grants move to the new id, and the old id's grant for `clientId` ends whoever it
 * was for. The old id itself is never promoted to a new grant (it may have been planted).
 */
export async function replaceDevice(
  env: DbEnv,
  oldHash: string,
  newHash: string,
  subscriberId: number,
  clientId: string,
): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM auto_login_grants WHERE device_hash = ? AND client_id = ?").bind(oldHash, clientId),
    env.DB.prepare("UPDATE auto_login_grants SET device_hash = ? WHERE device_hash = ? AND subscriber_id = ?").bind(
      newHash,
      oldHash,
      subscriberId,
    ),
  ]);
}

/** The live grant of (device, client), or null. */
export async function findAutoLoginGrant(
  env: DbEnv,
  deviceHash: string,
  clientId: string,
): Promise<AutoLoginGrant | null> {
  const r = await env.DB.prepare(
    "SELECT subscriber_id, expires_at, first_report_pending FROM auto_login_grants WHERE device_hash = ? AND client_id = ? AND expires_at > ?",
  )
    .bind(deviceHash, clientId, Date.now())
    .first<{ subscriber_id: number; expires_at: number; first_report_pending: number }>();
  return r
    ? {
        deviceHash,
        clientId,
        subscriberId: r.subscriber_id,
        expiresAt: r.expires_at,
        firstReportPending: r.first_report_pending === 1,
      }
    : null;
}

/** Ends the grant of (device, client), if any (another subscriber signed in on that device). */
export async function deleteAutoLoginGrant(env: DbEnv, deviceHash: string, clientId: string): Promise<void> {
  await env.DB.prepare("DELETE FROM auto_login_grants WHERE device_hash = ? AND client_id = ?")
    .bind(deviceHash, clientId)
    .run();
}

/**
 * The automatic-login flags for a `/v1/user/me` read under a grant: atomically clears the
 * first-report flag, returning whether this read is the first report (autoStatusCheck=Y), and
 * whether the grant still exists.
 */
export async function takeFirstReport(
  env: DbEnv,
  deviceHash: string,
  clientId: string,
): Promise<{ exists: boolean; first: boolean }> {
  // A batch is one transaction: the read and the clear cannot interleave with another report.
  const [read] = await env.DB.batch([
    env.DB.prepare(
      "SELECT first_report_pending AS was FROM auto_login_grants WHERE device_hash = ? AND client_id = ?",
    ).bind(deviceHash, clientId),
    env.DB.prepare(
      "UPDATE auto_login_grants SET first_report_pending = 0 WHERE device_hash = ? AND client_id = ?",
    ).bind(deviceHash, clientId),
  ]);
  const row = (read?.results as { was: number }[] | undefined)?.[0];
  return row ? { exists: true, first: row.was === 1 } : { exists: false, first: false };
}
