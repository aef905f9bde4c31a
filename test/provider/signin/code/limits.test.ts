// Sign-in limits (docs/signin.md): a code's attempts, the per-number lock that survives
// resends, the resend cooldown, sends per number per hour, the per-IP limit on step 1, code and
// transaction expiry, and single use of a code under concurrent submissions.
import { runInDurableObject } from "cloudflare:test";
import { insertSubscriber } from "../../../support/shards";
import { env } from "../../../support/env";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sha256 } from "../../../../workers/core/crypto";
import { storeFor } from "../../../../workers/provider/store/one-time/one-time-store";
import { signinConfig } from "../../../../workers/provider/signin/config";
import { exchange, HONG } from "../../../support/helpers";
import { alertText, Browser, signInAll, type Page, type Who } from "../../../support/signin";
import { providerConfig } from "../../../../workers/provider/config";

afterEach(() => {
  vi.useRealTimers();
});

let nextPhone = 5000;

/** A new directory entry: a test number (fixed code) when `code` is given, else a real one (SMS). */
async function subscriber(telco: "S" | "K" | "L", code?: string): Promise<Who> {
  const phone = `0109${String(nextPhone++).padStart(7, "0")}`;
  const name = `가입자${nextPhone}`;
  await insertSubscriber({ telco, phone, name, birth: "1995-01-02", ci: `CI-${phone}`, ...(code ? { code } : {}) });
  return { telco, name, phone, code: code ?? "" };
}

async function lastSms(phone: string): Promise<{ code: string; text: string; n: number; id: number }> {
  const rows = (
    await env.DB.prepare("SELECT id, body FROM sms_outbox WHERE phone = ? ORDER BY id DESC")
      .bind(phone)
      .all<{ id: number; body: string }>()
  ).results;
  const text = rows[0]?.body ?? "";
  return { code: /\d{6}/.exec(text)?.[0] ?? "", text, n: rows.length, id: rows[0]?.id ?? 0 };
}

