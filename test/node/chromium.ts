// Debian's Chromium through playwright-core, as every browser test gets it: headless, no sandbox
// (CI runs as root), no background traffic. One Chromium serves the whole run (./global-setup.ts
// launches it); each file connects to it, and each test opens contexts of its own, which share
// nothing (cookies, storage, routes) with another's. A file that needs other flags (a host-resolver
// rule) launches a Chromium of its own.
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserServer,
  type Download,
  type Locator,
  type Page,
} from "playwright-core";
import { expect, inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's Chromium (./global-setup.ts): its playwright WebSocket endpoint. */
    chromiumEndpoint: string;
  }
}

const options = (args: string[]) => ({
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

/**
 * A picture of a page's state for docs/screenshots/, written only when the run asks for them
 * (`SCREENSHOTS=1 npm test`): no test reads them, and the full-page PNGs of some hundred states cost
 * the run CPU it is bound by (the accessibility walk alone: 90 s of CPU with them, 80 s without). A
 * failure's own screenshot is written always.
 */
export async function stateShot(
  page: Page,
  path: string,
  opts: { fullPage?: boolean } = { fullPage: true },
): Promise<void> {
  if (process.env.SCREENSHOTS) await page.screenshot({ path, ...opts });
}

/** The run's Chromium, launched once by ./global-setup.ts. */
export function chromiumServer(): Promise<BrowserServer> {
  return chromium.launchServer(options([]));
}

/**
 * The run's Chromium (its `close()` ends this file's connection and closes the contexts the file
 * opened), or with `args` a Chromium of the file's own.
 */
export function launchChromium(args: string[] = []): Promise<Browser> {
  if (args.length === 0) return chromium.connect(inject("chromiumEndpoint"));
  return chromium.launch(options(args));
}

/**
 * A download's bytes as text. The run's Chromium is connected to, not launched, and playwright
 * then keeps the file on the browser's side: `download.path()` throws ("Path is not available when
 * connecting remotely"), its stream does not.
 */
export async function downloadedText(download: Download): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
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

/** Chromium's virtual platform authenticator on this page's target (user verification always passes). */
export async function virtualAuthenticator(ctx: BrowserContext, page: Page) {
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}
