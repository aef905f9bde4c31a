// The identify step's agreements (docs/signin.md "The agreements"): each required agreement with
// its full text behind 보기 and one 전체 동의 box; a post without `carrierTerms=Y` is the same step
// with the alert, the entries kept, nobody looked up and nothing sent; the texts are the operator's
// (SIGNIN_TERMS), the samples when unset.
import { describe, expect, it } from "vitest";
import { env } from "../../../support/env";
import { alertText, Browser } from "../../../support/signin";
import { HONG } from "../../../support/helpers";
import { ConfigError } from "../../../../workers/core/config";
import { signinConfig } from "../../../../workers/provider/signin/config";

async function outboxCount(): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox").first<{ n: number }>())!.n;
}

const OPERATOR_TERMS = [
  {
    title: { ko: "운영사 개인정보 처리 동의", en: "Operator's privacy terms" },
    text: { ko: "운영사 약관 본문 <b>굵게 아님</b>\n둘째 줄", en: "The operator's text" },
  },
  { title: { ko: "둘째 약관", en: "Second terms" }, text: { ko: "둘째 본문", en: "Second text" } },
];

describe("the identify step's agreements", () => {
  it("shows each agreement behind 보기 and one required 전체 동의 box, in both languages", async () => {
    const b = new Browser();
    const ko = await b.authorize();
    expect(ko.form?.names.has("carrierTerms")).toBe(true);
    expect(ko.html).toMatch(
      /<input type="checkbox" id="carrierTerms" name="carrierTerms" value="Y" required aria-describedby="terms-hint">/,
    );
    expect(ko.html).toContain("전체 동의");
    for (const title of [
      "개인정보 수집·이용 동의",
      "고유식별정보 처리 동의",
      "통신사 이용약관 동의",
      "본인확인서비스 이용약관 동의",
    ])
      expect(ko.html).toMatch(new RegExp(`<summary>${title} \\(필수\\) <span class="view">보기</span></summary>`));
    // the box comes before the button that asks for the code
    expect(ko.html.indexOf('id="carrierTerms"')).toBeLessThan(ko.html.indexOf("인증번호 받기"));
    const en = await b.authorize({ lang: "en" });
    expect(en.html).toContain("Agree to all (required)");
    expect(en.html).toMatch(
      /<summary>The carrier&#39;s terms of use \(required\) <span class="view">View<\/span><\/summary>/,
    );
  });

  it("a post without carrierTerms=Y is the same step with the alert, the entries kept; nobody looked up, nothing sent", async () => {
    const b = new Browser();
    const p1 = await b.authorize();
    const sent = await outboxCount();
    for (const ticked of [{ carrierTerms: "" }, { carrierTerms: "N" }, { carrierTerms: "yes" }]) {
      const p2 = await b.submit(p1, { telcoCd: "S", name: "홍길동", phoneNo: "010-1234-5678", ...ticked });
      expect(p2.status).toBe(200);
      expect(p2.form?.step).toBe("identify");
      expect(alertText(p2.html)).toBe(
        "인증번호를 받으려면 약관에 동의해 주세요. 각 약관은 '보기'를 눌러 확인할 수 있습니다.",
      );
      expect(p2.html).toMatch(/name="carrierTerms" value="Y" required aria-invalid="true"/);
      expect(p2.html).toContain('value="홍길동"');
      expect(p2.html).toContain('value="010-1234-5678"');
    }
    expect(await outboxCount()).toBe(sent);
    // ticked, the sign-in goes on (a test number: its fixed code)
    const p3 = await b.submit(p1, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone, carrierTerms: "Y" });
    expect(p3.form?.step, alertText(p3.html)).toBe("verify");
  });

  it("a re-rendered step keeps the box as the person ticked it", async () => {
    const b = new Browser();
    const p2 = await b.submit(await b.authorize(), { telcoCd: "S", name: "없는사람", phoneNo: "010-9999-0000" });
    expect(alertText(p2.html)).toContain("확인되지 않습니다");
    expect(p2.html).toMatch(/name="carrierTerms" value="Y" required checked/);
  });

  it("the texts are the operator's SIGNIN_TERMS, escaped, line breaks kept; a malformed one names the variable", async () => {
    const b = new Browser({ vars: { SIGNIN_TERMS: JSON.stringify(OPERATOR_TERMS) } });
    const p = await b.authorize();
    expect(p.html).toContain("<summary>운영사 개인정보 처리 동의 (필수)");
    expect(p.html).toContain("운영사 약관 본문 &lt;b&gt;굵게 아님&lt;/b&gt;\n둘째 줄");
    expect(p.html).not.toContain("개인정보 수집·이용 동의");
    for (const bad of [
      "not json",
      "[]",
      JSON.stringify([{ title: { ko: "제목" }, text: { ko: "본문", en: "text" } }]),
      JSON.stringify(Array.from({ length: 11 }, () => OPERATOR_TERMS[1])),
    ]) {
      let err: unknown;
      try {
        signinConfig({ ...env, SIGNIN_TERMS: bad } as typeof env);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe("SIGNIN_TERMS");
    }
  });
});
