// The sign-in pages at /oauth2/authorize (spec §4.1; docs/architecture.md §4.4, §4.7;
// docs/signin.md): every step, every message, headers, CSRF, languages, WebView, state round trip.
import { env } from "../../../support/env";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEMO, exchange, HONG, KIM, LEE, LIMITED, SMITH, userMe } from "../../../support/helpers";
import {
  alertText,
  Browser,
  DEMO_CB,
  parseForms,
  signInAll,
  throughCode,
  withoutOwnScripts,
  type Page,
} from "../../../support/signin";
import { forgetClient } from "../../../../workers/provider/store/clients";
import { subscriberByPhone } from "../../../../workers/provider/store/directory/directory";
import { connectionsOf } from "../../../../workers/provider/store/flows/connections";
import { findLink } from "../../../../workers/provider/store/directory/links";
import { auditEvents } from "../../../support/audit";

const UNCONFIRMED_KO = "입력하신 이름과 휴대폰번호는 통신 3사에서 확인되지 않습니다.";
const UNCONFIRMED_EN = "The entered name and phone number cannot be confirmed with the three carriers.";
const HOSTILE_STATE = 'a b&c=d/%ZZ한글"<>';

afterEach(() => {
  vi.useRealTimers();
});

async function identify(
  b: Browser,
  fields: Record<string, string>,
  params: Record<string, string> = {},
): Promise<Page> {
  return b.submit(await b.authorize(params), fields);
}

function location(p: Page): URL {
  expect(p.status).toBe(302);
  return new URL(p.res.headers.get("Location")!);
}

async function readUser(
  code: string,
  client: { clientId: string; secret: string } = DEMO,
): Promise<Record<string, string>> {
  const tok = await exchange(code, client);
  expect(tok.status).toBe(200);
  const { access_token } = (await tok.json()) as { access_token: string };
  const me = await userMe(access_token);
  expect(me.status).toBe(200);
  return ((await me.json()) as { user: Record<string, string> }).user;
}

