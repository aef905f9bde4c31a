// A subscriber id is never given twice (each directory shard gives ids from a sequence that only
// grows: workers/provider/store/directory/tables/people.ts, keys.ts): sign-in transactions
// and /account sessions hold a subscriber by id, so an id given again after its row was deleted
// (a number reassigned, a subscriber removed) would hand the previous person's open sign-in to the
// next person imported: the code would carry the new person's identity, and the link made at
// consent would become the new person's plid with that app.
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { admin } from "../support/admin";
import { DEMO, exchange, mintFor } from "../support/helpers";
import { afterShardCall, shardRows } from "../support/shards";
import { ciOf, importRows, lastCode } from "../support/directory";
import { auditEvents } from "../support/audit";
import { Browser, DEMO_CB } from "../support/signin";
import { subscriberByPhone } from "../../workers/provider/store/directory/directory";
import { deleteSubscriber } from "../../workers/provider/store/flows/directory-write";

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

/** A canonical 64-byte ci of its own for each k. */
function ciSerial(k: number): string {
  const b = new Uint8Array(64).fill(0x33);
  b[0] = k >> 8;
  b[1] = k & 255;
  return btoa(String.fromCharCode(...b));
}

async function allIds(): Promise<number[]> {
  return (await shardRows<{ id: number }>("SELECT id FROM people")).map((r) => r.id);
}

describe("subscriber ids", () => {
  it("the newest subscriber removed, the next one imported gets a new id", async () => {
    await importRows([person("01055500001", "가장큰", 31)]);
    const removed = await idOf("01055500001");
    expect((await admin("DELETE", "/admin/directory/01055500001")).status).toBe(200);
    await importRows([person("01055500001", "다음사람", 32)]);
    const next = await idOf("01055500001");
    expect(next).not.toBe(removed);
    expect(next).toBeGreaterThan(removed);
  });

  it("never given twice: any sequence of imports and removals, of the newest row or any other", async () => {
    const given = new Set<number>(await allIds());
    let serial = 0;
    const op = fc.oneof(
      fc.record({ kind: fc.constant("insert" as const), n: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant("delete-newest" as const) }),
      fc.record({ kind: fc.constant("delete-any" as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant("reassign" as const), pick: fc.nat() }),
    );
    const live: string[] = [];
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        for (const o of ops) {
          if (o.kind === "insert" || (o.kind === "reassign" && live.length)) {
            const phones =
              o.kind === "insert"
                ? Array.from({ length: o.n }, () => `0106${String(++serial).padStart(7, "0")}`)
                : [live[o.pick % live.length]!];
            await importRows(phones.map((p) => person(p, "번호", 0)).map((r) => ({ ...r, ci: ciSerial(++serial) })));
            for (const p of phones) {
              const id = await idOf(p);
              expect(given.has(id)).toBe(false);
              given.add(id);
              if (!live.includes(p)) live.push(p);
            }
          } else if (live.length && o.kind !== "reassign") {
            const phone = o.kind === "delete-newest" ? live[live.length - 1]! : live[o.pick % live.length]!;
            expect((await admin("DELETE", `/admin/directory/${phone}`)).status).toBe(200);
            live.splice(live.indexOf(phone), 1);
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
    expect(await shardRows("SELECT plid FROM links WHERE subscriber_id = ?", next)).toEqual([]);
    expect(next).not.toBe(previous);

    // The new owner's own first sign-in asks for consent: nothing of theirs was made by the previous
    // owner (a browser without the number's resend cooldown, which the previous code started).
    const b = new Browser({ vars: { SIGNIN_RESEND_COOLDOWN_SECONDS: "0" } });
    const q1 = await b.authorize();
    const q2 = await b.submit(q1, { telcoCd: "K", name: "새주인", phoneNo: phone });
    const q3 = await b.submit(q2, { otp: await lastCode(phone) });
    expect(q3.form?.step).toBe("consent");
    await b.submit(q3, { agree: "Y" });
    const plids = await shardRows(
      "SELECT plid FROM links WHERE client_id = ? AND subscriber_id = ?",
      DEMO.clientId,
      next,
    );
    expect(plids).toHaveLength(1);
  });
});

describe("a consent landing while the subscriber is removed", () => {
  it("the link it made between the removal's read of the links and the row's deletion ends too: its code redeems nothing", async () => {
    const phone = "01055500021";
    await importRows([person(phone, "늦은동의", 51)]);
    let late: { code: string; plid: string } | null = null;
    // The real shards: as soon as the removal has read the person's links, a sign-in's consent
    // lands (a new link and its code), before the removal deletes the row.
    // the sign-in found the person before the removal began
    const who = (await subscriberByPhone(env, phone))!;
    const dir = afterShardCall(env.DIRECTORY, "linksOf", async () => (late = await mintFor(phone, { as: who })));
    expect(await deleteSubscriber({ ...env, DIRECTORY: dir } as never, phone)).not.toBeNull();
    expect(late).not.toBeNull();
    const res = await exchange(late!.code);
    expect(res.status).not.toBe(200);
    const ended = (await auditEvents({ type: "plid.ended", since: Date.now() - 60_000 })).filter((e) =>
      e.detail?.includes("subscriber_removed"),
    );
    expect(ended.length).toBeGreaterThanOrEqual(1);
  });
});
