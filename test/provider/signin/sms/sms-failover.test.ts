// SMS failover through the sign-in pages (docs/signin.md "Failover"), against the providers' fakes:
// the code reaches the person through the first gateway, through the second while the first fails,
// never twice, and never through a second gateway when the request itself was refused; a gateway
// failing 5 times in a row is skipped for 30 s; a hanging gateway costs one timeout; the send
// limits and the code's validity count one send however many attempts; every attempt is audited
// without the number, text or code.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { insertSubscriber } from "../../../support/shards";
import { alertText, Browser, type Page } from "../../../support/signin";
import { auditEvents } from "../../../support/audit";
import { SmsFakes, type FakeMode, type FakeRequest, type Provider } from "../../../support/sms-fakes";
import { smsCircuits } from "../../../../workers/provider/store/sms/failover";
import { smsSender } from "../../../../workers/provider/store/sms/configured";
import { env } from "../../../support/env";

beforeEach(() => smsCircuits.reset());
afterEach(() => {
  vi.useRealTimers();
});

let nextPhone = 0;

async function person(): Promise<{ phone: string; name: string }> {
  const phone = `0107${String(nextPhone++).padStart(7, "0")}`;
  const name = `문자${nextPhone}`;
  await insertSubscriber({ telco: "S", phone, name, gender: "F", ci: `CI-sms-${phone}` });
  return { phone, name };
}

async function identify(b: Browser, who: { phone: string; name: string }): Promise<Page> {
  return b.submit(await b.authorize(), { telcoCd: "S", name: who.name, phoneNo: who.phone });
}

/** The code in a message the fake accepted (its WebOTP line's `#code`). */
function codeOf(r: FakeRequest): string {
  return /#(\d{6})$/.exec(r.content!)![1]!;
}

async function accepted(f: SmsFakes): Promise<{ sens: FakeRequest[]; nhn: FakeRequest[] }> {
  return { sens: await f.delivered("sens"), nhn: await f.delivered("nhn") };
}