describe("step 1, identify: the page and its form contract (docs/signin.md)", () => {
  it("a valid request answers the identify page: one step form first, posting telcoCd, name, phoneNo, carrierTerms with tx and csrf hidden", async () => {
    const p = await new Browser().authorize();
    expect(p.status).toBe(200);
    const forms = parseForms(p.html);
    expect(forms[0]).toMatchObject({ action: "/oauth2/authorize", step: "identify" });
    // the agreements' box since 2026-11-26 (docs/signin.md "The agreements")
    expect([...forms[0]!.names].sort()).toEqual(["cancel", "carrierTerms", "csrf", "name", "phoneNo", "telcoCd", "tx"]);
    // the first page's tx is the signed request (docs/signin.md "The first page"), not a stored id
    expect(forms[0]!.hidden.tx).toMatch(/^pg1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(forms[0]!.hidden.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.html).toMatch(/<form class="step" method="post" action="\/oauth2\/authorize"/);
    for (const c of ["S", "K", "L"]) expect(p.html).toContain(`name="telcoCd" value="${c}"`);
    expect(p.html).toMatch(/<label class="field" for="name">이름<\/label>/);
    expect(p.html).toMatch(/<label class="field" for="phoneNo">휴대폰번호<\/label>/);
    expect(p.html).toContain('name="cancel" value="Y" formnovalidate');
  });

  it("a page is one UTF-8 document: its doctype first, the whole stylesheet inside its nonce'd style element, the Korean text intact", async () => {
    const p = await new Browser().authorize();
    expect(p.res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    expect(p.html.startsWith('<!doctype html>\n<html lang="ko">')).toBe(true);
    const style = /<style nonce="[A-Za-z0-9_-]+">([^<]*)<\/style>\n<\/head>/.exec(p.html)?.[1] ?? "";
    // the stylesheet's first and last rules, and one in between, around the spliced bytes
    expect(style.startsWith("\n*,*::before,*::after{box-sizing:border-box}")).toBe(true);
    expect(style).toContain(".carriers input:checked+label{");
    expect(style.endsWith("a.switch{align-self:center;color:#1b64da;font-size:14px;font-weight:600}\n")).toBe(true);
    expect(p.html).not.toContain("\uFFFD");
    expect(p.html).toMatch(/<label class="field" for="phoneNo">휴대폰번호<\/label>/);
    expect(p.html.trimEnd().endsWith("</html>")).toBe(true);
  });

  it("pages carry the strict headers: CSP with a style nonce and form-action allowing the redirect origin, nosniff, no-referrer, no-store, HSTS", async () => {
    const p = await new Browser().authorize();
    const csp = p.res.headers.get("Content-Security-Policy")!;
    const nonce = /style-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(p.html).toContain(`<style nonce="${nonce}">`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self' https://demo.example;");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("base-uri 'none'");
    expect(p.res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(p.res.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(p.res.headers.get("Cache-Control")).toBe("no-store");
    expect(p.res.headers.get("Strict-Transport-Security")).toBe("max-age=31536000");
    expect(p.res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    // a new nonce per response
    const again = await new Browser().authorize();
    expect(again.res.headers.get("Content-Security-Policy")).not.toBe(csp);
  });

  it("every kind of page carries the strict headers and no script but its own nonce'd ones: identify, verify, a re-rendered error, consent, 429, and the 403 stop pages", async () => {
    const pages: [string, Page][] = [];
    const b = new Browser();
    const p1 = await b.authorize();
    pages.push(["identify", p1]);
    const p2 = await b.submit(p1, { telcoCd: "L", name: SMITH.name, phoneNo: SMITH.phone });
    pages.push(["verify", p2]);
    const wrong = await b.submit(p2, { otp: "000000" });
    pages.push(["wrong code", wrong]);
    const p3 = await b.submit(wrong, { otp: SMITH.code, autoLogin: "Y" });
    expect(p3.form?.step).toBe("consent");
    pages.push(["consent", p3]);
    pages.push(["csrf refused", await b.submit(p3, { agree: "Y" }, { csrf: "x".repeat(43) })]);
    pages.push([
      "unknown transaction",
      await b.page(
        await b.fetch("/oauth2/authorize", {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: "tx=" + "A".repeat(43),
        }),
      ),
    ]);
    const limited = new Browser({ ip: "192.0.2.200", vars: { SIGNIN_IP_LIMIT: "1" } });
    const l1 = await limited.authorize();
    await limited.submit(l1, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    pages.push(["429", await limited.submit(l1, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone })]);
    expect(pages.map(([n, p]) => [n, p.status])).toEqual([
      ["identify", 200],
      ["verify", 200],
      ["wrong code", 200],
      ["consent", 200],
      ["csrf refused", 403],
      ["unknown transaction", 403],
      ["429", 429],
    ]);
    for (const [n, p] of pages) {
      const csp = p.res.headers.get("Content-Security-Policy") ?? "";
      for (const d of ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action "])
        expect(csp, `${n}: ${d}`).toContain(d);
      expect(p.res.headers.get("X-Content-Type-Options"), n).toBe("nosniff");
      expect(p.res.headers.get("Referrer-Policy"), n).toBe("no-referrer");
      expect(p.res.headers.get("Cache-Control"), n).toBe("no-store");
      expect(p.res.headers.get("Strict-Transport-Security"), n).toBe("max-age=31536000");
      expect(withoutOwnScripts(p), n).not.toMatch(
        /<script|javascript:|window\.close|window\.open|\son[a-z]+=|src="https?:|<link[^>]+href="https?:/i,
      );
      const nonce = /style-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1];
      expect(p.html, n).toContain(`<style nonce="${nonce}">`);
    }
  });

  it("pages have no script but their own nonce'd enhancements and no third-party resource: they work with JavaScript off", async () => {
    const b = new Browser();
    const pages = [await b.authorize()];
    pages.push(await b.submit(pages[0]!, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone }));
    for (const p of pages) {
      expect(withoutOwnScripts(p)).not.toMatch(/<script|javascript:|window\.close|window\.open|\son[a-z]+=/i);
      // the step form is first and posts with no script (the passkey form is hidden until its script shows it)
      expect(parseForms(p.html)[0]!.step).toBeDefined();
      expect(p.html).not.toMatch(/<form class="step"[^>]*hidden/);
      // nothing loaded from elsewhere; the only outside links are the operator's (terms, privacy, help)
      expect(p.html).not.toMatch(/src="https?:|<link[^>]+href="https?:/);
      const outside = [...p.html.matchAll(/<a href="(https?:[^"]+)"/g)].map((m) => m[1]);
      expect(outside).toEqual([
        "https://login.example.com/terms",
        "https://login.example.com/privacy",
        "https://login.example.com/help",
      ]);
    }
  });

  it("sets the browser-binding cookie __Host-pl_tx: Secure, HttpOnly, Path=/, SameSite=Lax, and keeps one per browser", async () => {
    const b = new Browser();
    const p = await b.authorize();
    const cookie = p.res.headers.get("Set-Cookie")!;
    expect(cookie).toMatch(/^__Host-pl_tx=[A-Za-z0-9_-]{43}; Path=\/; Secure; HttpOnly; SameSite=Lax$/);
    const second = await b.authorize();
    expect(second.res.headers.get("Set-Cookie")).toBeNull();
  });

  it.each([
    ["hyphens", "010-1234-5678"],
    ["digits only", "01012345678"],
    ["spaces", "010 1234 5678"],
    ["surrounding spaces", "  01012345678 "],
  ])("accepts the mobile number with %s", async (_n, phoneNo) => {
    const p = await identify(new Browser(), { telcoCd: "S", name: HONG.name, phoneNo });
    expect(p.status).toBe(200);
    expect(p.form?.step).toBe("verify");
    expect(p.html).toContain("010-****-5678");
  });

  it.each([
    ["a wrong name", { telcoCd: "S", name: "홍길순", phoneNo: HONG.phone }],
    ["a wrong carrier", { telcoCd: "K", name: HONG.name, phoneNo: HONG.phone }],
    ["an unknown number", { telcoCd: "S", name: HONG.name, phoneNo: "010-9999-0000" }],
  ])(
    "%s gives the same 'cannot be confirmed with the three carriers' message, 200, the same step with the entries kept",
    async (_n, fields) => {
      const p = await identify(new Browser(), fields);
      expect(p.status).toBe(200);
      expect(p.form?.step).toBe("identify");
      expect(alertText(p.html)).toBe(UNCONFIRMED_KO);
      expect(p.html).toContain(`value="${fields.name}"`);
    },
  );

  it("the mismatch message on English pages is the spec's sentence", async () => {
    const p = await identify(new Browser({ lang: "en-US" }), { telcoCd: "K", name: HONG.name, phoneNo: HONG.phone });
    expect(alertText(p.html)).toBe(UNCONFIRMED_EN);
  });

  it("names compare after trimming, collapsing spaces and ignoring letter case", async () => {
    const p = await identify(new Browser(), { telcoCd: "L", name: "  john   SMITH ", phoneNo: SMITH.phone });
    expect(p.form?.step).toBe("verify");
  });

  it.each([
    ["no carrier", { name: HONG.name, phoneNo: HONG.phone }, "통신사를 선택하세요.", "Choose your carrier."],
    [
      "an unknown carrier code",
      { telcoCd: "X", name: HONG.name, phoneNo: HONG.phone },
      "통신사를 선택하세요.",
      "Choose your carrier.",
    ],
    ["no name", { telcoCd: "S", phoneNo: HONG.phone }, "이름을 입력하세요.", "Enter your name."],
    ["a blank name", { telcoCd: "S", name: "   ", phoneNo: HONG.phone }, "이름을 입력하세요.", "Enter your name."],
    [
      "a 51-character name",
      { telcoCd: "S", name: "가".repeat(51), phoneNo: HONG.phone },
      "이름은 50자까지 입력할 수 있습니다.",
      "Your name can be at most 50 characters.",
    ],
    ["no number", { telcoCd: "S", name: HONG.name }, "휴대폰번호를 입력하세요.", "Enter your mobile number."],
    [
      "a malformed number",
      { telcoCd: "S", name: HONG.name, phoneNo: "02-123-4567" },
      "휴대폰번호를 010-1234-5678 형식으로 입력하세요.",
      "Enter your mobile number like 010-1234-5678.",
    ],
  ])("%s re-renders step 1 (200) with its message in both languages", async (_n, fields, ko, en) => {
    const k = await identify(new Browser(), fields);
    expect(k.status).toBe(200);
    expect(k.form?.step).toBe("identify");
    expect(alertText(k.html)).toBe(ko);
    const e = await identify(new Browser({ lang: "en" }), fields);
    expect(alertText(e.html)).toBe(en);
  });

  it("the field in error is marked invalid, described by the alert and focused", async () => {
    const p = await identify(new Browser(), { telcoCd: "S", name: HONG.name, phoneNo: "123" });
    expect(p.html).toMatch(/id="phoneNo"[^>]*aria-invalid="true" aria-describedby="form-alert" autofocus/);
    expect(p.html).toMatch(/<p id="form-alert" class="alert" role="alert">/);
  });
});

describe("step 2, verify", () => {
  it("the code page: field otp with inputmode=numeric and autocomplete=one-time-code, resend and cancel buttons", async () => {
    const p = await identify(new Browser(), { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    expect(p.form?.step).toBe("verify");
    expect(p.form!.names).toEqual(new Set(["tx", "csrf", "otp", "autoLogin", "resend", "cancel"]));
    expect(p.html).toMatch(
      /<input type="text" class="otp" id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code"/,
    );
    expect(p.html).toMatch(/<label class="field" for="otp">인증번호<\/label>/);
    expect(p.html).toContain('name="resend" value="Y" formnovalidate');
    expect(p.html).toContain("테스트 번호입니다");
  });

  it("a wrong code re-renders the step (200) saying how many tries are left", async () => {
    const b = new Browser();
    const p = await identify(b, { telcoCd: "K", name: KIM.name, phoneNo: KIM.phone });
    const wrong = await b.submit(p, { otp: "000000" });
    expect(wrong.status).toBe(200);
    expect(wrong.form?.step).toBe("verify");
    expect(alertText(wrong.html)).toBe("인증번호가 맞지 않습니다. 4번 더 입력할 수 있습니다.");
    const again = await b.submit(wrong, { otp: "000001" });
    expect(alertText(again.html)).toBe("인증번호가 맞지 않습니다. 3번 더 입력할 수 있습니다.");
    const ok = await b.submit(again, { otp: KIM.code });
    expect([200, 302]).toContain(ok.status);
    expect(ok.form?.step ?? "redirect").not.toBe("verify");
  });

  it.each([
    ["empty", ""],
    ["5 digits", "12345"],
    ["letters", "12a456"],
  ])("a malformed code (%s) asks for 6 digits and uses no attempt", async (_n, otp) => {
    const b = new Browser({ lang: "en" });
    const p = await identify(b, { telcoCd: "S", name: LEE.name, phoneNo: LEE.phone });
    const bad = await b.submit(p, { otp });
    expect(bad.status).toBe(200);
    expect(alertText(bad.html)).toBe("Enter the 6-digit code.");
    const wrong = await b.submit(bad, { otp: "000000" });
    expect(alertText(wrong.html)).toBe("The code is not correct. 4 tries left.");
  });

  it("a malformed code's message on Korean pages: '인증번호 6자리를 입력하세요.'", async () => {
    const b = new Browser();
    const p = await identify(b, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    const bad = await b.submit(p, { otp: "12" });
    expect(bad.status).toBe(200);
    expect(bad.form?.step).toBe("verify");
    expect(alertText(bad.html)).toBe("인증번호 6자리를 입력하세요.");
    expect(bad.html).toMatch(/id="otp"[^>]*aria-invalid="true"/);
  });

  it("the identify form posted again (back button, a corrected number) starts step 1 over for the new number", async () => {
    const b = new Browser();
    const first = await b.authorize();
    const wrongNumber = await b.submit(first, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    expect(wrongNumber.html).toContain("010-****-5678");
    const corrected = await b.submit(first, { telcoCd: "S", name: LEE.name, phoneNo: LEE.phone });
    expect(corrected.form?.step).toBe("verify");
    expect(corrected.html).toContain("010-****-8901");
    expect(alertText((await b.submit(corrected, { otp: HONG.code })).html)).toMatch(/^인증번호가 맞지 않습니다/);
  });

  it("resend on a test number sends nothing and says to use the fixed code", async () => {
    const b = new Browser();
    const p = await identify(b, { telcoCd: "S", name: LEE.name, phoneNo: LEE.phone });
    const r = await b.submit(p, { resend: "Y" });
    expect(r.status).toBe(200);
    expect(r.html).toContain('role="status">테스트 번호입니다. 정해진 인증번호를 그대로 입력하세요.');
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox WHERE phone = ?")
        .bind(LEE.phone)
        .first<{ n: number }>())!.n,
    ).toBe(0);
  });
});

describe("step 3, consent, and the redirect (spec §4.1)", () => {
  it("a first login asks consent listing the client's items in plain words; agreeing redirects 302 with code and state", async () => {
    const b = new Browser();
    const p = await throughCode(b, SMITH, { state: "consent-1" });
    expect(p.status).toBe(200);
    expect(p.form?.step).toBe("consent");
    // `pk`: the passkey probe's field (empty unless its script finds a platform authenticator)
    expect(p.form!.names).toEqual(new Set(["tx", "csrf", "pk", "terms", "app", "agree"]));
    expect(p.html).toContain("Demo Shop에 아래 정보를 제공하는 데 동의하면");
    for (const word of [
      "연계정보(CI)",
      "휴대폰번호",
      "이름",
      "성별",
      "연령대",
      "생일(월일)",
      "생년월일",
      "내/외국인 구분",
      "통신사",
    ]) {
      expect(p.html).toContain(`<li>${word}</li>`);
    }
    const done = await b.submit(p, { agree: "Y" });
    const loc = location(done);
    expect(loc.origin + loc.pathname).toBe(DEMO_CB);
    expect([...loc.searchParams.keys()]).toEqual(["code", "state"]);
    expect(loc.searchParams.get("state")).toBe("consent-1");
    const user = await readUser(loc.searchParams.get("code")!);
    expect(user.autoLoginYn).toBe("N");
    expect(user.autoStatusCheck).toBe("N");
  });

  it("a returning subscriber is not asked again: the code step redirects", async () => {
    const b = new Browser();
    await signInAll(b, KIM);
    const p = await throughCode(new Browser(), KIM);
    expect(p.status).toBe(302);
    expect(location(p).searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("the limited client's consent lists only its items (gender, age group)", async () => {
    const b = new Browser();
    const p = await throughCode(b, LEE, { client_id: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! });
    expect(p.form?.step).toBe("consent");
    expect(p.html.match(/<li>/g)).toHaveLength(3);
    expect(p.html).toContain("<li>성별</li>");
    expect(p.html).toContain("<li>연령대</li>");
    expect(p.res.headers.get("Content-Security-Policy")).toContain("form-action 'self' https://limited.example;");
    const loc = location(await b.submit(p, { agree: "Y" }));
    expect(loc.origin).toBe("https://limited.example");
  });

  it("consent is asked again, keeping the plid, when the client's agreed items grew (docs/architecture.md §4.7)", async () => {
    const lim = { clientId: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! };
    const first = await signInAll(new Browser(), HONG, { client_id: lim.clientId, redirect_uri: lim.redirect_uri });
    const before = await readUser(first.searchParams.get("code")!, LIMITED);
    await env.DB.prepare("UPDATE clients SET items = ? WHERE client_id = ?")
      .bind(JSON.stringify(["gender", "agegroup", "telcoCd"]), lim.clientId)
      .run();
    forgetClient(lim.clientId);
    try {
      const b = new Browser();
      const p = await throughCode(b, HONG, { client_id: lim.clientId, redirect_uri: lim.redirect_uri });
      expect(p.form?.step).toBe("consent");
      expect(p.html).toContain("<li>통신사</li>");
      const after = await readUser(location(await b.submit(p, { agree: "Y" })).searchParams.get("code")!, LIMITED);
      expect(after.plid).toBe(before.plid);
      expect(after.telcoCd).toBe("S");
    } finally {
      await env.DB.prepare("UPDATE clients SET items = ? WHERE client_id = ?")
        .bind(JSON.stringify(["gender", "agegroup"]), lim.clientId)
        .run();
      forgetClient(lim.clientId);
    }
  });

  it("neither agree value re-renders the consent step (200) asking to choose", async () => {
    const b = new Browser({ lang: "en" });
    const p = await throughCode(b, KIM, { client_id: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! });
    expect(p.form?.step).toBe("consent");
    const r = await b.submit(p, { agree: "maybe" });
    expect(r.status).toBe(200);
    expect(alertText(r.html)).toBe("Choose whether you agree.");
  });

  it("PKCE: a code_challenge sent with the authorization request binds the code", async () => {
    const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    const loc = await signInAll(new Browser(), HONG, { code_challenge: challenge, code_challenge_method: "S256" });
    const code = loc.searchParams.get("code")!;
    expect((await exchange(code)).status).not.toBe(200);
    expect((await exchange(code, DEMO, { code_verifier: verifier })).status).toBe(200);
  });

  it("a custom-scheme redirect: form-action allows the scheme and the 302 goes to demoapp://callback", async () => {
    const b = new Browser();
    const p = await b.authorize({ redirect_uri: "demoapp://callback" });
    expect(p.res.headers.get("Content-Security-Policy")).toContain("form-action 'self' demoapp:;");
    const loc = await signInAll(b, HONG, { redirect_uri: "demoapp://callback", state: "s" });
    expect(loc.href).toMatch(/^demoapp:\/\/callback\?code=[A-Za-z0-9_-]{43}&state=s$/);
  });
});

describe("cancel (spec §4.1: access_denied)", () => {
  it.each([
    ["step 1", async (b: Browser) => b.authorize({ state: HOSTILE_STATE }), { cancel: "Y" }],
    [
      "step 2",
      async (b: Browser) =>
        identify(b, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone }, { state: HOSTILE_STATE }),
      { cancel: "Y" },
    ],
    [
      "consent",
      async (b: Browser) =>
        throughCode(b, KIM, {
          client_id: LIMITED.clientId,
          redirect_uri: LIMITED.redirectUris[0]!,
          state: HOSTILE_STATE,
        }),
      { agree: "N" },
    ],
  ] as const)("cancel at %s: 302 redirect_uri?error=access_denied&message=...&state=...", async (at, open, fields) => {
    const b = new Browser();
    const p = await open(b);
    const res = await b.submit(p, fields);
    const loc = location(res);
    expect([...loc.searchParams.keys()]).toEqual(["error", "message", "state"]);
    expect(loc.searchParams.get("error")).toBe("access_denied");
    expect(loc.searchParams.get("message")).toBe("The user cancelled the sign-in.");
    expect(loc.searchParams.get("state")).toBe(HOSTILE_STATE);
    expect(loc.searchParams.get("code")).toBeNull();
    // the transaction ended: posting again is refused. The first page opened none: it answers the
    // same again, as the authorization URL it signs would.
    const again = await b.submit(p, { cancel: "Y" });
    if (at === "step 1") expect(location(again).searchParams.get("error")).toBe("access_denied");
    else expect(again.status).toBe(403);
  });
});

describe("state is echoed byte for byte (spec §4.1, docs/architecture.md §4.2)", () => {
  it(`the hostile state ${HOSTILE_STATE} comes back exactly, percent-encoded with %20 for space`, async () => {
    const loc = await signInAll(new Browser(), HONG, { state: HOSTILE_STATE });
    expect(loc.searchParams.get("state")).toBe(HOSTILE_STATE);
    expect(loc.search).toMatch(/&state=a%20b%26c%3Dd%2F%25ZZ%ED%95%9C%EA%B8%80%22%3C%3E$/);
    expect(decodeURIComponent(loc.search.split("&state=")[1]!)).toBe(HOSTILE_STATE);
  });

  it("a state sent raw in the query (not encoded by the app) comes back as the server read it", async () => {
    const b = new Browser();
    const res = await b.fetch(
      `/oauth2/authorize?response_type=code&client_id=demo-client&redirect_uri=${encodeURIComponent(DEMO_CB)}&state=%ZZ%7Cx`,
    );
    expect(res.status).toBe(200);
    const p = await b.page(res);
    const loc = location(await b.submit(p, { cancel: "Y" }));
    expect(loc.searchParams.get("state")).toBe("%ZZ|x");
  });

  it("the state is escaped in pages (no markup injection)", async () => {
    const p = await new Browser().authorize({ state: HOSTILE_STATE });
    expect(p.html).not.toContain('"<>');
  });
});

describe("CSRF and the transaction (docs/architecture.md §4.7)", () => {
  it("a wrong CSRF token is refused 403 and changes nothing; the right one then works", async () => {
    const b = new Browser();
    const p = await b.authorize();
    const refused = await b.submit(p, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone }, { csrf: "x".repeat(43) });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain("요청을 확인할 수 없습니다");
    // the way on is back to the app (a form: restart=Y), never the old request with its old state
    expect(refused.form).toMatchObject({ action: "/oauth2/authorize", names: new Set(["tx", "restart"]) });
    const ok = await b.submit(p, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    expect(ok.form?.step).toBe("verify");
  });

  it("a missing CSRF token is refused 403", async () => {
    const b = new Browser();
    const p = await b.authorize();
    const body = new URLSearchParams({ tx: p.form!.hidden.tx!, telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    const res = await b.fetch("/oauth2/authorize", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body,
    });
    expect(res.status).toBe(403);
  });

  it("another browser (no cookie, or its own cookie) posting the page's hidden fields is refused 403", async () => {
    const victim = new Browser();
    const p = await victim.authorize();
    const noCookie = new Browser();
    expect((await noCookie.submit(p, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone })).status).toBe(403);
    const otherCookie = new Browser();
    await otherCookie.authorize();
    expect((await otherCookie.submit(p, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone })).status).toBe(403);
  });

  it("restart=Y from another browser (no cookie, or its own cookie) ends nothing and hands out no state; the owner's own restart still returns with it", async () => {
    const victim = new Browser();
    const p = await victim.authorize({ state: "victim-state" });
    const noCookie = new Browser();
    const ownCookie = new Browser();
    await ownCookie.authorize();
    for (const other of [noCookie, ownCookie]) {
      const res = await other.fetch("/oauth2/authorize", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ tx: p.form!.hidden.tx!, restart: "Y" }),
      });
      expect(res.status).toBe(403);
      expect(res.headers.get("Location")).toBeNull();
      expect(await res.text()).not.toContain("victim-state");
    }
    // the victim's sign-in goes on
    const next = await victim.submit(p, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    expect(next.form?.step).toBe("verify");
    const back = await victim.submit(next, { restart: "Y" });
    expect(back.status).toBe(302);
    expect(back.res.headers.get("Location")).toContain("state=victim-state");
  });

  it("an unknown transaction id is refused 403 with a 'start again' text and no form", async () => {
    const b = new Browser({ lang: "en" });
    const res = await b.fetch("/oauth2/authorize", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "tx=" + "A".repeat(43) + "&csrf=x",
    });
    expect(res.status).toBe(403);
    const html = await res.text();
    expect(html).toContain("This login cannot continue");
    expect(html).not.toContain("<form");
  });

  it("the transaction expires 10 minutes after its first page: 403 with a start-again link to the same request", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const b = new Browser();
    const p = await b.authorize({ state: "exp", isHybrid: "Y", lang: "en" });
    const verify = await b.submit(p, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    vi.setSystemTime(Date.now() + 599_000);
    expect((await b.submit(verify, { otp: "000000" })).status).toBe(200);
    vi.setSystemTime(Date.now() + 2_000);
    const late = await b.submit(verify, { otp: HONG.code });
    expect(late.status).toBe(403);
    expect(late.html).toContain("The login has timed out");
    expect(late.html).toContain("A login must be finished within 10 minutes.");
    expect(late.html).toContain("Back to the app");
    // going on returns the person to the app, which must start a new login: login_required, its state
    const back = await b.submit(late, { restart: "Y" });
    expect(back.status).toBe(302);
    expect(back.res.headers.get("Location")).toBe(
      "https://demo.example/callback?error=login_required&message=The%20sign-in%20expired%20or%20could%20not%20continue.%20Start%20a%20new%20login.&state=exp",
    );
  });

  it("a client disabled during the sign-in ends it: 403 'the app is not available', in both languages, no form", async () => {
    const ko = new Browser();
    const pk = await ko.authorize({ client_id: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! });
    const en = new Browser({ lang: "en" });
    const pe = await en.authorize({ client_id: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! });
    await env.DB.prepare("UPDATE clients SET status = 'disabled' WHERE client_id = ?").bind(LIMITED.clientId).run();
    forgetClient(LIMITED.clientId);
    try {
      const k = await ko.submit(pk, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
      expect(k.status).toBe(403);
      expect(k.html).toContain("앱을 이용할 수 없습니다");
      expect(k.form).toBeUndefined();
      const e = await en.submit(pe, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
      expect(e.status).toBe(403);
      expect(e.html).toContain("This app cannot use phone number login at the moment.");
    } finally {
      await env.DB.prepare("UPDATE clients SET status = 'active' WHERE client_id = ?").bind(LIMITED.clientId).run();
      forgetClient(LIMITED.clientId);
    }
  });

  it("a POST with tx and client_id is an authorization request, not a step", async () => {
    const b = new Browser();
    const res = await b.fetch("/oauth2/authorize", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        tx: "A".repeat(43),
        response_type: "code",
        client_id: "demo-client",
        redirect_uri: DEMO_CB,
        state: "s",
      }),
    });
    expect(res.status).toBe(200);
    expect(parseForms(await res.text())[0]?.step).toBe("identify");
  });
});

describe("languages (docs/architecture.md §4.7)", () => {
  it("Korean by default and for ko Accept-Language; English when Accept-Language prefers en", async () => {
    const ko = await new Browser({ lang: "" }).authorize();
    expect(ko.html).toContain('<html lang="ko">');
    expect(ko.html).toContain("본인 확인");
    const en = await new Browser({ lang: "en-US,en;q=0.9" }).authorize();
    expect(en.html).toContain('<html lang="en">');
    expect(en.html).toContain("Confirm it is you");
    const koFirst = await new Browser({ lang: "ko-KR,ko;q=0.9,en-US;q=0.8" }).authorize();
    expect(koFirst.html).toContain('<html lang="ko">');
    const enHigher = await new Browser({ lang: "ko;q=0.5,en;q=0.8" }).authorize();
    expect(enHigher.html).toContain('<html lang="en">');
  });

  it("lang=ko|en on the authorize URL overrides Accept-Language for the whole transaction", async () => {
    const b = new Browser({ lang: "en-US" });
    const p = await b.authorize({ lang: "ko" });
    expect(p.html).toContain('<html lang="ko">');
    const v = await b.submit(p, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    expect(v.html).toContain("인증번호 입력");
    const e = await new Browser({ lang: "ko-KR" }).authorize({ lang: "en" });
    expect(e.html).toContain("Confirm it is you");
  });

  it("the footer's language switch re-renders the current step in the other language, with the same field names, and keeps it", async () => {
    const b = new Browser();
    const p = await b.authorize();
    const sw = parseForms(p.html).find((f) => f.names.has("lang"))!;
    expect(sw.names).toEqual(new Set(["tx", "csrf", "lang"]));
    const en = await b.page(
      await b.fetch(sw.action, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...sw.hidden, lang: "en" }),
      }),
    );
    expect(en.status).toBe(200);
    expect(en.html).toContain("Confirm it is you");
    expect([...en.form!.names].sort()).toEqual([...p.form!.names].sort());
    const v = await b.submit(en, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    expect(v.html).toMatch(
      /Enter the 6-digit code sent to 010-\*\*\*\*-5678 within 3 minutes \(by \d{2}:\d{2} KST\)\./,
    );
  });
});

describe("WebView mode (isHybrid=Y)", () => {
  it("renders the WebView layout; cancel is a 302 to the redirect URI", async () => {
    const b = new Browser();
    const p = await b.authorize({ isHybrid: "Y", redirect_uri: "demoapp://callback" });
    expect(p.html).toContain('<body class="hybrid">');
    expect(p.html).not.toMatch(/<script|window\.close|target="_blank"/);
    const loc = location(await b.submit(p, { cancel: "Y" }));
    expect(loc.href).toMatch(/^demoapp:\/\/callback\?error=access_denied&/);
  });

  it("the web layout otherwise", async () => {
    expect((await new Browser().authorize()).html).toContain('<body class="web">');
  });
});

describe("pages escape what they show", () => {
  it("a client name with markup is shown as text", async () => {
    await env.DB.prepare("UPDATE clients SET name = ? WHERE client_id = ?")
      .bind('<img src=x onerror=alert(1)> "Shop"', LIMITED.clientId)
      .run();
    forgetClient(LIMITED.clientId);
    try {
      const p = await new Browser().authorize({ client_id: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! });
      expect(p.html).toContain("&lt;img src=x onerror=alert(1)&gt; &quot;Shop&quot;");
      expect(p.html).not.toContain("<img");
    } finally {
      await env.DB.prepare("UPDATE clients SET name = ? WHERE client_id = ?")
        .bind(LIMITED.name, LIMITED.clientId)
        .run();
      forgetClient(LIMITED.clientId);
    }
  });
});

describe("audit events (no personal data)", () => {
  it("sign-in success, failure and consent are recorded with the client id and no name, number or ci", async () => {
    const b = new Browser();
    await identify(b, { telcoCd: "S", name: "없는사람", phoneNo: "01099998888" });
    await signInAll(new Browser(), SMITH, { client_id: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! });
    const rows = await auditEvents();
    const types = new Set(rows.map((r) => r.type));
    for (const t of ["signin.success", "signin.failure", "consent"]) expect(types).toContain(t);
    expect(rows.find((r) => r.type === "signin.failure" && r.detail?.includes("unconfirmed"))?.client_id).toBe(
      DEMO.clientId,
    );
    const all = JSON.stringify(rows);
    const s = (await subscriberByPhone(env, SMITH.phone))!;
    for (const secret of [SMITH.phone, SMITH.name, s.ci, "01099998888", "없는사람", HONG.phone, HONG.name])
      expect(all).not.toContain(secret);
  });

  it("a first sign-in writes its consent with its link's login and its code: each event once, consent first, and the connection shows the login", async () => {
    const s = (await subscriberByPhone(env, KIM.phone))!;
    expect(await findLink(env, LIMITED.clientId, s.id)).toBeNull();
    const before = (await auditEvents()).filter((r) => r.client_id === LIMITED.clientId).length;
    const at = Date.now();
    const to = await signInAll(new Browser(), KIM, {
      client_id: LIMITED.clientId,
      redirect_uri: LIMITED.redirectUris[0]!,
    });
    expect(to.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const events = (await auditEvents()).filter((r) => r.client_id === LIMITED.clientId).slice(before);
    expect(events.map((r) => [r.type, r.outcome])).toEqual([
      ["consent", "ok"],
      ["signin.success", "ok"],
    ]);
    const link = (await connectionsOf(env, s.id)).find((c) => c.clientId === LIMITED.clientId)!;
    expect(link.lastLoginAt).toBeGreaterThanOrEqual(at);
    expect(link.connectedAt).toBeGreaterThanOrEqual(at);
  });

  it("a completed consent stores the link", async () => {
    const s = (await subscriberByPhone(env, SMITH.phone))!;
    expect(await findLink(env, LIMITED.clientId, s.id)).not.toBeNull();
  });
});
