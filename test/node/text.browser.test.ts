// A text the person sends (docs/signin.md "A text the person sends"), in Chromium against the real
// `npm start` server with SIGNIN_MO=all: the demo app's login asks 홍길동 for a text instead of
// sending a code; the dev phone on /dev/outbox sends it from the typed number through the signed
// inbound webhook; the page, polling, goes on to consent by itself. With JavaScript off, "I sent it"
// does the same. The text page has no accessibility violations (axe-core).
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { heading, launchChromium, stateShot } from "./chromium";
import { startServer, type Server } from "./server";

const OUT = join(import.meta.dirname, "..", "..", "test-results", "text");
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let server: Server;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  server = await startServer({ args: ["--var", "SIGNIN_MO:all"] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function open(javaScriptEnabled: boolean): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    locale: "ko-KR",
    javaScriptEnabled,
  });
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

/** From the demo app's login to the text page, as 홍길동 (SKT, 010-1234-5678). */
async function toTextPage(page: Page): Promise<string> {
  await page.goto(`${server.base}/`);
  await page.getByRole("link", { name: /휴대폰번호로 로그인/ }).click();
  await heading(page, "본인 확인");
  await page.getByText("SKT", { exact: true }).click();
  await page.getByLabel("이름").fill("홍길동");
  await page.getByLabel("휴대폰번호").fill("010-1234-5678");
  await page.getByLabel("전체 동의").check();
  await page.getByRole("button", { name: "인증번호 받기" }).click();
  await heading(page, "문자 한 통으로 본인 확인");
  const phrase = await page.locator("#text-phrase").innerText();
  expect(phrase).toMatch(/^\[휴대폰번호 로그인\] Demo Shop 로그인 \d{8}$/);
  expect(await page.locator("#text-to").innerText()).toBe("1588-0000");
  return phrase;
}

/** The dev phone sends `body` from 010-1234-5678, in its own tab; what the webhook answered. */
async function textFromDevPhone(context: BrowserContext, body?: string): Promise<string> {
  const phone = await context.newPage();
  await phone.goto(`${server.base}/dev/outbox${body === undefined ? "" : `?body=${encodeURIComponent(body)}`}#phone`);
  await phone.locator("#phone-from").fill("010-1234-5678");
  if (body !== undefined) expect(await phone.locator("#phone-body").inputValue()).toBe(body);
  await phone.locator("#phone-send").click();
  const result = await phone.locator("#phone-result b").innerText();
  await phone.close();
  return result;
}

async function axe(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const a = (globalThis as unknown as { axe: { run: (d: unknown, o: unknown) => Promise<unknown> } }).axe;
    const r = (await a.run(document, { resultTypes: ["violations"] })) as {
      violations: { id: string; nodes: { target: string[] }[] }[];
    };
    return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}

describe("a text the person sends, in Chromium (390×844)", () => {
  it("the page waits for the text from the dev phone and goes on to consent by itself", async () => {
    const { context, page, problems } = await open(true);
    try {
      const phrase = await toTextPage(page);
      await stateShot(page, join(OUT, "text-ko.png"));
      expect(await axe(page)).toEqual([]);
      // the dev phone's link carries the phrase
      expect(await page.locator("#text-dev-phone").getAttribute("href")).toContain(encodeURIComponent(phrase));
      expect(await page.getByRole("status").first().innerText()).toContain("문자를 기다리고 있습니다");
      expect(await textFromDevPhone(context, phrase)).toBe("accepted");
      // polled every 2 s: the consent page (or the app, when consent was given before) comes by itself
      await page
        .getByRole("heading", { level: 1 })
        .filter({ hasNotText: "문자 한 통으로 본인 확인" })
        .waitFor({ state: "visible", timeout: 15_000 });
      const agree = page.getByRole("button", { name: "동의하고 계속하기" });
      if (await agree.isVisible()) await agree.click();
      await heading(page, /님, 환영합니다/);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("with JavaScript off, 'I sent it' says when no text came yet, then goes on once it has", async () => {
    const { context, page } = await open(false);
    try {
      const phrase = await toTextPage(page);
      await page.getByRole("button", { name: "문자를 보냈어요" }).click();
      await heading(page, "문자 한 통으로 본인 확인");
      expect(await page.getByRole("status").first().innerText()).toContain("아직 문자가 도착하지 않았습니다");
      // a text with another phrase proves nothing
      expect(await textFromDevPhone(context, "[휴대폰번호 로그인] Demo Shop 로그인 00000000")).toBe("unknown");
      expect(await textFromDevPhone(context, phrase)).toBe("accepted");
      await page.getByRole("button", { name: "문자를 보냈어요" }).click();
      const agree = page.getByRole("button", { name: "동의하고 계속하기" });
      await page
        .getByRole("heading", { level: 1 })
        .filter({ hasNotText: "문자 한 통으로 본인 확인" })
        .waitFor({ state: "visible", timeout: 15_000 });
      if (await agree.isVisible()) await agree.click();
      await heading(page, /님, 환영합니다/);
    } finally {
      await context.close();
    }
  });
});
