// A reassigned number is a new person (spec §2.1: a plid "is deleted when the user leaves ... and
// changes when the user registers again"; docs/account.md): a subscriber is identified by `ci`.
import { env } from "../support/env";
import { deviceOfSubscriber, shardRows } from "../support/shards";
import { putAutoLoginGrant } from "../../workers/provider/store/directory/grants";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin } from "../support/admin";
import { bodyText, HONG, KIM, LEE, mintFor, SMITH, tokenFor, userMe } from "../support/helpers";
import { Browser } from "../support/signin";
import { ciOf, importRows, lastCode } from "../support/directory";
import { lastAuditEvent } from "../support/audit";
import { subscriberByPhone } from "../../workers/provider/store/directory/directory";
import { findLink } from "../../workers/provider/store/directory/links";

afterEach(() => {
  vi.restoreAllMocks();
});

function deliveries() {
  const sent: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    sent.push(await bodyText(new Request(input, init)));
    return new Response(null, { status: 202 });
  });
  return sent;
}

const claimsOf = (jws: string) => JSON.parse(atob(jws.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")));

describe("re-importing a number", () => {
  it("with another ci: the previous person's links, consents and grants end (number_reassigned); the new person starts with nothing", async () => {
    const sent = deliveries();
    const before = (await subscriberByPhone(env, HONG.phone))!;
    const { token, plid } = await tokenFor(HONG.phone);
    await putAutoLoginGrant(env, {
      device: deviceOfSubscriber(before.id, "d"),
      clientId: "demo-client",
      subscriberId: before.id,
      expiresAt: Date.now() + 86400_000,
    });
    const report = await importRows([
      {
        telcoCd: "S",
        phoneNo: HONG.phone,
        name: "박새봄",
        gender: "F",
        birth: "1999-09-09",
        foreign: "L",
        ci: ciOf(7),
      },
    ]);
    expect(report).toMatchObject({ received: 1, inserted: 1, updated: 0, reassigned: 1, rejected_count: 0 });
    // the old token reads nothing, the old link and grant are gone
    expect((await userMe(token)).status).toBe(401);
    expect(await findLink(env, "demo-client", before.id)).toBeNull();
    expect(await shardRows("SELECT 1 FROM grants WHERE subscriber_id = ?", before.id)).toEqual([]);
    const after = (await subscriberByPhone(env, HONG.phone))!;
    expect(after.id).not.toBe(before.id);
    expect(after).toMatchObject({ name: "박새봄", testOtpHash: null });
    await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 5000, interval: 25 });
    expect(claimsOf(sent[0]!).events).toEqual({
      "urn:phone-login:event:plid-deleted": { plid, reason: "number_reassigned" },
    });
    const ended = await lastAuditEvent("plid.ended");
    expect(ended).toMatchObject({
      client_id: "demo-client",
      detail: JSON.stringify({ reason: "number_reassigned", event: true }),
    });

    // The new owner's first login asks for consent and reaches the app under a new plid.
    const b = new Browser();
    const p1 = await b.authorize();
    const p2 = await b.submit(p1, { telcoCd: "S", name: "박새봄", phoneNo: HONG.phone });
    expect(p2.form?.step).toBe("verify");
    const p3 = await b.submit(p2, { otp: await lastCode(HONG.phone) });
    expect(p3.form?.step).toBe("consent");
    await b.submit(p3, { agree: "Y" });
    const fresh = (await findLink(env, "demo-client", after.id))!;
    expect(fresh.plid).not.toBe(plid);
  });

  it("with the same ci and another name or carrier: the same person, plid and consent kept, nothing ended", async () => {
    const sent = deliveries();
    const { token, plid } = await tokenFor(KIM.phone);
    const report = await importRows([
      { telcoCd: "L", phoneNo: KIM.phone, name: "김영희B", gender: "F", birth: "2001-12-01", foreign: "L", ci: KIM.ci },
    ]);
    expect(report).toMatchObject({ inserted: 0, updated: 1, reassigned: 0 });
    expect((await mintFor(KIM.phone)).plid).toBe(plid);
    expect((await userMe(token)).status).toBe(200);
    expect(sent).toEqual([]);
  });

  it("the same ci under a new number: the person changed number; plid kept, the old number freed", async () => {
    const sent = deliveries();
    const old = (await subscriberByPhone(env, SMITH.phone))!;
    const { plid } = await mintFor(SMITH.phone);
    const report = await importRows([
      {
        telcoCd: "L",
        phoneNo: "01099990001",
        name: SMITH.name,
        gender: "M",
        birth: SMITH.birth,
        foreign: "F",
        ci: SMITH.ci,
      },
    ]);
    expect(report).toMatchObject({ reassigned: 0 });
    expect(await subscriberByPhone(env, SMITH.phone)).toBeNull();
    const moved = (await subscriberByPhone(env, "01099990001"))!;
    expect(moved.id).toBe(old.id);
    expect((await findLink(env, "demo-client", moved.id))!.plid).toBe(plid);
    expect(sent).toEqual([]);
  });

  it("two people trading numbers in one import: both keep their plids", async () => {
    const a = (await subscriberByPhone(env, LEE.phone))!;
    const { plid } = await mintFor(LEE.phone);
    const report = await importRows([
      {
        telcoCd: "S",
        phoneNo: "01099990002",
        name: LEE.name,
        gender: "M",
        birth: "1985-07-07",
        foreign: "L",
        ci: LEE.ci,
      },
      { telcoCd: "S", phoneNo: LEE.phone, name: "새사람", gender: "F", birth: "2000-01-01", foreign: "L", ci: ciOf(9) },
    ]);
    expect(report).toMatchObject({ reassigned: 0, inserted: 1, updated: 1 });
    const moved = (await subscriberByPhone(env, "01099990002"))!;
    expect(moved.id).toBe(a.id);
    expect((await findLink(env, "demo-client", a.id))!.plid).toBe(plid);
    expect((await subscriberByPhone(env, LEE.phone))!.name).toBe("새사람");
  });

  for (const [n, order] of ["the new owner of the old number first", "the person who changed number first"].entries()) {
    it(`the same ci under a new number keeps its row and plid whatever the rows' order and however many rows lie between (500 and more): ${order}`, async () => {
      const sent = deliveries();
      const oldPhone = `010666${n}0001`;
      const newPhone = `010666${n}0002`;
      const mover = {
        telcoCd: "K",
        phoneNo: oldPhone,
        name: "번호바꾼사람",
        gender: "F",
        birth: "1990-01-01",
        foreign: "L",
        ci: ciOf(101 + n),
      };
      await importRows([mover]);
      const before = (await subscriberByPhone(env, oldPhone))!;
      const { plid } = await mintFor(oldPhone);
      // The carrier's file: the old number now someone else's, 499 unrelated rows, and the mover
      // under the new number: 501 rows, more than one statement stages.
      const newOwner = { ...mover, name: "새주인", ci: ciOf(111 + n) };
      const filler = Array.from({ length: 499 }, (_, i) => {
        const ci = new Uint8Array(64).fill(7);
        [ci[0], ci[1], ci[2]] = [i & 0xff, i >> 8, 200 + n];
        const phoneNo = `0106${n}7${String(i).padStart(5, "0")}`;
        return { ...mover, phoneNo, name: "채움", ci: btoa(String.fromCharCode(...ci)) };
      });
      const moved = { ...mover, phoneNo: newPhone };
      const rows = n === 0 ? [newOwner, ...filler, moved] : [moved, ...filler, newOwner];
      const expected = { received: 501, inserted: 500, updated: 1, reassigned: 0, rejected_count: 0 };
      const dry = await admin("POST", "/admin/directory/import?dry_run=true", { json: rows });
      expect(await dry.json()).toMatchObject(expected);
      expect(await importRows(rows)).toMatchObject(expected);
      const after = (await subscriberByPhone(env, newPhone))!;
      expect(after.id).toBe(before.id);
      expect((await findLink(env, "demo-client", after.id))!.plid).toBe(plid);
      expect((await subscriberByPhone(env, oldPhone))!).toMatchObject({ name: "새주인", ci: newOwner.ci });
      expect(sent).toEqual([]);
    });
  }

  it("a dry run counts the reassignment and changes nothing", async () => {
    const s = (await subscriberByPhone(env, KIM.phone))!;
    const { plid } = await mintFor(KIM.phone);
    const res = await admin("POST", "/admin/directory/import?dry_run=true", {
      json: [
        {
          telcoCd: "K",
          phoneNo: KIM.phone,
          name: "다른이",
          gender: "M",
          birth: "1970-01-01",
          foreign: "L",
          ci: ciOf(3),
        },
      ],
    });
    expect(await res.json()).toMatchObject({ dry_run: true, reassigned: 1 });
    expect((await findLink(env, "demo-client", s.id))!.plid).toBe(plid);
  });
});
