// What a person in Korea sees and the law asks of the sign-in pages (docs/signin.md "Pages"):
// the consent page's statutory items, who runs the pages, budget-carrier (알뜰폰) lines, and the
// code step's states (the code's clock time, used-up attempts).
import { SAMPLE_TERMS } from "../../../../workers/provider/signin/terms";
import { describe, expect, it } from "vitest";
import { admin } from "../../../support/admin";
import { exchange, KIM, LIMITED, userMe } from "../../../support/helpers";
import { alertText, Browser, throughCode } from "../../../support/signin";
import { decryptField } from "../../../../workers/core/crypto";
import { forgetClient } from "../../../../workers/provider/store/clients";
import fc from "fast-check";
import {
  consentPage,
  formActionOf,
  identifyPage,
  verifyPage,
  withoutShells,
  type PageContext,
} from "../../../../workers/provider/signin/pages";
import { IDENTITY_ITEMS } from "../../../../workers/core/spec";

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

describe("cached step pages", () => {
  // text that HTML escaping, UTF-8 and a cut in the wrong place would all show
  const text = fc.string({
    unit: fc.constantFrom("a", "Z", "1", " ", "&", "<", '"', "'", "가", "힣", "é", "\u{1F600}"),
    maxLength: 12,
  });
  const token = fc.string({ unit: fc.constantFrom("A", "z", "0", "-", "_", "."), minLength: 1, maxLength: 40 });
  const operator = fc.record({
    name: fc.option(text, { nil: undefined }),
    terms: fc.option(fc.constant("https://op.example/terms"), { nil: undefined }),
    help: fc.option(fc.constant("https://op.example/help"), { nil: undefined }),
  });
  const context = fc.record({
    lang: fc.constantFrom("ko" as const, "en" as const),
    hybrid: fc.boolean(),
    appName: text,
    account: fc.boolean(),
    txId: token,
    csrf: token,
    nonce: token,
    op: fc.integer({ min: 0, max: 2 }),
  });
  const operators = [
    {},
    { name: "운영사 & Co" },
    { name: "Op", terms: "https://op.example/t", privacy: "https://op.example/p" },
  ];
  const kind = fc.oneof(
    fc.constant({ page: "identify" as const }),
    fc.record({
      page: fc.constant("verify" as const),
      masked: text,
      test: fc.boolean(),
      minutes: fc.integer({ min: 1, max: 9 }),
      state: fc.constantFrom("enter" as const, "newCode" as const, "locked" as const),
      until: fc.option(text, { nil: undefined }),
      autoLogin: fc.option(fc.record({ days: fc.integer({ min: 1, max: 90 }), checked: fc.boolean() }), { nil: null }),
    }),
    fc.record({
      page: fc.constant("consent" as const),
      items: fc.subarray([...IDENTITY_ITEMS]),
      purpose: fc.option(text, { nil: null }),
      retention: fc.option(text, { nil: null }),
      version: token,
      app: token,
    }),
  );

  type Ctx = typeof context extends fc.Arbitrary<infer T> ? T : never;
  type Kind = typeof kind extends fc.Arbitrary<infer T> ? T : never;
  type Op = typeof operator extends fc.Arbitrary<infer T> ? T : never;

  function send(c: Ctx, k: Kind, op: Op): Response {
    const ctx: PageContext = {
      lang: c.lang,
      hybrid: c.hybrid,
      appName: c.appName,
      txId: c.txId,
      csrf: c.csrf,
      nonce: c.nonce,
      formAction: ["https://app.example"],
      operator: { ...(c.op === 2 ? op : operators[c.op]!), agreements: SAMPLE_TERMS },
      ...(c.account ? { purpose: "account" as const } : {}),
    };
    return k.page === "identify"
      ? identifyPage(ctx)
      : k.page === "verify"
        ? verifyPage(ctx, k)
        : consentPage(ctx, {
            app: k.app,
            items: k.items,
            purpose: k.purpose,
            retention: k.retention,
            version: k.version,
          });
  }

  async function same(got: Response, want: Response): Promise<void> {
    const [a, b] = [new Uint8Array(await got.arrayBuffer()), new Uint8Array(await want.arrayBuffer())];
    // compared in a loop (vitest's toEqual walks a page's bytes one by one as objects: most of this
    // file's time); a difference is shown as text, and bytes that differ where their text does not fail too
    if (a.length !== b.length || a.some((x, i) => x !== b[i])) {
      const text = (u: Uint8Array) => new TextDecoder().decode(u);
      expect(text(a)).toBe(text(b));
      expect.fail("the bytes differ where their text does not");
    }
    expect([...got.headers]).toEqual([...want.headers]);
    expect(got.status).toBe(want.status);
  }

  it("a page sent from the cache is, byte for byte and header for header, the page rendered afresh", async () => {
    await fc.assert(
      fc.asyncProperty(context, kind, operator, async (c, k, op) => {
        // the first send makes the shell, the next use it; with other holes, the same shell
        for (const x of [c, c, { ...c, txId: `${c.csrf}x`, csrf: `${c.txId}y`, nonce: "n&<" }])
          await same(
            send(x, k, op),
            withoutShells(() => send(x, k, op)),
          );
      }),
      { numRuns: 200 },
    );
  });

  // 200 runs of up to a dozen renders each: about a second
  it("a page that differs from a cached one in any one thing it shows is not sent from that one's shell", async () => {
    await fc.assert(
      fc.asyncProperty(context, kind, operator, context, kind, operator, async (c, k, op, c2, k2, op2) => {
        send(c, k, op); // cached
        const variants: [Ctx, Kind, Op][] = [[c, k, { ...op, ...op2 }]];
        for (const f of Object.keys(c2) as (keyof Ctx)[]) variants.push([{ ...c, [f]: c2[f] }, k, op]);
        if (k2.page === k.page)
          for (const f of Object.keys(k2) as (keyof Kind)[]) variants.push([c, { ...k, [f]: k2[f] } as Kind, op]);
        if (k.page === "verify") {
          // the box's two states and the test number's own page: one flag each
          if (k.autoLogin)
            variants.push([c, { ...k, autoLogin: { ...k.autoLogin, checked: !k.autoLogin.checked } }, op]);
          variants.push([c, { ...k, test: !k.test }, op]);
        }
        for (const [vc, vk, vop] of variants)
          await same(
            send(vc, vk, vop),
            withoutShells(() => send(vc, vk, vop)),
          );
      }),
      { numRuns: 200 },
    );
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
    expect(verify.html).toMatch(/010-\*\*\*\*-6789로 보낸 인증번호 6자리를 3분 안에 입력하세요 \(\d{2}:\d{2}까지\)\./);
    expect(verify.html).toContain('<button type="submit" class="primary">확인</button>');
    let p = await b.submit(verify, { otp: "000000" });
    p = await b.submit(p, { otp: "000001" });
    expect(p.form?.names.has("otp")).toBe(false);
    expect(p.html).toContain('<button type="submit" class="primary" name="resend" value="Y"');
    const fresh = await b.submit(p, { resend: "Y" });
    expect(fresh.form?.names.has("otp")).toBe(true);
  });

  it("the countdown is a timer with a polite live region for the minute marks, and the note it shows at zero is the text a late code gets", async () => {
    const b = new Browser();
    const verify = await b.submit(await b.authorize({ prompt: "login" }), {
      telcoCd: KIM.telco,
      name: KIM.name,
      phoneNo: KIM.phone,
    });
    expect(verify.html).toMatch(
      /<p id="countdown" class="hint" role="timer" [^>]*aria-live="off" [^>]*data-minutes="남은 시간 \{n\}분"/,
    );
    expect(verify.html).toContain('data-over="인증번호 유효시간이 지났습니다. 인증번호를 다시 받으세요."');
    expect(verify.html).toContain('<p id="countdown-say" class="sr" aria-live="polite"></p>');
  });

  it("the identify page has one primary button, and no automatic-login box (the passkey form's button is secondary)", async () => {
    for (const lang of ["ko", "en"]) {
      const p = await new Browser({ lang }).authorize();
      expect(p.html.match(/class="primary"/g)).toHaveLength(1);
      expect(p.html).toMatch(/<button type="submit" class="secondary" id="passkey-button">/);
      expect(p.html).not.toContain('name="autoLogin"');
    }
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
