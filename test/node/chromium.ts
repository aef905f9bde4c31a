// Debian's Chromium through playwright-core, as every browser test launches it: headless, no
// sandbox (CI runs as root), no background traffic. `args` adds flags (a host-resolver rule).
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { expect } from "vitest";

export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      ...args,
    ],
  });
}

/** Waits for the page's h1 named `name`. */
export async function heading(page: Page, name: string | RegExp): Promise<void> {
  await page.getByRole("heading", { level: 1, name }).waitFor({ state: "visible" });
}

/**
 * After the code is taken: the consent page when the app asks (`agree` is clicked), else the page
 * that follows (`arrived`), whichever comes. Asked once at once, the check could read the code page
 * still there and then wait on the wrong page.
 */
export async function agreeIfAsked(agree: Locator, arrived: () => Promise<boolean>): Promise<void> {
  await expect.poll(async () => (await agree.isVisible()) || (await arrived()), { timeout: 30_000 }).toBe(true);
  if (await agree.isVisible()) await agree.click();
}

/** The sign-in pages, as a person fills them in Korean (docs/signin.md): SKT · 홍길동 · 010-1234-5678 · 123456. */
export async function signInPages(page: Page, opts: { autoLogin: boolean; expectConsent: boolean }): Promise<void> {
  await heading(page, "본인 확인");
  await page.getByText("SKT", { exact: true }).click();
  await page.getByLabel("이름").fill("홍길동");
  await page.getByLabel("휴대폰번호").fill("010-1234-5678");
  await page.getByLabel("전체 동의").check();
  await page.getByRole("button", { name: "인증번호 받기" }).click();
  await heading(page, "인증번호 입력");
  await page.getByLabel("인증번호", { exact: true }).fill("123456");
  if (opts.autoLogin) await page.getByRole("checkbox", { name: /자동 로그인/ }).check();
  await page.getByRole("button", { name: "확인", exact: true }).click();
  if (opts.expectConsent) {
    await heading(page, "정보 제공 동의");
    await page.getByRole("button", { name: "동의하고 계속하기" }).click();
  }
}
