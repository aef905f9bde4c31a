// A subscriber id is never given twice (migrations/0009_subscriber_ids.sql): sign-in transactions
// and /account sessions hold a subscriber by id, so an id given again after its row was deleted
// (a number reassigned, a subscriber removed) would hand the previous person's open sign-in to the
// next person imported: the code would carry the new person's identity, and the link made at
// consent would become the new person's plid with that app.
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { admin } from "../support/admin";
import { afterRead, DEMO, exchange, mintFor } from "../support/helpers";
import { ciOf, importRows, lastCode } from "../support/directory";
import { auditEvents } from "../support/audit";
import { Browser, DEMO_CB } from "../support/signin";
import { subscriberByPhone } from "../../workers/provider/store/directory";
import { deleteSubscriber } from "../../workers/admin/store";

const person = (phone: string, name: string, ci: number) => ({
  telcoCd: "K",
  phoneNo: phone,
  name,
  gender: "F",
  birth: "1990-03-04",
  foreign: "L",
  ci: ciOf(ci),
});

async function idOf(phone: string): Promise<number> {
  return (await subscriberByPhone(env, phone))!.id;
}

async function maxId(): Promise<number> {
  return (await env.DB.prepare("SELECT max(id) AS m FROM subscribers").first<{ m: number }>())!.m;
}

describe("subscriber ids", () => {
  it("the largest subscriber removed, the next one imported gets a new id", async () => {
    await importRows([person("01055500001", "가장큰", 31)]);
    const removed = await idOf("01055500001");
    expect(removed).toBe(await maxId());
    expect((await admin("DELETE", "/admin/directory/01055500001")).status).toBe(200);
    await importRows([person("01055500002", "다음사람", 32)]);
    expect(await idOf("01055500002")).toBeGreaterThan(removed);
  });

  it("never given twice: any sequence of inserts and deletes, the largest row or any other, one at a time or in one statement", async () => {
    const given = new Set<number>(
      (await env.DB.prepare("SELECT id FROM subscribers").all<{ id: number }>()).results.map((r) => r.id),
    );
    let serial = 0;
    const op = fc.oneof(
      fc.record({ kind: fc.constant("insert" as const), n: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant("delete-largest" as const) }),
      fc.record({ kind: fc.constant("delete-any" as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant("insert-at" as const), pick: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        for (const o of ops) {
          const ids = (
            await env.DB.prepare("SELECT id FROM subscribers WHERE phone LIKE '0106%' ORDER BY id").all<{
              id: number;
            }>()
          ).results.map((r) => r.id);
          if (o.kind === "insert" || o.kind === "insert-at") {
            const rows = Array.from({ length: o.kind === "insert" ? o.n : 1 }, () => {
              const k = ++serial;
              return { phone: `0106${String(k).padStart(7, "0")}`, ci: `CI-ids-${k}` };
            });
            // "insert-at": a row asking for an id given before (a gap or a deleted one)
            const at = o.kind === "insert-at" && given.size ? [...given][o.pick % given.size]! : null;
            const res = await env.DB.prepare(
              `INSERT INTO subscribers (id, telco, phone, name, gender, birth, foreign_cd, ci, created_at)
               SELECT ?2, 'S', json_extract(value, '$.phone'), '번호', 'M', '1990-01-01', 'L', json_extract(value, '$.ci'), 0
               FROM json_each(?1) WHERE true ON CONFLICT (id) DO NOTHING`,
            )
              .bind(JSON.stringify(rows), at)
              .run();
            expect(res.success).toBe(true);
            for (const r of rows) {
              const id = (await subscriberByPhone(env, r.phone))?.id;
              if (id === undefined) continue; // the asked id was taken by a live row: nothing inserted
              expect(given.has(id)).toBe(false);
              given.add(id);
            }
          } else if (ids.length) {
            const id = o.kind === "delete-largest" ? ids[ids.length - 1]! : ids[o.pick % ids.length]!;
            await env.DB.prepare("DELETE FROM subscribers WHERE id = ?").bind(id).run();
          }
        }
      }),
      { numRuns: 25 },
    );
  });

  it("a sign-in open across a reassignment of the largest subscriber's number hands the new owner nothing", async () => {
    const phone = "01055500011";
    await importRows([person(phone, "이전사람", 41)]);
    const previous = await idOf(phone);
    expect(previous).toBe(await maxId());

    // The previous owner identifies and receives a code.
    const a = new Browser();
    const p1 = await a.authorize();
    const p2 = await a.submit(p1, { telcoCd: "K", name: "이전사람", phoneNo: phone });
    expect(p2.form?.step).toBe("verify");
    const code = await lastCode(phone);

    // The number is reassigned: another person (another ci) now holds it.
    await importRows([person(phone, "새주인", 42)]);
    const next = await idOf(phone);

    // The previous owner finishes the open sign-in: no code reaches the app, no link is made for
    // the new owner, and the page says to start again (not a server error).
    const p3 = await a.submit(p2, { otp: code });
    expect(p3.form?.step).toBe("consent"); // the code was theirs: it proves the number
    const p4 = await a.submit(p3, { agree: "Y" });
    expect(p4.res.headers.get("Location") ?? "").not.toContain(DEMO_CB);
    expect(p4.status).toBe(403);
    expect(p4.html).toContain("로그인을 계속할 수 없습니다");
    const links = await env.DB.prepare("SELECT count(*) AS n FROM links WHERE subscriber_id = ?")
      .bind(next)
      .first<{ n: number }>();
    expect(links!.n).toBe(0);
    expect(next).not.toBe(previous);

    // The new owner's own first sign-in asks for consent: nothing of theirs was made by the previous
    // owner (a browser without the number's resend cooldown, which the previous code started).
    const b = new Browser({ vars: { SIGNIN_RESEND_COOLDOWN_SECONDS: "0" } });
    const q1 = await b.authorize();
    const q2 = await b.submit(q1, { telcoCd: "K", name: "새주인", phoneNo: phone });
    const q3 = await b.submit(q2, { otp: await lastCode(phone) });
    expect(q3.form?.step).toBe("consent");
    await b.submit(q3, { agree: "Y" });
    const plids = await env.DB.prepare("SELECT plid FROM links WHERE client_id = ? AND subscriber_id = ?")
      .bind(DEMO.clientId, next)
      .all<{ plid: string }>();
    expect(plids.results).toHaveLength(1);
  });
});

describe("a consent landing while the subscriber is removed", () => {
  it("the link it made between the removal's read of the links and the row's deletion ends too: its code redeems nothing", async () => {
    const phone = "01055500021";
    await importRows([person(phone, "늦은동의", 51)]);
    let late: { code: string; plid: string } | null = null;
    // The real D1: as soon as the removal has read the person's links, a sign-in's consent lands
    // (a new link and its code), before the removal deletes the row.
    const db = afterRead(
      env.DB,
      (sql) => sql.includes("FROM links l JOIN clients"),
      async () => (late = await mintFor(phone)),
    );
    expect(await deleteSubscriber({ ...env, DB: db } as never, phone)).not.toBeNull();
    expect(late).not.toBeNull();
    const res = await exchange(late!.code);
    expect(res.status).not.toBe(200);
    const ended = (await auditEvents({ type: "plid.ended", since: Date.now() - 60_000 })).filter((e) =>
      e.detail?.includes("subscriber_removed"),
    );
    expect(ended.length).toBeGreaterThanOrEqual(1);
  });
});
