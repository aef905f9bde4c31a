// Test numbers for app review (docs/operations.md "Test numbers"): registered by the operator, they
// sign in with their fixed code for the listed clients only, until their expiry, never receive an
// SMS, are marked in the audit and are never locked by wrong codes.
import { env } from "../support/env";
import { afterShardCall, shardRows } from "../support/shards";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin, ADMIN_TOKEN } from "../support/admin";
import { afterRead, BASE, exchange, HONG, mintFor } from "../support/helpers";
import { ciOf, importRows } from "../support/directory";
import { lastAuditEvent } from "../support/audit";
import { subscriberByPhone } from "../../workers/provider/store/directory";
import adminWorker from "../../workers/admin/index";

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
import { alertText, Browser, signInAll } from "../support/signin";

afterEach(() => {
  vi.useRealTimers();
});

const UNCONFIRMED = "입력하신 이름과 휴대폰번호는 통신 3사에서 확인되지 않습니다.";
const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
/** A real subscriber the carrier directory lists at `phone` (an import row). */
const realPerson = (phone: string, ci: string) => ({
  telcoCd: "K",
  phoneNo: phone,
  name: "실제사람",
  gender: "F",
  birth: "1990-01-01",
  foreign: "L",
  ci,
});

const REVIEWER = {
  telcoCd: "K",
  phoneNo: "01099998888",
  name: "앱심사",
  gender: "F",
  birth: "1990-01-01",
  foreign: "L",
  ci: btoa(String.fromCharCode(...new Uint8Array(64).fill(42))),
  code: "246810",
  clients: ["demo-client"],
};
const who = { telco: "K", name: "앱심사", phone: "01099998888", code: "246810" };

async function register(fields: Record<string, unknown> = {}): Promise<Response> {
  return admin("POST", "/admin/test-numbers", { json: { ...REVIEWER, expiresAt: inAnHour(), ...fields } });
}

async function smsCount(): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox").first<{ n: number }>())!.n;
}

describe("/admin/test-numbers", () => {
  it("registers, lists (never the code) and replaces a test number", async () => {
    const created = await register();
    expect(created.status).toBe(201);
    const body = (await created.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ telcoCd: "K", phoneNo: "01099998888", name: "앱심사", clients: ["demo-client"] });
    expect(JSON.stringify(body)).not.toContain("246810");
    const list = (await (await admin("GET", "/admin/test-numbers")).json()) as { test_numbers: unknown[] };
    expect(list.test_numbers).toEqual([body]);
    const replaced = await register({ clients: ["demo-client", "limited-client"] });
    expect(replaced.status).toBe(200);
    expect(((await replaced.json()) as { clients: string[] }).clients).toEqual(["demo-client", "limited-client"]);
    await register(); // back to demo-client only
  });

  it.each([
    ["a code that is not 6 digits", { code: "12345" }, /^The value of code is not valid: must be 6 digits\.$/],
    ["no clients", { clients: [] }, /clients is not valid/],
    ["an unknown client", { clients: ["nobody"] }, /every entry must be a registered client id/],
    ["a past expiry", { expiresAt: "2020-01-01T00:00:00Z" }, /must be in the future/],
    ["an expiry as a bare date", { expiresAt: "2099-01-01" }, /ISO 8601 date and time/],
    ["a non-canonical ci", { ci: "CIshort==" }, /ci is not valid/],
    ["a directory subscriber's number", { phoneNo: HONG.phone }, /a subscriber of the directory has this number/],
    ["an unknown field", { note: "x" }, /note is not valid: unknown field/],
  ])("refuses %s with 400 invalid_request", async (_t, fields, message) => {
    const res = await register(fields);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; message: string };
    expect(body.error).toBe("invalid_request");
    expect(body.message).toMatch(message);
  });
});

describe("a test number over time", () => {
  it("registered again with another persona (another ci): the previous persona's logins end and the new one inherits no plid", async () => {
    await register();
    const before = (await subscriberByPhone(env, REVIEWER.phoneNo))!;
    const { code, plid } = await mintFor(REVIEWER.phoneNo);
    const other = btoa(String.fromCharCode(...new Uint8Array(64).fill(43)));
    expect((await register({ ci: other, name: "다른심사" })).status).toBe(200);
    const after = (await subscriberByPhone(env, REVIEWER.phoneNo))!;
    expect(after.ci).toBe(other);
    expect(after.id).not.toBe(before.id);
    expect((await exchange(code)).status).not.toBe(200);
    expect(await shardRows("SELECT plid FROM links WHERE plid = ?", plid)).toEqual([]);
    const next = await mintFor(REVIEWER.phoneNo);
    expect(next.plid).not.toBe(plid);
    await register(); // back to the first persona
  });

  for (const [what, phone, before] of [
    ["a new test number", "01099997777", null],
    ["a test number registered again as another persona", "01099996666", ciOf(66)],
  ] as const) {
    it(`a directory import landing between the check and the write keeps its row: ${what} is refused`, async () => {
      if (before) expect((await register({ phoneNo: phone, ci: before })).status).toBe(201);
      let landed = false;
      const dir = afterShardCall(env.DIRECTORY, "holder", async () => {
        landed = true;
        await importRows([realPerson(phone, ciOf(77))]);
      });
      const req = new Request(`${BASE}/admin/test-numbers`, {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
        body: JSON.stringify({ ...REVIEWER, phoneNo: phone, expiresAt: inAnHour() }),
      });
      const res = await adminWorker.fetch!(req as never, { ...env, DIRECTORY: dir } as never, ctx);
      expect(landed).toBe(true);
      expect(res.status).toBe(400);
      const row = (await subscriberByPhone(env, phone))!;
      expect(row).toMatchObject({ name: "실제사람", ci: ciOf(77), testOtpHash: null });
    });
  }
});

