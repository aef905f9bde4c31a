// A port someone else is serving on (another checkout's `npm start`, still running) is refused
// before anything starts, in one line that names the port and `PORT=`: by `npm start` itself, and
// by the node tests' server helper, which must never take that other server's /healthz for its own.
// A server that dies later is reported by the helper at once, with its stderr.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { portInUse } from "../../scripts/lib/port.mjs";
import { startNpmStart, startServer } from "./server";

const ROOT = join(import.meta.dirname, "..", "..");

let other: HttpServer;
let port: number;
let asked = 0;
let persist: string;

beforeAll(async () => {
  // a plain HTTP server on every address, answering 200 to anything (/healthz too) as a running
  // `npm start` would
  other = createServer((_req, res) => {
    asked++;
    res.end("someone else's server");
  });
  await new Promise<void>((r) => other.listen(0, r));
  port = (other.address() as AddressInfo).port;
  persist = mkdtempSync(join(tmpdir(), "phone-login-taken-"));
});
afterAll(() => {
  other?.close();
  if (persist) rmSync(persist, { recursive: true, force: true });
});

/** `node scripts/start.mjs` with `env`; its exit code, output and how long it took. */
function start(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["scripts/start.mjs"],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: Date.now() - t0 }),
    );
  });
}

/** The refusal's one line; the port it suggests is free. */
async function expectRefusal(text: string): Promise<void> {
  const lines = text.trim().split("\n");
  expect(lines).toHaveLength(1);
  const m =
    /^Port (\d+) is already in use \(another npm start\?\)\. Stop that server or choose another port: PORT=(\d+) npm start$/.exec(
      lines[0]!,
    );
  expect(m, lines[0]).not.toBeNull();
  expect(Number(m![1])).toBe(port);
  expect(Number(m![2])).not.toBe(port);
  expect(await portInUse(Number(m![2]))).toBe(false);
}

describe("a port already in use", () => {
  it("npm start exits 1 at once with one line naming the port and PORT=, before migrating anything", async () => {
    const r = await start({ PORT: String(port), PERSIST_DIR: persist });
    expect(r.code, r.stderr).toBe(1);
    await expectRefusal(r.stderr);
    expect(r.stdout).toBe("");
    expect(readdirSync(persist)).toEqual([]); // no migration ran: the state directory is untouched
    expect(r.ms).toBeLessThan(10_000); // wrangler's own failure comes only after the migrations
  });

  it("the node tests' server helper refuses at once with the same line, and never asks the other server", async () => {
    const t0 = Date.now();
    const err = await startServer({ port }).then(
      async (s) => void (await s.stop()),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    await expectRefusal(err!.message);
    expect(asked).toBe(0); // its /healthz was not taken for ours
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});

describe("other early ends", () => {
  it("a server that exits before /healthz answers is reported at once with its stderr, not after the healthz timeout", async () => {
    const t0 = Date.now();
    // wrangler dev refuses an unknown option, after the migrations
    const err = await startNpmStart({ args: ["--frobnicate"] }).then(
      async (s) => void (await s.stop()),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toMatch(/^npm start \(PORT=\d+\) exited \(code 1\) before \/healthz answered:\n/);
    expect(err!.message).toContain("Unknown argument: frobnicate");
    expect(Date.now() - t0).toBeLessThan(60_000);
  });

  it("a PORT that is not a port number is refused by npm start in one line", async () => {
    const r = await start({ PORT: "eighty", PERSIST_DIR: persist });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('PORT must be a port number from 1 to 65535, not "eighty"');
  });
});
