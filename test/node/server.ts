// Starts the real newcomer path, `node scripts/start.mjs` (wrangler dev with migrations and the
// dev seed), on a fresh state directory, for tests that need a live HTTP server (openssl CLI,
// third-party clients, Chromium).

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Server {
  base: string;
  /** Everything the server printed (for log scans). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the dev server on `port` (default 8787: the seed's redirect URIs name it) and waits for
 * /healthz. Extra wrangler dev arguments (for example `--var NAME:value`) go in `args`.
 */
export async function startServer(
  opts: { port?: number; args?: string[]; env?: Record<string, string> } = {},
): Promise<Server> {
  const port = opts.port ?? 8787;
  const persist = mkdtempSync(join(tmpdir(), "phone-login-e2e-"));
  let out = "";
  const child: ChildProcess = spawn(process.execPath, ["scripts/start.mjs", ...(opts.args ?? [])], {
    cwd: join(import.meta.dirname, "..", ".."),
    // As a person running `npm start` sees it: the test runner quiets wrangler (WRANGLER_LOG=error).
    env: { ...process.env, WRANGLER_LOG: "info", ...opts.env, PORT: String(port), PERSIST_DIR: persist },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const base = `http://localhost:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        /* already gone */
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    rmSync(persist, { recursive: true, force: true });
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${out}`);
    try {
      const res = await fetch(`${base}/healthz`);
      if (res.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`server did not answer /healthz within 120 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { base, output: () => out, stop };
}
