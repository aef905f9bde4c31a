// The directory shard with bench-only methods for the scale bench (`node capacity/scale.mjs`,
// docs/capacity.md): its size as stored, links and grants loaded in bulk, people armed with a fixed
// code so the sign-in pages can be driven for them, the shard calls a request makes counted, and
// writes timed inside the object. The capacity run's bundle (capacity-entry.ts) exports it as
// `DirectoryShard`, a subclass of the product's public class; the methods the project calls behave
// as the production class's (they are only counted). Never deployed.

import { DirectoryShard } from "../../workers/all-in-one/index";
import { newPlid } from "../../workers/provider/store/directory/keys";
import { randomToken } from "../../workers/core/crypto";
import { rng } from "./rng";

/** Rows per table, and the database's bytes as stored (whole pages, free ones included). */
export interface ShardStats {
  bytes: number;
  pages: number | null;
  pageSize: number | null;
  /** Bytes per table and index, from SQLite's dbstat where the runtime allows it. */
  objects: Record<string, number> | null;
  rows: { people: number; numbers: number; by_ci: number; links: number; grants: number; jobs: number };
}

/** The methods counted: the directory's reads and writes of a sign-in, an identify and an import. */
const WRITES = new Set([
  "consentLogin",
  "recordConsent",
  "touchLink",
  "putGrant",
  "replaceDevice",
  "endOthersOnDevice",
  "keepOwnGrant",
  "deleteGrant",
]);

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

export class ScaleDirectoryShard extends DirectoryShard {
  private calls = new Map<string, number>();

