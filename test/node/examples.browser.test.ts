// The package as an app installs it: `npm pack` in packages/kit, the tarball installed with npm into
// a copy of each example app (examples/worker-fetch, examples/hono; no path alias), each app
// type-checked and dry-run-built (its size recorded), then that build served in Miniflare (workerd,
// with the bindings wrangler reads from the app's wrangler.toml and .dev.vars) beside the service
// as `npm start` configures it, registered there as a client of its own through the admin API.
// Chromium signs in as a person would and the app's own route shows the person from getSession.
// `npm start`'s own `wrangler dev` is tested by ./start.test.ts.
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { gzipSync } from "node:zlib";
import { createRequire } from "node:module";
import { Miniflare } from "miniflare";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { heading, launchChromium, signInPages } from "./chromium";
import { runCommand } from "./run";
import { devAdminToken, freePort, onLoopback, startServer, type Server } from "./server";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");
const EXAMPLES = ["worker-fetch", "hono"] as const;
type Example = (typeof EXAMPLES)[number];
const QUIET = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };

/** Runs a command to completion; its output in the error when it fails. */
async function run(cmd: string, args: string[], cwd: string): Promise<string> {
  const r = await runCommand(cmd, args, { cwd, env: QUIET, timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

interface App {
  name: Example;
  dir: string;
  base: string;
  /** Minified and gzip bytes of `wrangler deploy --dry-run --minify`. */
  size: { raw: number; gzip: number };
  /** The workerd serving `dist/`, the build `wrangler deploy` would upload. */
  mf?: Miniflare;
  output: string;
}

let work: string;
let tarball: string;
let server: Server;
let browser: Browser;
const apps = new Map<Example, App>();
/** A copy of examples/worker-fetch (installed and built) for the app a developer registers in /developers. */
let devApp: App;

/** A copy of the example with the tarball installed by npm; the tools (wrangler, tsc, types) are the repository's. */
async function install(name: Example, as: string = name): Promise<App> {
  const dir = join(work, as);
  cpSync(join(ROOT, "examples", name), dir, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, Record<string, string>>;
  pkg.dependencies!["phone-login-kit"] = `file:${tarball}`;
  delete pkg.devDependencies; // wrangler, typescript and the Workers types: the repository's copies
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], dir);
  mkdirSync(join(dir, "node_modules", "@cloudflare"), { recursive: true });
  symlinkSync(
    join(ROOT, "node_modules", "@cloudflare", "workers-types"),
    join(dir, "node_modules", "@cloudflare", "workers-types"),
  );
  return { name, dir, base: "", size: { raw: 0, gzip: 0 }, output: "" };
}

/** The example's worker as `wrangler deploy` would upload it. */
async function build(app: App): Promise<void> {
  await run(join(BIN, "wrangler"), ["deploy", "--dry-run", "--minify", "--outdir", "dist"], app.dir);
  for (const f of readdirSync(join(app.dir, "dist"))) {
    if (!/\.m?js$/.test(f) || !statSync(join(app.dir, "dist", f)).isFile()) continue;
    const bytes = readFileSync(join(app.dir, "dist", f));
    app.size.raw += bytes.length;
    app.size.gzip += gzipSync(bytes).length;
  }
}

/** Registers the app at the service (its own client, loopback redirect) and serves it (`runApp`). */
async function serve(app: App): Promise<void> {
  const port = await freePort();
  app.base = `http://localhost:${port}`;
  const register = () =>
    fetch(`${server.base}/admin/clients`, {
      method: "POST",
      headers: { Authorization: `Bearer ${devAdminToken()}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        name: `Example ${app.name}`,
        redirect_uris: [`${app.base}/auth/callback`],
        items: ["name", "phoneNo", "birthdate"],
      }),
    });
  const res = await register();
  expect(res.status).toBe(201);
  await runApp(app, port, (await res.json()) as { client_id: string; client_secret: string });
}

/**
 * Serves the app's build (`dist/`, as `wrangler deploy` uploads it) on `port` as the client
 * `client`, in Miniflare with the bindings wrangler reads from its wrangler.toml and .dev.vars (the
 * vars, KV, the kit's Durable Object); resolves once it answers.
 */
async function runApp(app: App, port: number, client: { client_id: string; client_secret: string }): Promise<void> {
  const toml = readFileSync(join(app.dir, "wrangler.toml"), "utf8")
    .replace(/^PHONE_LOGIN_PROVIDER_URL = .*$/m, `PHONE_LOGIN_PROVIDER_URL = "${server.base}"`)
    .replace(/^PHONE_LOGIN_CLIENT_ID = .*$/m, `PHONE_LOGIN_CLIENT_ID = "${client.client_id}"`)
    .replace(/^PHONE_LOGIN_REDIRECT_URI = .*$/m, `PHONE_LOGIN_REDIRECT_URI = "${app.base}/auth/callback"`);
  writeFileSync(join(app.dir, "wrangler.toml"), toml);
  const sealKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  writeFileSync(
    join(app.dir, ".dev.vars"),
    `PHONE_LOGIN_CLIENT_SECRET=${client.client_secret}\nPHONE_LOGIN_SEAL_KEY=${sealKey}\n`,
  );
  const { unstable_getMiniflareWorkerOptions } = await import("wrangler");
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(app.dir, "wrangler.toml"));
  const keep = (text: string) => void (app.output += text);
  app.mf = new Miniflare({
    ...workerOptions,
    modules: [{ type: "ESModule", path: join(app.dir, "dist", "index.js") }],
    modulesRoot: join(app.dir, "dist"),
    ...onLoopback(port, keep),
  });
  await app.mf.ready;
  const res = await fetch(`${app.base}/`);
  if (!res.ok) throw new Error(`${app.name} answered ${res.status}:\n${app.output}`);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "phone-login-kit-examples-"));
  // `npm pack` runs the package's prepack (tsc to dist/): the tarball an app would install.
  const packed = JSON.parse(
    await run("npm", ["pack", "--json", "--pack-destination", work, "--loglevel=error"], join(ROOT, "packages", "kit")),
  ) as { filename: string; size: number }[];
  tarball = join(work, packed[0]!.filename);
  console.log(`phone-login-kit tarball: ${packed[0]!.filename}, ${packed[0]!.size} bytes`);
  // the developer console's scenario signs the same people in several times within a minute
  server = await startServer({
    args: ["--var", "SIGNIN_RESEND_COOLDOWN_SECONDS:0", "--var", "SIGNIN_SENDS_PER_WINDOW:20"],
  });
  for (const name of EXAMPLES) {
    const app = await install(name);
    await run(join(BIN, "tsc"), ["--noEmit", "-p", "tsconfig.json"], app.dir);
    await build(app);
    console.log(`example ${name}: ${app.size.raw} bytes minified, ${app.size.gzip} bytes gzip`);
    apps.set(name, app);
  }
  // the developer's app: the worker-fetch app as installed and built above, with its own settings
  const built = apps.get("worker-fetch")!;
  const dir = join(work, "developer-app");
  cpSync(built.dir, dir, { recursive: true });
  devApp = { ...built, dir, base: "", output: "" };
  await Promise.all([...apps.values()].map(serve));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([...apps.values(), devApp].map((app) => app?.mf?.dispose().catch(() => {})));
  await server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.each(EXAMPLES)("examples/%s with the packed kit installed", (name) => {
  it("is a small worker (gzip under 64 KiB)", () => {
    expect(apps.get(name)!.size.gzip).toBeLessThan(64 * 1024);
  });

  it("signs a person in through `npm start`'s service in Chromium; the app's own route reads getSession", async () => {
    const app = apps.get(name)!;
    const context = await browser.newContext({ locale: "ko-KR" });
    const allowed = new Set([new URL(app.base).host, new URL(server.base).host]);
    await context.route("**/*", (route) =>
      allowed.has(new URL(route.request().url()).host) ? route.continue() : route.abort(),
    );
    const page = await context.newPage();
    try {
      await page.goto(`${app.base}/`);
      await page.locator("#login").click();
      await signInPages(page, { autoLogin: false, expectConsent: true });
      await heading(page, "홍길동님, 안녕하세요");
      expect(new URL(page.url()).href).toBe(`${app.base}/account`);
      expect(await page.locator("#plid").innerText()).toMatch(/^[A-Za-z0-9._~-]{1,128}$/);
      // the kit's own route agrees with the app's
      const me = (await (await page.request.get(`${app.base}/auth/me`)).json()) as Record<string, string>;
      expect(me).toMatchObject({ name: "홍길동", phoneNo: "01012345678" });
      await page.getByRole("button", { name: "로그아웃" }).click();
      await page.goto(`${app.base}/account`);
      await heading(page, "본인 확인"); // logged out: /account sends the person to sign in again
    } finally {
      await context.close();
    }
  });
});

// The developer console from end to end (docs/developers.md): a developer signs in to /developers
// with a number whose code arrives in the dev outbox, registers an app (testing), invites a member
// who accepts; the new client id and secret run examples/worker-fetch with the packed kit, which
// signs the member in; a non-member (an existing and a non-existing number) sees the same testing
// page and is sent no SMS; the app is submitted, an editor approves it in /console, and then the
// non-member signs in. axe-core checks every page on the way, in Korean and in English.
describe("a developer's own app, from /developers to a sign-in through the packed kit", () => {
  const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  const DEV = { carrier: "KT", name: "박서준", phone: "01056789012" };
  const MEMBER = { carrier: "KT", name: "김개발", phone: "01070000001" };
  const STRANGER = { carrier: "KT", name: "최손님", phone: "01070000002" };
  const EDITOR = { carrier: "KT", name: "검수자", phone: "01070000003" };
  const NOBODY = { carrier: "KT", name: "없는사람", phone: "01070000099" };
  type Who = typeof DEV;

  async function admin(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${server.base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${devAdminToken()}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async function outbox(): Promise<{ to: string; text: string }[]> {
    const res = await fetch(`${server.base}/dev/outbox`, { headers: { Accept: "application/json" } });
    return ((await res.json()) as { messages: { to: string; text: string }[] }).messages;
  }

  const used = new Set<string>();
  /** The newest code for `phone` not typed before. */
  async function codeFor(phone: string): Promise<string> {
    for (let i = 0; i < 50; i++) {
      const m = (await outbox()).find((x) => x.to === phone);
      const code = m && /\d{6}/.exec(m.text)?.[0];
      if (code && !used.has(`${phone}:${code}`)) {
        used.add(`${phone}:${code}`);
        return code;
      }
      await sleep(200);
    }
    throw new Error(`no code for ${phone}`);
  }

  /** The identify and code steps as a person fills them (Korean or English). */
  async function prove(page: Page, who: Who, en = false): Promise<void> {
    await page.getByText(who.carrier, { exact: true }).click();
    await page.getByLabel(en ? "Name" : "이름").fill(who.name);
    await page.getByLabel(en ? "Mobile number" : "휴대폰번호").fill(who.phone);
    await page.getByLabel(en ? "Agree to all" : "전체 동의").check();
    await page.getByRole("button", { name: en ? /Send code|Get code/ : "인증번호 받기" }).click();
    await page.getByLabel(en ? /code/i : "인증번호", { exact: !en }).fill(await codeFor(who.phone));
    await page.getByRole("button", { name: en ? "Confirm" : "확인", exact: true }).click();
  }

  const violations: { state: string; id: string; nodes: string[] }[] = [];
  async function audit(page: Page, state: string): Promise<void> {
    await page.addScriptTag({ content: AXE });
    const result = await page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run: (c: unknown, o: unknown) => Promise<unknown> } }).axe;
      return (await axe.run(document, { resultTypes: ["violations"] })) as {
        violations: { id: string; nodes: { target: string[] }[] }[];
      };
    });
    violations.push(
      ...result.violations.map((v) => ({ state, id: v.id, nodes: v.nodes.map((n) => n.target.join(" ")) })),
    );
  }

  async function open(locale: "ko-KR" | "en-US"): Promise<{ context: BrowserContext; page: Page }> {
    // bypassCSP: axe-core is injected as an inline script, which the pages' CSP (rightly) refuses
    const context = await browser.newContext({ locale, bypassCSP: true, viewport: { width: 1100, height: 900 } });
    const allowed = new Set([new URL(server.base).host, new URL(devApp.base).host]);
    await context.route("**/*", (route) =>
      allowed.has(new URL(route.request().url()).host) ? route.continue() : route.abort(),
    );
    return { context, page: await context.newPage() };
  }

  /** A sign-in through the developer's app: the page it ends on. */
  async function throughApp(who: Who): Promise<{ context: BrowserContext; page: Page }> {
    const o = await open("ko-KR");
    await o.page.goto(`${devApp.base}/`);
    await o.page.locator("#login").click();
    await heading(o.page, "본인 확인");
    await o.page.getByText(who.carrier, { exact: true }).click();
    await o.page.getByLabel("이름").fill(who.name);
    await o.page.getByLabel("휴대폰번호").fill(who.phone);
    await o.page.getByLabel("전체 동의").check();
    await o.page.getByRole("button", { name: "인증번호 받기" }).click();
    return o;
  }

  it("registers, invites, signs the member in through the kit, keeps strangers out until an editor approves", async () => {
    for (const who of [MEMBER, STRANGER, EDITOR]) {
      const res = await admin("POST", "/admin/directory/import", [
        {
          telcoCd: "K",
          phoneNo: who.phone,
          name: who.name,
          gender: "F",
          birth: "1990-01-01",
          foreign: "L",
          ci: Buffer.from(crypto.getRandomValues(new Uint8Array(64))).toString("base64"),
        },
      ]);
      expect(res.status, await res.text()).toBe(200);
    }
    expect((await admin("POST", "/admin/operators", { phone: EDITOR.phone, role: "editor" })).status).toBe(201);
    const port = await freePort();
    devApp.base = `http://localhost:${port}`;

    // the developer signs in and registers the app
    const dev = await open("ko-KR");
    await dev.page.goto(`${server.base}/developers`);
    await heading(dev.page, "개발자 콘솔");
    await audit(dev.page, "developers-signin-ko");
    await prove(dev.page, DEV);
    await heading(dev.page, "내 앱");
    await audit(dev.page, "developers-apps-empty-ko");
    await dev.page.getByLabel("앱 이름").fill("개발자 상점");
    await dev.page.getByLabel(/Redirect URI/).fill(`${devApp.base}/auth/callback`);
    // each item as the consent page names it, its API field beside
    for (const item of ["이름 name", "휴대폰번호 phoneNo", "생년월일 birthdate"])
      await dev.page.getByRole("checkbox", { name: item, exact: true }).check();
    await dev.page.getByLabel(/이용 목적/).fill("회원 가입과 주문 확인");
    await dev.page.getByRole("button", { name: "앱 등록" }).click();
    const created = Date.now();
    await heading(dev.page, "개발자 상점").catch(async (e) => {
      throw new Error(`${e}\n${await dev.page.locator("body").innerText()}`);
    });
    const secret = await dev.page.locator("code.secret").innerText();
    const clientId = await dev.page.locator("dd.mono").first().innerText();
    expect(secret).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(clientId).toMatch(/^[A-Za-z0-9]{20}$/);
    await audit(dev.page, "developers-app-created-ko");

    // the owner invites a member, who signs in and accepts
    await dev.page.getByLabel("초대할 휴대폰번호").fill(MEMBER.phone);
    await dev.page.getByRole("button", { name: "초대", exact: true }).click();
    await heading(dev.page, "개발자 상점");
    expect(await dev.page.locator("main").innerText()).toContain("010-****-0001");
    const mate = await open("ko-KR");
    await mate.page.goto(`${server.base}/developers`);
    await prove(mate.page, MEMBER);
    await heading(mate.page, "내 앱");
    await audit(mate.page, "developers-invited-ko");
    await mate.page.getByRole("button", { name: "수락" }).click();
    await heading(mate.page, "내 앱");
    expect(await mate.page.locator("main").innerText()).toContain("개발자 상점");
    await mate.context.close();

    // the new client id and secret run the example with the packed kit; it signs the member in
    await runApp(devApp, port, { client_id: clientId, client_secret: secret });
    const m = await throughApp(MEMBER);
    await m.page.getByLabel("인증번호", { exact: true }).fill(await codeFor(MEMBER.phone));
    await m.page.getByRole("button", { name: "확인", exact: true }).click();
    await heading(m.page, "정보 제공 동의");
    await m.page.getByRole("button", { name: "동의하고 계속하기" }).click();
    await heading(m.page, "김개발님, 안녕하세요");
    const firstSignIn = Date.now();
    console.log(
      `developer app: ${firstSignIn - created} ms from registration to the member's first sign-in (its Miniflare's start included)`,
    );
    await m.context.close();

    // a non-member, existing or not, sees the same testing page and is sent no SMS
    const before = (await outbox()).filter((x) => x.to === STRANGER.phone).length;
    const texts: string[] = [];
    for (const who of [STRANGER, NOBODY]) {
      const o = await throughApp(who);
      await heading(o.page, "아직 테스트 중인 앱입니다");
      texts.push(await o.page.locator("main, body").first().innerText());
      if (who === STRANGER) await audit(o.page, "testing-page-ko");
      await o.context.close();
    }
    expect(texts[0]).toBe(texts[1]);
    expect(texts[0]).toContain("이 앱(개발자 상점)은 아직 테스트 단계라서");
    // and in English
    const en1 = await open("en-US");
    await en1.page.goto(`${devApp.base}/`);
    await en1.page.locator("#login").click();
    await en1.page.getByText(NOBODY.carrier, { exact: true }).click();
    await en1.page.getByLabel("Name").fill(NOBODY.name);
    await en1.page.getByLabel("Mobile number").fill(NOBODY.phone);
    await en1.page.getByLabel("Agree to all").check();
    await en1.page.getByRole("button", { name: /Send code|Get code/ }).click();
    await heading(en1.page, "This app is still being tested");
    await audit(en1.page, "testing-page-en");
    await en1.context.close();
    expect((await outbox()).filter((x) => x.to === STRANGER.phone).length).toBe(before);

    // the owner asks for review; an editor approves it in the console
    await dev.page.getByRole("button", { name: "검수 요청" }).click();
    await heading(dev.page, "개발자 상점");
    expect(await dev.page.locator("main").innerText()).toContain("검수 대기 중입니다");
    const ed = await open("ko-KR");
    await ed.page.goto(`${server.base}/console`);
    await prove(ed.page, EDITOR);
    await heading(ed.page, "개요");
    await ed.page.getByRole("link", { name: "검수", exact: true }).click();
    await heading(ed.page, "검수");
    expect(await ed.page.locator("main").innerText()).toContain("회원 가입과 주문 확인");
    await audit(ed.page, "console-reviews-ko");
    await ed.page.goto(`${server.base}/console/reviews?lang=en`);
    await heading(ed.page, "Reviews");
    await audit(ed.page, "console-reviews-en");
    await ed.page.getByRole("button", { name: "Approve" }).click();
    await heading(ed.page, "Reviews");
    expect(await ed.page.locator("main").innerText()).toContain("Approved: the app is live.");
    await ed.context.close();

    // live: the stranger signs in (the app's client cache holds at most 10 s)
    await sleep(10_500);
    const s = await throughApp(STRANGER);
    await s.page.getByLabel("인증번호", { exact: true }).fill(await codeFor(STRANGER.phone));
    await s.page.getByRole("button", { name: "확인", exact: true }).click();
    await heading(s.page, "정보 제공 동의");
    await s.page.getByRole("button", { name: "동의하고 계속하기" }).click();
    await heading(s.page, "최손님님, 안녕하세요");
    await s.context.close();

    // every developer page once more, in English
    await dev.page.goto(`${server.base}/developers?lang=en`);
    await heading(dev.page, "My apps");
    expect(await dev.page.locator("main").innerText()).toContain("The review of 개발자 상점 was approved");
    await audit(dev.page, "developers-apps-en");
    await dev.page.goto(`${server.base}/developers/apps/${clientId}?lang=en`);
    await heading(dev.page, "개발자 상점");
    await audit(dev.page, "developers-app-en");
    await dev.page.goto(`${server.base}/developers/apps/${clientId}/stats?lang=en`);
    await audit(dev.page, "developers-stats-en");
    await dev.page.goto(`${server.base}/developers/apps/${clientId}/stats`);
    await audit(dev.page, "developers-stats-ko");
    await dev.page.goto(`${server.base}/developers/apps/${clientId}`);
    await audit(dev.page, "developers-app-live-ko");
    await dev.context.close();
    const en = await open("en-US");
    await en.page.goto(`${server.base}/developers?lang=en`);
    await heading(en.page, "Developer console");
    await audit(en.page, "developers-signin-en");
    await en.context.close();
    expect(violations).toEqual([]);
  }, 240_000);
});
