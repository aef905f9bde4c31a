// The built-in SMS gateways on the wire (docs/signin.md "SMS gateways"): each request exactly as its
// provider's reference gives it, checked by a fake that verifies it the way the provider does
// (test/support/fixtures/sens-fake.js, nhn-fake.js), and every answer read as the failover needs it.
import { afterEach, describe, expect, it, vi } from "vitest";
import { nhnSender, sensSender } from "../../../../workers/provider/store/sms/gateways";
import { SmsFailure } from "../../../../workers/provider/store/sms/sender";
import { signinConfig } from "../../../../workers/provider/signin/config";
import { smsSender } from "../../../../workers/provider/store/sms/configured";
import { env } from "../../../support/env";
import { NHN_ORIGIN, SENS_ORIGIN, SmsFakes, type FakeMode } from "../../../support/sms-fakes";

afterEach(() => {
  vi.useRealTimers();
});

const MESSAGE = { to: "01099990000", text: "[휴대폰번호 로그인] 인증번호 123456", code: "123456", lang: "ko" as const };

/** The platform's fetch (routed to the fakes by test/support/setup.ts), keeping each request. */
function recording(): { seen: Request[]; fetcher: typeof fetch } {
  const seen: Request[] = [];
  return {
    seen,
    fetcher: async (input, init) => {
      const req = new Request(input as RequestInfo, init);
      seen.push(req.clone());
      return fetch(req);
    },
  };
}

function sens(f: SmsFakes, fetcher?: typeof fetch, secretKey = "fakeSensSecretKey-0123456789abcdefghijKLMN") {
  return sensSender({
    baseUrl: SENS_ORIGIN,
    serviceId: f.serviceId,
    accessKey: "FAKEsensAccessKey0001",
    secretKey,
    from: "0212345678",
    fetcher,
  });
}

function nhn(f: SmsFakes, fetcher?: typeof fetch, secretKey = "fakeNhnSecretKey01") {
  return nhnSender({ baseUrl: NHN_ORIGIN, appKey: f.appKey, secretKey, sendNo: "0212345678", fetcher });
}

async function failure(p: Promise<void>): Promise<SmsFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SmsFailure);
  return err as SmsFailure;
}

/** Base64 of HMAC-SHA256, computed here with WebCrypto alone (not the service's helper). */
async function hmacBase64(key: string, message: string): Promise<string> {
  const enc = new TextEncoder();
  const k = await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(message)))));
}

describe("Naver Cloud SENS (SMS API v2)", () => {
  it('POSTs /sms/v2/services/{serviceId}/messages with the millisecond timestamp, access key and the v2 signature over "POST " + path + "\\n" + timestamp + "\\n" + accessKey; the fake accepts it (202)', async () => {
    const f = new SmsFakes();
    const { seen, fetcher } = recording();
    await sens(f, fetcher).send(MESSAGE);
    expect(seen).toHaveLength(1);
    const req = seen[0]!;
    const path = `/sms/v2/services/${f.serviceId}/messages`;
    expect(req.method).toBe("POST");
    expect(req.url).toBe(`${SENS_ORIGIN}${path}`);
    expect(req.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    const ts = req.headers.get("x-ncp-apigw-timestamp")!;
    expect(ts).toMatch(/^\d{13}$/);
    expect(Math.abs(Number(ts) - Date.now())).toBeLessThan(5000);
    expect(req.headers.get("x-ncp-iam-access-key")).toBe("FAKEsensAccessKey0001");
    expect(req.headers.get("x-ncp-apigw-signature-v2")).toBe(
      await hmacBase64(
        "fakeSensSecretKey-0123456789abcdefghijKLMN",
        "POST " + path + "\n" + ts + "\n" + "FAKEsensAccessKey0001",
      ),
    );
    expect(await req.json()).toEqual({
      type: "SMS",
      contentType: "COMM",
      countryCode: "82",
      from: "0212345678",
      content: MESSAGE.text,
      messages: [{ to: "01099990000" }],
    });
    const log = await f.log("sens");
    expect(log).toMatchObject([{ accepted: true, status: 202, to: ["01099990000"], from: "0212345678" }]);
  });

  it("a wrong signature is refused by the fake (401, as SENS's gateway answers) and is the provider refusing, not the request's fault", async () => {
    const f = new SmsFakes();
    const err = await failure(sens(f, undefined, "not-the-secret-key").send(MESSAGE));
    expect(err).toMatchObject({ fault: "provider_refused", status: 401, code: "200" });
    expect(await f.log("sens")).toMatchObject([{ accepted: false, status: 401, reason: "signature" }]);
  });

  it("a timestamp more than 5 minutes off is refused (401)", async () => {
    const f = new SmsFakes();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() - 6 * 60_000);
    const err = await failure(sens(f).send(MESSAGE));
    vi.useRealTimers();
    expect(err).toMatchObject({ fault: "provider_refused", status: 401 });
    expect(await f.log("sens")).toMatchObject([{ accepted: false, reason: "timestamp" }]);
  });
});

