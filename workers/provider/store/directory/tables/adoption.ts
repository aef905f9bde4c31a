// The shard's side of the move from the single-database layout (workers/admin/migrate/,
// docs/operations.md "Moving a single-database deployment to shards"): people, their links and
// the homes of their plids written as the single database held them. Kept apart from people.ts
// and links.ts, whose tables it writes, so that the move can leave as a whole.
//
// Invariants:
// - every batch is idempotent, so a move resumes or starts over with the same result: a number
//   already held here keeps its holder (moved before, or imported since), a link already here is
//   left as it is, a plid's home is written again as it was;
// - a person moves with their id new (`sequence × SHARD_SLOTS + shard`) and their row as it was;
//   a link moves with its plid, and is refused for a deleted client, as a consent is.

import { homeOfId } from "../keys";
import type { SubscriberFields } from "./common";
import type { Links } from "./links";
import type { People } from "./people";

/** A person of the single database, as the move hands them to their number's shard. */
export type AdoptedSubscriber = SubscriberFields & {
  legacyId: number;
  testOtpHash: string | null;
  testClients: string | null;
  testExpiresAt: number | null;
  createdAt: number;
};

/** A link of the single database, for a person at home here. */
export interface LegacyLink {
  subscriberId: number;
  clientId: string;
  plid: string;
  items: number;
  consentedAt: number;
  linkedAt: number;
  lastLoginAt: number | null;
}

export class Adoption {
  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
    private readonly people: People,
    private readonly links: Links,
  ) {}

  /**
   * People of the single database whose numbers this shard answers for, written as they were (a
   * number already held here keeps its holder). Their ids here, by their single-database id.
   */
  adoptPeople(
    shard: number,
    rows: readonly AdoptedSubscriber[],
  ): { legacyId: number; id: number; ci: string; indexed: boolean }[] {
    const out: { legacyId: number; id: number; ci: string; indexed: boolean }[] = [];
    this.storage.transactionSync(() => {
      for (const r of rows) {
        const cur = this.sql.exec<{ id: number }>("SELECT id FROM numbers WHERE phone = ?", r.phone).toArray()[0];
        if (cur) {
          const p = homeOfId(cur.id) === shard ? this.people.subscriber(cur.id) : null;
          if (p && p.ci === r.ci)
            out.push({ legacyId: r.legacyId, id: cur.id, ci: r.ci, indexed: p.test_clients === null });
          continue;
        }
        const id = this.people.insertSubscriber(
          shard,
          r,
          { otpHash: r.testOtpHash, clients: r.testClients, expiresAt: r.testExpiresAt },
          r.createdAt,
        );
        this.sql.exec("INSERT INTO numbers (phone, id) VALUES (?, ?)", r.phone, id);
        out.push({ legacyId: r.legacyId, id, ci: r.ci, indexed: r.testClients === null });
      }
    });
    return out;
  }

  /** Links of the single database for people at home here, plids kept (one already here is left as it is). */
  adoptLinks(links: readonly LegacyLink[]): void {
    this.storage.transactionSync(() => {
      for (const l of links)
        if (!this.links.clientEnded(l.clientId))
          this.sql.exec(
            `INSERT OR IGNORE INTO links (subscriber_id, client_id, plid, items, consented_at, linked_at, last_login_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
            l.subscriberId,
            l.clientId,
            l.plid,
            l.items,
            l.consentedAt,
            l.linkedAt,
            l.lastLoginAt,
          );
    });
  }

  /** Records where moved plids that name this shard have their links. */
  adoptPlidHomes(entries: readonly { plid: string; home: number }[]): void {
    for (const e of entries)
      this.sql.exec("INSERT OR REPLACE INTO plid_homes (plid, home) VALUES (?, ?)", e.plid, e.home);
  }
}
