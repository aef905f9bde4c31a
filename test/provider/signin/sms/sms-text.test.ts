// The SMS text and the code page's WebOTP call (docs/signin.md "The SMS text"): one SMS is at most
// 90 bytes in EUC-KR, in Korean and English, its last line the WebOTP origin-bound line
// `@<host> #<code>` whenever it fits; the code page calls navigator.credentials.get({ otp }) where
// the browser has it and works unchanged without it.
import { describe, expect, it } from "vitest";
import { eucKrBytes, smsText } from "../../../../workers/provider/signin/sms/text";
import { insertSubscriber } from "../../../support/shards";
import { alertText, Browser, withoutOwnScripts } from "../../../support/signin";
import { SMITH } from "../../../support/helpers";

const host = (n: number) => ("h".repeat(n - 4) + ".com").slice(-n);

describe("EUC-KR length", () => {
  it("ASCII is 1 byte; Hangul syllables and other KS X 1001 characters 2; a character outside EUC-KR is refused", () => {
    expect(eucKrBytes("A1 #@")).toBe(5);
    // KS X 1001's Hangul run from 가 to 힝
    expect(eucKrBytes("가힝")).toBe(4);
    expect(eucKrBytes("인증번호")).toBe(8);
    expect(eucKrBytes("·")).toBe(2);
    expect(eucKrBytes("\n")).toBe(1);
    // 똠 and 힣 are Hangul syllables outside KS X 1001's 2,350; an emoji is outside EUC-KR altogether
    expect(() => eucKrBytes("똠")).toThrow(/U\+B620 is not in EUC-KR/);
    expect(() => eucKrBytes("힣")).toThrow(/U\+D7A3 is not in EUC-KR/);
    expect(() => eucKrBytes("🙂")).toThrow(/not in EUC-KR/);
  });
});

describe("the SMS text", () => {
  it("ends with the WebOTP line for the code page's host: Korean 87 bytes, English 78 at login.example.com", () => {
    const ko = smsText("ko", "123456", 3, "login.example.com");
    const en = smsText("en", "123456", 3, "login.example.com");
    expect(ko).toBe("[휴대폰번호 로그인] 인증번호 123456. 타인에게 알리지 마세요.\n@login.example.com #123456");
    expect(en).toBe("[Phone login] Your code is 123456. Do not share it.\n@login.example.com #123456");
    expect(eucKrBytes(ko)).toBe(87);
    expect(eucKrBytes(en)).toBe(78);
  });

  it("the byte lengths of every message in both languages (every validity 1 to 30 min, hosts 1 to 80 characters): never over 90", () => {
    // [lang, text, bytes without the host, longest host it carries]
    const forms = {
      ko: { short: [70, 20], code: [45, 45], full: [78, 79] },
      en: { short: [61, 29], code: [43, 47], full: [65, 66] },
    } as const;
    for (const lang of ["ko", "en"] as const) {
      const { short, code, full } = forms[lang];
      for (let minutes = 1; minutes <= 30; minutes++)
        for (let n = 5; n <= 80; n++) {
          const h = host(n);
          const text = smsText(lang, "987654", minutes, h);
          const bytes = eucKrBytes(text);
          expect(bytes, `${lang} ${minutes} min, host of ${n}`).toBeLessThanOrEqual(90);
          if (n <= short[1]) expect(bytes).toBe(short[0] + n);
          else if (n <= code[1]) expect(bytes).toBe(code[0] + n);
          else expect(bytes).toBe(minutes < 10 ? full[0] : full[1]);
          if (n <= code[1]) expect(text.split("\n").at(-1)).toBe(`@${h} #987654`);
          else expect(text).not.toContain("@");
        }
    }
  });

  it("with the longest host each form carries the message is exactly 90 bytes; one character more takes the next form", () => {
    expect(smsText("ko", "123456", 3, host(20))).toBe(
      `[휴대폰번호 로그인] 인증번호 123456. 타인에게 알리지 마세요.\n@${host(20)} #123456`,
    );
    expect(eucKrBytes(smsText("ko", "123456", 3, host(20)))).toBe(90);
    expect(smsText("ko", "123456", 3, host(21))).toBe(`[휴대폰번호 로그인] 인증번호 123456\n@${host(21)} #123456`);
    expect(eucKrBytes(smsText("ko", "123456", 3, host(45)))).toBe(90);
    expect(eucKrBytes(smsText("en", "123456", 3, host(29)))).toBe(90);
    expect(smsText("en", "123456", 3, host(30))).toBe(`[Phone login] Your code is 123456\n@${host(30)} #123456`);
    expect(eucKrBytes(smsText("en", "123456", 3, host(47)))).toBe(90);
  });

  it("a host too long for any form drops the WebOTP line rather than exceed 90 bytes (the full text, 78 / 65 bytes)", () => {
    expect(smsText("ko", "123456", 3, host(46))).toBe(
      "[휴대폰번호 로그인] 인증번호 123456 (3분 안에 입력). 타인에게 알려주지 마세요.",
    );
    expect(smsText("en", "123456", 3, host(48))).toBe(
      "[Phone login] Your code is 123456 (valid 3 min). Do not share it.",
    );
    expect(eucKrBytes(smsText("ko", "123456", 30, host(46)))).toBe(79);
    expect(eucKrBytes(smsText("en", "123456", 30, host(48)))).toBe(66);
  });

  it("a host that is not a domain name (an IPv6 literal) gets no WebOTP line", () => {
    expect(smsText("en", "123456", 3, "[::1]")).not.toContain("@");
  });
});

