// What a person in Korea sees and the law asks of the sign-in pages (docs/signin.md "Pages"):
// the consent page's statutory items, who runs the pages, budget-carrier (알뜰폰) lines, and the
// code step's states (the code's clock time, used-up attempts).
import { describe, expect, it } from "vitest";
import { admin } from "../../support/admin";
import { exchange, KIM, LIMITED, userMe } from "../../support/helpers";
import { alertText, Browser, throughCode } from "../../support/signin";
import { decryptField } from "../../../workers/core/crypto";
import { forgetClient } from "../../../workers/provider/store/clients";
import { formActionOf } from "../../../workers/provider/authorize/pages";

describe("consent (개인정보 보호법 §17 ②)", () => {
  it("states recipient, purpose, items, retention and the right to refuse with its consequence, in Korean and English", async () => {
    const ko = await throughCode(new Browser(), KIM, {
      client_id: LIMITED.clientId,
      redirect_uri: LIMITED.redirectUris[0]!,
    });
    expect(ko.form?.step).toBe("consent");
    const text = ko.html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
    expect(text).toContain("제공받는 자 Limited App");
    expect(text).toContain("이용 목적 회원 식별과 로그인");
    expect(text).toContain("제공 항목 성별 연령대 이 앱 전용 이용자 식별자");
    expect(text).toContain("보유 기간 로그인 연결을 끊거나 앱이 연결을 해지할 때까지");
    expect(text).toContain(
      "동의를 거부할 권리가 있습니다. 거부하면 이 앱에 휴대폰번호로 로그인할 수 없으며, 정보는 제공되지 않습니다.",
    );
    const en = await throughCode(new Browser({ lang: "en" }), KIM, {
      client_id: LIMITED.clientId,
      redirect_uri: LIMITED.redirectUris[0]!,
    });
    const etext = en.html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
    expect(etext).toContain("Recipient Limited App");
    expect(etext).toContain("Purpose of use Identifying you and logging you in");
    expect(etext).toContain("Retention period Until you terminate the login or the app ends the connection");
    expect(etext).toContain("You have the right to refuse.");
  });

  it("shows the purpose and retention the operator registered for the app (admin API fields purpose, retention)", async () => {
    const res = await admin("PATCH", `/admin/clients/${LIMITED.clientId}`, {
      json: { purpose: "주문 배송과 본인 확인", retention: "회원 탈퇴 후 30일까지" },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ purpose: "주문 배송과 본인 확인", retention: "회원 탈퇴 후 30일까지" });
    forgetClient(LIMITED.clientId);
    try {
      const p = await throughCode(new Browser(), KIM, {
        client_id: LIMITED.clientId,
        redirect_uri: LIMITED.redirectUris[0]!,
      });
      const text = p.html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
      expect(text).toContain("이용 목적 주문 배송과 본인 확인");
      expect(text).toContain("보유 기간 회원 탈퇴 후 30일까지");
    } finally {
      await admin("PATCH", `/admin/clients/${LIMITED.clientId}`, { json: { purpose: null, retention: null } });
      forgetClient(LIMITED.clientId);
    }
    for (const bad of [{ purpose: "" }, { retention: "x".repeat(301) }, { purpose: "a\nb" }, { retention: 3 }]) {
      expect(
        (await admin("PATCH", `/admin/clients/${LIMITED.clientId}`, { json: bad })).status,
        JSON.stringify(bad),
      ).toBe(400);
    }
  });
});

describe("form-action", () => {
  it("each redirect URI gets its own origin or scheme, also once more URIs were seen than are kept", () => {
    const uris = Array.from({ length: 600 }, (_, i) => [
      `https://app${i}.example/cb?x=${i}`,
      `https://app${i}.example`,
    ]);
    for (const [uri, origin] of [...uris, ...uris.slice(0, 300).reverse()])
      expect(formActionOf(uri!)).toEqual([origin]);
    expect(formActionOf("demoapp://callback")).toEqual(["demoapp:"]);
    expect(formActionOf("not a url")).toEqual([]);
    expect(Object.isFrozen(formActionOf("https://app1.example/cb?x=1"))).toBe(true);
  });
});

