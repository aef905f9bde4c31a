// The relying-party kit end to end in a real browser: Debian Chromium through
// playwright-core against the real `npm start` server, where the demo page at / uses the kit
// against the local provider. / → login → sign-in pages → callback → profile in Korean → logout →
// a second login by automatic login shows the same profile → disconnect → the next login asks
// for consent again. No outbound network: every host but the server's is refused.
import { type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { heading, launchChromium, signInPages as signIn, stateShot } from "./chromium";
import { startServer, type Server } from "./server";

let server: Server;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface Ctx {
  context: BrowserContext;
  page: Page;
  /** Main-frame responses, "STATUS path". */
  trail: string[];
  problems: string[];
}

async function open(): Promise<Ctx> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "ko-KR" });
  await context.route("**/*", (route) =>
    new URL(route.request().url()).host === new URL(server.base).host ? route.continue() : route.abort(),
  );
  const page = await context.newPage();
  const trail: string[] = [];
  const problems: string[] = [];
  page.on("response", (r) => {
    if (r.frame() === page.mainFrame() && r.request().isNavigationRequest())
      trail.push(`${r.status()} ${new URL(r.url()).pathname}`);
  });
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  return { context, page, trail, problems };
}

async function profileOf(page: Page): Promise<Record<string, string>> {
  await heading(page, /님, 환영합니다/);
  const cells = await page
    .locator("td[data-item]")
    .evaluateAll((tds) => tds.map((td) => [td.getAttribute("data-item")!, (td as HTMLElement).innerText.trim()]));
  return Object.fromEntries(cells);
}

async function me(c: Ctx): Promise<Record<string, string>> {
  const res = await c.page.request.get(`${server.base}/auth/me`);
  expect(res.status()).toBe(200);
  return (await res.json()) as Record<string, string>;
}

describe("relying-party kit in Chromium (390×844)", () => {
  it("/ → login → sign-in pages → profile in Korean → automatic login shows the same profile → disconnect → consent asked again", async () => {
    const c = await open();
    const { page } = c;
    try {
      // 1. the demo page offers the login
      await page.goto(`${server.base}/`);
      await heading(page, /데모 쇼핑몰/);
      await page.getByRole("link", { name: /휴대폰번호로 로그인/ }).click();

      // 2. first login: identify, code (opting in to automatic login), consent
      await signIn(page, { autoLogin: true, expectConsent: true });
      await page.waitForURL(`${server.base}/`);
      const first = await profileOf(page);
      expect(first).toMatchObject({
        name: "홍길동",
        phoneNo: "010-1234-5678",
        birthdate: "1990년 3월 15일 (15 Mar 1990)",
        gender: "남성 (male)",
        telcoCd: "SKT",
        foreign: "내국인 (national)",
        autoLoginYn: "사용 (on)",
      });
      expect(await page.getByRole("heading", { level: 1 }).innerText()).toContain("홍길동님, 환영합니다");
      expect(c.trail).toEqual(expect.arrayContaining(["302 /auth/login", "303 /auth/callback", "200 /"]));
      const firstMe = await me(c);
      expect(firstMe).toMatchObject({ name: "홍길동", autoLoginYn: "Y", autoStatusCheck: "Y" });
      const cookies = await c.context.cookies(server.base);
      expect(cookies.find((k) => k.name === "__Host-rp_session")).toMatchObject({
        httpOnly: true,
        secure: true,
        sameSite: "Lax",
        path: "/",
      });

      // 3. logout: the kit page's form posts with a same-origin Origin (Referrer-Policy same-origin)
      await page.getByRole("button", { name: /로그아웃/ }).click();
      await heading(page, /데모 쇼핑몰/);
      expect((await page.request.get(`${server.base}/auth/me`)).status()).toBe(401);

      // 4. second login: automatic (no sign-in page), the service sends only the plid; same profile
      c.trail.length = 0;
      await page.getByRole("link", { name: /휴대폰번호로 로그인/ }).click();
      const second = await profileOf(page);
      expect(c.trail).toEqual(["302 /auth/login", "302 /oauth2/authorize", "303 /auth/callback", "200 /"]);
      expect(second).toMatchObject({
        name: "홍길동",
        phoneNo: "010-1234-5678",
        birthdate: "1990년 3월 15일 (15 Mar 1990)",
        plid: first.plid!,
      });
      expect(await me(c)).toMatchObject({ plid: firstMe.plid, name: "홍길동", autoLoginYn: "Y", autoStatusCheck: "N" });

      // 5. disconnect: back to the login; the session is gone
      // asked first: the profile's link opens the confirmation, whose button disconnects
      await page.getByRole("link", { name: /연결 끊기/ }).click();
      await heading(page, /연결을 끊을까요/);
      await page.getByRole("button", { name: /연결 끊기/ }).click();
      expect(await page.getByRole("status").innerText()).toContain("연결을 끊었습니다");
      await heading(page, /데모 쇼핑몰/);
      expect((await page.request.get(`${server.base}/auth/me`)).status()).toBe(401);

      // 6. the next login shows the pages again and asks for consent; a new plid
      await page.getByRole("link", { name: /휴대폰번호로 로그인/ }).click();
      await signIn(page, { autoLogin: false, expectConsent: true });
      const third = await profileOf(page);
      expect(third.name).toBe("홍길동");
      expect(third.plid).not.toBe(first.plid);
      expect(third.autoLoginYn).toBe("사용 안 함 (off)");
      expect(c.problems).toEqual([]);
      await stateShot(page, "test-results/rp-demo-profile.png", {});
    } finally {
      await c.context.close();
    }
  });

  it("a refused return_to and a callback from another browser are refused in the browser too", async () => {
    const c = await open();
    try {
      const bad = await c.page.goto(`${server.base}/auth/login?return_to=%2F%2Fevil.example`);
      expect(bad!.status()).toBe(400);
      // a login started in one browser and completed in another
      const other = await open();
      try {
        await c.page.goto(`${server.base}/`);
        await c.page.getByRole("link", { name: /휴대폰번호로 로그인/ }).click();
        await heading(c.page, "본인 확인");
        const authorize = new URL(c.page.url());
        const state = authorize.searchParams.get("state")!;
        const res = await other.page.goto(`${server.base}/auth/callback?code=x&state=${encodeURIComponent(state)}`);
        expect(res!.status()).toBe(400);
        await heading(other.page, /로그인을 완료할 수 없습니다/);
      } finally {
        await other.context.close();
      }
    } finally {
      await c.context.close();
    }
  });
});