describe("SMS_SENDER=naver-sens,nhn-cloud against the fakes", () => {
  it("a sign-in receives its code through the first provider", async () => {
    const f = new SmsFakes();
    const who = await person();
    const b = new Browser({ vars: f.vars() });
    const p = await identify(b, who);
    expect(p.status, alertText(p.html)).toBe(200);
    expect(p.form?.step).toBe("verify");
    const { sens, nhn } = await accepted(f);
    expect(sens).toHaveLength(1);
    expect(nhn).toEqual([]);
    expect(sens[0]).toMatchObject({ to: [who.phone], from: "0212345678" });
    const done = await b.submit(p, { otp: codeOf(sens[0]!) });
    expect(done.form?.step).toBe("consent");
  });

  it("and through the second while the first fails (503): one SMS, and the code works", async () => {
    const f = new SmsFakes();
    await f.mode("sens", "fail");
    const who = await person();
    const b = new Browser({ vars: f.vars() });
    const p = await identify(b, who);
    expect(p.form?.step, alertText(p.html)).toBe("verify");
    expect(await f.log("sens")).toMatchObject([{ accepted: false, status: 503 }]);
    const { sens, nhn } = await accepted(f);
    expect(sens).toEqual([]);
    expect(nhn).toHaveLength(1);
    expect(nhn[0]).toMatchObject({ to: [who.phone], from: "0212345678" });
    expect((await b.submit(p, { otp: codeOf(nhn[0]!) })).form?.step).toBe("consent");
  });

  const firstFails: [string, FakeMode | "signature"][] = [
    ["answers 503", "fail"],
    ["answers 429", "429"],
    ["refuses as its own fault", "provider-refuse"],
    ["hangs", "hang"],
    ["refuses a wrong signature", "signature"],
  ];
  for (const [what, mode] of firstFails)
    it(`when the first ${what}, the second delivers: exactly one provider accepted the send`, async () => {
      const f = new SmsFakes();
      const vars = f.vars({ SMS_TIMEOUT_MS: "300" });
      if (mode === "signature") vars.SENS_SECRET_KEY = "a-secret-key-SENS-never-issued";
      else await f.mode("sens", mode);
      const who = await person();
      const b = new Browser({ vars });
      const p = await identify(b, who);
      expect(p.form?.step, alertText(p.html)).toBe("verify");
      const sensLog = await f.log("sens");
      expect(sensLog).toHaveLength(1);
      expect(sensLog[0]!.accepted).toBe(false);
      if (mode === "signature") expect(sensLog[0]).toMatchObject({ status: 401, reason: "signature" });
      const { sens, nhn } = await accepted(f);
      expect(sens.length + nhn.length).toBe(1);
      expect(nhn).toHaveLength(1);
      expect((await b.submit(p, { otp: codeOf(nhn[0]!) })).form?.step).toBe("consent");
    });

  for (const order of ["naver-sens,nhn-cloud", "nhn-cloud,naver-sens"]) {
    const first: Provider = order.startsWith("naver") ? "sens" : "nhn";
    const second: Provider = first === "sens" ? "nhn" : "sens";
    it(`a refusal that is the request's fault (an invalid number) is not tried elsewhere (${order}): 503, nothing sent, the code withdrawn`, async () => {
      const f = new SmsFakes();
      await f.mode(first, "refuse");
      const who = await person();
      const b = new Browser({ vars: f.vars({ SMS_SENDER: order }) });
      const p = await identify(b, who);
      expect(p.status).toBe(503);
      expect(alertText(p.html)).toBe("인증번호를 보내지 못했습니다. 잠시 뒤에 다시 시도하세요.");
      expect(await f.log(first)).toHaveLength(1);
      expect(await f.log(second)).toEqual([]);
      const wrong = await b.submit(p, { otp: "000000" });
      expect(alertText(wrong.html)).toBe("이 인증번호는 더 이상 쓸 수 없습니다. 인증번호를 다시 받으세요.");
    });
  }

  it("when both fail, the page says the code could not be sent (503) and each was tried once", async () => {
    const f = new SmsFakes();
    await f.mode("sens", "fail");
    await f.mode("nhn", "429");
    const who = await person();
    const p = await identify(new Browser({ vars: f.vars() }), who);
    expect(p.status).toBe(503);
    expect(p.form?.step).toBe("verify");
    expect((await f.log("sens")).length).toBe(1);
    expect((await f.log("nhn")).length).toBe(1);
    expect(await accepted(f)).toEqual({ sens: [], nhn: [] });
  });

  it("a hanging first provider: the page still answers within the timeout (SMS_TIMEOUT_MS) plus the second's answer", async () => {
    const f = new SmsFakes();
    await f.mode("sens", "hang");
    const who = await person();
    const b = new Browser({ vars: f.vars({ SMS_TIMEOUT_MS: "500" }) });
    const p1 = await b.authorize();
    const started = Date.now();
    const p = await b.submit(p1, { telcoCd: "S", name: who.name, phoneNo: who.phone });
    const elapsed = Date.now() - started;
    expect(p.form?.step, alertText(p.html)).toBe("verify");
    expect(elapsed).toBeGreaterThanOrEqual(500);
    // generous for a loaded 2-core machine; the hang itself lasts 60 s
    expect(elapsed).toBeLessThan(3000);
    expect((await accepted(f)).nhn).toHaveLength(1);
  });
});

// Before the circuit's test, which moves the clock on (its events would fall after `since` here).
describe("audit", () => {
  it("each attempt is audited with its gateway, result and latency: never the number, text or code", async () => {
    const f = new SmsFakes();
    await f.mode("sens", "fail");
    const who = await person();
    const since = Date.now();
    const p = await identify(new Browser({ vars: f.vars() }), who);
    expect(p.form?.step).toBe("verify");
    const events = (await auditEvents({ type: "sms.attempt", since })).filter((e) => e.client_id === "demo-client");
    const details = events.map((e) => ({ outcome: e.outcome, ...(JSON.parse(e.detail!) as Record<string, unknown>) }));
    expect(details).toEqual([
      {
        outcome: "refused",
        provider: "naver-sens",
        result: "server_error",
        status: 503,
        code: "500",
        ms: expect.any(Number),
      },
      { outcome: "ok", provider: "nhn-cloud", result: "delivered", ms: expect.any(Number) },
    ]);
    const code = codeOf((await f.delivered("nhn"))[0]!);
    const text = JSON.stringify(events);
    expect(text).not.toContain(who.phone);
    expect(text).not.toContain(code);
    expect(text).not.toContain("인증번호");
  });
});