describe("who runs the pages", () => {
  it("every page names the operator and links its terms, privacy policy, help and the /account page", async () => {
    const b = new Browser();
    const id = await b.authorize();
    expect(id.html).toContain("<p>운영: 예시 운영사 (로컬 개발)</p>");
    expect(id.html).toContain('<a href="https://login.example.com/terms">이용약관</a>');
    expect(id.html).toContain('<a href="https://login.example.com/privacy"><strong>개인정보처리방침</strong></a>');
    expect(id.html).toContain('<a href="https://login.example.com/help">도움말</a>');
    expect(id.html).toContain('<a href="/account?lang=ko">내 휴대폰번호 로그인</a>');
    const en = await new Browser({ lang: "en" }).authorize();
    expect(en.html).toContain("<p>Operated by 예시 운영사 (로컬 개발)</p>");
    const stop = await b.submit(id, { telcoCd: "S", name: "x", phoneNo: "01000000000" }, { tx: "A".repeat(43) });
    expect(stop.status).toBe(403);
    expect(stop.html).toContain("운영: 예시 운영사 (로컬 개발)");
  });
});

describe("알뜰폰 (budget carriers)", () => {
  it("offers MS, MK and ML and treats them as their host networks S, K and L", async () => {
    const b = new Browser();
    const id = await b.authorize();
    for (const v of ["S", "K", "L", "MS", "MK", "ML"]) expect(id.html).toContain(`name="telcoCd" value="${v}"`);
    expect(id.html).toContain("KT 알뜰폰");
    const verify = await b.submit(id, { telcoCd: "MK", name: KIM.name, phoneNo: KIM.phone });
    expect(verify.form?.step).toBe("verify");
    let p = await b.submit(verify, { otp: KIM.code });
    if (p.form?.step === "consent") p = await b.submit(p, { agree: "Y" });
    const code = new URL(p.res.headers.get("Location")!).searchParams.get("code")!;
    const tok = (await (await exchange(code)).json()) as { access_token: string };
    const user = ((await (await userMe(tok.access_token)).json()) as { user: Record<string, string> }).user;
    expect(user.telcoCd).toBe("K");
    expect(await decryptField("demoSecret0123456789abcdefABCDEF", user.name!)).toBe(KIM.name);
    // MK for an SKT subscriber is the ordinary mismatch; an unknown code is refused
    const b1 = new Browser();
    const wrong = await b1.submit(await b1.authorize(), {
      telcoCd: "MS",
      name: KIM.name,
      phoneNo: KIM.phone,
    });
    expect(alertText(wrong.html)).toBe("입력하신 이름과 휴대폰번호는 통신 3사에서 확인되지 않습니다.");
    const b2 = new Browser();
    const odd = await b2.submit(await b2.authorize(), { telcoCd: "MX", name: KIM.name, phoneNo: KIM.phone });
    expect(alertText(odd.html)).toBe("통신사를 선택하세요.");
  });
});

describe("the code step's states", () => {
  it("states the code's validity with the clock time it ends; with its tries used up, getting a new code is the primary action", async () => {
    const b = new Browser({ vars: { SIGNIN_OTP_MAX_ATTEMPTS: "2" } });
    const verify = await b.submit(await b.authorize({ prompt: "login" }), {
      telcoCd: KIM.telco,
      name: KIM.name,
      phoneNo: KIM.phone,
    });
    expect(verify.html).toMatch(
      /010-\*\*\*\*-6789\(으\)로 보낸 인증번호 6자리를 3분 안에 입력하세요 \(\d{2}:\d{2}까지\)\./,
    );
    expect(verify.html).toContain('<button type="submit" class="primary">확인</button>');
    let p = await b.submit(verify, { otp: "000000" });
    p = await b.submit(p, { otp: "000001" });
    expect(p.form?.names.has("otp")).toBe(false);
    expect(p.html).toContain('<button type="submit" class="primary" name="resend" value="Y"');
    const fresh = await b.submit(p, { resend: "Y" });
    expect(fresh.form?.names.has("otp")).toBe(true);
  });

  it("the first page puts the focus on the carrier choice", async () => {
    const p = await new Browser().authorize();
    expect(p.html).toMatch(/<input type="radio" id="telco-S" name="telcoCd" value="S" required autofocus>/);
    expect(p.html.match(/autofocus/g)).toHaveLength(1);
  });
});

describe("stop pages go back to the app", () => {
  it("a declined consent still answers access_denied; an unknown transaction offers no way on", async () => {
    const b = new Browser();
    const p = await throughCode(b, KIM, { client_id: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! });
    const declined = await b.submit(p, { agree: "N" });
    expect(declined.status).toBe(302);
    const loc = new URL(declined.res.headers.get("Location")!);
    expect(loc.searchParams.get("error")).toBe("access_denied");
    const unknown = await b.submit(p, {}, { tx: "B".repeat(43) });
    expect(unknown.status).toBe(403);
    expect(unknown.html).not.toContain('name="restart"');
  });
});