describe("removing a test number", () => {
  it("removes only the test number it read: a directory import giving the number to a real person meanwhile keeps that person and their link (404)", async () => {
    const phone = "01099995555";
    expect((await register({ phoneNo: phone, ci: ciOf(103) })).status).toBe(201);
    let realPlid = "";
    const dir = afterShardCall(env.DIRECTORY, "holder", async () => {
      // the carrier directory now lists a real subscriber at this number, who signs in to an app
      await importRows([realPerson(phone, ciOf(104))]);
      realPlid = (await mintFor(phone)).plid;
    });
    const req = new Request(`${BASE}/admin/test-numbers/${phone}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const res = await adminWorker.fetch!(req as never, { ...env, DIRECTORY: dir } as never, ctx);
    expect(realPlid).not.toBe("");
    // the test number it read is gone (the import replaced it): nothing was removed by this request
    expect(res.status).toBe(404);
    expect(await subscriberByPhone(env, phone)).toMatchObject({ name: "실제사람", ci: ciOf(104), testOtpHash: null });
    expect(await shardRows("SELECT plid FROM links WHERE plid = ?", realPlid)).toHaveLength(1);
  });
});

describe("signing in with a test number", () => {
  it("works with its fixed code for a listed client, sends no SMS, and is marked in the audit", async () => {
    expect((await register()).status).toBeLessThan(300);
    const before = await smsCount();
    const loc = await signInAll(new Browser(), who);
    expect(loc.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await smsCount()).toBe(before);
    const audit = await lastAuditEvent("signin.success");
    expect(JSON.parse(audit!.detail!)).toMatchObject({ testNumber: true });
  });

  it("is the ordinary 'cannot be confirmed' answer for any other client and on /account", async () => {
    await register();
    const b = new Browser();
    const other = await b.authorize({ client_id: "limited-client", redirect_uri: "https://limited.example/cb" });
    const refused = await b.submit(other, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    expect(refused.form?.step).toBe("identify");
    expect(alertText(refused.html)).toBe(UNCONFIRMED);
    const acct = await b.page(await b.fetch("/account"));
    const refusedAcct = await b.submit(acct, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    expect(alertText(refusedAcct.html)).toBe(UNCONFIRMED);
    const failure = await lastAuditEvent("signin.failure");
    expect(JSON.parse(failure!.detail!)).toMatchObject({ reason: "test_number_refused" });
  });

  it("stops working at its expiry", async () => {
    await register({ expiresAt: new Date(Date.now() + 60_000).toISOString() });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 61_000);
    const b = new Browser();
    const refused = await b.submit(await b.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    expect(alertText(refused.html)).toBe(UNCONFIRMED);
  });

  it("wrong codes never lock it (reviewers share it), and no automatic login is offered", async () => {
    await register();
    const vars = { SIGNIN_LOCK_AFTER_FAILURES: "3", SIGNIN_NUMBER_LOCK_AFTER_FAILURES: "5" };
    for (let i = 0; i < 3; i++) {
      const b = new Browser({ vars });
      let p = await b.submit(await b.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
      expect(p.form?.names.has("autoLogin")).toBe(false);
      for (let k = 0; k < 4; k++) p = await b.submit(p, { otp: "000000" });
      expect(p.status).toBe(200);
    }
    const b = new Browser({ vars });
    const p = await b.submit(await b.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    const done = await b.submit(p, { otp: who.code });
    expect([200, 302]).toContain(done.status);
    expect(done.status === 302 || done.form?.step === "consent").toBe(true);
  });

  it("DELETE ends it (404 for a number that is not a test number)", async () => {
    await register();
    expect((await admin("DELETE", `/admin/test-numbers/${HONG.phone}`)).status).toBe(404);
    const res = await admin("DELETE", "/admin/test-numbers/010-9999-8888");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ deleted: true });
    const b = new Browser();
    const refused = await b.submit(await b.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    expect(alertText(refused.html)).toBe(UNCONFIRMED);
    expect(
      ((await (await admin("GET", "/admin/test-numbers")).json()) as { test_numbers: unknown[] }).test_numbers,
    ).toEqual([]);
  });
});

describe("listing test numbers across the shards", () => {
  it("pages by number, 100 at a time, with a cursor: every registered number once, in order, whatever shard holds it", async () => {
    const phones = Array.from({ length: 105 }, (_, i) => `0108888${String(i).padStart(4, "0")}`);
    for (const [i, phone] of phones.entries()) {
      const b = new Uint8Array(64).fill(0x44);
      b[0] = i;
      expect((await register({ phoneNo: phone, ci: btoa(String.fromCharCode(...b)) })).status).toBe(201);
    }
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const res = await admin("GET", "/admin/test-numbers" + (after ? `?after=${after}` : ""));
      expect(res.status).toBe(200);
      const page = (await res.json()) as { test_numbers: { phoneNo: string }[]; next_after: string | null };
      expect(page.test_numbers.length).toBeLessThanOrEqual(100);
      seen.push(...page.test_numbers.map((t) => t.phoneNo));
      after = page.next_after;
      pages++;
    } while (after);
    expect(pages).toBe(2);
    expect(seen).toEqual([...seen].sort());
    for (const phone of phones) expect(seen.filter((p) => p === phone)).toHaveLength(1);
    expect((await admin("GET", "/admin/test-numbers?after=x")).status).toBe(400);
    for (const phone of phones) expect((await admin("DELETE", `/admin/test-numbers/${phone}`)).status).toBe(200);
  }, 60_000);
});
