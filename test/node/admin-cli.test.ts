// The admin CLI (`npm run admin -- ...`, scripts/admin.mjs) against the real `npm start` server,
// with no options: it must find the local server's dev admin token by itself. The server has a port
// of its own, named by BASE_URL; that the CLI's default is `npm start`'s localhost:8787 is checked
// with the request captured, so a server someone left on 8787 is never driven.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../scripts/admin.mjs";
import { runCommand } from "./run";
import { devAdminToken, startServer, type Server } from "./server";
import { signIn } from "./signin-driver";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "scripts", "admin.mjs");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI like `npm run admin -- ...` against this file's server (BASE_URL its address, not the
 * CLI's default localhost:8787; ADMIN_TOKEN unset: the CLI reads the dev token) unless given.
 */
async function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base: NodeJS.ProcessEnv = { ...process.env, BASE_URL: server.base };
  delete base.ADMIN_TOKEN;
  const r = await runCommand(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    timeout: 30_000,
  });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

/** The command's JSON; `code` 3 for an import that finished with rejected rows. */
async function cliJson<T>(args: string[], code = 0): Promise<T> {
  const r = await cli([...args, "--json"]);
  expect(r.code, r.stderr).toBe(code);
  return JSON.parse(r.stdout) as T;
}

/** Authenticates `id:secret` at the disconnect endpoint: 400 (unknown plid) means the secret was accepted, 401 refused. */
async function secretAccepted(base: string, id: string, secret: string): Promise<boolean> {
  const res = await fetch(`${base}/v1/user/disconnect`, {
    method: "POST",
    headers: {
      Authorization: "Basic " + Buffer.from(`${id}:${secret}`).toString("base64"),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "plid=00000000-0000-4000-8000-000000000000",
  });
  if (res.status !== 400 && res.status !== 401) throw new Error(`unexpected ${res.status}`);
  return res.status === 400;
}

let server: Server;
let dir: string;
beforeAll(async () => {
  // audit events reach R2 a second after they happen, not a minute (AUDIT_FLUSH_SECONDS)
  server = await startServer({ args: ["--var", "AUDIT_FLUSH_SECONDS:1"] });
  dir = mkdtempSync(join(tmpdir(), "admin-cli-"));
});
afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("help", () => {
  const commands = [
    "clients list",
    "clients get",
    "clients create",
    "clients update",
    "clients rotate-secret",
    "clients disable",
    "clients enable",
    "clients delete",
    "directory import",
    "directory delete",
    "directory stats",
    "audit list",
    "audit export",
    "events list",
    "test-numbers add",
    "test-numbers list",
    "test-numbers remove",
    "operators grant",
    "operators list",
    "operators revoke",
    "tokens create",
    "tokens list",
    "tokens revoke",
  ];
  // Each usage is its own spawned CLI run, independent of the others: they run four at a time
  // here, and each test asserts on its own run.
  const helps = new Map<string, Run>();
  beforeAll(async () => {
    const queue = ["", ...commands];
    const worker = async () => {
      for (let c = queue.shift(); c !== undefined; c = queue.shift())
        helps.set(c, await cli([...c.split(" ").filter(Boolean), "--help"]));
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  });

  it("--help lists every command", () => {
    const r = helps.get("")!;
    expect(r.code).toBe(0);
    for (const c of commands) expect(r.stdout).toContain(`  ${c} `);
  });

  it.each(commands)("%s --help prints its usage and options", (c) => {
    const r = helps.get(c)!;
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: npm run admin -- ${c}`));
    expect(r.stdout).toContain("--base-url");
  });

  it("an unknown command or option is a usage error (exit 2)", async () => {
    expect((await cli(["frobnicate"])).code).toBe(2);
    const r = await cli(["clients", "list", "--colour"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option --colour");
  });
});

describe("against the npm start server with no options (BASE_URL its address)", () => {
  it("clients create --json prints the new client with client_id and client_secret; get/list never show the secret", async () => {
    const c = await cliJson<Record<string, unknown>>([
      "clients",
      "create",
      "--name",
      "Shop",
      "--redirect-uri",
      "https://shop.example/cb",
      "--items",
      "name,phoneNo,birthdate",
      "--auto-login",
      "--oidc",
    ]);
    expect(c.client_id).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(c.client_secret).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(c).toMatchObject({
      name: "Shop",
      redirect_uris: ["https://shop.example/cb"],
      items: ["phoneNo", "name", "birthdate"],
      auto_login: true,
      oidc: true,
      status: "active",
    });
    expect(await secretAccepted(server.base, c.client_id as string, c.client_secret as string)).toBe(true);

    const get = await cli(["clients", "get", c.client_id as string]);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(/client_id\s+\S{20}/);
    expect(get.stdout).not.toContain(c.client_secret as string);

    const list = await cli(["clients", "list"]);
    expect(list.code).toBe(0);
    const [header, rule, ...rows] = list.stdout.trim().split("\n");
    expect(header).toMatch(/^client_id\s+name\s+status\s+auto_login\s+items\s+redirect_uris$/);
    expect(rule).toMatch(/^-+( +-+)+$/);
    expect(rows.some((r) => r.startsWith(`${c.client_id}  Shop`))).toBe(true);
    expect(rows.some((r) => r.startsWith("demo-client"))).toBe(true);
    expect(list.stdout).not.toContain(c.client_secret as string);
  });

  it("the table form of create shows the secret once with a warning", async () => {
    const r = await cli([
      "clients",
      "create",
      "--name",
      "Table Shop",
      "--redirect-uri",
      "https://t.example/cb",
      "--redirect-uri",
      "tapp://cb",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/client_secret\s+[A-Za-z0-9]{64}/);
    expect(r.stdout).toContain("not shown again");
  });

  it("update, rotate-secret (grace 0 ends the old secret), disable, enable, delete", async () => {
    const c = await cliJson<{ client_id: string; client_secret: string }>([
      "clients",
      "create",
      "--name",
      "Ops",
      "--redirect-uri",
      "https://ops.example/cb",
    ]);
    const u = await cliJson<Record<string, unknown>>([
      "clients",
      "update",
      c.client_id,
      "--name",
      "Ops 2",
      "--items",
      "gender,agegroup",
      "--auto-login",
      "--redirect-uri",
      "https://ops.example/v2",
    ]);
    expect(u).toMatchObject({
      name: "Ops 2",
      items: ["gender", "agegroup"],
      auto_login: true,
      redirect_uris: ["https://ops.example/v2"],
    });
    // OpenID Connect: off unless asked (the issue's `--oidc`), on and off again by update
    expect(c).toMatchObject({ oidc: false });
    expect(await cliJson<Record<string, unknown>>(["clients", "update", c.client_id, "--oidc"])).toMatchObject({
      oidc: true,
    });
    expect(await cliJson<Record<string, unknown>>(["clients", "update", c.client_id, "--no-oidc"])).toMatchObject({
      oidc: false,
    });
    const both = await cli(["clients", "update", c.client_id, "--oidc", "--no-oidc"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--oidc and --no-oidc exclude each other");

    const graced = await cliJson<{ client_secret: string; previous_secret_valid_until: string }>([
      "clients",
      "rotate-secret",
      c.client_id,
      "--grace",
      "600",
    ]);
    expect(Date.parse(graced.previous_secret_valid_until)).toBeGreaterThan(Date.now() + 590_000);
    expect(await secretAccepted(server.base, c.client_id, c.client_secret)).toBe(true);
    expect(await secretAccepted(server.base, c.client_id, graced.client_secret)).toBe(true);
    const r = await cliJson<{ client_secret: string; previous_secret_valid_until: null }>([
      "clients",
      "rotate-secret",
      c.client_id,
      "--grace",
      "0",
    ]);
    expect(r.previous_secret_valid_until).toBeNull();
    expect(await secretAccepted(server.base, c.client_id, graced.client_secret)).toBe(false);
    expect(await secretAccepted(server.base, c.client_id, r.client_secret)).toBe(true);

    expect(await cliJson(["clients", "disable", c.client_id])).toMatchObject({ status: "disabled" });
    expect(await secretAccepted(server.base, c.client_id, r.client_secret)).toBe(false);
    expect(await cliJson(["clients", "enable", c.client_id])).toMatchObject({ status: "active" });

    const refused = await cli(["clients", "delete", c.client_id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--yes");
    expect((await cli(["clients", "delete", c.client_id, "--yes"])).code).toBe(0);
    const gone = await cli(["clients", "get", c.client_id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("No such client. (HTTP 404)");
  });

  it("a refused value is reported with the service's reason (exit 1)", async () => {
    const r = await cli(["clients", "create", "--name", "Bad", "--redirect-uri", "http://shop.example/cb"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("http is allowed only for loopback");
  });

  it("directory import (CSV and JSON, dry run) reports rejected rows by number; directory delete removes one", async () => {
    const csv = join(dir, "subs.csv");
    writeFileSync(
      csv,
      "telcoCd,phoneNo,name,gender,birth,foreign,ci\nS,01070700001,가나다,M,1980-01-01,L,CIcli0001AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\nQ,01070700002,라마바,F,1980-01-01,L,CIcli0002AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n",
    );
    const dry = await cli(["directory", "import", csv, "--dry-run"]);
    expect(dry.code).toBe(3); // finished, with a row rejected
    expect(dry.stderr).toContain("1 rows rejected: exit code 3 (the rest checked)");
    expect(dry.stdout).toContain("dry run (nothing written): 2 rows received, 1 new, 0 updated, 1 rejected");
    const table = await cli(["directory", "import", csv]);
    expect(table.code).toBe(3);
    expect(table.stdout).toContain("2 rows received, 1 new, 0 updated, 1 rejected");
    expect(table.stdout).toMatch(/row\s+reason\n-+\s+-+\n2\s+telcoCd must be S, K or L/);
    expect(table.stdout).not.toContain("라마바");

    const json = join(dir, "subs.json");
    writeFileSync(
      json,
      JSON.stringify([
        {
          telcoCd: "K",
          phoneNo: "01070700003",
          name: "J",
          gender: "F",
          birth: "1990-01-01",
          foreign: "L",
          ci: "CIcli0003AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
        },
      ]),
    );
    expect(await cliJson(["directory", "import", json])).toMatchObject({
      format: "json",
      inserted: 1,
      rejected_count: 0,
    });

    const before = await cliJson<{ subscribers: number }>(["directory", "stats"]);
    expect((await cli(["directory", "delete", "010-7070-0003", "--yes"])).code).toBe(0);
    expect((await cliJson<{ subscribers: number }>(["directory", "stats"])).subscribers).toBe(before.subscribers - 1);
    expect((await cli(["directory", "delete", "010-7070-0003", "--yes"])).stderr).toContain("No such subscriber.");
  });

  it("audit list shows the newest events as a table and pages with --before", async () => {
    const r = await cli(["audit", "list", "--limit", "2", "--type", "client."]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^id\s+at\s+type\s+client_id\s+outcome\s+detail/);
    const next = /next page: --before (\S+)/.exec(r.stdout);
    expect(next).not.toBeNull();
    const page1 = await cliJson<{ events: { id: string; at: string }[] }>([
      "audit",
      "list",
      "--limit",
      "2",
      "--type",
      "client.",
    ]);
    const page2 = await cliJson<{ events: { id: string; at: string; type: string }[] }>([
      "audit",
      "list",
      "--limit",
      "2",
      "--type",
      "client.",
      "--before",
      next![1]!,
    ]);
    expect(page2.events.length).toBeGreaterThan(0);
    const last = page1.events[1]!;
    expect(page2.events.every((e) => e.at <= last.at && e.id !== last.id && e.type.startsWith("client."))).toBe(true);
  });

  it("audit export streams NDJSON of a range to stdout or to --out FILE; a malformed time is a usage error", async () => {
    const from = new Date(Date.now() - 3600_000).toISOString();
    const r = await cli(["audit", "export", "--from", from]);
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; at: string; type: string });
    expect(events.some((e) => e.type === "client.created")).toBe(true);
    const times = events.map((e) => e.at);
    expect(times).toEqual([...times].sort());
    const file = join(dir, "audit.ndjson");
    // two days back: two requests, one day each
    const two = new Date(Date.now() - 2 * 86_400_000).toISOString();
    const w = await cli(["audit", "export", "--from", two, "--out", file]);
    expect(w.code, w.stderr).toBe(0);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(w.stdout).toBe(`${lines.length} events written to ${file}\n`);
    expect(lines.slice(0, events.length)).toEqual(r.stdout.trimEnd().split("\n"));
    const bad = await cli(["audit", "export", "--from", "yesterday"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--from must be an ISO 8601 date");
  });

  it("with no BASE_URL it asks npm start's default address, http://localhost:8787, with the dev admin token", async () => {
    const asked: { url: string; auth: string | null }[] = [];
    const quiet = { write: () => true } as unknown;
    const code = await main(["clients", "list", "--json"], {
      env: {},
      out: quiet as typeof process.stdout,
      err: quiet as typeof process.stderr,
      fetch: async (url, init) => {
        asked.push({ url: String(url), auth: new Headers(init?.headers).get("Authorization") });
        return Response.json({ clients: [] });
      },
    });
    expect(code).toBe(0);
    expect(asked).toEqual([{ url: "http://localhost:8787/admin/clients", auth: `Bearer ${devAdminToken()}` }]);
  });

  it("with PORT and no BASE_URL it asks http://localhost:$PORT, as npm start serves there; BASE_URL wins over PORT; the service is named on stderr", async () => {
    const asked: string[] = [];
    let err = "";
    const quiet = { write: () => true } as unknown as typeof process.stdout;
    const io = (env: Record<string, string>) => ({
      env,
      out: quiet,
      err: { write: (t: string) => ((err += t), true) } as unknown as typeof process.stderr,
      fetch: async (url: string | URL | Request) => {
        asked.push(String(url));
        return Response.json({ clients: [] });
      },
    });
    expect(await main(["clients", "list"], io({ PORT: "8799" }))).toBe(0);
    expect(asked).toEqual(["http://localhost:8799/admin/clients"]);
    expect(err).toBe("service: http://localhost:8799\n");
    expect(await main(["clients", "list"], io({ PORT: "8799", BASE_URL: "http://127.0.0.1:8800" }))).toBe(0);
    expect(asked[1]).toBe("http://127.0.0.1:8800/admin/clients");
  });

  it("prints the service's open notices (Admin-Notices) as warnings on stderr, once each", async () => {
    let err = "";
    const notices = [
      "test number 010-****-0001 is suspended after 100 wrong codes: register it again with a new code (test-numbers add)",
    ];
    const code = await main(["test-numbers", "list"], {
      env: { ADMIN_TOKEN: "x".repeat(40) },
      out: { write: () => true } as unknown as typeof process.stdout,
      err: { write: (t: string) => ((err += t), true) } as unknown as typeof process.stderr,
      fetch: async () =>
        Response.json(
          { test_numbers: [], next_after: null },
          { headers: { "Admin-Notices": JSON.stringify(notices) } },
        ),
    });
    expect(code).toBe(0);
    expect(err.split("\n").filter((l) => l.startsWith("warning: "))).toEqual([`warning: ${notices[0]}`]);
  });

  it("an import chunk refused while another import holds the lease: the CLI says it waits for that lease, for as long as Retry-After says, then goes on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-lease-"));
    const file = join(dir, "one.csv");
    writeFileSync(file, HEADER + "\n" + csvLine(person(9, 1)) + "\n");
    let err = "";
    const at: number[] = [];
    const code = await main(["directory", "import", file, "--json"], {
      env: { ADMIN_TOKEN: "x".repeat(40), ADMIN_CLI_RETRY_MS: "10" },
      out: { write: () => true } as unknown as typeof process.stdout,
      err: { write: (t: string) => ((err += t), true) } as unknown as typeof process.stderr,
      fetch: async (url: string | URL | Request) => {
        if (String(url).includes("/commit")) return Response.json({ run: "r", removed: 0, left: 0 });
        at.push(Date.now());
        if (at.length === 1)
          return Response.json(
            { error: "too_many_requests", message: "Too many requests. Retry later." },
            { status: 429, headers: { "Retry-After": "1", "Admin-Busy": "import-lease" } },
          );
        return Response.json({
          received: 1,
          inserted: 1,
          updated: 0,
          reassigned: 0,
          rejected_count: 0,
          rejected: [],
          ignored_columns: [],
        });
      },
    });
    rmSync(dir, { recursive: true, force: true });
    expect(code, err).toBe(0);
    expect(err).toContain("another import holds the directory's import lease");
    expect(err).toContain("it ends in about 1 s");
    expect(at).toHaveLength(2);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(950); // Retry-After, not the 10 ms backoff
  });

  it("a wrong ADMIN_TOKEN is refused (exit 1); BASE_URL and --base-url choose the service", async () => {
    const wrong = await cli(["clients", "list"], { ADMIN_TOKEN: "x".repeat(40) });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("Authentication failed. (HTTP 401)");
    const other = await cli(["clients", "list"], { BASE_URL: "http://127.0.0.1:9" });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("cannot reach http://127.0.0.1:9");
    const remote = await cli(["clients", "list", "--base-url", "https://login.example.com"]);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain("set ADMIN_TOKEN");
  });

  it("the right ADMIN_TOKEN is used as given, and --base-url wins over BASE_URL", async () => {
    const token = devAdminToken();
    const viaToken = await cli(["clients", "list", "--json", "--base-url", server.base], {
      ADMIN_TOKEN: token,
      BASE_URL: "http://127.0.0.1:9",
    });
    expect(viaToken.code, viaToken.stderr).toBe(0);
    expect(
      (JSON.parse(viaToken.stdout) as { clients: { client_id: string }[] }).clients.map((c) => c.client_id),
    ).toContain("demo-client");
    const viaEnv = await cli(["directory", "stats", "--json"], {
      ADMIN_TOKEN: token,
      BASE_URL: server.base.replace("localhost", "127.0.0.1"),
    });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    expect(JSON.parse(viaEnv.stdout)).toMatchObject({ test_numbers: 0, fixed_code_numbers: 4 });
  });
});

describe("operators and API tokens", () => {
  it("operators grant invites a number (masked), refuses a fixed-code test number; list shows it; revoke --phone withdraws it", async () => {
    const r = await cli(["operators", "grant", "--phone", "01056789012", "--role", "admin"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^invited 010-\*\*\*\*-9012 as admin until \d{4}-\d{2}-\d{2}T/);
    expect(r.stdout).not.toContain("01056789012");
    const fixed = await cli(["operators", "grant", "--phone", "01012345678", "--role", "viewer"]);
    expect(fixed.code).toBe(1);
    expect(fixed.stderr).toContain("fixed-code test number can never hold a role");
    const list = await cli(["operators", "list"]);
    expect(list.stdout).toContain("010-****-9012");
    expect(list.stdout).toContain("token:ADMIN_TOKEN");
    expect((await cli(["operators", "grant", "--phone", "01056789012"])).code).toBe(2);
    const revoked = await cli(["operators", "revoke", "--phone", "01056789012"]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain("invitation withdrawn");
  });

  it("tokens create shows the token once; it works as ADMIN_TOKEN with its role and names its changes; revoked, it is refused", async () => {
    const made = await cliJson<{ name: string; role: string; token: string }>([
      "tokens",
      "create",
      "--name",
      "ci",
      "--role",
      "editor",
    ]);
    expect(made).toMatchObject({ name: "ci", role: "editor" });
    expect(made.token).toMatch(/^plt_/);
    const list = await cli(["tokens", "list"]);
    expect(list.stdout).toContain("ci");
    expect(list.stdout).not.toContain(made.token);
    const asCi = { ADMIN_TOKEN: made.token };
    const created = await cli(
      ["clients", "create", "--name", "CI app", "--redirect-uri", "https://ci.example/cb", "--json"],
      asCi,
    );
    expect(created.code, created.stderr).toBe(0);
    // an editor may not rotate a secret (admin)
    const id = (JSON.parse(created.stdout) as { client_id: string }).client_id;
    const rotate = await cli(["clients", "rotate-secret", id], asCi);
    expect(rotate.code).toBe(1);
    expect(rotate.stderr).toContain("needs the admin role");
    // the change names the token (the audit reaches R2 a second later here)
    let events: { type: string; detail: Record<string, unknown> }[] = [];
    for (let i = 0; i < 20 && events.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 500));
      events = (await cliJson<{ events: typeof events }>(["audit", "list", "--actor", "token:ci"])).events;
    }
    expect(events.map((e) => e.type)).toContain("client.created");
    expect(events.every((e) => e.detail.actor === "token:ci")).toBe(true);
    expect((await cli(["tokens", "revoke", "ci"])).code).toBe(0);
    const after = await cli(["clients", "list"], asCi);
    expect(after.code).toBe(1);
  });
});

describe("events", () => {
  it("clients create --events-uri; an undelivered event is listed by events list (client, reason, attempts, next try; no plid)", async () => {
    const empty = await cli(["events", "list"]);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout.trim()).toBe("no undelivered events");
    // a receiver that is down: nothing listens on the discard port
    const created = await cliJson<{ client_id: string; events_uri: string }>([
      "clients",
      "create",
      "--name",
      "Events App",
      "--redirect-uri",
      "https://events.example/cb",
      "--events-uri",
      "http://127.0.0.1:9/events",
    ]);
    expect(created.events_uri).toBe("http://127.0.0.1:9/events");
    const q = new URLSearchParams({
      response_type: "code",
      client_id: created.client_id,
      redirect_uri: "https://events.example/cb",
      state: "s",
    });
    const done = await signIn(`${server.base}/oauth2/authorize?${q}`, {
      telco: "S",
      name: "이민수",
      phone: "01045678901",
      code: "456789",
    });
    expect(done.code).toBeTruthy();
    expect((await cli(["directory", "delete", "010-4567-8901", "--yes"])).code).toBe(0);
    let listed: { events: Record<string, unknown>[] } = { events: [] };
    for (let i = 0; i < 50 && !listed.events.some((e) => e.client_id === created.client_id); i++) {
      await new Promise((r) => setTimeout(r, 100));
      listed = await cliJson(["events", "list"]);
    }
    const mine = listed.events.find((e) => e.client_id === created.client_id)!;
    // tried at once and failed; on a loaded machine the CLI's listing can come after the retry 5 s on
    expect(mine).toMatchObject({ reason: "subscriber_removed", last_outcome: "unreachable" });
    expect(mine.attempts).toBeGreaterThanOrEqual(1);
    expect(Object.keys(mine).sort()).toEqual([
      "attempts",
      "client_id",
      "created_at",
      "id",
      "last_outcome",
      "next_try",
      "reason",
    ]);
    const table = await cli(["events", "list"]);
    expect(table.stdout).toMatch(/client_id\s+reason\s+attempts\s+next_try\s+created_at\s+last_outcome/);
    expect(table.stdout).toContain("subscriber_removed");
  });
});

describe("test numbers", () => {
  it("test-numbers add, list (never the code), remove; the number signs in to its listed client with its code", async () => {
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const added = await cliJson<{ phoneNo: string; clients: string[] }>([
      "test-numbers",
      "add",
      "--telco",
      "S",
      "--phone",
      "010-9876-0001",
      "--name",
      "Reviewer",
      "--code",
      "135790",
      "--client",
      "demo-client",
      "--expires",
      expires,
    ]);
    expect(added).toMatchObject({ phoneNo: "01098760001", clients: ["demo-client"] });
    const listed = await cli(["test-numbers", "list"]);
    expect(listed.stdout).toMatch(/telcoCd\s+phoneNo\s+name\s+clients\s+expires_at/);
    expect(listed.stdout).toContain("01098760001");
    expect(listed.stdout).not.toContain("135790");
    const q = new URLSearchParams({
      response_type: "code",
      client_id: "demo-client",
      redirect_uri: "https://demo.example/callback",
      state: "s",
    });
    const done = await signIn(`${server.base}/oauth2/authorize?${q}`, {
      telco: "S",
      name: "Reviewer",
      phone: "01098760001",
      code: "135790",
    });
    expect(done.code).toBeTruthy();
    expect((await cli(["test-numbers", "remove", "01098760001"])).code).toBe(0);
    expect((await cli(["test-numbers", "list"])).stdout.trim()).toBe("no test numbers");
  });
});

// ---------------------------------------------------------------- large files: streamed in chunks

const HEADER = "telcoCd,phoneNo,name,gender,birth,foreign,ci";

/** Row i of a generated directory: a distinct number 010XXXXXXXX and a distinct canonical ci per `series`. */
function person(series: number, i: number) {
  const ci = Buffer.alloc(64); // the last byte 0: the 88th-but-two character is A, as canonical Base64 needs
  ci.writeUInt32BE(i, 0);
  ci.writeUInt8(series, 4);
  ci.write("admin-cli-import", 8);
  return {
    telcoCd: "SKL"[i % 3]!,
    phoneNo: `010${series}${String(i).padStart(7, "0")}`,
    name: i % 1000 === 0 ? `김, "영희" ${i}` : `홍길동${i}`,
    gender: i % 2 ? "M" : "F",
    birth: "1990-01-01",
    foreign: "L",
    ci: ci.toString("base64"),
  };
}

const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
const csvLine = (p: Record<string, string>) => Object.values(p).map(csvField).join(",");

interface Report {
  format: string;
  received: number;
  inserted: number;
  updated: number;
  reassigned: number;
  rejected_count: number;
  rejected: { row: number; reason: string }[];
  ignored_columns: string[];
  chunks: number;
  resumed_at_row: number | null;
}

const subscribers = async () => (await cliJson<{ subscribers: number }>(["directory", "stats"])).subscribers;

/** Nothing of the generated rows' content: no name, number or ci. */
function expectNoPersonalData(text: string) {
  expect(text).not.toMatch(/홍길동|영희|010\d{8}|admin-cli-import|YWRtaW4tY2xp/);
}

/** A proxy to the dev server that answers the import requests it is told to (by their count) itself. */
async function proxy(answer: (n: number) => number | "pass"): Promise<{ base: string; close(): void }> {
  let n = 0;
  const srv = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", async () => {
      const a = req.url!.startsWith("/admin/directory/import") ? answer(++n) : "pass";
      if (a !== "pass") {
        res.writeHead(a, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ error: "server_error", message: "Something went wrong." }));
        return;
      }
      const upstream = await fetch(server.base + req.url, {
        method: req.method,
        headers: req.headers as Record<string, string>,
        body: req.method === "GET" ? undefined : Buffer.concat(parts),
      });
      res.writeHead(upstream.status, { "Content-Type": upstream.headers.get("content-type") ?? "text/plain" });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  return { base: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: () => srv.close() };
}

describe("migrate", () => {
  it("moves what the single database holds (nothing, on a fresh dev server) and leaves no state behind; a bad --batch is a usage error", async () => {
    const state = join(dir, "migrate-state.json");
    const r = await cli(["migrate", "--state", state, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ people: 0, links: 0, grants_not_moved: 0, audit_events: 0 });
    expect(existsSync(state)).toBe(false);
    expect((await cli(["migrate", "--batch", "0"])).code).toBe(2);
  });
});

describe("directory import of large files", () => {
  it("a 25,000-row CSV (BOM, CRLF, quoted commas, quotes and line breaks, no final newline) goes in chunks; counts add up and rejected rows carry their file row numbers", async () => {
    const file = join(dir, "national.csv");
    const lines = [HEADER + ",note"];
    for (let i = 1; i <= 25_000; i++) {
      const p = person(5, i);
      if (i === 12_002) p.phoneNo = person(5, 12_001).phoneNo; // within one chunk: repeats row 12,001
      if (i === 17_321) p.gender = "X";
      lines.push(csvLine({ ...p, note: i % 5000 === 7 ? "two\r\nlines, quoted" : "" }));
    }
    writeFileSync(file, "\ufeff" + lines.join("\r\n"));
    const before = await subscribers();
    const r = await cli(["directory", "import", file, "--json"]);
    expect(r.code, r.stderr).toBe(3); // finished, with rows rejected
    expect(r.stderr).toContain("2 rows rejected: exit code 3");
    const report = JSON.parse(r.stdout) as Report;
    expect(report).toMatchObject({
      format: "csv",
      received: 25_000,
      inserted: 24_998,
      updated: 0,
      reassigned: 0,
      rejected_count: 2,
      ignored_columns: ["note"],
      chunks: 5,
      resumed_at_row: null,
    });
    expect(report.rejected).toEqual([
      { row: 12_002, reason: "phoneNo repeats row 12001" },
      { row: 17_321, reason: "gender must be M or F" },
    ]);
    expect(await subscribers()).toBe(before + 24_998);
    expect(existsSync(file + ".import-state.json")).toBe(false);
    // progress on a pipe: plain lines, counts only
    expect(r.stderr).toMatch(/^import: .*national\.csv, \d+ bytes, chunks of at most 5000 rows, 4 in parallel$/m);
    expect(r.stderr).toMatch(/^import: 25,000 rows in \d+\.\d s \([\d,]+ rows\/s\)$/m);
    expect(r.stderr).not.toContain("\r");
    expectNoPersonalData(r.stdout + r.stderr);

    // again as a table, as a dry run: the same rows are now updates
    const dry = await cli(["directory", "import", file, "--dry-run", "--chunk-size", "10000", "--quiet"]);
    expect(dry.code, dry.stderr).toBe(3);
    // --quiet leaves nothing on stderr but a chunk sent again: wrangler dev's proxy now and then
    // answers a POST 503 "Your worker restarted mid-request" with no restart (vitest.config.ts), and
    // the CLI says it sends those rows again; the counts below are then still exact.
    const notes = dry.stderr.split("\n").filter((l) => l !== "");
    for (const l of notes)
      expect(l).toMatch(/^rows \d+-\d+: .*\(HTTP 503\); sending them again in \d+ s \(retry \d of 4\)$/);
    expect(dry.stdout).toContain("dry run (nothing written): 25000 rows received, 0 new, 24998 updated, 2 rejected");
    expect(dry.stdout).toContain("in 3 chunks");
    expect(dry.stdout).toMatch(
      /row\s+reason\n-+\s+-+\n12002\s+phoneNo repeats row 12001\n17321\s+gender must be M or F/,
    );
  });

  it("an NDJSON file goes in chunks as JSON arrays; a line that is not JSON is rejected by its row number, blank lines are not rows", async () => {
    const file = join(dir, "people.ndjson");
    const lines: string[] = [];
    for (let i = 1; i <= 3000; i++) {
      if (i === 1500)
        lines.push('{"telcoCd": "S", "phoneNo": '); // cut short: not JSON
      else if (i === 2999) lines.push(JSON.stringify({ ...person(6, i), birth: "2999-01-01" }));
      else lines.push(JSON.stringify(person(6, i)));
      if (i % 1000 === 0) lines.push("");
    }
    writeFileSync(file, lines.join("\n") + "\n");
    const before = await subscribers();
    const report = await cliJson<Report>(["directory", "import", file, "--chunk-size", "1000", "--parallel", "2"], 3);
    expect(report).toMatchObject({
      format: "ndjson",
      received: 3000,
      inserted: 2998,
      rejected_count: 2,
      chunks: 3,
    });
    expect(report.rejected).toEqual([
      { row: 1500, reason: "row is not JSON" },
      { row: 2999, reason: "birth must not be in the future" },
    ]);
    expect(await subscribers()).toBe(before + 2998);
  });

  it("a file's chunks are one import run: a person whose old number an earlier chunk gives away and whom a later chunk names at a new number keeps their plid; the commit removes no one", async () => {
    // the person, at their old number, signed in to the demo app
    const mover = { ...person(3, 1), telcoCd: "S", name: "이사간사람" };
    const other = { ...person(3, 2), phoneNo: mover.phoneNo, name: "새주인" }; // the old number's new owner
    const moved = { ...mover, phoneNo: person(3, 3).phoneNo }; // the person at their new number
    const seed = join(dir, "run-seed.csv");
    writeFileSync(seed, [HEADER, csvLine(mover)].join("\n") + "\n");
    expect((await cli(["directory", "import", seed, "--quiet"])).code).toBe(0);
    const plidOf = async (phone: string, name: string) => {
      const q = new URLSearchParams({
        response_type: "code",
        client_id: "demo-client",
        redirect_uri: "https://demo.example/callback",
        state: "s",
      });
      const done = await signIn(`${server.base}/oauth2/authorize?${q}`, { telco: "S", name, phone, code: "" });
      const token = (await (
        await fetch(`${server.base}/oauth2/token`, {
          method: "POST",
          headers: {
            Authorization: "Basic " + Buffer.from("demo-client:demoSecret0123456789abcdefABCDEF").toString("base64"),
            "Content-Type": "application/x-www-form-urlencoded",
          },
          body: `grant_type=authorization_code&code=${done.code}`,
        })
      ).json()) as { access_token: string };
      const me = (await (
        await fetch(`${server.base}/v1/user/me`, { headers: { Authorization: `Bearer ${token.access_token}` } })
      ).json()) as { user: { plid: string } };
      return me.user.plid;
    };
    const before = await plidOf(mover.phoneNo, mover.name);
    // one file, one row a chunk: the old number to its new owner first, the person's new number after
    const file = join(dir, "run.csv");
    writeFileSync(file, [HEADER, csvLine(other), csvLine(moved)].join("\n") + "\n");
    const report = await cliJson<Report & { removed: number }>([
      "directory",
      "import",
      file,
      "--chunk-size",
      "1",
      "--parallel",
      "1",
    ]);
    expect(report).toMatchObject({ received: 2, inserted: 1, updated: 1, reassigned: 1, removed: 0, chunks: 2 });
    expect(await plidOf(moved.phoneNo, mover.name)).toBe(before);
  });

  it("an interrupted import resumes at the recorded row; the result equals one uninterrupted run (no row sent twice)", async () => {
    const file = join(dir, "resume.csv");
    const rows = Array.from({ length: 6000 }, (_, i) => csvLine(person(7, i + 1)));
    writeFileSync(file, [HEADER, ...rows].join("\n") + "\n");
    const state = file + ".import-state.json";
    const before = await subscribers();
    const args = ["directory", "import", file, "--chunk-size", "500", "--parallel", "1"];
    // dies as if killed right after the 4th chunk is acknowledged
    const killed = await cli(args, { ADMIN_CLI_STOP_AFTER_CHUNKS: "4" });
    expect(killed.code).not.toBe(0);
    const saved = JSON.parse(readFileSync(state, "utf8")) as Record<string, unknown>;
    expect(saved).toMatchObject({ rows_done: 2000, totals: { received: 2000, inserted: 2000 }, format: "csv" });
    expect(saved.offset).toBe(Buffer.byteLength([HEADER, ...rows.slice(0, 2000)].join("\n") + "\n"));
    expect(JSON.stringify(saved)).not.toMatch(/010\d{8}|홍길동/);
    expect(await subscribers()).toBe(before + 2000);

    const resumed = await cli([...args, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("resuming at row 2001: rows 1-2000 were acknowledged by an earlier run");
    // the earlier run's counts are carried: together exactly one run's, every row inserted once
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      received: 6000,
      inserted: 6000,
      updated: 0,
      rejected_count: 0,
      chunks: 8,
      resumed_at_row: 2001,
    });
    expect(await subscribers()).toBe(before + 6000);
    expect(existsSync(state)).toBe(false);
  });

  it("with chunks in parallel the state holds the acknowledged prefix; a resumed run ends with every row in", async () => {
    const file = join(dir, "parallel.csv");
    writeFileSync(file, [HEADER, ...Array.from({ length: 4000 }, (_, i) => csvLine(person(8, i + 1)))].join("\n"));
    const before = await subscribers();
    const args = ["directory", "import", file, "--chunk-size", "250", "--parallel", "4"];
    expect((await cli(args, { ADMIN_CLI_STOP_AFTER_CHUNKS: "6" })).code).not.toBe(0);
    const saved = JSON.parse(readFileSync(file + ".import-state.json", "utf8")) as { rows_done: number };
    expect(saved.rows_done % 250).toBe(0);
    expect(saved.rows_done).toBeLessThanOrEqual(1500);
    const report = await cliJson<Report>(args);
    expect(report.resumed_at_row).toBe(saved.rows_done + 1);
    expect(report.received).toBe(4000);
    // rows of chunks in flight when it died may have been applied: sent again, they count as updated
    expect(report.inserted + report.updated).toBe(4000);
    expect(report.updated).toBeLessThanOrEqual(3 * 250 + (1500 - saved.rows_done));
    expect(await subscribers()).toBe(before + 4000);
  });

  it("--state names the state file; a state file of another file is refused; --restart starts over", async () => {
    const a = join(dir, "a.csv");
    const b = join(dir, "b.csv");
    const aState = join(dir, "a-state.json");
    writeFileSync(a, [HEADER, ...Array.from({ length: 40 }, (_, i) => csvLine(person(9, i + 1)))].join("\n"));
    writeFileSync(b, [HEADER, ...Array.from({ length: 40 }, (_, i) => csvLine(person(9, i + 41)))].join("\n"));
    const aArgs = ["directory", "import", a, "--chunk-size", "10", "--parallel", "1", "--state", aState];
    const killed = await cli(aArgs, { ADMIN_CLI_STOP_AFTER_CHUNKS: "1" });
    expect(killed.code).not.toBe(0);
    expect(existsSync(a + ".import-state.json")).toBe(false);

    copyFileSync(aState, b + ".import-state.json");
    const refused = await cli(["directory", "import", b]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("b.csv.import-state.json is the state of another file");
    expect(refused.stderr).toContain("--restart");
    expect(await cliJson<Report>(["directory", "import", b, "--restart"])).toMatchObject({
      inserted: 40,
      resumed_at_row: null,
    });
    expect(await cliJson<Report>(aArgs)).toMatchObject({ received: 40, inserted: 40, resumed_at_row: 11 });
    expect(existsSync(aState)).toBe(false);
  });

  it("a chunk answered 5xx is sent again after a pause; when the service keeps failing the import stops, keeping its state", async () => {
    const file = join(dir, "flaky.csv");
    writeFileSync(file, [HEADER, ...Array.from({ length: 300 }, (_, i) => csvLine(person(4, i + 1)))].join("\n"));
    const flaky = await proxy((n) => (n === 2 || n === 3 ? 503 : "pass"));
    try {
      const args = ["directory", "import", file, "--chunk-size", "100", "--parallel", "1", "--base-url", flaky.base];
      const r = await cli([...args, "--json"], { ADMIN_CLI_RETRY_MS: "10" });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        "rows 101-200: Something went wrong. (HTTP 503); sending them again in 0.01 s (retry 1 of 4)",
      );
      expect(r.stderr).toContain("(retry 2 of 4)");
      expect(JSON.parse(r.stdout)).toMatchObject({ received: 300, inserted: 300, chunks: 3 });
    } finally {
      flaky.close();
    }

    const down = await proxy((n) => (n === 1 ? "pass" : 502));
    try {
      const args = ["directory", "import", file, "--chunk-size", "100", "--parallel", "1", "--base-url", down.base];
      const r = await cli([...args, "--restart"], { ADMIN_CLI_RETRY_MS: "10" });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("(retry 4 of 4)");
      expect(r.stderr).toContain(
        "import stopped: rows 1-100 are in (state: " +
          file +
          ".import-state.json); run the same command again to resume at row 101",
      );
      expect(JSON.parse(readFileSync(file + ".import-state.json", "utf8"))).toMatchObject({ rows_done: 100 });
    } finally {
      down.close();
    }
  });

  it("a 4xx stops the import at once (no retry); a JSON array over one request's rows is refused with a pointer to NDJSON", async () => {
    const file = join(dir, "no-ci.csv");
    writeFileSync(file, "telcoCd,phoneNo,name,gender,birth,foreign\nS,01012345678,x,M,1990-01-01,L\n");
    const r = await cli(["directory", "import", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the header has no ci column");
    expect(r.stderr).toContain("(HTTP 400)");
    expect(r.stderr).not.toContain("again in");
    expect(existsSync(file + ".import-state.json")).toBe(false);

    const json = join(dir, "big.json");
    writeFileSync(json, JSON.stringify(Array.from({ length: 10_001 }, () => ({}))));
    const big = await cli(["directory", "import", json]);
    expect(big.code).toBe(1);
    expect(big.stderr).toContain("has 10001 rows, more than one request takes (10000)");
    expect(big.stderr).toContain("convert it to NDJSON");
  });
});