describe("the circuit per provider", () => {
  it("a provider failing 5 times in a row is skipped for 30 s, then tried again", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const f = new SmsFakes();
    await f.mode("sens", "fail");
    const who = await person();
    const b = new Browser({
      vars: f.vars({ SIGNIN_RESEND_COOLDOWN_SECONDS: "0", SIGNIN_SENDS_PER_WINDOW: "20" }),
    });
    let p = await identify(b, who);
    for (let i = 0; i < 5; i++) {
      expect(p.form?.step, alertText(p.html)).toBe("verify");
      if (i < 4) p = await b.submit(p, { resend: "Y" });
    }
    expect((await f.log("sens")).length).toBe(5);
    // the sixth send: SENS is skipped, NHN Cloud delivers
    p = await b.submit(p, { resend: "Y" });
    expect(p.status, alertText(p.html)).toBe(200);
    expect((await f.log("sens")).length).toBe(5);
    expect((await f.delivered("nhn")).length).toBe(6);
    // 29 s on: still skipped
    vi.setSystemTime(Date.now() + 29_000);
    p = await b.submit(p, { resend: "Y" });
    expect((await f.log("sens")).length).toBe(5);
    // 31 s on: tried again, and now it delivers
    await f.mode("sens", "ok");
    vi.setSystemTime(Date.now() + 2_000);
    p = await b.submit(p, { resend: "Y" });
    expect(p.status).toBe(200);
    expect((await f.delivered("sens")).length).toBe(1);
    expect((await f.delivered("nhn")).length).toBe(7);
    const last = (await f.delivered("sens"))[0]!;
    expect((await b.submit(p, { otp: codeOf(last) })).form?.step).toBe("consent");
  });
});

describe("one send, however many attempts", () => {
  it("the send limits count a failed-over send once: with 2 sends an hour, the identify and one resend go out through NHN Cloud; the next is refused 429", async () => {
    const f = new SmsFakes();
    await f.mode("sens", "fail");
    const who = await person();
    const b = new Browser({
      vars: f.vars({ SIGNIN_RESEND_COOLDOWN_SECONDS: "0", SIGNIN_SENDS_PER_WINDOW: "2" }),
    });
    const p1 = await identify(b, who);
    expect(p1.form?.step).toBe("verify");
    const p2 = await b.submit(p1, { resend: "Y" });
    expect(p2.status, alertText(p2.html)).toBe(200);
    const p3 = await b.submit(p2, { resend: "Y" });
    expect(p3.status).toBe(429);
    expect(alertText(p3.html)).toMatch(/^이 번호로 인증번호를 너무 많이 보냈습니다/);
    expect((await f.log("sens")).length).toBe(2);
    const nhn = await f.delivered("nhn");
    expect(nhn).toHaveLength(2);
    // the code of the last send is the one to enter, valid its whole lifetime
    expect((await b.submit(p3, { otp: codeOf(nhn[1]!) })).form?.step).toBe("consent");
  });
});

describe("latency of a failover (printed for docs/signin.md; measured against the in-process fakes)", () => {
  it("identify with a direct success, after a 503 from the first provider, and with a hanging first provider", async () => {
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    async function run(mode: FakeMode, n: number, timeoutMs = "1000"): Promise<number[]> {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        smsCircuits.reset();
        const f = new SmsFakes();
        if (mode !== "ok") await f.mode("sens", mode);
        const who = await person();
        const b = new Browser({ vars: f.vars({ SMS_TIMEOUT_MS: timeoutMs }) });
        const p1 = await b.authorize();
        const started = performance.now();
        const p = await b.submit(p1, { telcoCd: "S", name: who.name, phoneNo: who.phone });
        times.push(performance.now() - started);
        expect(p.form?.step).toBe("verify");
      }
      return times;
    }
    await run("ok", 3); // warm-up
    const direct = await run("ok", 15);
    const failover = await run("fail", 15);
    const hang = await run("hang", 3, "500");
    const figures: Record<string, number> = {
      directMs: median(direct),
      after503Ms: median(failover),
      extraAfter503Ms: median(failover) - median(direct),
      hangingFirstMs: median(hang),
      extraHangingMs: median(hang) - median(direct),
    };
    // The senders alone, 200 sends each (the clock's millisecond steps average out).
    async function mean(mode: FakeMode): Promise<number> {
      const f = new SmsFakes();
      if (mode !== "ok") await f.mode("sens", mode);
      const vars = f.vars();
      const started = performance.now();
      for (let i = 0; i < 200; i++) {
        smsCircuits.reset();
        await smsSender({ ...env, ...vars } as typeof env).send({
          to: "01099990000",
          text: "x",
          code: "123456",
          lang: "ko",
        });
      }
      return (performance.now() - started) / 200;
    }
    const sendDirect = await mean("ok");
    const sendAfter503 = await mean("fail");
    Object.assign(figures, {
      senderDirectMs: +sendDirect.toFixed(2),
      senderAfter503Ms: +sendAfter503.toFixed(2),
      senderExtraAfter503Ms: +(sendAfter503 - sendDirect).toFixed(2),
    });
    console.log("sms failover latency (identify step, medians):", JSON.stringify(figures));
    expect(figures.hangingFirstMs).toBeGreaterThanOrEqual(500);
  });
});
