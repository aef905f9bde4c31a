// Starts the real newcomer path, `node scripts/start.mjs` (wrangler dev with migrations and the
// dev seed), on a fresh state directory, for tests that need a live HTTP server (openssl CLI,
// third-party clients, Chromium). Each server gets a free port of its own unless a test names one:
// a person's `npm start` left on 8787 (or another checkout's test run) is not the server under test.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { nextFreePort, portInUse, portInUseMessage } from "../../scripts/lib/port.mjs";

export interface Server {
  /** `http://localhost:<port>`. */
  base: string;
  /** Everything the server printed (for log scans). */
  output(): string;
  stop(): Promise<void>;
}

/** The service's admin token, which npm start takes from .dev.vars (or .dev.vars.example). */
export function devAdminToken(): string {
  const root = join(import.meta.dirname, "..", "..");
  const file = [".dev.vars", ".dev.vars.example"].map((f) => join(root, f)).find((p) => existsSync(p))!;
  return /^ADMIN_TOKEN\s*=\s*"?([^"\r\n]*)"?\s*$/m.exec(readFileSync(file, "utf8"))![1]!;
}

/** A port the system has just handed out, and that is free on every address `npm start` binds. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 10; tries++) {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const { port } = s.address() as AddressInfo;
    await new Promise((r) => s.close(r));
    if (!(await portInUse(port))) return port;
  }
  throw new Error("no free port found in 10 tries");
}

/**
 * Starts the dev server on `port` (default: a free one; the seed's loopback redirect URIs match on
 * any port, RFC 8252 §7.3) and waits for /healthz. A taken port is refused before anything is
 * spawned, with `npm start`'s own message; a server that exits before answering is reported with
 * its stderr. Extra wrangler dev arguments (for example `--var NAME:value`) go in `args`.
 */
export async function startServer(
  opts: { port?: number; args?: string[]; env?: Record<string, string> } = {},
): Promise<Server> {
  // A free port (or the inspector's) is free when asked for, not when wrangler binds it: a process
  // of another test file may take it in between. A server of a port it chose that exits on a taken
  // address is started again on new ones (a named port's refusal is what its test is about).
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (e) {
      const taken = e instanceof Error && /already in use|EADDRINUSE/i.test(e.message);
      if (opts.port !== undefined || !taken || attempt === 3) throw e;
    }
  }
}

async function startOnce(opts: { port?: number; args?: string[]; env?: Record<string, string> }): Promise<Server> {
  const port = opts.port ?? (await freePort());
  // Whatever answers /healthz on a taken port is someone else's server: never poll it.
  if (await portInUse(port)) throw new Error(portInUseMessage(port, await nextFreePort(port)));
  const persist = mkdtempSync(join(tmpdir(), "phone-login-e2e-"));
  let out = "";
  let err = "";
  // The SMS-abuse guard is on as in `npm start`, but these tests' sign-ins come from loopback, where
  // many send codes they never type: loopback is a safe block here, and a test of the guard comes
  // from another address (X-Dev-Address) or sets GUARD_SAFE_BLOCKS itself.
  const args = opts.args ?? [];
  const safe = args.some((a) => a.startsWith("GUARD_SAFE_BLOCKS:"))
    ? []
    : ["--var", "GUARD_SAFE_BLOCKS:127.0.0.0/8,::1/128"];
  // wrangler dev's inspector takes 9229 unless told otherwise: two servers starting at once (test
  // files run in parallel) would both take it, and the second fails "Address already in use"
  const inspector = ["--inspector-port", String(await freePort())];
  const child: ChildProcess = spawn(process.execPath, ["scripts/start.mjs", ...safe, ...inspector, ...args], {
    cwd: join(import.meta.dirname, "..", ".."),
    // As a person running `npm start` sees it (the test runner quiets wrangler, WRANGLER_LOG=error),
    // with its requests and its reloads ("Reloading local server", at wrangler's "log" level) in
    // what ./setup.ts prints when a test fails.
    env: { ...process.env, WRANGLER_LOG: "log", ...opts.env, PORT: String(port), PERSIST_DIR: persist },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => {
    out += d.toString();
    err += d.toString();
  });
  // An exit ends the wait at once, a /healthz request in flight included.
  const exited = new AbortController();
  let exit: string | undefined;
  child.once("exit", (code, signal) => {
    exit = signal ?? `code ${code}`;
    exited.abort();
  });
  child.once("error", (e) => {
    exit = e.message;
    exited.abort();
  });
  const base = `http://localhost:${port}`;
  const stop = async () => {
    if (exit === undefined) {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        /* already gone */
      }
      await sleep(300);
    }
    rmSync(persist, { recursive: true, force: true });
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const res = await fetch(`${base}/healthz`, {
        signal: AbortSignal.any([exited.signal, AbortSignal.timeout(5_000)]),
      });
      if (res.ok) break;
    } catch {
      /* not up yet */
    }
    if (exit !== undefined) {
      // its last words may still be in the pipe
      if (!child.stderr!.closed) await Promise.race([once(child.stderr!, "close"), sleep(1_000)]);
      await stop();
      throw new Error(`npm start (PORT=${port}) exited (${exit}) before /healthz answered:\n${err.trim() || out}`);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`server did not answer /healthz within 120 s:\n${out}`);
    }
    await sleep(250);
  }
  const server = { base, output: () => out, stop: () => (live.delete(server), stop()) };
  live.add(server);
  return server;
}

/** The servers started and not yet stopped in this test file (./setup.ts prints their output when a test fails). */
export const live = new Set<Server>();
