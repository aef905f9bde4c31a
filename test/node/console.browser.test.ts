// The operations console in Debian Chromium against the real `npm start` server (docs/console.md):
// an operator granted from the CLI (`operators grant`, the number's code from the dev SMS outbox)
// signs in to /console, registers an app, rotates its secret, and imports a 20,000-row file from
// the browser with the progress bar, closing the tab half way and resuming by choosing the same
// file again; the rejected rows are downloaded from the browser's own copy. axe-core reports no
// violation on any console page, in Korean and in English, and a person without a role gets the
// no-access page. With SCREENSHOTS=1, screenshots of each page go to test-results/console/ (docs/screenshots/ holds them).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agreeIfAsked, downloadedText, launchChromium, stateShot } from "./chromium";
import { devAdminToken, startServer, type Server } from "./server";

const ROOT = join(import.meta.dirname, "..", "..");
const OUT = join(ROOT, "test-results", "console");
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const OPERATOR = { carrier: "KT", name: "박서준", phone: "01056789012" };
const NOBODY = { carrier: "KT", name: "권한없음", phone: "01099990001" };
const ROWS = 20_000;
/** Rows of the file that the service rejects (a gender that is neither F nor M), by file row. */
const BAD_ROWS = [7, 12_345, 19_999];

let server: Server;
let browser: Browser;
let dir: string;
let file: string;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, BASE_URL: server.base };
  delete env.ADMIN_TOKEN;
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [join(ROOT, "scripts", "admin.mjs"), ...args],
      { cwd: ROOT, env, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${server.base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${devAdminToken()}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The 20,000-row CSV: numbers 010-3xxx-xxxx, a distinct ci each, three rows the service rejects. */
function bigCsv(): string {
  const lines = ["telcoCd,phoneNo,name,gender,birth,foreign,ci"];
  for (let i = 1; i <= ROWS; i++) {
    const ci = Buffer.alloc(64, 9);
    ci.writeUInt32BE(i, 0);
    const gender = BAD_ROWS.includes(i) ? "X" : i % 2 ? "F" : "M";
    lines.push(`K,010${String(30_000_000 + i)},가져온사람,${gender},1990-01-01,L,${ci.toString("base64")}`);
  }
  return lines.join("\n") + "\n";
}

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "console-"));
  file = join(dir, "subscribers.csv");
  writeFileSync(file, bigCsv());
  // an operator signs in several times within minutes here: no resend cooldown, room for the sends
  server = await startServer({
    // and the audit (with it the metrics' roll-up) is flushed a second after the event, not a minute
    args: [
      "--var",
      "SIGNIN_RESEND_COOLDOWN_SECONDS:0",
      "--var",
      "SIGNIN_SENDS_PER_WINDOW:20",
      "--var",
      "AUDIT_FLUSH_SECONDS:1",
      // and each isolate's counts (first pages, identify and code outcomes) are sent at once
      "--var",
      "METRICS_FLUSH_SECONDS:0",
    ],
  });
  browser = await launchChromium();
  // the one command of the README that makes you an operator of your local service
  const granted = await cli(["operators", "grant", "--phone", OPERATOR.phone, "--role", "admin"]);
  expect(granted.code, granted.stderr).toBe(0);
  await api("POST", "/admin/directory/import", [
    {
      telcoCd: "K",
      phoneNo: NOBODY.phone,
      name: NOBODY.name,
      gender: "F",
      birth: "1991-02-03",
      foreign: "L",
      ci: Buffer.alloc(64, 3).toString("base64"),
    },
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function open(locale: "ko-KR" | "en-US"): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  // bypassCSP: axe-core is injected as an inline script, which the pages' CSP (rightly) refuses
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    locale,
    acceptDownloads: true,
    bypassCSP: true,
  });
  await context.route("**/*", (route) =>
    new URL(route.request().url()).host === new URL(server.base).host ? route.continue() : route.abort(),
  );
  const page = await context.newPage();
  const problems: string[] = [];
  watch(page, problems);
  return { context, page, problems };
}

function watch(page: Page, problems: string[]): void {
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
}

async function heading(page: Page, name: string | RegExp): Promise<void> {
  await page.getByRole("heading", { level: 1, name }).waitFor({ state: "visible" });
}

