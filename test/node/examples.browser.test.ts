// The package as an app installs it: `npm pack` in packages/kit, the tarball installed with npm into
// a copy of each example app (examples/worker-fetch, examples/hono; no path alias), each app
// type-checked and dry-run-built (its size recorded), then served by `wrangler dev` beside the
// real `npm start` service, registered there as a client of its own through the admin API. Chromium
// signs in as a person would and the app's own route shows the person from getSession.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
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
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { heading, launchChromium, signInPages } from "./chromium";
import { devAdminToken, freePort, startServer, type Server } from "./server";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");
const EXAMPLES = ["worker-fetch", "hono"] as const;
type Example = (typeof EXAMPLES)[number];
const QUIET = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };

/** Runs a command to completion; its output in the error when it fails. */
function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, env: QUIET, encoding: "utf8", timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

interface App {
  name: Example;
  dir: string;
  base: string;
  /** Minified and gzip bytes of `wrangler deploy --dry-run --minify`. */
  size: { raw: number; gzip: number };
  child?: ChildProcess;
  output: string;
}

let work: string;
let tarball: string;
let server: Server;
let browser: Browser;
const apps = new Map<Example, App>();

/** A copy of the example with the tarball installed by npm; the tools (wrangler, tsc, types) are the repository's. */
function install(name: Example): App {
  const dir = join(work, name);
  cpSync(join(ROOT, "examples", name), dir, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, Record<string, string>>;
  pkg.dependencies!["phone-login-kit"] = `file:${tarball}`;
  delete pkg.devDependencies; // wrangler, typescript and the Workers types: the repository's copies
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], dir);
  mkdirSync(join(dir, "node_modules", "@cloudflare"), { recursive: true });
  symlinkSync(
    join(ROOT, "node_modules", "@cloudflare", "workers-types"),
    join(dir, "node_modules", "@cloudflare", "workers-types"),
  );
  return { name, dir, base: "", size: { raw: 0, gzip: 0 }, output: "" };
}

/** The example's worker as `wrangler deploy` would upload it. */
function build(app: App): void {
  run(join(BIN, "wrangler"), ["deploy", "--dry-run", "--minify", "--outdir", "dist"], app.dir);
  for (const f of readdirSync(join(app.dir, "dist"))) {
    if (!/\.m?js$/.test(f) || !statSync(join(app.dir, "dist", f)).isFile()) continue;
    const bytes = readFileSync(join(app.dir, "dist", f));
    app.size.raw += bytes.length;
    app.size.gzip += gzipSync(bytes).length;
  }
}

/** Registers the app at the service (its own client, loopback redirect) and serves it with `wrangler dev`. */
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
  // `wrangler dev`'s proxy answers 503 itself while it (re)starts the worker, before the request
  // reaches the service (the service's admin API has no 503): a loaded CI machine met it once
  let res = await register();
  for (let i = 0; res.status === 503 && i < 20; i++) {
    await res.arrayBuffer();
    await sleep(500);
    res = await register();
  }
  expect(res.status).toBe(201);
  const client = (await res.json()) as { client_id: string; client_secret: string };
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
  const child = spawn(join(BIN, "wrangler"), ["dev", "--port", String(port), "--ip", "localhost"], {
    cwd: app.dir,
    env: { ...QUIET, WRANGLER_LOG: "info" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  app.child = child;
  child.stdout!.on("data", (d: Buffer) => (app.output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (app.output += d.toString()));
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(`${app.base}/`, { signal: AbortSignal.timeout(5_000) })).ok) return;
    } catch {
      /* not up yet */
    }
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`wrangler dev for ${app.name} did not answer:\n${app.output}`);
    await sleep(250);
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "phone-login-kit-examples-"));
  // `npm pack` runs the package's prepack (tsc to dist/): the tarball an app would install.
  const packed = JSON.parse(
    run("npm", ["pack", "--json", "--pack-destination", work, "--loglevel=error"], join(ROOT, "packages", "kit")),
  ) as { filename: string; size: number }[];
  tarball = join(work, packed[0]!.filename);
  console.log(`phone-login-kit tarball: ${packed[0]!.filename}, ${packed[0]!.size} bytes`);
  server = await startServer();
  for (const name of EXAMPLES) {
    const app = install(name);
    run(join(BIN, "tsc"), ["--noEmit", "-p", "tsconfig.json"], app.dir);
    build(app);
    console.log(`example ${name}: ${app.size.raw} bytes minified, ${app.size.gzip} bytes gzip`);
    apps.set(name, app);
  }
  await Promise.all([...apps.values()].map(serve));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  for (const app of apps.values()) {
    try {
      if (app.child?.exitCode === null) process.kill(-app.child.pid!, "SIGTERM");
    } catch {
      /* already gone */
    }
  }
  await server?.stop();
  await sleep(300);
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