async function toVerify(b: Browser, who: Who, params: Record<string, string> = {}): Promise<Page> {
  const p = await b.submit(await b.authorize(params), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  expect(p.form?.step, alertText(p.html)).toBe("verify");
  return p;
}

function retryAfter(p: Page): number {
  return Number(p.res.headers.get("Retry-After"));
}

describe("defaults", () => {
  it("3 min codes, 5 tries per code, lock after 20 failures for 1 h, 30 s cooldown, 5 sends per hour, 100 per IP per 10 min, 10 min transactions, 14-day automatic login", () => {
    expect(signinConfig({ DEV_MODE: "true" })).toMatchObject({
      otpTtlMs: 180_000,
      otpMaxAttempts: 5,
      lockAfterFailures: 20,
      lockMs: 3_600_000,
      resendCooldownMs: 30_000,
      sendsPerWindow: 5,
      sendWindowMs: 3_600_000,
      ipLimit: 100,
      ipWindowMs: 600_000,
      txTtlMs: 600_000,
      autoLoginTtlMs: 14 * 86_400_000,
      smsSenders: ["outbox"],
    });
  });

  it("malformed variables fail loudly, naming the variable; the outbox refuses to run outside DEV_MODE", () => {
    expect(() => signinConfig({ SIGNIN_OTP_TTL_SECONDS: "3m" })).toThrow(/SIGNIN_OTP_TTL_SECONDS/);
    expect(() => signinConfig({ SMS_SENDER: "pigeon" })).toThrow(/SMS_SENDER/);
    expect(() => signinConfig({ DEV_MODE: "false", SMS_SENDER: "outbox" })).toThrow(/SMS_SENDER/);
    expect(signinConfig({ DEV_MODE: "false" }).smsSenders).toEqual(["webhook"]);
  });
});

describe("a code's attempts (at most 5 wrong entries per code)", () => {
  it("5 wrong entries count down; then even the right code is refused 429 until a new code is sent", async () => {
    const who = await subscriber("S");
    const b = new Browser({ vars: { SIGNIN_RESEND_COOLDOWN_SECONDS: "0" } });
    let p = await toVerify(b, who);
    who.code = (await lastSms(who.phone)).code;
    const messages: string[] = [];
    for (let i = 0; i < 5; i++) {
      p = await b.submit(p, { otp: "999999" });
      expect(p.status).toBe(200);
      messages.push(alertText(p.html)!);
    }
    expect(messages).toEqual([
      "인증번호가 맞지 않습니다. 4번 더 입력할 수 있습니다.",
      "인증번호가 맞지 않습니다. 3번 더 입력할 수 있습니다.",
      "인증번호가 맞지 않습니다. 2번 더 입력할 수 있습니다.",
      "인증번호가 맞지 않습니다. 1번 더 입력할 수 있습니다.",
      "인증번호가 맞지 않습니다. 이 인증번호는 더 이상 쓸 수 없으니 인증번호를 다시 받으세요.",
    ]);
    const refused = await b.submit(p, { otp: who.code });
    expect(refused.status).toBe(429);
    expect(refused.res.headers.get("Retry-After")).toBeTruthy();
    expect(alertText(refused.html)).toBe("이 인증번호는 입력 횟수를 모두 썼습니다. 인증번호를 다시 받으세요.");
    const resent = await b.submit(refused, { resend: "Y" });
    expect(resent.status).toBe(200);
    expect(await b.submit(resent, { otp: who.code })).toMatchObject({ status: 200 }); // the old code is replaced
    const ok = await b.submit(resent, { otp: (await lastSms(who.phone)).code });
    expect(ok.form?.step).toBe("consent");
  });

  it("20 concurrent wrong guesses at one code: exactly 5 are evaluated, the rest refused 429", async () => {
    const who = await subscriber("K", "222222");
    const b = new Browser();
    const p = await toVerify(b, who);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => b.submit(p, { otp: String(900000 + i) })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });
});

/** `n` wrong codes from one network (new sign-ins as needed, a resend after 4 of each code's 5 tries). */
async function wrongCodes(who: Who, ip: string, n: number): Promise<Page> {
  let last: Page | undefined;
  for (let done = 0; done < n;) {
    const b = new Browser({ ip });
    let p = await toVerify(b, who);
    // a resend does not reset the number's counts
    for (let i = 0; i < 5 && done < n; i++, done++) {
      if (i === 4) p = await b.submit(p, { resend: "Y" });
      p = await b.submit(p, { otp: "000000" });
      if (p.status === 429) return p;
    }
    last = p;
  }
  return last!;
}

describe("the lock: 20 consecutive failures from one network lock that network out of the number; 100 from all lock the number", () => {
  it("the 20th failure from one network locks it for an hour (429, Retry-After) at identify, resend and verify; the owner on another network still signs in; it lifts after an hour", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const who = await subscriber("S", "333333");
    const attackerIp = "203.0.113.40";
    const last = await wrongCodes(who, attackerIp, 20);
    expect(last.status).toBe(429);
    expect(alertText(last.html)).toMatch(
      /^인증에 너무 많이 실패해 이 번호는 잠시 잠겼습니다\. \d{2}:\d{2}부터\(60분 뒤\) 다시 시도할 수 있습니다\.$/,
    );
    // the locked page offers no code entry and no new code: only leaving
    expect(last.form?.names.has("otp")).toBe(false);
    expect(last.form?.names.has("resend")).toBe(false);
    expect(last.form?.names.has("cancel")).toBe(true);
    expect(retryAfter(last)).toBeGreaterThan(3590);
    expect(retryAfter(last)).toBeLessThanOrEqual(3600);
    // from the locked network: the right code is refused, and so are resend and a new sign-in
    const attacker = new Browser({ ip: attackerIp, lang: "en" });
    const p = await attacker.authorize();
    const again = await attacker.submit(p, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    expect(again.status).toBe(429);
    expect(alertText(again.html)).toMatch(
      /^Too many failed attempts: this number is locked\. You can try again from \d{2}:\d{2} KST \(in 60 minutes\)\.$/,
    );
    // the owner, on another network, is not locked out by a stranger's guesses
    const owner = await signInAll(new Browser({ ip: "198.51.100.20" }), who);
    expect(owner.searchParams.get("code")).toBeTruthy();

    vi.setSystemTime(Date.now() + 3_601_000);
    const back = await signInAll(new Browser({ ip: attackerIp }), who);
    expect(back.searchParams.get("code")).toBeTruthy();
  });

  it("a locked network's right code is refused on a page it already holds, and its resend too", async () => {
    const who = await subscriber("K", "343434");
    const ip = "203.0.113.41";
    const b = new Browser({ ip });
    const held = await toVerify(b, who); // a page opened before the lock
    const locked = await wrongCodes(who, ip, 20);
    expect(locked.status).toBe(429);
    const right = await b.submit(held, { otp: who.code });
    expect(right.status).toBe(429);
    expect(right.form?.step).toBe("verify");
    expect((await b.submit(held, { resend: "Y" })).status).toBe(429);
  });

  it(
    "100 consecutive failures across networks lock the number for everyone (NIST SP 800-63B-4 ceiling)",
    { timeout: 60_000 },
    async () => {
      const who = await subscriber("L", "353535");
      let last: Page | undefined;
      for (let net = 0; net < 6 && last?.status !== 429; net++)
        last = await wrongCodes(who, `203.0.114.${net}`, net < 5 ? 19 : 5);
      expect(last!.status).toBe(429);
      const owner = new Browser({ ip: "198.51.100.21" });
      const p = await owner.submit(await owner.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
      expect(p.status).toBe(429);
      expect(alertText(p.html)).toMatch(
        /^인증에 너무 많이 실패해 이 번호는 잠시 잠겼습니다\. \d{2}:\d{2}부터\(60분 뒤\) 다시 시도할 수 있습니다\.$/,
      );
    },
  );

  it("a correct code resets the count: 19 failures, a success, 19 failures do not lock", async () => {
    const who = await subscriber("K", "444444");
    async function fail(n: number) {
      let done = 0;
      while (done < n) {
        const b = new Browser();
        let p = await toVerify(b, who, { prompt: "login" });
        for (let i = 0; i < 4 && done < n; i++, done++) {
          p = await b.submit(p, { otp: "000000" });
          expect(p.status).toBe(200);
        }
      }
    }
    await fail(19);
    await signInAll(new Browser(), who);
    await fail(19);
    const p = await toVerify(new Browser(), who);
    expect(p.status).toBe(200);
  });

  it("the lock applies to test numbers too, while send limits do not", async () => {
    const who = await subscriber("L", "555555");
    const b = new Browser();
    let p = await toVerify(b, who);
    for (let i = 0; i < 8; i++) {
      p = await b.submit(p, { resend: "Y" });
      expect(p.status, alertText(p.html)).toBe(200);
    }
    expect(await lastSms(who.phone)).toMatchObject({ n: 0 });
  });
});

describe("sending codes to real numbers (outbox sender in DEV_MODE)", () => {
  it("a real number gets a fresh 6-digit code by SMS; the verify page says where it went; the code works once", async () => {
    const who = await subscriber("S");
    const b = new Browser();
    const p = await toVerify(b, who);
    expect(p.html).not.toContain("테스트 번호입니다");
    const sms = await lastSms(who.phone);
    expect(sms.n).toBe(1);
    // the WebOTP line names the code page's host (docs/signin.md "The SMS text")
    expect(sms.text).toMatch(/^\[휴대폰번호 로그인\] 인증번호 (\d{6})\. 타인에게 알리지 마세요\.\n@localhost #\1$/);
    const done = await b.submit(p, { otp: sms.code });
    expect(done.form?.step).toBe("consent");
  });

  it("a code is bound to its sign-in: the code sent to another sign-in of the same number is refused here, and each works in its own", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const who = await subscriber("K");
    const a = new Browser();
    const pa = await toVerify(a, who);
    const codeA = (await lastSms(who.phone)).code;
    vi.setSystemTime(Date.now() + 31_000); // past the resend cooldown
    const b = new Browser();
    const pb = await toVerify(b, who);
    const codeB = (await lastSms(who.phone)).code;
    expect(codeB).not.toBe(codeA); // 1 in a million: two independent codes equal
    const crossed = await a.submit(pa, { otp: codeB });
    expect(crossed.status).toBe(200);
    expect(alertText(crossed.html)).toBe("인증번호가 맞지 않습니다. 4번 더 입력할 수 있습니다.");
    expect(alertText((await b.submit(pb, { otp: codeA })).html)).toBe(
      "인증번호가 맞지 않습니다. 4번 더 입력할 수 있습니다.",
    );
    expect((await a.submit(crossed, { otp: codeA })).form?.step).toBe("consent");
    expect((await b.submit(pb, { otp: codeB })).form?.step).toBe("consent");
  });

  it("a sent code is stored hashed: the sign-in's store object holds the challenge, never the code itself", async () => {
    const who = await subscriber("S");
    const p = await toVerify(new Browser(), who);
    const { code } = await lastSms(who.phone);
    expect(code).toMatch(/^\d{6}$/);
    const stub = storeFor(env, p.form!.hidden.tx!, providerConfig(env).oneTimeShards);
    const rows = await runInDurableObject(stub, (_o, state) => {
      const out: Record<string, unknown>[] = [];
      for (const table of ["entries", "counters", "codes", "tokens", "audit_outbox"])
        out.push(...state.storage.sql.exec(`SELECT * FROM ${table}`).toArray());
      return out;
    });
    const txKey = `tx:${await sha256(p.form!.hidden.tx!)}`;
    const tx = rows.find((r) => r.key === txKey);
    expect(tx).toBeDefined();
    expect(JSON.parse(String(tx!.value)).challenge.hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const text = rows
      .flatMap((r) => Object.values(r))
      .filter((v): v is string => typeof v === "string")
      .join("\n");
    expect(text).not.toMatch(new RegExp(`(^|\\D)${code}(\\D|$)`));
    expect(text).not.toContain(who.phone);
  });

  it("English pages send the English text", async () => {
    const who = await subscriber("K");
    await toVerify(new Browser({ lang: "en" }), who);
    expect((await lastSms(who.phone)).text).toMatch(
      /^\[Phone login\] Your code is (\d{6})\. Do not share it\.\n@localhost #\1$/,
    );
  });

  it("resend within 30 s is refused 429 with Retry-After; after 30 s a new code replaces the old one", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const who = await subscriber("S");
    const b = new Browser();
    const p = await toVerify(b, who);
    const first = (await lastSms(who.phone)).code;
    vi.setSystemTime(Date.now() + 10_000);
    const early = await b.submit(p, { resend: "Y" });
    expect(early.status).toBe(429);
    expect(retryAfter(early)).toBeGreaterThanOrEqual(19);
    expect(retryAfter(early)).toBeLessThanOrEqual(20);
    expect(alertText(early.html)).toBe(`인증번호는 ${retryAfter(early)}초 뒤에 다시 받을 수 있습니다.`);
    expect((await lastSms(who.phone)).n).toBe(1);
    vi.setSystemTime(Date.now() + 21_000);
    const resent = await b.submit(early, { resend: "Y" });
    expect(resent.status).toBe(200);
    expect(resent.html).toContain("인증번호를 다시 보냈습니다.");
    const second = await lastSms(who.phone);
    expect(second.n).toBe(2);
    if (second.code !== first) {
      const old = await b.submit(resent, { otp: first });
      expect(alertText(old.html)).toMatch(/^인증번호가 맞지 않습니다/);
    }
    const ok = await b.submit(resent, { otp: second.code });
    expect(ok.form?.step).toBe("consent");
  });

  it("the cooldown also holds across a new sign-in of the same number: its code page says when a code can be had, and sends nothing", async () => {
    const who = await subscriber("K");
    await toVerify(new Browser(), who);
    const sent = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox WHERE phone = ?")
        .bind(who.phone)
        .first<{ n: number }>())!.n;
    const before = await sent();
    const b = new Browser();
    const p = await b.submit(await b.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    expect(p.status).toBe(200);
    expect(p.form?.step).toBe("verify");
    expect(p.html).toMatch(/방금 이 번호로 인증번호를 보냈습니다\. \d+초 뒤에 새 인증번호를 받을 수 있습니다\./);
    // no code to type yet: getting one is the primary action
    expect(p.form?.names.has("otp")).toBe(false);
    expect(p.html).toContain('<button type="submit" class="primary" name="resend" value="Y"');
    expect(await sent()).toBe(before);
    // asking before the cooldown ends is refused there, on the code page
    const early = await b.submit(p, { resend: "Y" });
    expect(early.status).toBe(429);
    expect(early.form?.step).toBe("verify");
  });

  it("at most 5 sends per number per hour: the 6th is refused 429 until the hour ends", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const who = await subscriber("S");
    const b = new Browser();
    let p = await toVerify(b, who);
    for (let i = 2; i <= 5; i++) {
      vi.setSystemTime(Date.now() + 31_000);
      p = await b.submit(p, { resend: "Y" });
      expect(p.status).toBe(200);
    }
    vi.setSystemTime(Date.now() + 31_000);
    const sixth = await b.submit(p, { resend: "Y" });
    expect(sixth.status).toBe(429);
    expect(alertText(sixth.html)).toMatch(/^이 번호로 인증번호를 너무 많이 보냈습니다\. \d+분 뒤에 다시 시도하세요\.$/);
    const fifth = await lastSms(who.phone);
    expect(fifth.n).toBe(5);
    vi.setSystemTime(Date.now() + 3_600_000);
    // the transaction is over by now; a new sign-in sends again (the outbox keeps one hour)
    await toVerify(new Browser(), who);
    expect((await lastSms(who.phone)).id).toBeGreaterThan(fifth.id);
  });
});

describe("expiry", () => {
  it("a code is valid 3 minutes: accepted at 2:59, refused with 'expired' (200) at 3:00", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const a = await subscriber("S", "121212");
    const b1 = new Browser();
    const p1 = await toVerify(b1, a);
    vi.setSystemTime(Date.now() + 179_000);
    expect((await b1.submit(p1, { otp: a.code })).form?.step).toBe("consent");

    const b2 = new Browser();
    const p2 = await toVerify(b2, a);
    vi.setSystemTime(Date.now() + 180_000);
    const late = await b2.submit(p2, { otp: a.code });
    expect(late.status).toBe(200);
    expect(alertText(late.html)).toBe("인증번호 유효시간이 지났습니다. 인증번호를 다시 받으세요.");
    const fresh = await b2.submit(late, { resend: "Y" });
    expect((await b2.submit(fresh, { otp: a.code })).form?.step).toBe("consent");
  });

  it("shorter windows through variables: SIGNIN_OTP_TTL_SECONDS=10", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const a = await subscriber("S", "131313");
    const b = new Browser({ vars: { SIGNIN_OTP_TTL_SECONDS: "10" } });
    const p = await toVerify(b, a);
    vi.setSystemTime(Date.now() + 11_000);
    expect(alertText((await b.submit(p, { otp: a.code })).html)).toBe(
      "인증번호 유효시간이 지났습니다. 인증번호를 다시 받으세요.",
    );
  });
});

