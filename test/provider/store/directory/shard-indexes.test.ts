// Directory shard query plans (docs/storage.md "Directory shards"): the statements of
// workers/provider/store/directory/tables/ that find rows by a key must use an index, not scan a
// table that grows with people (a shard holds millions of them, links and grants).
import { env } from "../../../support/env";
import { describe, expect, it } from "vitest";
import { runInDurableObject } from "cloudflare:test";
import { dirAt } from "../../../../workers/provider/store/directory/directory-shard";
import { shardRows } from "../../../support/shards";
import { deviceOfSubscriber } from "../../../support/shards";

/** The query plan's detail lines of `sql` in a directory shard. */
async function plan(sql: string, ...binds: unknown[]): Promise<string[]> {
  const rows = await runInDurableObject(dirAt(env, 0), (_o, state: DurableObjectState) =>
    state.storage.sql.exec(`EXPLAIN QUERY PLAN ${sql}`, ...(binds as SqlStorageValue[])).toArray(),
  );
  return (rows as { detail: string }[]).map((r) => r.detail);
}

/** Plan lines that read a whole table (`SCAN t`, not `SCAN t USING ... INDEX`). */
function fullScans(lines: string[]): string[] {
  return lines.filter((l) => /^SCAN \w+$/.test(l.trim()) || /^SCAN \w+ \w+$/.test(l.trim()));
}

// The statements as the shard sends them.
const KEYED: Record<string, [string, ...unknown[]]> = {
  "holder: the number's entry": ["SELECT id FROM numbers WHERE phone = ?", "01012345678"],
  "person: by id": ["SELECT * FROM people WHERE id = ?", 1],
  "import: the ci's person": ["SELECT ci, id FROM by_ci WHERE ci IN (SELECT value FROM json_each(?))", "[]"],
  "removeSubscriberRow: the links": [
    "DELETE FROM links WHERE subscriber_id = ? RETURNING client_id, plid, subscriber_id",
    1,
  ],
  "removeSubscriberRow: the grants": ["DELETE FROM grants WHERE subscriber_id = ?", 1],
  "deleteClient: its links": [
    "DELETE FROM links WHERE (subscriber_id, client_id) IN (SELECT subscriber_id, client_id FROM links WHERE client_id = ?1 LIMIT ?2) RETURNING plid",
    "demo-client",
    200,
  ],
  "deleteClient: its grants": ["DELETE FROM grants WHERE client_id = ?", "demo-client"],
  "claim: a queued removal of the person": [
    "SELECT 1 FROM jobs WHERE job ->> '$.kind' = 'remove' AND job ->> '$.id' = ? AND job ->> '$.phone' = ? LIMIT 1",
    1,
    "01012345678",
  ],
  findLink: ["SELECT plid, items, consented_at FROM links WHERE subscriber_id = ? AND client_id = ?", 1, "demo-client"],
  "endLink: the link": [
    "SELECT client_id, plid, subscriber_id FROM links WHERE plid = ? AND client_id = ?",
    "p",
    "demo-client",
  ],
  "endLink: grants": ["DELETE FROM grants WHERE subscriber_id = ? AND client_id = ?", 1, "demo-client"],
  findGrant: [
    "SELECT subscriber_id, expires_at FROM grants WHERE device_hash = ? AND client_id = ? AND expires_at > ?",
    "d",
    "demo-client",
    0,
  ],
  "endOthersOnDevice, keepOwnGrant: another subscriber's grants on the device": [
    "DELETE FROM grants WHERE device_hash = ? AND subscriber_id <> ?",
    "d",
    1,
  ],
  "replaceDevice: the person's grants move": [
    "UPDATE grants SET device_hash = ? WHERE device_hash = ? AND subscriber_id = ?",
    "n",
    "d",
    1,
  ],
  "putGrant: expired grants purged": [
    "DELETE FROM grants WHERE (device_hash, client_id) IN (SELECT device_hash, client_id FROM grants WHERE expires_at <= ? LIMIT ?)",
    0,
    50,
  ],
  "testNumbers: registered review numbers through their own index": [
    "SELECT * FROM people WHERE test_clients IS NOT NULL AND phone > ? ORDER BY phone LIMIT ?",
    "",
    1,
  ],
  "counts: review numbers counted through their own index": [
    "SELECT count(*) AS n FROM people WHERE test_clients IS NOT NULL",
  ],
};

/** Statements allowed to scan (none today). */
const SCANS_ALLOWED = new Set<string>();

describe("directory shard keyed statements use an index", () => {
  it.each(Object.keys(KEYED).filter((k) => !SCANS_ALLOWED.has(k)))(
    "%s reads rows through an index, never a full table scan",
    async (name) => {
      const [sql, ...binds] = KEYED[name]!;
      const lines = await plan(sql, ...binds);
      expect(lines.length).toBeGreaterThan(0);
      expect(fullScans(lines), lines.join(" | ")).toEqual([]);
    },
  );
});

describe("automatic-login grants do not pile up", () => {
  it("an opt-in purges expired grants (nothing else deletes a grant whose device never comes back); live grants stay", async () => {
    const { putAutoLoginGrant } = await import("../../../../workers/provider/store/directory/grants");
    const { subscriberByPhone } = await import("../../../../workers/provider/store/directory/directory");
    const sub = (await subscriberByPhone(env, "01012345678"))!.id;
    const now = Date.now();
    const at = (hash: string) => deviceOfSubscriber(sub, hash);
    await putAutoLoginGrant(env, {
      device: at("expired-device"),
      clientId: "demo-client",
      subscriberId: sub,
      expiresAt: now - 1000,
    });
    await putAutoLoginGrant(env, {
      device: at("live-device"),
      clientId: "demo-client",
      subscriberId: sub,
      expiresAt: now + 60_000,
    });
    await putAutoLoginGrant(env, {
      device: at("new-device"),
      clientId: "demo-client",
      subscriberId: sub,
      expiresAt: now + 60_000,
    });
    const rows = await shardRows<{ device_hash: string }>("SELECT device_hash FROM grants ORDER BY device_hash");
    expect(rows.map((r) => r.device_hash).sort()).toEqual(["live-device", "new-device"]);
  });
});