/** The newest code the dev outbox holds for `phone`, once one newer than `after` arrived. */
async function codeFor(phone: string, after: string | null): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${server.base}/dev/outbox`, { headers: { Accept: "application/json" } });
    const { messages } = (await res.json()) as { messages: { to: string; text: string; at: string }[] };
    const m = messages.find((x) => x.to === phone);
    const code = m && /\d{6}/.exec(m.text)?.[0];
    if (code && code !== after) return code;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no code for ${phone}`);
}

const lastCodes = new Map<string, string>();

/** Signs `who` in at /console[?lang=en] with the service's own steps. */
async function signIn(page: Page, who: typeof OPERATOR, en = false): Promise<void> {
  await page.goto(`${server.base}/console${en ? "?lang=en" : ""}`);
  await heading(page, en ? "Operations console" : "운영 콘솔");
  await page.getByText(who.carrier, { exact: true }).click();
  await page.getByLabel(en ? "Name" : "이름").fill(who.name);
  await page.getByLabel(en ? "Mobile number" : "휴대폰번호").fill(who.phone);
  await page.getByLabel(en ? "Agree to all" : "전체 동의").check();
  await page.getByRole("button", { name: en ? /Send code|Get code/ : "인증번호 받기" }).click();
  const code = await codeFor(who.phone, lastCodes.get(who.phone) ?? null);
  lastCodes.set(who.phone, code);
  await page.getByLabel(en ? /code/i : "인증번호", { exact: !en }).fill(code);
  await page.getByRole("button", { name: en ? "Confirm" : "확인", exact: true }).click();
}

interface Violation {
  state: string;
  id: string;
  nodes: string[];
}

/** axe-core's violations of the page as it is (best practices included), with its screenshot. */
async function audit(page: Page, state: string): Promise<Violation[]> {
  await stateShot(page, join(OUT, `${state}.png`));
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<unknown> } }).axe;
    return (await axe.run(document, { resultTypes: ["violations"] })) as {
      violations: { id: string; nodes: { target: string[] }[] }[];
    };
  });
  return result.violations.map((v) => ({ state, id: v.id, nodes: v.nodes.map((n) => n.target.join(" ")) }));
}

