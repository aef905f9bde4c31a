// Moving a single-database deployment to the directory shards and the R2 audit trail
// (workers/admin/migrate/migrate.ts, docs/operations.md "Moving a single-database deployment to shards"):
// D1 is filled as the single-database service wrote it (its tables, its id trigger, links with
// their JSON items, grants, audit rows), then moved in batches, stopped half way and run again.
import { env } from "../../support/env";
import { describe, expect, it } from "vitest";
import { admin } from "../../support/admin";
import { basic, call, DEMO, exchange, FORM, form, mintFor } from "../../support/helpers";
import { ciOf, importRows } from "../../support/directory";
import { auditEvents } from "../../support/audit";
import { shardRows } from "../../support/shards";
import { subscriberByPhone } from "../../../workers/provider/store/directory/directory";
import { findLink, linkExists } from "../../../workers/provider/store/directory/links";
import { homeOfId, plidHome } from "../../../workers/provider/store/directory/keys";

/** People as the single-database service held them (ids given by its trigger), with links. */
const LEGACY = [
  { phone: "01080800001", name: "옛사람일", ci: ciOf(181), telco: "S", test: false },
  { phone: "01080800002", name: "옛사람이", ci: ciOf(182), telco: "K", test: false },
  { phone: "01080800003", name: "옛사람삼", ci: ciOf(183), telco: "L", test: false },
  { phone: "01080800004", name: "옛심사", ci: ciOf(184), telco: "K", test: true },
  { phone: "01080800005", name: "옛사람오", ci: ciOf(185), telco: "S", test: false },
];

/** A plid of the single-database service: a UUID v4 whose first digits name no shard on purpose. */
const legacyPlid = (i: number) => `${"abcdef12".slice(0, 8)}-0000-4000-8000-${String(i).padStart(12, "0")}`;

async function fillSingleDatabase(): Promise<void> {
  const now = Date.now();
  for (const [i, p] of LEGACY.entries()) {
    const r = await env.DB.prepare(
      `INSERT INTO subscribers (telco, phone, name, gender, birth, foreign_cd, ci, test_otp_hash, test_clients, test_expires_at, created_at)
       VALUES (?, ?, ?, 'F', '1980-02-02', 'L', ?, ?, ?, ?, ?) RETURNING id`,
    )
      .bind(
        p.telco,
        p.phone,
        p.name,
        p.ci,
        p.test ? "hash-of-the-fixed-code" : null,
        p.test ? JSON.stringify([DEMO.clientId]) : null,
        p.test ? now + 86_400_000 : null,
        now - 1000 * i,
      )
      .first<{ id: number }>();
    // one link with the demo app each (the items as the single database kept them: a JSON list)
    await env.DB.prepare(
      "INSERT INTO links (client_id, subscriber_id, plid, items, consented_at, linked_at, last_login_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
      .bind(DEMO.clientId, r!.id, legacyPlid(i), JSON.stringify(DEMO.items), now - 5000, now - 9000, now - 100)
      .run();
    await env.DB.prepare(
      "INSERT INTO auto_login_grants (device_hash, client_id, subscriber_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?)",
    )
      .bind(`legacy-device-${i}`, DEMO.clientId, r!.id, now + 86_400_000, now)
      .run();
  }
  for (let i = 0; i < 7; i++)
    await env.DB.prepare(
      "INSERT INTO audit_events (at, type, client_id, outcome, detail) VALUES (?, 'signin.success', ?, 'ok', ?)",
    )
      .bind(Date.UTC(2026, 10, 20, 9 + (i % 2), i), DEMO.clientId, JSON.stringify({ mode: "legacy", n: i }))
      .run();
}

async function moveAll(path: string, limit: number, stopAfter = Infinity): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  let after: number | null = 0;
  for (let batch = 0; after !== null && batch < stopAfter; batch++) {
    const res = await admin("POST", `/admin/migrate/${path}?after=${after}&limit=${limit}`);
    expect(res.status).toBe(200);
    const r = (await res.json()) as Record<string, number | null>;
    for (const [k, v] of Object.entries(r)) if (k !== "next_after") totals[k] = (totals[k] ?? 0) + (v as number);
    after = r.next_after as number | null;
  }
  return totals;
}