describe("per-IP limit on step 1 (default 100 per 10 minutes)", () => {
  it(
    "the 101st step-1 submission from one IP in 10 minutes is refused 429; another IP is not",
    { timeout: 60_000 },
    async () => {
      const b = new Browser({ ip: "192.0.2.55", lang: "en" });
      const p = await b.authorize();
      const fields = { telcoCd: "S", name: "nobody", phoneNo: "01000000000" };
      const started = Date.now(); // the window opens with the first submission
      for (let i = 0; i < 100; i++) {
        const r = await b.submit(p, fields);
        expect(r.status).toBe(200);
      }
      const refused = await b.submit(p, fields);
      expect(refused.status).toBe(429);
      expect(alertText(refused.html)).toBe("Too many requests from your network. Try again in 10 minutes.");
      // what is left of the 10-minute window (100 submissions may take a while on a loaded machine)
      const elapsed = Math.ceil((Date.now() - started) / 1000);
      expect(retryAfter(refused)).toBeGreaterThanOrEqual(600 - elapsed - 1);
      expect(retryAfter(refused)).toBeLessThanOrEqual(600);
      const other = new Browser({ ip: "192.0.2.56" });
      expect((await other.submit(await other.authorize(), fields)).status).toBe(200);
    },
  );

  it("the limit is a variable: SIGNIN_IP_LIMIT=3, SIGNIN_IP_WINDOW_SECONDS=60", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const b = new Browser({ ip: "192.0.2.77", vars: { SIGNIN_IP_LIMIT: "3", SIGNIN_IP_WINDOW_SECONDS: "60" } });
    const p = await b.authorize();
    const fields = { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone };
    for (let i = 0; i < 3; i++) expect((await b.submit(p, fields)).form?.step).toBe("verify");
    const refused = await b.submit(p, fields);
    expect(refused.status).toBe(429);
    expect(refused.form?.step).toBe("identify");
    expect(retryAfter(refused)).toBeLessThanOrEqual(60);
    vi.setSystemTime(Date.now() + 61_000);
    expect((await b.submit(p, fields)).form?.step).toBe("verify");
  });
});

