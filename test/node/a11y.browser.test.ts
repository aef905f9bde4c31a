// Accessibility of every page state (docs/signin.md "Pages"): axe-core's default rules, best
// practices included, in Debian Chromium against the real `npm start` server, in Korean and in
// English at 390×844. Any violation fails. The server runs with short limits (2 tries per code, a
// lock after 3 failures, no resend cooldown) so that every state is reached in a few steps.
// With SCREENSHOTS=1, screenshots of each state go to test-results/a11y/.
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agreeIfAsked, launchChromium, stateShot } from "./chromium";
import { devAdminToken, startServer, type Server } from "./server";

const OUT = join(import.meta.dirname, "..", "..", "test-results", "a11y");
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const CALLBACK = "https://demo.example/callback";

let server: Server;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  server = await startServer({
    args: [
      "--var",
      "SIGNIN_OTP_MAX_ATTEMPTS:2",
      "--var",
      "SIGNIN_LOCK_AFTER_FAILURES:3",
      "--var",
      "SIGNIN_RESEND_COOLDOWN_SECONDS:0",
      // the SMS-abuse guard's challenge: one untyped code makes a (non-loopback) block suspect at once
      "--var",
      "GUARD_MIN_SENDS:1",
      "--var",
      "GUARD_SETTLE_SECONDS:0",
      "--var",
      "GUARD_FLUSH_MS:0",
      // the challenge page is checked here: with SIGNIN_MO=guard a text from the person replaces it
      "--var",
      "SIGNIN_MO:off",
    ],
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface Violation {
  state: string;
  id: string;
  impact: string | null;
  nodes: string[];
}

/** Runs axe-core on the page as it is; returns its violations, labelled. */
async function audit(page: Page, state: string): Promise<Violation[]> {
  await stateShot(page, join(OUT, `${state}.png`));
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<unknown> } }).axe;
    return (await axe.run(document, { resultTypes: ["violations"] })) as {
      violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
    };
  });
  // and nothing wider than the screen (a sideways scroll on a 390 px phone)
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  return [
    ...result.violations.map((v) => ({
      state,
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => n.target.join(" ")),
    })),
    ...(overflow > 0 ? [{ state, id: "wider-than-the-screen", impact: "serious", nodes: [`${overflow}px`] }] : []),
  ];
}

function authorizeUrl(extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({
    response_type: "code",
    client_id: "demo-client",
    redirect_uri: CALLBACK,
    state: "a11y",
    ...extra,
  });
  return `${server.base}/oauth2/authorize?${q}`;
}

const TEXT = {
  ko: {
    send: "인증번호 받기",
    terms: "전체 동의",
    confirm: "확인",
    name: "이름",
    phone: "휴대폰번호",
    code: "인증번호",
    resend: "인증번호 다시 받기",
  },
  en: {
    send: "Send code",
    terms: "Agree to all",
    confirm: "Confirm",
    name: "Name",
    phone: "Mobile number",
    code: "Code",
    resend: "Get a new code",
  },
} as const;

async function identify(page: Page, lang: "ko" | "en", who: { carrier: string; name: string; phone: string }) {
  const t = TEXT[lang];
  await page.getByText(who.carrier, { exact: true }).click();
  await page.getByLabel(t.name).fill(who.name);
  await page.getByLabel(t.phone).fill(who.phone);
  await page.getByLabel(t.terms).check();
  await page.getByRole("button", { name: t.send }).click();
  await page.waitForLoadState();
}

async function enterCode(page: Page, lang: "ko" | "en", code: string) {
  await page.getByLabel(TEXT[lang].code, { exact: true }).fill(code);
  await page.getByRole("button", { name: TEXT[lang].confirm, exact: true }).click();
  await page.waitForLoadState();
}

/** The latest code the dev outbox holds for `phone` (an ordinary number: its code is sent). */
async function codeFor(phone: string): Promise<string> {
  const res = await fetch(`${server.base}/dev/outbox`, { headers: { Accept: "application/json" } });
  const { messages } = (await res.json()) as { messages: { to: string; text: string }[] };
  const m = messages.find((x) => x.to === phone);
  if (!m) throw new Error("no SMS to the number in the dev outbox");
  return /\d{6}/.exec(m.text)![0];
}

/** Each language run uses its own people: consent is asked once, and a lock lasts an hour. */
const PEOPLE = {
  ko: {
    consent: { carrier: "KT", name: "김영희", phone: "010-2345-6789", code: "234567" },
    locked: { carrier: "SKT", name: "이민수", phone: "010-4567-8901" },
  },
  en: {
    consent: { carrier: "LG U+", name: "John Smith", phone: "010-3456-7890", code: "345678" },
    locked: { carrier: "KT", name: "박서준", phone: "010-5678-9012" },
  },
} as const;

