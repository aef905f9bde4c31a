// The ci index and its leases (tables `by_ci`, `ci_leases`; docs/storage.md "Directory shards",
// "Changes across shards"): the directory person of each ci hashing here (keys.ts `ciShard`), and
// which writer is deciding each such ci now.
//
// Invariants:
// - an entry names the one directory person (never a registered test number) with its ci; it is
//   written only while that person exists with that ci, and dropped only while it still names the
//   person removed;
// - one writer decides a ci at a time: a lease held by another writer until later leaves the ci
//   `busy`, so neither of two writers (an import and a carrier-API sign-in, or two sign-ins) makes
//   a second person of a ci the other has not indexed yet;
// - a lease ends when its writer is done with every row, or with the index job that writes its
//   new person's entry, or when it expires (a writer that died: 60 s at most).

import { rowsIn } from "./common";

export class CiIndex {
  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
  ) {}

  /** The directory people indexed here by ci (never a registered test number). */
  idsByCi(cis: readonly string[]): { ci: string; id: number }[] {
    return rowsIn<{ ci: string; id: number }>(this.sql, "SELECT ci, id FROM by_ci WHERE ci", cis);
  }

  /**
   * `idsByCi` for the cis `holder` may decide now: each ci not leased by another holder until later
   * is leased to `holder` until `until` and its person returned; the others come back `busy`.
   */
  lease(cis: readonly string[], holder: string, until: number): { ci: string; id: number | null; busy: boolean }[] {
    const now = Date.now();
    const out: { ci: string; id: number | null; busy: boolean }[] = [];
    this.storage.transactionSync(() => {
      const held = new Map(
        rowsIn<{ ci: string; holder: string; until: number }>(
          this.sql,
          "SELECT ci, holder, until FROM ci_leases WHERE ci",
          cis,
        ).map((r) => [r.ci, r]),
      );
      const ids = new Map(this.idsByCi(cis).map((r) => [r.ci, r.id]));
      const free: string[] = [];
      for (const ci of cis) {
        const l = held.get(ci);
        if (l && l.holder !== holder && l.until > now) out.push({ ci, id: null, busy: true });
        else {
          free.push(ci);
          out.push({ ci, id: ids.get(ci) ?? null, busy: false });
        }
      }
      this.sql.exec(
        "INSERT OR REPLACE INTO ci_leases (ci, holder, until) SELECT value, ?, ? FROM json_each(?)",
        holder,
        until,
        JSON.stringify(free),
      );
      this.sql.exec("DELETE FROM ci_leases WHERE ci IN (SELECT ci FROM ci_leases WHERE until <= ? LIMIT 50)", now);
    });
    return out;
  }

  /** Drops `holder`'s leases of these cis. */
  dropLeases(cis: readonly string[], holder: string): void {
    this.sql.exec(
      "DELETE FROM ci_leases WHERE holder = ? AND ci IN (SELECT value FROM json_each(?))",
      holder,
      JSON.stringify(cis),
    );
  }

  /** Indexes a directory person's ci here. */
  index(ci: string, id: number): void {
    this.sql.exec("INSERT OR REPLACE INTO by_ci (ci, id) VALUES (?, ?)", ci, id);
  }

  /** `index` for many, in one step, dropping the writers' leases on these cis (`leases`) in it. */
  indexMany(
    entries: readonly { ci: string; id: number }[],
    leases: readonly { ci: string; holder: string }[] = [],
  ): void {
    this.storage.transactionSync(() => {
      if (entries.length)
        this.sql.exec(
          "INSERT OR REPLACE INTO by_ci (ci, id) SELECT value ->> '$.ci', value ->> '$.id' FROM json_each(?)",
          JSON.stringify(entries),
        );
      if (leases.length)
        this.sql.exec(
          `DELETE FROM ci_leases WHERE (ci, holder) IN
             (SELECT value ->> '$.ci', value ->> '$.holder' FROM json_each(?))`,
          JSON.stringify(leases),
        );
    });
  }

  /** Drops a removed person's entry, only while it still names them. */
  unindex(ci: string, id: number): void {
    this.sql.exec("DELETE FROM by_ci WHERE ci = ? AND id = ?", ci, id);
  }
}