describe("resends count against the network's step-1 limit (SIGNIN_IP_LIMIT counts both)", () => {
  it("with SIGNIN_IP_LIMIT=3: a first step and two resends send 3 SMS, the third resend is refused 429 and sends nothing; another network is not limited", async () => {
    const vars = { SIGNIN_IP_LIMIT: "3", SIGNIN_RESEND_COOLDOWN_SECONDS: "0", SIGNIN_SENDS_PER_WINDOW: "100" };
    const who = await subscriber("S");
    const b = new Browser({ ip: "192.0.2.88", vars, lang: "en" });
    let p = await toVerify(b, who);
    for (let i = 0; i < 2; i++) {
      p = await b.submit(p, { resend: "Y" });
      expect(p.status, alertText(p.html)).toBe(200);
    }
    expect((await lastSms(who.phone)).n).toBe(3);
    const refused = await b.submit(p, { resend: "Y" });
    expect(refused.status).toBe(429);
    expect(alertText(refused.html)).toBe("Too many requests from your network. Try again in 10 minutes.");
    expect(retryAfter(refused)).toBeGreaterThan(0);
    expect((await lastSms(who.phone)).n).toBe(3);
    // the code sent last still works from where the person is
    expect((await b.submit(refused, { otp: (await lastSms(who.phone)).code })).form?.step).toBe("consent");
    const other = new Browser({ ip: "192.0.2.89", vars });
    expect((await other.submit(await toVerify(other, who), { resend: "Y" })).status).toBe(200);
  });
});

