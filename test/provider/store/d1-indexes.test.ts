// D1 query plans (docs/storage.md): the statements of core/registry.ts and core/admin-store.ts that
// find rows by a key must use an index, not scan a table that grows with users (links, grants).
// D1 bills and waits for every row a scan reads.
import { env } from "../../support/env";
import { describe, expect, it } from "vitest";

/** The query plan's detail lines of `sql`. */
async function plan(sql: string, ...binds: unknown[]): Promise<string[]> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...binds)
    .all<{ detail: string }>();
  return results.map((r) => r.detail);
}

/** Plan lines that read a whole table (`SCAN t`, not `SCAN t USING ... INDEX`). */
function fullScans(lines: string[]): string[] {
  return lines.filter((l) => /^SCAN \w+$/.test(l.trim()) || /^SCAN \w+ \w+$/.test(l.trim()));
}

// The statements as the code sends them (admin/store.ts, provider/store/links.ts, grants.ts, directory.ts).
const KEYED: Record<string, [string, ...unknown[]]> = {
  "deleteSubscriber: its grants": [
    "DELETE FROM auto_login_grants WHERE subscriber_id = (SELECT id FROM subscribers WHERE phone = ?)",
    "01012345678",
  ],
  "deleteSubscriber: its links": [
    "DELETE FROM links WHERE subscriber_id = (SELECT id FROM subscribers WHERE phone = ?)",
    "01012345678",
  ],
  "deleteClient: its grants": ["DELETE FROM auto_login_grants WHERE client_id = ?", "demo-client"],
  "deleteClient: its links": ["DELETE FROM links WHERE client_id = ?", "demo-client"],
  "deleteClient and deleteSubscriber: the plids to end": ["SELECT plid FROM links WHERE client_id = ?", "demo-client"],
  "endLink: the link": ["SELECT subscriber_id FROM links WHERE client_id = ? AND plid = ?", "demo-client", "p"],
  "endLink: grants": ["DELETE FROM auto_login_grants WHERE client_id = ? AND subscriber_id = ?", "demo-client", 1],
  findAutoLoginGrant: [
    "SELECT subscriber_id, expires_at FROM auto_login_grants WHERE device_hash = ? AND client_id = ? AND expires_at > ?",
    "d",
    "demo-client",
    0,
  ],
  "endOthersOnDevice, keepOwnGrant: another subscriber's grants on the device": [
    "DELETE FROM auto_login_grants WHERE device_hash = ? AND subscriber_id <> ?",
    "d",
    1,
  ],
  "keepOwnGrant: the person's own grant": [
    "SELECT expires_at FROM auto_login_grants WHERE device_hash = ? AND client_id = ? AND subscriber_id = ? AND expires_at > ?",
    "d",
    "demo-client",
    1,
    0,
  ],
  "replaceDevice: the person's grants move": [
    "UPDATE auto_login_grants SET device_hash = ? WHERE device_hash = ? AND subscriber_id = ?",
    "n",
    "d",
    1,
  ],
  "replaceDevice: what stays on the old id": ["DELETE FROM auto_login_grants WHERE device_hash = ?", "d"],
  subscriberByPhone: ["SELECT * FROM subscribers WHERE phone = ?", "01012345678"],
};

describe("D1 keyed statements use an index", () => {
  it.each(Object.keys(KEYED))("%s reads rows through an index, never a full table scan", async (name) => {
    const [sql, ...binds] = KEYED[name]!;
    const lines = await plan(sql, ...binds);
    expect(lines.length).toBeGreaterThan(0);
    expect(fullScans(lines), lines.join(" | ")).toEqual([]);
  });
});

describe("automatic-login grants do not pile up", () => {
  it("an opt-in purges expired grants (nothing else deletes a grant whose device never comes back); live grants stay", async () => {
    const { putAutoLoginGrant } = await import("../../../workers/provider/store/grants");
    const sub = (await env.DB.prepare("SELECT id FROM subscribers WHERE phone = ?")
      .bind("01012345678")
      .first<{ id: number }>())!.id;
    const now = Date.now();
    await env.DB.prepare(
      "INSERT INTO auto_login_grants (device_hash, client_id, subscriber_id, expires_at, first_report_pending, created_at) VALUES (?, 'demo-client', ?, ?, 0, ?), (?, 'demo-client', ?, ?, 0, ?)",
    )
      .bind("expired-device", sub, now - 1000, now - 2000, "live-device", sub, now + 60_000, now)
      .run();
    await putAutoLoginGrant(env, {
      deviceHash: "new-device",
      clientId: "demo-client",
      subscriberId: sub,
      expiresAt: now + 60_000,
    });
    const { results } = await env.DB.prepare("SELECT device_hash FROM auto_login_grants ORDER BY device_hash").all<{
      device_hash: string;
    }>();
    expect(results.map((r) => r.device_hash)).toEqual(["live-device", "new-device"]);
    const purge = await plan(
      "DELETE FROM auto_login_grants WHERE rowid IN (SELECT rowid FROM auto_login_grants WHERE expires_at <= ? LIMIT ?)",
      now,
      50,
    );
    expect(fullScans(purge), purge.join(" | ")).toEqual([]);
  });
});