describe("NHN Cloud Notification SMS (API v3.0)", () => {
  it("POSTs /sms/v3.0/appKeys/{appKey}/sender/sms with X-Secret-Key and {body, sendNo, recipientList: [{recipientNo}]}; the fake accepts it", async () => {
    const f = new SmsFakes();
    const { seen, fetcher } = recording();
    await nhn(f, fetcher).send(MESSAGE);
    const req = seen[0]!;
    expect(req.method).toBe("POST");
    expect(req.url).toBe(`${NHN_ORIGIN}/sms/v3.0/appKeys/${f.appKey}/sender/sms`);
    expect(req.headers.get("X-Secret-Key")).toBe("fakeNhnSecretKey01");
    expect(req.headers.get("Content-Type")).toBe("application/json;charset=UTF-8");
    expect(await req.json()).toEqual({
      body: MESSAGE.text,
      sendNo: "0212345678",
      recipientList: [{ recipientNo: "01099990000" }],
    });
    expect(await f.log("nhn")).toMatchObject([{ accepted: true, status: 200, to: ["01099990000"] }]);
  });

  it("an HTTP 200 whose header says isSuccessful false is a refusal: the provider's (-2021) or the request's (-2019, an invalid number)", async () => {
    const f = new SmsFakes();
    await f.mode("nhn", "provider-refuse", 1);
    expect(await failure(nhn(f).send(MESSAGE))).toMatchObject({
      fault: "provider_refused",
      status: 200,
      code: "-2021",
    });
    await f.mode("nhn", "refuse", 1);
    expect(await failure(nhn(f).send(MESSAGE))).toMatchObject({ fault: "request_refused", status: 200, code: "-2019" });
    expect((await f.log("nhn")).map((r) => r.accepted)).toEqual([false, false]);
  });

  it("a wrong secret key or an unregistered sender number is the provider refusing", async () => {
    const f = new SmsFakes();
    expect(await failure(nhn(f, undefined, "wrong").send(MESSAGE))).toMatchObject({ fault: "provider_refused" });
    const unregistered = nhnSender({
      baseUrl: NHN_ORIGIN,
      appKey: f.appKey,
      secretKey: "fakeNhnSecretKey01",
      sendNo: "0299999999",
    });
    expect(await failure(unregistered.send(MESSAGE))).toMatchObject({ fault: "provider_refused", code: "-2312" });
  });
});

describe("each answer of each provider, as the failover reads it", () => {
  const cases: [FakeMode, string][] = [
    ["refuse", "request_refused"],
    ["fail", "server_error"],
    ["429", "throttled"],
    ["provider-refuse", "provider_refused"],
  ];
  for (const p of ["sens", "nhn"] as const)
    for (const [mode, fault] of cases)
      it(`${p} ${mode}: ${fault}, nothing accepted`, async () => {
        const f = new SmsFakes();
        await f.mode(p, mode);
        const sender = p === "sens" ? sens(f) : nhn(f);
        expect((await failure(sender.send(MESSAGE))).fault).toBe(fault);
        expect(await f.delivered(p)).toEqual([]);
      });
});

describe("configuration", () => {
  const base = new SmsFakes().vars();
  it("SMS_SENDER takes an ordered list of gateways, each once; the outbox stays alone and DEV_MODE only", () => {
    expect(signinConfig({ SMS_SENDER: "naver-sens,nhn-cloud" }).smsSenders).toEqual(["naver-sens", "nhn-cloud"]);
    expect(signinConfig({ SMS_SENDER: "nhn-cloud, webhook" }).smsSenders).toEqual(["nhn-cloud", "webhook"]);
    expect(() => signinConfig({ SMS_SENDER: "naver-sens,naver-sens" })).toThrow(/SMS_SENDER/);
    expect(() => signinConfig({ SMS_SENDER: "naver-sens,outbox" })).toThrow(/SMS_SENDER/);
    expect(() => signinConfig({ SMS_SENDER: "kakao" })).toThrow(/SMS_SENDER/);
  });

  it("defaults: SENS at https://sens.apigw.ntruss.com, NHN Cloud at https://api-sms.cloud.toast.com, 3 s an attempt", () => {
    expect(signinConfig({}).sms).toMatchObject({
      timeoutMs: 3000,
      sens: { baseUrl: "https://sens.apigw.ntruss.com" },
      nhn: { baseUrl: "https://api-sms.cloud.toast.com" },
    });
  });

  it("a base URL must be https; loopback http only with DEV_MODE=true", () => {
    expect(() => signinConfig({ SENS_BASE_URL: "http://sens.example" })).toThrow(/SENS_BASE_URL/);
    expect(() => signinConfig({ DEV_MODE: "true", NHN_SMS_BASE_URL: "http://sms.example" })).toThrow(
      /NHN_SMS_BASE_URL/,
    );
    expect(() => signinConfig({ DEV_MODE: "false", SENS_BASE_URL: "http://127.0.0.1:9801" })).toThrow(/SENS_BASE_URL/);
    expect(signinConfig({ DEV_MODE: "true", SENS_BASE_URL: "http://127.0.0.1:9801/" }).sms.sens.baseUrl).toBe(
      "http://127.0.0.1:9801",
    );
    expect(signinConfig({ NHN_SMS_BASE_URL: "https://sms.example/" }).sms.nhn.baseUrl).toBe("https://sms.example");
  });

  for (const name of [
    "SENS_SERVICE_ID",
    "SENS_ACCESS_KEY",
    "SENS_SECRET_KEY",
    "NHN_SMS_APP_KEY",
    "NHN_SMS_SECRET_KEY",
    "SMS_FROM",
  ])
    it(`a missing ${name} fails naming it`, () => {
      const vars: Record<string, string> = { ...base };
      delete vars[name];
      expect(() => smsSender({ ...env, ...vars } as typeof env)).toThrow(new RegExp(`configuration: ${name} `));
    });
});