describe("the console in Chromium", () => {
  it("an operator granted from the CLI signs in, registers an app and rotates its secret (each shown once)", async () => {
    const { context, page, problems } = await open("ko-KR");
    try {
      await signIn(page, OPERATOR);
      await heading(page, "개요");
      await expect.poll(() => page.locator(".me").innerText()).toContain("010-****-9012 · 관리자");
      await page.getByRole("link", { name: "앱", exact: true }).click();
      await heading(page, "앱");
      await page.getByLabel("이름", { exact: true }).fill("콘솔 상점");
      await page.getByLabel(/리디렉션 URI/).fill("https://shop.example/cb");
      // each item as the consent page names it, its API field beside
      await page.getByRole("checkbox", { name: "이름 name", exact: true }).check();
      await page.getByRole("checkbox", { name: "휴대폰번호 phoneNo", exact: true }).check();
      await page.getByLabel(/이용 목적/).fill("회원 가입과 주문 확인");
      await page.getByRole("button", { name: "등록" }).click();
      await heading(page, "콘솔 상점");
      const first = await page.locator("[data-secret]").innerText();
      expect(first).toMatch(/^[A-Za-z0-9]{64}$/);
      await page.getByRole("button", { name: "시크릿 교체" }).click();
      await heading(page, "콘솔 상점");
      const second = await page.locator("[data-secret]").innerText();
      expect(second).toMatch(/^[A-Za-z0-9]{64}$/);
      expect(second).not.toBe(first);
      // the action's address opened again (the address bar) leads to the app's page, which never shows a secret
      await page.goto(page.url());
      await heading(page, "콘솔 상점");
      expect(await page.locator("[data-secret]").count()).toBe(0);
      expect(problems).toEqual([]);
    } catch (err) {
      await page.screenshot({ path: join(OUT, "failed-app.png"), fullPage: true });
      throw err;
    } finally {
      await context.close();
    }
  });

  it("the overview shows a sign-in just made (the roll-ups a flush behind); an app's page its statistics", async () => {
    const { context, page, problems } = await open("ko-KR");
    try {
      await signIn(page, OPERATOR);
      await heading(page, "개요");
      const signins = async () => {
        await page.goto(`${server.base}/console`);
        const text = await page
          .locator(".grid li")
          .filter({ hasText: /^로그인 성공/ })
          .locator("b")
          .innerText();
        return Number(text.replace(/,/g, ""));
      };
      const before = await signins();
      // a person signs in to the demo app in another browser
      const other = await open("ko-KR");
      await other.page.goto(`${server.base}/`);
      await other.page.getByRole("link", { name: /휴대폰번호로 로그인/ }).click();
      await other.page.getByText("KT", { exact: true }).click();
      await other.page.getByLabel("이름").fill("김영희");
      await other.page.getByLabel("휴대폰번호").fill("010-2345-6789");
      await other.page.getByLabel("전체 동의").check();
      await other.page.getByRole("button", { name: "인증번호 받기" }).click();
      await other.page.getByLabel("인증번호", { exact: true }).fill("234567");
      await other.page.getByRole("button", { name: "확인", exact: true }).click();
      const welcome = other.page.getByRole("heading", { level: 1, name: /님, 환영합니다/ });
      await agreeIfAsked(other.page.getByRole("button", { name: "동의하고 계속하기" }), () => welcome.isVisible());
      await heading(other.page, /님, 환영합니다/);
      await other.context.close();
      await expect
        .poll(signins, { timeout: 20_000, interval: 1000 })
        .toBeGreaterThan(before)
        .catch(async (e: unknown) => {
          const audit = await api<unknown>("GET", "/admin/audit?limit=20");
          const metrics = await api<unknown>("GET", "/admin/metrics?step=1m");
          throw new Error(
            `${String(e)}\nAUDIT ${JSON.stringify(audit)}\nMETRICS ${JSON.stringify(metrics)}\nLOG ${server
              .output()
              .split("\n")
              .filter((l) => !l.includes("GET /console "))
              .join("\n")
              .slice(-5000)}`,
          );
        });
      await stateShot(page, join(OUT, "console-overview-metrics-ko.png"));
      const { clients } = await api<{ clients: { client_id: string; name: string }[] }>("GET", "/admin/clients");
      const demo = clients.find((c) => c.name === "Demo Shop")!;
      await page.goto(`${server.base}/console/apps/${demo.client_id}`);
      await heading(page, "Demo Shop");
      await expect.poll(() => page.locator("#c-app-signins figcaption").innerText()).toBe("하루 로그인 성공");
      await stateShot(page, join(OUT, "console-app-stats-ko.png"));
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("a demo app's session on the same origin does not open the console", async () => {
    const { context, page, problems } = await open("ko-KR");
    try {
      await page.goto(`${server.base}/`);
      await page.getByRole("link", { name: /휴대폰번호로 로그인/ }).click();
      await heading(page, "본인 확인");
      await page.getByText("SKT", { exact: true }).click();
      await page.getByLabel("이름").fill("홍길동");
      await page.getByLabel("휴대폰번호").fill("010-1234-5678");
      await page.getByLabel("전체 동의").check();
      await page.getByRole("button", { name: "인증번호 받기" }).click();
      await page.getByLabel("인증번호", { exact: true }).fill("123456");
      await page.getByRole("button", { name: "확인", exact: true }).click();
      await page.getByRole("button", { name: "동의하고 계속하기" }).click();
      await heading(page, /님, 환영합니다/);
      expect((await context.cookies()).map((c) => c.name)).toContain("__Host-rp_session");
      await page.goto(`${server.base}/console/apps`);
      // the console's own sign-in, not a page of it
      await heading(page, "운영 콘솔");
      await expect.poll(() => page.locator("form[data-step=identify]").getAttribute("action")).toBe("/console");
      expect((await context.cookies()).map((c) => c.name)).not.toContain("__Host-pl_console");
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("imports a 20,000-row file with a progress bar, resumes it after the tab was closed, and downloads the rejected rows", async () => {
    const before = (await api<{ subscribers: number }>("GET", "/admin/directory")).subscribers;
    const { context, page, problems } = await open("ko-KR");
    try {
      await signIn(page, OPERATOR);
      await heading(page, "개요");
      await page.goto(`${server.base}/console/directory`);
      await heading(page, "가입자 명부");
      await page.setInputFiles("#import-file", file);
      await page.locator("#import-start").click();
      const bar = page.locator("#import-progress");
      // half way (at least a quarter and not done): the tab is closed
      await expect
        .poll(async () => Number(await bar.getAttribute("value")) / Number(await bar.getAttribute("max")), {
          timeout: 120_000,
        })
        .toBeGreaterThanOrEqual(0.25);
      // the status line: rows done of all, rows per second, time left
      await expect
        .poll(() => page.locator("#import-status").innerText(), { timeout: 30_000 })
        .toMatch(/^[\d,]+ \/ 20,000행 · 초당 [\d,]+행 · 약 .+ 남음$/);
      await page.close();
      const mid = (await api<{ subscribers: number }>("GET", "/admin/directory")).subscribers - before;
      expect(mid).toBeGreaterThan(0);
      expect(mid).toBeLessThan(ROWS - BAD_ROWS.length);

      // a new tab, the same file: the server's run state says where to go on
      const again = await context.newPage();
      watch(again, problems);
      await again.goto(`${server.base}/console/directory`);
      await heading(again, "가입자 명부");
      await again.setInputFiles("#import-file", file);
      await again.locator("#import-start").click();
      await expect.poll(() => again.locator("#import-status").innerText(), { timeout: 30_000 }).toMatch(/이어서/);
      const download = again.waitForEvent("download", { timeout: 180_000 });
      await again.locator("#import-rejected").getByRole("button").waitFor({ state: "visible", timeout: 180_000 });
      const rows = await again.locator("#import-rejected table tbody tr").allInnerTexts();
      expect(rows.map((r) => Number(r.split(/\s/)[0]!.replace(/,/g, "")))).toEqual(BAD_ROWS);
      await again.locator("#import-rejected").getByRole("button").click();
      const saved = (await downloadedText(await download)).trim().split(/\r?\n/);
      expect(saved[0]).toBe("file_row,reason,telcoCd,phoneNo,name,gender,birth,foreign,ci");
      expect(saved.slice(1).map((l) => Number(l.split(",")[0]))).toEqual(BAD_ROWS);
      await stateShot(again, join(OUT, "console-directory-import-ko.png"));
      const after = (await api<{ subscribers: number }>("GET", "/admin/directory")).subscribers;
      expect(after - before).toBe(ROWS - BAD_ROWS.length);
      // the first tab's lookup of a run to resume answers 404 (no run of this file yet), which
      // Chromium logs; nothing else may fail
      expect(problems.filter((p) => !/status of 404/.test(p))).toEqual([]);
      expect(problems.filter((p) => /status of 404/.test(p))).toHaveLength(1);
    } finally {
      await context.close();
    }
  }, 300_000);

  it("axe-core finds no violation on any console page, in Korean and in English; a person without a role gets the no-access page", async () => {
    const violations: Violation[] = [];
    const { clients } = await api<{ clients: { client_id: string; name: string }[] }>("GET", "/admin/clients");
    const app = clients.find((c) => c.name === "Demo Shop") ?? clients[0]!;
    const pages: [string, string][] = [
      ["/console", "overview"],
      ["/console/apps", "apps"],
      [`/console/apps/${app.client_id}`, "app"],
      ["/console/sms", "sms"],
      ["/console/directory", "directory"],
      ["/console/audit", "audit"],
      ["/console/operators", "operators"],
      ["/console/tokens", "tokens"],
    ];
    for (const [locale, lang] of [
      ["ko-KR", "ko"],
      ["en-US", "en"],
    ] as const) {
      const { context, page, problems } = await open(locale);
      try {
        await page.goto(`${server.base}/console${lang === "en" ? "?lang=en" : ""}`);
        violations.push(...(await audit(page, `console-signin-${lang}`)));
        await signIn(page, OPERATOR, lang === "en");
        await heading(page, lang === "en" ? "Overview" : "개요");
        for (const [path, name] of pages) {
          await page.goto(`${server.base}${path}${lang === "en" ? "?lang=en" : ""}`);
          await page.locator("main h1").waitFor();
          expect(await page.locator("html").getAttribute("lang")).toBe(lang);
          violations.push(...(await audit(page, `console-${name}-${lang}`)));
        }
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
      const nobody = await open(locale);
      try {
        await signIn(nobody.page, NOBODY, lang === "en");
        await heading(nobody.page, lang === "en" ? "No access to the console" : "콘솔 권한이 없습니다");
        violations.push(...(await audit(nobody.page, `console-no-access-${lang}`)));
      } finally {
        await nobody.context.close();
      }
    }
    expect(violations).toEqual([]);
  }, 300_000);
});
