// The person's /account page in a real browser (docs/account.md): Debian Chromium through
// playwright-core against the real `npm start` server. In Korean: log in to the demo app with
// automatic login, prove the number on /account, turn automatic login off, end the login, and see
// the demo app logged out by the signed event the service sent to its /auth/events. In English with
// JavaScript off: the same page, a person with no connection. Screenshots at 390×844 go to
// test-results/account/ (docs/screenshots/ holds one of each language).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./chromium";
import { startServer, type Server } from "./server";

const OUT = join(import.meta.dirname, "..", "..", "test-results", "account");

let server: Server;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  server = await startServer();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function open(
  locale: "ko-KR" | "en-US",
  javaScriptEnabled = true,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale, javaScriptEnabled });
  await context.route("**/*", (route) =>
    new URL(route.request().url()).host === new URL(server.base).host ? route.continue() : route.abort(),
  );
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  return { context, page, problems };
}

async function heading(page: Page, name: string | RegExp): Promise<void> {
  await page.getByRole("heading", { level: 1, name }).waitFor({ state: "visible" });
}

async function prove(page: Page, who: { carrier: string; name: string; phone: string; code: string }, ko: boolean) {
  await page.getByText(who.carrier, { exact: true }).click();
  await page.getByLabel(ko ? "이름" : "Name").fill(who.name);
  await page.getByLabel(ko ? "휴대폰번호" : "Mobile number").fill(who.phone);
  await page.getByRole("button", { name: ko ? "인증번호 받기" : /Send code|Get code/ }).click();
  await page.getByLabel(ko ? "인증번호" : /code/i, { exact: ko }).fill(who.code);
  await page.getByRole("button", { name: ko ? "확인" : "Confirm", exact: true }).click();
}

describe("/account in Chromium (390×844)", () => {
  it("Korean: the apps of a proven number; automatic login off; ending the login logs the demo app out", async () => {
    const { context, page, problems } = await open("ko-KR");
    try {
      // the demo app, logged in with automatic login on
      await page.goto(`${server.base}/`);
      await page.getByRole("link", { name: /휴대폰번호로 로그인/ }).click();
      await heading(page, "본인 확인");
      await page.getByText("SKT", { exact: true }).click();
      await page.getByLabel("이름").fill("홍길동");
      await page.getByLabel("휴대폰번호").fill("010-1234-5678");
      await page.getByRole("button", { name: "인증번호 받기" }).click();
      await page.getByLabel("인증번호", { exact: true }).fill("123456");
      await page.getByRole("checkbox", { name: /자동 로그인/ }).check();
      await page.getByRole("button", { name: "확인", exact: true }).click();
      await page.getByRole("button", { name: "동의하고 계속하기" }).click();
      await heading(page, /님, 환영합니다/);

      // the account page, in the same browser
      await page.goto(`${server.base}/account`);
      await heading(page, "내 휴대폰번호 로그인");
      await prove(page, { carrier: "SKT", name: "홍길동", phone: "01012345678", code: "123456" }, true);
      await heading(page, "내 휴대폰번호 로그인");
      await expect.poll(() => page.locator(".lead").innerText()).toBe("010-****-5678 번호로 로그인하는 앱입니다.");
      const card = page.getByRole("region", { name: "Demo Shop" });
      await expect
        .poll(() => card.innerText())
        .toMatch(/자동 로그인: 켜짐 \(\d{4}년 \d{1,2}월 \d{1,2}일 \d{2}:\d{2}까지\)/);
      await page.screenshot({ path: join(OUT, "account-ko.png"), fullPage: true });

      await card.getByRole("button", { name: "자동 로그인 끄기" }).click();
      await expect.poll(() => page.getByRole("status").innerText()).toBe("Demo Shop의 자동 로그인을 껐습니다.");
      expect(await page.getByRole("region", { name: "Demo Shop" }).innerText()).toContain("자동 로그인: 꺼짐");

      await page.getByRole("region", { name: "Demo Shop" }).getByRole("button", { name: "연결 끊기" }).click();
      await expect.poll(() => page.getByRole("status").innerText()).toBe("Demo Shop과(와)의 연결을 끊었습니다.");
      expect(await page.getByText("이 번호로 연결된 앱이 없습니다.").isVisible()).toBe(true);

      // the service's signed event reached the demo's /auth/events: the demo app is logged out
      await expect
        .poll(async () => (await page.request.get(`${server.base}/auth/me`)).status(), { timeout: 10_000 })
        .toBe(401);
      await page.goto(`${server.base}/`);
      await heading(page, /데모 쇼핑몰/);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("English with lang=en and JavaScript off: proving the number, the page of a number with no app", async () => {
    const { context, page } = await open("en-US", false);
    try {
      await page.goto(`${server.base}/account?lang=en`);
      await heading(page, "My phone number login");
      await prove(page, { carrier: "LG U+", name: "John Smith", phone: "01034567890", code: "345678" }, false);
      await heading(page, "My phone number login");
      expect(await page.locator(".lead").innerText()).toBe("Apps you log in to with 010-****-7890.");
      expect(await page.getByText("No app is connected to this number.").isVisible()).toBe(true);
      await page.screenshot({ path: join(OUT, "account-en.png"), fullPage: true });
      await page.getByRole("button", { name: "Sign out of this page" }).click();
      await expect.poll(() => page.getByRole("alert").innerText()).toBe("You are signed out of this page.");
    } finally {
      await context.close();
    }
  });
});
