// Links (tables `links`, `ended_clients`, `plid_homes`; docs/storage.md "Directory shards"): one
// pairwise plid per (person, client) with the consented items (spec §2.1), in the person's home;
// the clients deleted; and where a plid moved from the single database has its link.
//
// Invariants:
// - a link belongs to a person at home here: a consent links only a person who still exists, read
//   in the same call;
// - a consent for a deleted client is refused in its own step (`ended_clients`): a deletion records
//   the client's end in the same step as the first links it takes here, so the calls that follow
//   take every link there will ever be;
// - a link keeps its plid for its life (a consent renews the items, never the plid), and goes with
//   its person's grants for that client (grants.ts);
// - a plid names its person's home (keys.ts `plidHome`), but for a plid moved from the single
//   database, whose named shard keeps its home in `plid_homes`.

import { linkRow, rowsIn, type EndableLink, type LinkRow, type SubscriberRow } from "./common";
import type { Grants } from "./grants";

/** One of a person's links with the latest live grant of it (their /account page). */
export type ConnectionRow = {
  client_id: string;
  items: number;
  connected_at: number;
  last_login_at: number | null;
  auto_until: number | null;
};

export class Links {
  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
    private readonly grants: Grants,
  ) {}

  find(subscriberId: number, clientId: string): LinkRow | null {
    const r = this.sql
      .exec<{ plid: string; items: number; consented_at: number }>(
        "SELECT plid, items, consented_at FROM links WHERE subscriber_id = ? AND client_id = ?",
        subscriberId,
        clientId,
      )
      .toArray()[0];
    return r ? linkRow(r) : null;
  }

  /**
   * Records consent: keeps the existing plid, or links with `newPlid`. Null when the person
   * (`person`, read in the same call) is gone or the client deleted.
   */
  recordConsent(
    person: SubscriberRow | null,
    subscriberId: number,
    clientId: string,
    items: number,
    newPlid: string,
  ): string | null {
    return person ? this.link(subscriberId, clientId, items, newPlid, false) : null;
  }

  /** A sign-in's consent: `recordConsent` with the link's login recorded, and the person the code will carry. */
  consentLogin(
    person: SubscriberRow | null,
    subscriberId: number,
    clientId: string,
    items: number,
    newPlid: string,
  ): { plid: string; person: SubscriberRow } | null {
    const plid = person ? this.link(subscriberId, clientId, items, newPlid, true) : null;
    return plid === null ? null : { plid, person: person! };
  }

  /** Whether the client was deleted (its links here taken, and none written since). */
  clientEnded(clientId: string): boolean {
    return this.sql.exec("SELECT 1 FROM ended_clients WHERE client_id = ?", clientId).toArray().length > 0;
  }

  /**
   * The link written (or its consent renewed) for a person at home here, with its last login now
   * when `login` (a sign-in's consent); null for a deleted client.
   */
  private link(subscriberId: number, clientId: string, items: number, newPlid: string, login: boolean): string | null {
    if (this.clientEnded(clientId)) return null;
    const now = Date.now();
    return (
      this.sql
        .exec<{ plid: string }>(
          `INSERT INTO links (subscriber_id, client_id, plid, items, consented_at, linked_at, last_login_at)
           VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)
           ON CONFLICT (subscriber_id, client_id) DO UPDATE SET items = excluded.items, consented_at = excluded.consented_at,
             last_login_at = coalesce(excluded.last_login_at, last_login_at)
           RETURNING plid`,
          subscriberId,
          clientId,
          newPlid,
          items,
          now,
          login ? now : null,
        )
        .toArray()[0]?.plid ?? null
    );
  }

  exists(clientId: string, plid: string): boolean {
    return this.sql.exec("SELECT 1 FROM links WHERE plid = ? AND client_id = ?", plid, clientId).toArray().length > 0;
  }

  /** Records a login of the link; false when no such link is here. */
  touch(clientId: string, plid: string): boolean {
    return (
      this.sql
        .exec(
          "UPDATE links SET last_login_at = ? WHERE plid = ? AND client_id = ? RETURNING 1",
          Date.now(),
          plid,
          clientId,
        )
        .toArray().length > 0
    );
  }

  /** Where plids moved from the single database have their links (none for a plid that names its home). */
  plidForwards(plids: readonly string[]): { plid: string; home: number }[] {
    return rowsIn<{ plid: string; home: number }>(this.sql, "SELECT plid, home FROM plid_homes WHERE plid", plids);
  }

  /** The person's links with the latest live grant of each (read from `grants` in the same statement). */
  connections(subscriberId: number): ConnectionRow[] {
    return this.sql
      .exec<ConnectionRow>(
        `SELECT l.client_id, l.items, l.linked_at AS connected_at, l.last_login_at,
           (SELECT max(g.expires_at) FROM grants g WHERE g.subscriber_id = l.subscriber_id AND g.client_id = l.client_id
             AND g.expires_at > ?) AS auto_until
         FROM links l WHERE l.subscriber_id = ?`,
        Date.now(),
        subscriberId,
      )
      .toArray();
  }

  /** The links of a person (every client, or one). */
  of(subscriberId: number, clientId: string | null): EndableLink[] {
    return this.sql
      .exec<EndableLink>(
        "SELECT client_id, plid, subscriber_id FROM links WHERE subscriber_id = ? AND (?2 IS NULL OR client_id = ?2)",
        subscriberId,
        clientId,
      )
      .toArray();
  }

  /** The client's link of this plid, or null. */
  byPlid(clientId: string, plid: string): EndableLink | null {
    return (
      this.sql
        .exec<EndableLink>(
          "SELECT client_id, plid, subscriber_id FROM links WHERE plid = ? AND client_id = ?",
          plid,
          clientId,
        )
        .toArray()[0] ?? null
    );
  }

  /** Deletes links (by client and plid) with their person's grants for that client. */
  delete(links: readonly EndableLink[]): void {
    this.storage.transactionSync(() => {
      for (const l of links) {
        this.grants.endOfLink(l.subscriber_id, l.client_id);
        this.sql.exec("DELETE FROM links WHERE plid = ? AND client_id = ?", l.plid, l.client_id);
      }
    });
  }

  /** Deletes the links holding these plids (ends whose deletion failed) with their grants; the plids not found here. */
  deleteByPlid(plids: readonly string[]): string[] {
    const list = JSON.stringify(plids);
    const here = new Set(
      this.sql
        .exec<{ plid: string }>("SELECT plid FROM links WHERE plid IN (SELECT value FROM json_each(?))", list)
        .toArray()
        .map((r) => r.plid),
    );
    this.storage.transactionSync(() => {
      this.grants.endOfPlids(list);
      this.sql.exec("DELETE FROM links WHERE plid IN (SELECT value FROM json_each(?))", list);
    });
    return plids.filter((p) => !here.has(p));
  }

  /**
   * Deletes up to `limit` of a client's links with their grants (a deleted client); the plids
   * deleted. The client's end is recorded in the same step: from the first call on, no consent for
   * it links here, so the calls that follow take every link there will ever be.
   */
  takeClientLinks(clientId: string, limit: number): string[] {
    let plids: string[] = [];
    this.storage.transactionSync(() => {
      this.sql.exec("INSERT OR IGNORE INTO ended_clients (client_id, at) VALUES (?, ?)", clientId, Date.now());
      plids = this.sql
        .exec<{ plid: string }>(
          `DELETE FROM links WHERE (subscriber_id, client_id) IN
             (SELECT subscriber_id, client_id FROM links WHERE client_id = ?1 LIMIT ?2) RETURNING plid`,
          clientId,
          limit,
        )
        .toArray()
        .map((r) => r.plid);
      if (plids.length < limit) this.grants.endOfClient(clientId);
    });
    return plids;
  }
}