  private get db(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /** Inside a counted call: the methods it runs in the object are not calls of their own. */
  private inside = false;

  private count(name: string): void {
    if (!this.inside) this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
  }

  // ---- the project's calls, counted (each then runs as the production class runs it)

  override holder(...a: Parameters<DirectoryShard["holder"]>) {
    this.count("holder");
    return super.holder(...a);
  }
  override subscriber(...a: Parameters<DirectoryShard["subscriber"]>) {
    this.count("subscriber");
    return super.subscriber(...a);
  }
  override findLink(...a: Parameters<DirectoryShard["findLink"]>) {
    this.count("findLink");
    return super.findLink(...a);
  }
  override recordConsent(...a: Parameters<DirectoryShard["recordConsent"]>) {
    this.count("recordConsent");
    return super.recordConsent(...a);
  }
  override consentLogin(...a: Parameters<DirectoryShard["consentLogin"]>) {
    this.count("consentLogin");
    this.inside = true;
    try {
      return super.consentLogin(...a);
    } finally {
      this.inside = false;
    }
  }
  override linkExists(...a: Parameters<DirectoryShard["linkExists"]>) {
    this.count("linkExists");
    return super.linkExists(...a);
  }
  override touchLink(...a: Parameters<DirectoryShard["touchLink"]>) {
    this.count("touchLink");
    return super.touchLink(...a);
  }
  override putGrant(...a: Parameters<DirectoryShard["putGrant"]>) {
    this.count("putGrant");
    return super.putGrant(...a);
  }
  override replaceDevice(...a: Parameters<DirectoryShard["replaceDevice"]>) {
    this.count("replaceDevice");
    return super.replaceDevice(...a);
  }
  override endOthersOnDevice(...a: Parameters<DirectoryShard["endOthersOnDevice"]>) {
    this.count("endOthersOnDevice");
    return super.endOthersOnDevice(...a);
  }
  override keepOwnGrant(...a: Parameters<DirectoryShard["keepOwnGrant"]>) {
    this.count("keepOwnGrant");
    return super.keepOwnGrant(...a);
  }
  override findGrant(...a: Parameters<DirectoryShard["findGrant"]>) {
    this.count("findGrant");
    return super.findGrant(...a);
  }
  override deleteGrant(...a: Parameters<DirectoryShard["deleteGrant"]>) {
    this.count("deleteGrant");
    return super.deleteGrant(...a);
  }

  /** The calls counted since the last reset, by method; `reset` starts again from zero. */
  scaleCalls(reset: boolean): { reads: Record<string, number>; writes: Record<string, number> } {
    const reads: Record<string, number> = {};
    const writes: Record<string, number> = {};
    for (const [k, v] of this.calls) (WRITES.has(k) ? writes : reads)[k] = v;
    if (reset) this.calls = new Map();
    return { reads, writes };
  }

  // ---- size as stored

  scaleStats(): ShardStats {
    const n = (table: string) => this.db.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table}`).one().n;
    const pragma = (name: string): number | null => {
      try {
        return (this.db.exec(`PRAGMA ${name}`).one() as Record<string, number>)[name] ?? null;
      } catch {
        return null;
      }
    };
    let objects: Record<string, number> | null = null;
    try {
      objects = Object.fromEntries(
        this.db
          .exec<{ name: string; bytes: number }>("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name")
          .toArray()
          .map((r) => [r.name, r.bytes]),
      );
    } catch {
      objects = null; // dbstat is not compiled in, or not allowed
    }
    return {
      bytes: this.ctx.storage.sql.databaseSize,
      pages: pragma("page_count"),
      pageSize: pragma("page_size"),
      objects,
      rows: {
        people: n("people"),
        numbers: n("numbers"),
        by_ci: n("by_ci"),
        links: n("links"),
        grants: n("grants"),
        jobs: n("jobs"),
      },
    };
  }

  // ---- bulk loads: links and grants of the people at home here not yet given theirs

  /** The bench's progress marks (one meta row each): the highest person id given links, grants. */
  private mark(key: string): number {
    return this.db.exec<{ value: number }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0]?.value ?? -1;
  }

  private setMark(key: string, value: number): void {
    this.db.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value);
  }

  /** Up to `limit` ids of people at home here above the mark `key`, and the new mark. */
  private unfilled(key: string, limit: number): { ids: number[]; top: number } {
    const after = this.mark(key);
    const ids = this.db
      .exec<{ id: number }>("SELECT id FROM people WHERE id > ? ORDER BY id LIMIT ?", after, limit)
      .toArray()
      .map((r) => r.id);
    return { ids, top: ids.length ? ids[ids.length - 1]! : after };
  }

  /**
   * Links for up to `limit` people at home here not yet given theirs: `perPerson` on average (the fraction
   * by chance), each to a client of `clients` drawn with a skew (a few apps hold most links), in a
   * random order of people, as sign-ins over time would write them (pages split as they do then,
   * not filled by appends in key order). Last logins are set on most.
   */
  scaleAddLinks(
    shard: number,
    shards: number,
    clients: readonly string[],
    perPerson: number,
    seed: number,
    limit: number,
  ): { added: number; people: number } {
    const { ids, top } = this.unfilled("bench:links", limit);
    const r = rng(seed ^ (shard * 2654435761) ^ top);
    const pairs: [number, string][] = [];
    for (const id of ids) {
      const k = Math.floor(perPerson) + (r() < perPerson - Math.floor(perPerson) ? 1 : 0);
      const chosen = new Set<string>();
      for (let tries = 0; chosen.size < Math.min(k, clients.length) && tries < k * 20; tries++)
        chosen.add(clients[Math.floor(clients.length * r() * r())]!);
      for (const c of chosen) pairs.push([id, c]);
    }
    for (let i = pairs.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [pairs[i], pairs[j]] = [pairs[j]!, pairs[i]!];
    }
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      for (const [id, client] of pairs) {
        const linked = now - Math.floor(r() * 3 * 365 * 86400_000);
        const consented = linked + Math.floor(r() * (now - linked));
        this.db.exec(
          `INSERT OR IGNORE INTO links (subscriber_id, client_id, plid, items, consented_at, linked_at, last_login_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
          id,
          client,
          newPlid(shard, shards),
          r() < 0.5 ? 0x1ff : 1 + Math.floor(r() * 0x1ff),
          consented,
          linked,
          r() < 0.9 ? consented + Math.floor(r() * (now - consented)) : null,
        );
      }
      this.setMark("bench:links", top);
    });
    return { added: pairs.length, people: ids.length };
  }

  /**
   * Automatic-login grants for up to `limit` people at home here not yet given theirs: `perPerson` on
   * average, each a device hash (43 base64url characters, as SHA-256 digests are stored) and a
   * client of `clients`, expiring within the 14 days a grant lives.
   */
  scaleAddGrants(
    shard: number,
    clients: readonly string[],
    perPerson: number,
    seed: number,
    limit: number,
  ): { added: number; people: number } {
    const { ids, top } = this.unfilled("bench:grants", limit);
    const r = rng(seed ^ (shard * 40503) ^ 0x9e3779b9 ^ top);
    const now = Date.now();
    let added = 0;
    this.ctx.storage.transactionSync(() => {
      for (const id of ids) {
        const k = Math.floor(perPerson) + (r() < perPerson - Math.floor(perPerson) ? 1 : 0);
        for (let i = 0; i < k; i++) {
          this.db.exec(
            "INSERT OR IGNORE INTO grants (device_hash, client_id, subscriber_id, expires_at) VALUES (?, ?, ?, ?)",
            randomToken(32),
            clients[Math.floor(clients.length * r() * r())]!,
            id,
            now + 60_000 + Math.floor(r() * 14 * 86400_000),
          );
          added++;
        }
      }
      this.setMark("bench:grants", top);
    });
    return { added, people: ids.length };
  }

  /**
   * Gives `n` people at home here, chosen at random among those without, the fixed code whose
   * SHA-256 is `otpHash` (as test numbers have), so the sign-in pages can be driven for them
   * without an SMS; returns what the identify step asks for.
   */
  scaleArm(n: number, otpHash: string): { telco: string; name: string; phone: string }[] {
    const rows = this.db
      .exec<{ id: number; telco: string; name: string; phone: string }>(
        "SELECT id, telco, name, phone FROM people WHERE test_otp_hash IS NULL ORDER BY random() LIMIT ?",
        n,
      )
      .toArray();
    for (const p of rows) this.db.exec("UPDATE people SET test_otp_hash = ? WHERE id = ?", otpHash, p.id);
    return rows.map(({ telco, name, phone }) => ({ telco, name, phone }));
  }

  /** Up to `n` ids of people at home here (the write-rate bench writes for them). */
  scaleIds(n: number): number[] {
    return this.db
      .exec<{ id: number }>("SELECT id FROM people ORDER BY random() LIMIT ?", n)
      .toArray()
      .map((r) => r.id);
  }

  /**
   * `n` writes made inside the object, each committing on its own (a turn of the event loop
   * between them, as one per request does): a new link (`link`, the consent's insert) or a new
   * grant (`grant`, with its purge of expired ones). The caller times it by workerd's CPU.
   */
  async scaleWriteInside(shard: number, shards: number, kind: "link" | "grant", n: number): Promise<number> {
    const ids = this.scaleIds(1000);
    if (ids.length === 0) return 0;
    const clients = Array.from({ length: 64 }, () => randomToken(15).slice(0, 20));
    let done = 0;
    for (let i = 0; i < n; i++) {
      await tick();
      const id = ids[i % ids.length]!;
      const client = clients[Math.floor(i / ids.length) % clients.length]!;
      if (kind === "link") {
        if (super.recordConsent(id, client, 0x1ff, newPlid(shard, shards)) !== null) done++;
      } else {
        super.putGrant(randomToken(32), client, id, Date.now() + 14 * 86400_000);
        done++;
      }
    }
    return done;
  }
}

/** Bench client ids: 20 alphanumerics as the admin API makes them, deterministic per index. */
export function benchClientIds(count: number): string[] {
  const r = rng(0xc11e47);
  const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from({ length: count }, () => Array.from({ length: 20 }, () => A[Math.floor(r() * 62)]!).join(""));
}