describe.each(["ko", "en"] as const)("axe-core on every page state (%s, 390×844)", (lang) => {
  it(
    "sign-in, consent, stop pages, /account, the kit's pages, the demo and the outbox: no violation",
    // some forty pages, each checked by axe-core: 33 s alone, up to 4 times that while the run's
    // other files share the machine's two cores
    { timeout: 240_000 },
    async () => {
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        locale: lang === "ko" ? "ko-KR" : "en-US",
        bypassCSP: true, // to inject axe-core; the pages' own CSP is tested elsewhere
      });
      await context.route("**/*", (route) =>
        new URL(route.request().url()).host === new URL(server.base).host ? route.continue() : route.abort(),
      );
      const page = await context.newPage();
      const found: Violation[] = [];
      const check = async (state: string) => found.push(...(await audit(page, `${lang}-${state}`)));
      try {
        // step 1, and its error
        await page.goto(authorizeUrl({ prompt: "login" }));
        await check("identify");
        // the agreements: one text opened (보기), then a post without the box (the browser's own
        // check taken off, as a script-less tool would post) answered with the alert on it
        await page.locator(".terms-list summary").first().click();
        await check("identify-agreements");
        await page.locator("#carrierTerms").evaluate((el) => el.removeAttribute("required"));
        await page.getByText(PEOPLE[lang].consent.carrier, { exact: true }).click();
        await page.getByLabel(TEXT[lang].name).fill(PEOPLE[lang].consent.name);
        await page.getByLabel(TEXT[lang].phone).fill(PEOPLE[lang].consent.phone);
        await page.getByRole("button", { name: TEXT[lang].send }).click();
        await page.waitForLoadState();
        expect(await page.locator("#carrierTerms").getAttribute("aria-invalid")).toBe("true");
        await check("identify-terms-missing");
        const who = PEOPLE[lang];
        await identify(page, lang, { ...who.consent, name: "없는사람" });
        await check("identify-unconfirmed");
        // step 2 (with the automatic-login box where eligible), a wrong code, used-up tries
        await identify(page, lang, who.consent);
        await check("verify");
        await enterCode(page, lang, "000000");
        await check("verify-wrong");
        await enterCode(page, lang, "000001");
        await check("verify-used-up");
        // a new code, then consent
        await page
          .getByRole("button", { name: lang === "ko" ? "인증번호 다시 받기" : /new code|Resend|again/i })
          .first()
          .click();
        await page.waitForLoadState();
        await enterCode(page, lang, who.consent.code);
        await check("consent");
        // (agreeing would leave for the app's callback, outside this test's network)

        // a number whose SIM the person changed an hour ago: the code page is as for any number, and
        // once the code proves it the consent page says why automatic login is off
        const risky = `010662${lang === "ko" ? 1 : 2}0001`;
        const riskyImport = await fetch(`${server.base}/admin/directory/import`, {
          method: "POST",
          headers: { Authorization: `Bearer ${devAdminToken()}`, "Content-Type": "application/json" },
          body: JSON.stringify([
            {
              telcoCd: "K",
              phoneNo: risky,
              name: "유심",
              gender: "F",
              birth: "1990-01-01",
              foreign: "L",
              ci: Buffer.alloc(64, lang === "ko" ? 93 : 94).toString("base64"),
              simChangedAt: new Date(Date.now() - 3_600_000).toISOString(),
              simChangeKind: "person",
            },
          ]),
        });
        expect(riskyImport.status).toBe(200);
        await page.goto(authorizeUrl({ prompt: "login" }));
        await identify(page, lang, { carrier: "KT", name: "유심", phone: risky });
        expect(await page.locator("#risk").count()).toBe(0);
        await enterCode(page, lang, await codeFor(risky));
        await page.locator("#risk").waitFor({ state: "visible" });
        await check("consent-risk");

        // the locked code page: three failures lock this network out of the number
        await page.goto(authorizeUrl({ prompt: "login" }));
        await identify(page, lang, who.locked);
        await enterCode(page, lang, "000000");
        await enterCode(page, lang, "000001");
        await page
          .getByRole("button", { name: lang === "ko" ? "인증번호 다시 받기" : /new code|Resend|again/i })
          .first()
          .click();
        await page.waitForLoadState();
        await enterCode(page, lang, "000002");
        await check("verify-locked");

        // stop pages: a form token that does not match, and an unknown sign-in
        await page.goto(authorizeUrl());
        await page.evaluate(() => {
          document.querySelectorAll<HTMLInputElement>('input[name="csrf"]').forEach((i) => (i.value = "x".repeat(43)));
        });
        await identify(page, lang, { carrier: "SKT", name: "홍길동", phone: "010-1234-5678" });
        await check("stop-forbidden");
        await page.goto(authorizeUrl());
        await page.evaluate(() => {
          document.querySelectorAll<HTMLInputElement>('input[name="tx"]').forEach((i) => (i.value = "A".repeat(43)));
        });
        await identify(page, lang, { carrier: "SKT", name: "홍길동", phone: "010-1234-5678" });
        await check("stop-unknown");

        // the person's /account page
        await page.goto(`${server.base}/account?lang=${lang}`);
        await check("account-identify");
        await identify(page, lang, { carrier: "SKT", name: "홍길동", phone: "010-1234-5678" });
        await enterCode(page, lang, "123456");
        await check("account-dashboard");

        // the demo app and the kit's pages
        await page.goto(`${server.base}/`);
        await check("demo-welcome");
        await page.getByRole("link", { name: /휴대폰번호로 로그인/ }).click();
        await identify(page, lang, { carrier: "SKT", name: "홍길동", phone: "010-1234-5678" });
        await enterCode(page, lang, "123456");
        const agree = page.getByRole("button", { name: lang === "ko" ? "동의하고 계속하기" : /Agree/ });
        await agreeIfAsked(agree, async () => page.url() === `${server.base}/`);
        await page.waitForURL(`${server.base}/`);
        await check("demo-profile");
        await page.goto(`${server.base}/?confirm=disconnect`);
        await check("demo-confirm");
        await page.goto(`${server.base}/auth/callback?error=access_denied&state=${"s".repeat(43)}`);
        await check("kit-failure");
        await page.goto(`${server.base}/?done=logout`);
        await check("demo-flash");
        await page.goto(`${server.base}/dev/outbox`);
        await check("outbox");

        // the SMS-abuse guard's challenge on the first page: a code sent from another block (X-Dev-Address,
        // DEV_MODE) and never typed makes it suspect; the next first page from it carries the widget
        const t0 = Date.now() + (lang === "ko" ? 1 : 2) * 3_600_000;
        const block = { "X-Dev-Address": `10.66.${lang === "ko" ? 1 : 2}.9` };
        // (a prefix of its own per language: the first's untyped code makes its prefix suspect too)
        const phoneNo = `010661${lang === "ko" ? 1 : 2}0001`;
        const imported = await fetch(`${server.base}/admin/directory/import`, {
          method: "POST",
          headers: { Authorization: `Bearer ${devAdminToken()}`, "Content-Type": "application/json" },
          body: JSON.stringify([
            {
              telcoCd: "K",
              phoneNo,
              name: "확인",
              gender: "F",
              birth: "1990-01-01",
              foreign: "L",
              ci: Buffer.alloc(64, lang === "ko" ? 91 : 92).toString("base64"),
            },
          ]),
        });
        expect(imported.status).toBe(200);
        await context.setExtraHTTPHeaders({ ...block, "X-Dev-Clock": String(t0) });
        await page.goto(authorizeUrl({ prompt: "login" }));
        await identify(page, lang, { carrier: "KT", name: "확인", phone: phoneNo });
        await page.getByLabel(TEXT[lang].code, { exact: true }).waitFor();
        // the send is counted after the answer (GUARD_FLUSH_MS=0: at once, but after it)
        await page.waitForTimeout(500);
        await context.setExtraHTTPHeaders({ ...block, "X-Dev-Clock": String(t0 + 20_000) });
        await page.goto(authorizeUrl({ prompt: "login" }));
        await page.locator(".challenge").waitFor({ state: "visible" });
        await check("identify-challenge");
        await context.setExtraHTTPHeaders({});

        // the first page on a desktop screen, for the docs
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.goto(authorizeUrl());
        await check("identify-desktop");
      } finally {
        await context.close();
      }
      expect(found).toEqual([]);
    },
  );
});

describe("the audit itself", () => {
  it("reports the violations of a page that has them (the check above can fail)", async () => {
    const page = await browser.newPage();
    try {
      await page.setContent(
        '<html><body><img src="data:,"><a href="#"></a><p style="color:#aaa;background:#fff">faint</p></body></html>',
      );
      const ids = (await audit(page, "known-bad")).map((v) => v.id);
      expect(ids).toEqual(expect.arrayContaining(["image-alt", "link-name", "color-contrast", "html-has-lang"]));
    } finally {
      await page.close();
    }
  });
});
