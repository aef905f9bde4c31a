// `npm start`: on a fresh state directory it applies the migrations and the dev seed and
// serves; `PORT` moves it off 8787, and everything with it (the kit's origin and redirect URI, the
// service's base URL). Every node test's server runs on a free port of its own (./server.ts); here
// that port is checked not to be 8787 and the demo's login to follow it. What it prints up to
// `Ready` fits on a screen (at most 40 lines).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startNpmStart, type Server } from "./server";
import { runCommand } from "./run";
import { CookieJar, signIn } from "./signin-driver";

let server: Server;
let port: string;

beforeAll(async () => {
  // wrangler's own default level ("log"), what a person sees; ./server.ts's "info" leaves out the
  // banner, the migration tables and the bindings that the line count is about
  server = await startNpmStart({ env: { WRANGLER_LOG: "log" } });
  port = new URL(server.base).port;
});
afterAll(async () => {
  await server?.stop();
});

describe("npm start", () => {
  it("prints at most 40 lines before Ready: the migrations in one line, each warning once", () => {
    const out = stripVTControlCharacters(server.output());
    const lines = out.split("\n");
    const ready = lines.findIndex((l) => /Ready on http:\/\/localhost:\d+/.test(l));
    expect(ready, out).toBeGreaterThan(0);
    expect(ready + 1, lines.slice(0, ready + 1).join("\n")).toBeLessThanOrEqual(40); // Ready's line number
    // a fresh state directory: every migration of migrations/ is applied, named in one line
    const sql = readdirSync(join(import.meta.dirname, "..", "..", "migrations"))
      .filter((f) => f.endsWith(".sql"))
      .sort();
    const summary = lines.filter((l) => l.startsWith("D1 DB: "));
    expect(summary).toEqual([`D1 DB: applied ${sql.length} migrations (${sql[0]} to ${sql[sql.length - 1]})`]);
    expect(out).not.toContain("┌");
    const warnings = lines.filter((l) => l.includes("[WARNING]"));
    expect(new Set(warnings).size, warnings.join("\n")).toBe(warnings.length);
  });

  it("warns nothing before Ready: no wrangler WARNING, not the experimental `secrets` field's", () => {
    const out = stripVTControlCharacters(server.output());
    const lines = out.split("\n");
    const ready = lines.findIndex((l) => /Ready on http:\/\/localhost:\d+/.test(l));
    expect(ready, out).toBeGreaterThan(0);
    const before = lines.slice(0, ready).join("\n");
    expect(before).not.toContain("WARNING");
    expect(before).not.toContain("experimental");
    // the secrets are still declared and checked: .dev.vars gives every one (no "Missing required secrets")
    expect(before).not.toContain("Missing required secrets");
    expect(before).toContain("env.RP_SEAL_KEY");
  });

  it("migrations that fail are shown with their error, then npm start stops with code 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "phone-login-start-"));
    const notADirectory = join(dir, "state");
    writeFileSync(notADirectory, "");
    try {
      const run = await runCommand(process.execPath, ["scripts/start.mjs"], {
        cwd: join(import.meta.dirname, "..", ".."),
        env: { ...process.env, WRANGLER_LOG: "log", PORT: String(await freePort()), PERSIST_DIR: notADirectory },
        timeout: 60_000,
      });
      const out = stripVTControlCharacters(run.stdout + run.stderr);
      expect(run.status, out).toBe(1);
      expect(out).toContain(`✘ [ERROR] ENOTDIR: not a directory, mkdir '${notADirectory}/v3/`);
      expect(out).toContain("D1 migrations failed; see above");
      expect(out).not.toContain("Ready on");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("when its migrations in one workerd fail, wrangler's own command applies them, in one line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "phone-login-start-"));
    const persist = join(dir, "state");
    // a file where the one workerd keeps its cache: it cannot start, wrangler's command does not need it
    mkdirSync(join(persist, "v3"), { recursive: true });
    writeFileSync(join(persist, "v3", "cache"), "");
    try {
      // an option wrangler dev refuses ends the run right after the migrations
      const run = await runCommand(process.execPath, ["scripts/start.mjs", "--frobnicate"], {
        cwd: join(import.meta.dirname, "..", ".."),
        env: { ...process.env, WRANGLER_LOG: "log", PORT: String(await freePort()), PERSIST_DIR: persist },
        // wrangler's command applies every migration in a workerd of its own: 30-45 s alone, over
        // 90 s while the run's other files share the machine's two cores
        timeout: 170_000,
      });
      const out = stripVTControlCharacters(run.stdout + run.stderr);
      expect(out).toContain(
        `local migrations: EEXIST: file already exists, mkdir '${persist}/v3/cache'; applying them with wrangler`,
      );
      const sql = readdirSync(join(import.meta.dirname, "..", "..", "migrations"))
        .filter((f) => f.endsWith(".sql"))
        .sort();
      expect(out.split("\n").filter((l) => l.startsWith("D1 DB: "))).toEqual([
        `D1 DB: applied ${sql.length} migrations (${sql[0]} to ${sql[sql.length - 1]})`,
      ]);
      expect(out).not.toContain("┌");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it("PORT (not 8787) serves there: /healthz 200, the seed's client is known, unknown paths are 404 not_found", async () => {
    expect(port).not.toBe("8787");
    expect(server.base).toBe(`http://localhost:${port}`);
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
    const q = new URLSearchParams({
      response_type: "code",
      client_id: "demo-client",
      redirect_uri: "https://demo.example/callback",
      state: "s",
    });
    const page = await fetch(`${server.base}/oauth2/authorize?${q}`, { headers: { "Accept-Language": "en" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Log in to Demo Shop with your mobile number.");
    const missing = await fetch(`${server.base}/nothing-here`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "not_found", message: "The requested API address is invalid." });
    expect(server.output()).toContain(`localhost:${port}`);
  });

  it("PORT moves everything: the demo's login goes to this port's service and back, and logs in", async () => {
    const jar = new CookieJar();
    const login = await fetch(`${server.base}/auth/login`, { redirect: "manual" });
    jar.take(login);
    expect(login.status).toBe(302);
    const authorize = new URL(login.headers.get("Location")!);
    expect(authorize.origin).toBe(`http://localhost:${port}`);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`http://localhost:${port}/auth/callback`);
    const done = await signIn(
      authorize.href,
      { telco: "S", name: "홍길동", phone: "01012345678", code: "123456" },
      { jar },
    );
    expect(done.location.origin).toBe(`http://localhost:${port}`);
    expect(done.location.pathname).toBe("/auth/callback");
    const callback = await fetch(done.location, { redirect: "manual", headers: { Cookie: jar.header() } });
    jar.take(callback);
    expect(callback.status).toBe(303);
    const home = await fetch(`${server.base}/`, { headers: { Cookie: jar.header() } });
    expect(await home.text()).toContain("홍길동님, 환영합니다");
  });
});