describe("moving a single-database deployment", () => {
  it("every person answers at their number with their fields, keeps their plid with the app (disconnect, touch and sign-in find it), test numbers stay test numbers; stopped half way and run again from the start, nothing is written twice", async () => {
    await fillSingleDatabase();
    const seedPeople = (await shardRows("SELECT id FROM people")).length;
    // the first two batches, then the operator starts over: idempotent
    await moveAll("directory", 2, 2);
    const totals = await moveAll("directory", 2);
    expect(totals.links).toBeGreaterThanOrEqual(LEGACY.length);
    // the seed's people are in D1 too? no: the dev seed writes the shards only, so D1 has exactly these
    expect((await shardRows("SELECT id FROM people")).length).toBe(seedPeople + LEGACY.length);

    for (const [i, p] of LEGACY.entries()) {
      const s = (await subscriberByPhone(env, p.phone))!;
      expect(s).toMatchObject({ name: p.name, ci: p.ci, telco: p.telco, birth: "1980-02-02" });
      expect(s.review !== null).toBe(p.test);
      // the link kept its plid, at the person's home; the plid's own shard forwards to it
      expect((await findLink(env, DEMO.clientId, s.id))?.plid).toBe(legacyPlid(i));
      expect(await linkExists(env, DEMO.clientId, legacyPlid(i))).toBe(true);
    }
    // the fixture moves at least one plid whose digits name another shard than its person's home
    const homes = await Promise.all(LEGACY.map(async (p) => homeOfId((await subscriberByPhone(env, p.phone))!.id)));
    expect(homes.some((h, i) => plidHome(legacyPlid(i), 4) !== h)).toBe(true);

    // a sign-in of a moved person needs no new consent: the code carries the old plid
    const m = await mintFor(LEGACY[0]!.phone);
    expect(m.plid).toBe(legacyPlid(0));
    expect((await exchange(m.code)).status).toBe(200);
    // the app's disconnect of an old plid works (its link found through the forward)
    const res = await call("/v1/user/disconnect", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
      body: form({ plid: legacyPlid(1) }),
    });
    expect(res.status).toBe(200);
    expect(await linkExists(env, DEMO.clientId, legacyPlid(1))).toBe(false);

    // the ci index holds the moved directory people (not the test number): a move to a new number keeps the plid
    await importRows([
      {
        telcoCd: "L",
        phoneNo: "01080800099",
        name: LEGACY[2]!.name,
        gender: "F",
        birth: "1980-02-02",
        foreign: "L",
        ci: LEGACY[2]!.ci,
      },
    ]);
    expect((await mintFor("01080800099")).plid).toBe(legacyPlid(2));
    expect(await shardRows("SELECT id FROM by_ci WHERE ci = ?", LEGACY[3]!.ci)).toEqual([]);
  });

  it("the audit rows go to R2 under their hours, once however often the move runs, and the admin lists them", async () => {
    const before = (await auditEvents({ type: "signin.success" })).filter((e) => e.id.startsWith("d1-")).length;
    await moveAll("audit", 3, 1);
    await moveAll("audit", 3);
    await moveAll("audit", 3);
    const moved = (await auditEvents({ type: "signin.success" })).filter((e) => e.id.startsWith("d1-"));
    expect(moved.length - before).toBe(7);
    expect(new Set(moved.map((e) => e.id)).size).toBe(moved.length);
    expect(moved.every((e) => JSON.parse(e.detail!).mode === "legacy")).toBe(true);
  });

  it("a malformed cursor or batch size is 400", async () => {
    expect((await admin("POST", "/admin/migrate/directory?after=x")).status).toBe(400);
    expect((await admin("POST", "/admin/migrate/directory?limit=0")).status).toBe(400);
    expect((await admin("POST", "/admin/migrate/audit?limit=99999")).status).toBe(400);
  });
});
