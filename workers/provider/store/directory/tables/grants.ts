// Automatic-login grants (table `grants`; docs/storage.md "Directory shards"): (device hash, client)
// → person, expiry. A device id is made for one person at their opt-in and names their home
// (keys.ts `newDeviceId`), so a grant lives beside that person's links, and every grant on a device
// is in one shard.
//
// Invariants:
// - a grant belongs to a person at home here, and ends with their link to its client (links.ts)
//   or with the person (people.ts);
// - a live grant is one whose expiry is ahead: every read checks it; expired ones are purged a
//   few at a time by each opt-in (nothing else removes a grant whose device never comes back);
// - a person's grants move only to a fresh device id of their own home, and whatever stays on the
//   old id ends (another person's grants on that browser included).

/** Expired grants deleted per opt-in: nothing else removes a grant whose device never returns. */
const GRANT_PURGE_BATCH = 50;

export class Grants {
  constructor(private readonly sql: SqlStorage) {}

  /** Creates or renews the grant of (device, client); purges a few expired grants. */
  put(deviceHash: string, clientId: string, subscriberId: number, expiresAt: number): void {
    const now = Date.now();
    this.sql.exec(
      `INSERT INTO grants (device_hash, client_id, subscriber_id, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (device_hash, client_id) DO UPDATE SET subscriber_id = excluded.subscriber_id, expires_at = excluded.expires_at`,
      deviceHash,
      clientId,
      subscriberId,
      expiresAt,
    );
    this.sql.exec(
      "DELETE FROM grants WHERE (device_hash, client_id) IN (SELECT device_hash, client_id FROM grants WHERE expires_at <= ? LIMIT ?)",
      now,
      GRANT_PURGE_BATCH,
    );
  }

  /** The person's grants on `oldHash` move to `newHash` (both here); whatever else is on `oldHash` ends. */
  replaceDevice(oldHash: string, newHash: string, subscriberId: number): void {
    this.sql.exec(
      "UPDATE grants SET device_hash = ? WHERE device_hash = ? AND subscriber_id = ?",
      newHash,
      oldHash,
      subscriberId,
    );
    this.sql.exec("DELETE FROM grants WHERE device_hash = ?", oldHash);
  }

  /** Every grant on the device that is not `subscriberId`'s ends, for every client. */
  endOthersOnDevice(deviceHash: string, subscriberId: number): void {
    this.sql.exec("DELETE FROM grants WHERE device_hash = ? AND subscriber_id <> ?", deviceHash, subscriberId);
  }

  /** `endOthersOnDevice`, then the person's own live grant of (device, client): its expiry, or null. */
  keepOwn(deviceHash: string, subscriberId: number, clientId: string): number | null {
    this.endOthersOnDevice(deviceHash, subscriberId);
    return (
      this.sql
        .exec<{ expires_at: number }>(
          "SELECT expires_at FROM grants WHERE device_hash = ? AND client_id = ? AND subscriber_id = ? AND expires_at > ?",
          deviceHash,
          clientId,
          subscriberId,
          Date.now(),
        )
        .toArray()[0]?.expires_at ?? null
    );
  }

  /** The live grant of (device, client): its person and expiry, or null. */
  find(deviceHash: string, clientId: string): { subscriberId: number; expiresAt: number } | null {
    const r = this.sql
      .exec<{ subscriber_id: number; expires_at: number }>(
        "SELECT subscriber_id, expires_at FROM grants WHERE device_hash = ? AND client_id = ? AND expires_at > ?",
        deviceHash,
        clientId,
        Date.now(),
      )
      .toArray()[0];
    return r ? { subscriberId: r.subscriber_id, expiresAt: r.expires_at } : null;
  }

  delete(deviceHash: string, clientId: string): void {
    this.sql.exec("DELETE FROM grants WHERE device_hash = ? AND client_id = ?", deviceHash, clientId);
  }

  /** Ends every grant of the person for the client (every device); how many. */
  endAutoLogin(clientId: string, subscriberId: number): number {
    return this.sql
      .exec("DELETE FROM grants WHERE subscriber_id = ? AND client_id = ? RETURNING 1", subscriberId, clientId)
      .toArray().length;
  }

  /** A link's end: the person's grants for that client. */
  endOfLink(subscriberId: number, clientId: string): void {
    this.sql.exec("DELETE FROM grants WHERE subscriber_id = ? AND client_id = ?", subscriberId, clientId);
  }

  /** The ends of the links holding these plids (a JSON list), read from `links` before they go. */
  endOfPlids(plidList: string): void {
    this.sql.exec(
      `DELETE FROM grants WHERE EXISTS (SELECT 1 FROM links l WHERE l.plid IN (SELECT value FROM json_each(?))
           AND l.client_id = grants.client_id AND l.subscriber_id = grants.subscriber_id)`,
      plidList,
    );
  }

  /** A deleted client's grants, every person's. */
  endOfClient(clientId: string): void {
    this.sql.exec("DELETE FROM grants WHERE client_id = ?", clientId);
  }

  /** A removed person's grants. */
  endOfSubscriber(subscriberId: number): void {
    this.sql.exec("DELETE FROM grants WHERE subscriber_id = ?", subscriberId);
  }
}