describe("the code page's WebOTP call", () => {
  it("a code sent by SMS: a nonce'd inline script calls navigator.credentials.get({ otp }) where OTPCredential exists; CSP allows only that script; the field keeps autocomplete=one-time-code", async () => {
    await insertSubscriber({ telco: "K", phone: "01066660001", name: "웹오티피", gender: "F", ci: "CI-webotp-1" });
    const b = new Browser();
    const p = await b.submit(await b.authorize(), { telcoCd: "K", name: "웹오티피", phoneNo: "01066660001" });
    expect(p.form?.step, alertText(p.html)).toBe("verify");
    const csp = p.res.headers.get("Content-Security-Policy")!;
    const nonce = /script-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain(`style-src 'nonce-${nonce}'`);
    expect(csp).toContain("default-src 'none'");
    const scripts = [...p.html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toBe(` nonce="${nonce}"`);
    const js = scripts[0]![2]!;
    expect(js).toContain('if(!("OTPCredential" in window))return;');
    expect(js).toContain('navigator.credentials.get({otp:{transport:["sms"]},signal:ac.signal})');
    // a submission by hand aborts the wait
    expect(js).toContain('form.addEventListener("submit",function(){ac.abort()})');
    expect(p.html).toContain('autocomplete="one-time-code"');
    // without JavaScript the page is the same form (no attribute handlers, no script URL)
    expect(p.html).not.toMatch(/javascript:|\son[a-z]+=|<script[^>]+src=/i);
  });

  it("a test number's code page (nothing is sent) carries no WebOTP call and no passkey probe, only its countdown; the identify page only its passkey script", async () => {
    const b = new Browser();
    const p1 = await b.authorize();
    const p2 = await b.submit(p1, { telcoCd: "L", name: SMITH.name, phoneNo: SMITH.phone });
    expect(p2.form?.step).toBe("verify");
    expect(withoutOwnScripts(p2)).not.toContain("<script");
    expect(p2.html).not.toContain("OTPCredential");
    expect(p2.html).not.toContain("isUserVerifyingPlatformAuthenticatorAvailable");
    expect(p2.html).toMatch(/<p id="countdown" class="hint" role="timer" data-seconds="1[78]\d"/);
    expect(withoutOwnScripts(p1)).not.toContain("<script");
    expect(p1.html).toContain("passkey-form");
    expect(p1.html).not.toContain("OTPCredential");
  });
});
