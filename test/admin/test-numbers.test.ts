// Test numbers for app review (docs/operations.md "Test numbers"): registered by the operator, they
// sign in with their fixed code for the listed clients only, until their expiry (read again at
// every code step), never receive an SMS and are marked in the audit; their wrong codes lock the
// network they come from, never the number, and at TEST_NUMBER_MAX_FAILURES of them from all
// networks the number is suspended until registered again with a new code.
import { env } from "../support/env";
import { afterShardCall, shardRows } from "../support/shards";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin, ADMIN_TOKEN } from "../support/admin";
import { afterRead, BASE, exchange, HONG, mintFor } from "../support/helpers";
import { ciOf, importRows } from "../support/directory";
import { auditEvents, lastAuditEvent } from "../support/audit";
import { subscriberByPhone } from "../../workers/provider/store/directory/directory";
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
    expect(JSON.parse(audit!.detail!)).toMatchObject({ testNumber: true, fixedCode: true, method: "sms" });
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

  it("wrong codes lock the network they come from, never the number (anyone could keep reviewers out); no automatic login is offered", async () => {
    await register();
    const vars = { SIGNIN_LOCK_AFTER_FAILURES: "3", SIGNIN_NUMBER_LOCK_AFTER_FAILURES: "5" };
    const attacker = new Browser({ vars, ip: "203.0.113.41" });
    let p = await attacker.submit(await attacker.authorize(), {
      telcoCd: who.telco,
      name: who.name,
      phoneNo: who.phone,
    });
    expect(p.form?.names.has("autoLogin")).toBe(false);
    for (let k = 0; k < 3; k++) p = await attacker.submit(p, { otp: "000000" });
    expect(p.status).toBe(429); // the third wrong code locks this network out of the number
    expect((await attacker.submit(p, { otp: who.code })).status).toBe(429);
    // two more networks, two wrong codes each: 7 from all networks, past the number-wide lock of 5
    for (const ip of ["203.0.113.42", "203.0.113.43"]) {
      const b = new Browser({ vars, ip });
      let q = await b.submit(await b.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
      for (let k = 0; k < 2; k++) q = await b.submit(q, { otp: "000000" });
      expect(q.status).toBe(200);
    }
    const reviewer = new Browser({ vars, ip: "203.0.113.44" });
    const q = await reviewer.submit(await reviewer.authorize(), {
      telcoCd: who.telco,
      name: who.name,
      phoneNo: who.phone,
    });
    const done = await reviewer.submit(q, { otp: who.code });
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

describe("a review test number's cap of wrong codes (TEST_NUMBER_MAX_FAILURES)", () => {
  const CAPPED = { ...REVIEWER, phoneNo: "01077770001", ci: btoa(String.fromCharCode(...new Uint8Array(64).fill(43))) };
  const capped = { ...who, phone: "01077770001" };
  const vars = { TEST_NUMBER_MAX_FAILURES: "6", SIGNIN_LOCK_AFTER_FAILURES: "3" };

  /** An admin call with `vars` set (the cap is the service's variable, read by the admin API too). */
  async function adminWith(method: string, path: string, json?: unknown): Promise<Response> {
    const req = new Request(new URL(path, BASE), {
      method,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return adminWorker.fetch!(req as never, { ...env, ...vars } as never, ctx);
  }
  const listed = async () =>
    (
      (await (await adminWith("GET", "/admin/test-numbers")).json()) as { test_numbers: Record<string, unknown>[] }
    ).test_numbers.find((t) => t.phoneNo === CAPPED.phoneNo)!;

  /** A sign-in from `ip` to the code step, then `codes` entered. */
  async function attempt(ip: string, codes: string[]) {
    const b = new Browser({ vars, ip });
    let p = await b.submit(await b.authorize(), { telcoCd: capped.telco, name: capped.name, phoneNo: capped.phone });
    for (const otp of codes) p = await b.submit(p, { otp });
    return p;
  }

  it("counts wrong codes from all networks; at the cap the number is refused as unknown (right code too), audited once, listed as suspended and warned of on every admin answer; registered again with a new code, it works", async () => {
    expect((await adminWith("POST", "/admin/test-numbers", { ...CAPPED, expiresAt: inAnHour() })).status).toBe(201);
    // two networks, two wrong codes each (under the per-network lock of 3), then a fifth
    for (const ip of ["198.18.0.1", "198.18.0.2"]) expect((await attempt(ip, ["000001", "000002"])).status).toBe(200);
    expect(alertText((await attempt("198.18.0.3", ["000003"])).html)).toMatch(/인증번호가 맞지 않습니다/);
    expect(await listed()).toMatchObject({ wrong_codes: 5, suspended: false });
    // the sixth wrong code reaches the cap: the answer is the one any unknown number gets
    const sixth = await attempt("198.18.0.4", ["000004"]);
    expect(sixth.form?.step).toBe("identify");
    expect(alertText(sixth.html)).toBe(UNCONFIRMED);
    // from now on even the right code, on a fresh network, and the first step are refused alike
    const b = new Browser({ vars, ip: "198.18.0.5" });
    const first = await b.submit(await b.authorize(), {
      telcoCd: capped.telco,
      name: capped.name,
      phoneNo: capped.phone,
    });
    expect(first.form?.step).toBe("identify");
    expect(alertText(first.html)).toBe(UNCONFIRMED);
    expect(await listed()).toMatchObject({ wrong_codes: 6, suspended: true });
    const suspensions = (await auditEvents({ type: "test_number.suspended" })) as { detail: string | null }[];
    expect(suspensions).toHaveLength(1);
    expect(JSON.parse(suspensions[0]!.detail!)).toEqual({ failures: 6 });
    const failures = await auditEvents({ type: "signin.failure" });
    expect(failures.filter((e) => JSON.parse(e.detail!).reason === "test_number_suspended")).toHaveLength(2);
    // every admin answer warns the operator (the CLI prints it), masked: never the whole number
    const any = await adminWith("GET", "/admin/clients");
    const notices = JSON.parse(any.headers.get("Admin-Notices") ?? "[]") as string[];
    expect(notices).toEqual([
      "test number 010-****-0001 is suspended after 6 wrong codes: register it again with a new code (test-numbers add)",
    ]);
    // the same code again is refused: it was guessed at
    const same = await adminWith("POST", "/admin/test-numbers", { ...CAPPED, expiresAt: inAnHour() });
    expect(same.status).toBe(400);
    expect(((await same.json()) as { message: string }).message).toMatch(/suspended.*new code/);
    // a new code re-arms it: the warning ends and the reviewer signs in
    const rearmed = await adminWith("POST", "/admin/test-numbers", {
      ...CAPPED,
      code: "975310",
      expiresAt: inAnHour(),
    });
    expect(rearmed.status).toBe(200);
    expect(await rearmed.json()).toMatchObject({ wrong_codes: 0, suspended: false });
    expect((await adminWith("GET", "/admin/clients")).headers.get("Admin-Notices")).toBeNull();
    const ok = await attempt("198.18.0.6", ["975310"]);
    expect(ok.status === 302 || ok.form?.step === "consent").toBe(true);
  });

  it("concurrent wrong codes from many networks: the cap is exact and exactly one entry audits the suspension", async () => {
    const phone = "01077770002";
    const row = {
      ...CAPPED,
      phoneNo: phone,
      ci: btoa(String.fromCharCode(...new Uint8Array(64).fill(44))),
      code: "112233",
    };
    const made = await adminWith("POST", "/admin/test-numbers", { ...row, expiresAt: inAnHour() });
    expect(made.status, await made.clone().text()).toBe(201);
    const before = (await auditEvents({ type: "test_number.suspended" })).length;
    const pages = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const b = new Browser({ vars, ip: `198.19.0.${i + 1}` });
        const p = await b.submit(await b.authorize(), { telcoCd: capped.telco, name: capped.name, phoneNo: phone });
        return { b, p };
      }),
    );
    // 12 wrong codes at once, two from each network: 6 are counted as wrong, the rest find it suspended
    const results = await Promise.all(
      pages.flatMap(({ b, p }) => [b.submit(p, { otp: "000000" }), b.submit(p, { otp: "000001" })]),
    );
    const wrong = results.filter((r) => /인증번호가 맞지 않습니다/.test(alertText(r.html) ?? "")).length;
    const unknown = results.filter((r) => alertText(r.html) === UNCONFIRMED).length;
    expect(wrong).toBe(5);
    expect(unknown).toBe(7);
    expect((await auditEvents({ type: "test_number.suspended" })).length - before).toBe(1);
    const t = (
      (await (await adminWith("GET", "/admin/test-numbers")).json()) as { test_numbers: Record<string, unknown>[] }
    ).test_numbers.find((x) => x.phoneNo === phone)!;
    expect(t).toMatchObject({ suspended: true });
    expect(t.wrong_codes).toBeGreaterThanOrEqual(6);
  });
});

describe("a review test number's resend", () => {
  it("keeps the tries its fixed code has used: 5 per sign-in, not per resend; a new sign-in has 5 again", async () => {
    const row = { ...REVIEWER, phoneNo: "01077770004", ci: btoa(String.fromCharCode(...new Uint8Array(64).fill(46))) };
    await register({ ...row, expiresAt: inAnHour() });
    const signin = async (b: Browser) =>
      b.submit(await b.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: row.phoneNo });
    const b = new Browser({ ip: "192.0.2.31" });
    let p = await signin(b);
    for (let i = 0; i < 4; i++) p = await b.submit(p, { otp: "999999" });
    p = await b.submit(p, { resend: "Y" });
    expect(p.status).toBe(200);
    p = await b.submit(p, { otp: "999999" });
    expect(alertText(p.html)).toBe(
      "인증번호가 맞지 않습니다. 이 인증번호는 더 이상 쓸 수 없으니 인증번호를 다시 받으세요.",
    );
    p = await b.submit(await b.submit(p, { resend: "Y" }), { otp: who.code });
    expect(p.status).toBe(429);
    expect(alertText(p.html)).toBe("이 인증번호는 입력 횟수를 모두 썼습니다. 인증번호를 다시 받으세요.");
    // a new sign-in is a new code for the store (bound to its transaction): 5 tries again
    const b2 = new Browser({ ip: "192.0.2.31" });
    const again = await signin(b2);
    const done = await b2.submit(again, { otp: who.code });
    expect(done.status === 302 || done.form?.step === "consent").toBe(true);
  });
});

describe("a review test number's registration is read again at the code step", () => {
  const LATE = { ...REVIEWER, phoneNo: "01077770003", ci: btoa(String.fromCharCode(...new Uint8Array(64).fill(45))) };
  const late = { ...who, phone: "01077770003" };

  async function atCode(ip: string) {
    const b = new Browser({ ip });
    const p = await b.submit(await b.authorize(), { telcoCd: late.telco, name: late.name, phoneNo: late.phone });
    expect(p.form?.step, alertText(p.html)).toBe("verify");
    return { b, p };
  }

  it("a sign-in opened before the expiry is refused after it: resend and code alike, no code minted", async () => {
    await register({ ...LATE, expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const { b, p } = await atCode("198.18.1.1");
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 61_000);
    const resent = await b.submit(p, { resend: "Y" });
    expect(alertText(resent.html)).toBe(UNCONFIRMED);
    const entered = await b.submit(p, { otp: late.code });
    expect(entered.status).toBe(200);
    expect(alertText(entered.html)).toBe(UNCONFIRMED);
    expect(JSON.parse((await lastAuditEvent("signin.failure"))!.detail!)).toMatchObject({
      reason: "test_number_refused",
    });
  });

  it.each([
    ["the app taken off its list", { clients: ["limited-client"] }],
    ["a new code", { code: "135791" }],
  ])("a sign-in at the code step is refused once the registration changes: %s", async (_what, change) => {
    await register({ ...LATE, expiresAt: inAnHour() });
    const { b, p } = await atCode("198.18.1.2");
    await register({ ...LATE, expiresAt: inAnHour(), ...change });
    expect(alertText((await b.submit(p, { otp: late.code })).html)).toBe(UNCONFIRMED);
  });

  it("a sign-in at the code step is refused once the test number is removed", async () => {
    await register({ ...LATE, expiresAt: inAnHour() });
    const { b, p } = await atCode("198.18.1.3");
    expect((await admin("DELETE", `/admin/test-numbers/${LATE.phoneNo}`)).status).toBe(200);
    const entered = await b.submit(p, { otp: late.code });
    expect(entered.status).not.toBe(302);
    expect(alertText(entered.html)).toBe(UNCONFIRMED);
  });
});