describe("single use of a code", () => {
  it("20 concurrent submissions of the right code: exactly one redirect with a code, one code redeemable", async () => {
    const who = await subscriber("S", "777777");
    await signInAll(new Browser(), who); // consent given: the code step is the last step
    const b = new Browser();
    const p = await toVerify(b, who);
    const results = await Promise.all(Array.from({ length: 20 }, () => b.submit(p, { otp: who.code })));
    const redirects = results.filter((r) => r.status === 302);
    expect(redirects).toHaveLength(1);
    expect(results.filter((r) => r.status !== 302).every((r) => r.status === 200 || r.status === 403)).toBe(true);
    const code = new URL(redirects[0]!.res.headers.get("Location")!).searchParams.get("code")!;
    expect((await exchange(code)).status).toBe(200);
  });

  it("20 concurrent agreements on one consent page: exactly one redirect", async () => {
    const who = await subscriber("K", "888888");
    const b = new Browser();
    const p = await b.submit(await toVerify(b, who), { otp: who.code });
    expect(p.form?.step).toBe("consent");
    const results = await Promise.all(Array.from({ length: 20 }, () => b.submit(p, { agree: "Y" })));
    expect(results.filter((r) => r.status === 302)).toHaveLength(1);
  });

  it("a used code cannot be entered again on the same page", async () => {
    const who = await subscriber("L", "989898");
    await signInAll(new Browser(), who);
    const b = new Browser();
    const p = await toVerify(b, who);
    expect((await b.submit(p, { otp: who.code })).status).toBe(302);
    expect((await b.submit(p, { otp: who.code })).status).toBe(403);
  });
});
