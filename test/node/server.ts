// The node tests' servers. `startServer` runs the all-in-one worker of wrangler.toml (what `npm
// start` serves) in Miniflare, from the test's own process on a workerd of its own, without
// `wrangler dev` and its proxy; the run's shared one (`sharedServer`, started once by
// ./global-setup.ts) serves the files that need nothing else. `startNpmStart` runs the real
// newcomer path, `node scripts/start.mjs` (wrangler dev with migrations and the dev seed), for the
// tests of `npm start` itself (./start.test.ts, ./port-taken.test.ts). Every server gets a free
// port of its own unless a test names one (a person's `npm start` left on 8787, or another
// checkout's test run, is not the server under test) and fresh state.

import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Log, LogLevel, Miniflare } from "miniflare";
import { inject } from "vitest";
import { nextFreePort, portInUse, portInUseMessage } from "../../scripts/lib/port.mjs";

const root = join(import.meta.dirname, "..", "..");

declare module "vitest" {
  export interface ProvidedContext {
    /** What ./global-setup.ts made once for every server of the run (`ServerKit`). */
    serverKit: ServerKit;
    /** The run's shared server (./global-setup.ts), of `npm start`'s configuration. */
    sharedBase: string;
  }
}

export interface Server {
  /** `http://localhost:<port>`. */
  base: string;
  /** Everything the server printed (for log scans). */
  output(): string;
  stop(): Promise<void>;
  /** Served through wrangler dev's proxy (`startNpmStart`), whose losses ./fetch-retry.ts works around. */
  proxied?: true;
}

/** The secrets npm start gives the worker: .dev.vars, or .dev.vars.example, which it copies there. */
function devVars(): Record<string, string> {
  const file = [".dev.vars", ".dev.vars.example"].map((f) => join(root, f)).find((p) => existsSync(p))!;
  const vars: Record<string, string> = {};
  for (const line of readFileSync(file, "utf8").split(/\r?\n/)) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*"?([^"\r\n]*)"?\s*$/.exec(line);
    if (m) vars[m[1]!] = m[2]!;
  }
  return vars;
}

/** The service's admin token, which npm start takes from .dev.vars (or .dev.vars.example). */
export function devAdminToken(): string {
  return devVars().ADMIN_TOKEN!;
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
 * `npm start` itself: starts the dev server on `port` (default: a free one; the seed's loopback redirect URIs match on
 * any port, RFC 8252 §7.3) and waits for /healthz. A taken port is refused before anything is
 * spawned, with `npm start`'s own message; a server that exits before answering is reported with
 * its stderr. Extra wrangler dev arguments (for example `--var NAME:value`) go in `args`.
 */
export async function startNpmStart(
  opts: { port?: number; args?: string[]; env?: Record<string, string> } = {},
): Promise<Server> {
  // A free port (or the inspector's) is free when asked for, not when wrangler binds it: a process
  // of another test file may take it in between. A server of a port it chose that exits on a taken
  // address is started again on new ones (a named port's refusal is what its test is about).
  for (let attempt = 1; ; attempt++) {
    try {
      return await npmStartOnce(opts);
    } catch (e) {
      const taken = e instanceof Error && /already in use|EADDRINUSE/i.test(e.message);
      if (opts.port !== undefined || !taken || attempt === 3) throw e;
    }
  }
}

async function npmStartOnce(opts: { port?: number; args?: string[]; env?: Record<string, string> }): Promise<Server> {
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
  const server: Server = { base, output: () => out, stop: () => (live.delete(server), stop()), proxied: true };
  live.add(server);
  return server;
}

/** The servers started and not yet stopped in this test file (./setup.ts prints their output when a test fails). */
export const live = new Set<Server>();

/** What every server of a run starts from, made once by ./global-setup.ts. */
export interface ServerKit {
  /** The all-in-one worker's bundle. */
  bundle: string;
  /** wrangler.toml's top level as Miniflare options (wrangler's own translation, without its code). */
  options: ReturnType<typeof import("wrangler").unstable_getMiniflareWorkerOptions>["workerOptions"];
  /** A D1 persistence directory whose database holds every migration of migrations/, for each server to copy. */
  d1: string;
}

/** A Miniflare log that keeps what it would print, for `Server.output()`. */
/** Miniflare's options for a server on loopback at `port` whose log and workerd's output go to `keep`. */
export function onLoopback(port: number, keep: (text: string) => void) {
  return {
    host: "127.0.0.1",
    port,
    log: new KeptLog(keep),
    handleRuntimeStdio(stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) {
      stdout.on("data", (d: Buffer) => keep(d.toString()));
      stderr.on("data", (d: Buffer) => keep(d.toString()));
    },
  };
}

export class KeptLog extends Log {
  constructor(private readonly keep: (text: string) => void) {
    super(LogLevel.INFO);
  }
  protected override log(message: string): void {
    this.keep(message + "\n");
  }
}

/**
 * The run's shared server: the all-in-one worker as `npm start` configures it, started once by
 * ./global-setup.ts for every file that calls this. Its state is shared with those files: a test
 * on it signs in people and makes apps as if another person used the service too. `stop()` leaves
 * it running.
 */
export function sharedServer(): Server {
  const base = inject("sharedBase");
  return { base, output: () => "(the run's shared server: its output is in vitest's own)", stop: async () => {} };
}

/**
 * The all-in-one worker on `port` (default: a free one; the seed's loopback redirect URIs match on
 * any port, RFC 8252 §7.3) with fresh state, as `npm start` serves it: wrangler.toml's bindings and
 * vars, the secrets of .dev.vars (or .dev.vars.example), npm start's vars for its port, a D1 with
 * every migration of migrations/ applied (the worker applies the dev seed on its first request,
 * DEV_MODE=true), everything else empty and in memory; then waits for /healthz. `vars` (or `args`
 * in npm start's form, `--var NAME:value`) set more, as `npm start -- --var NAME:value` would. A
 * taken port is refused with `npm start`'s own message. The run's kit (./global-setup.ts) unless
 * `kit` is given.
 */
export async function startServer(
  opts: { port?: number; args?: string[]; vars?: Record<string, string>; kit?: ServerKit } = {},
): Promise<Server> {
  const vars: Record<string, string> = {};
  const args = opts.args ?? [];
  for (let i = 0; i < args.length; i += 2) {
    const m = args[i] === "--var" ? /^([^:]+):(.*)$/s.exec(args[i + 1] ?? "") : null;
    if (!m) throw new Error(`startServer takes only --var NAME:value arguments, not ${args[i]}`);
    vars[m[1]!] = m[2]!;
  }
  Object.assign(vars, opts.vars);
  // A free port is free when asked for, not when workerd binds it: a process of another test file
  // may take it in between. A server on a port it chose is started again on a new one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await workerOnce(opts.port, vars, opts.kit ?? inject("serverKit"));
    } catch (e) {
      const taken = e instanceof Error && /already in use|EADDRINUSE/i.test(e.message);
      if (opts.port !== undefined || !taken || attempt === 3) throw e;
    }
  }
}

async function workerOnce(port_: number | undefined, vars: Record<string, string>, kit: ServerKit): Promise<Server> {
  const port = port_ ?? (await freePort());
  // Whatever answers /healthz on a taken port is someone else's server: never poll it.
  if (await portInUse(port)) throw new Error(portInUseMessage(port, await nextFreePort(port)));
  const base = `http://localhost:${port}`;
  const d1 = mkdtempSync(join(tmpdir(), "phone-login-d1-"));
  cpSync(kit.d1, d1, { recursive: true });
  let out = "";
  const keep = (text: string) => void (out += text);
  const mf = new Miniflare({
    ...kit.options,
    modules: [{ type: "ESModule", path: kit.bundle }],
    modulesRoot: join(kit.bundle, ".."),
    d1Persist: d1,
    bindings: {
      ...(kit.options.bindings as Record<string, string>),
      ...devVars(),
      // npm start's vars (scripts/start.mjs): every address of the local world follows the port
      PUBLIC_BASE_URL: base,
      PROVIDER_BASE_URL: base,
      RP_PUBLIC_ORIGIN: base,
      RP_REDIRECT_URI: `${base}/auth/callback`,
      // The SMS-abuse guard is on as in `npm start`, but these tests' sign-ins come from loopback, where
      // many send codes they never type: loopback is a safe block here, and a test of the guard comes
      // from another address (X-Dev-Address) or sets GUARD_SAFE_BLOCKS itself.
      GUARD_SAFE_BLOCKS: "127.0.0.0/8,::1/128",
      ...vars,
    },
    ...onLoopback(port, keep),
  });
  const dispose = async () => {
    await mf.dispose().catch(() => {});
    rmSync(d1, { recursive: true, force: true });
  };
  try {
    await mf.ready;
    const res = await fetch(`${base}/healthz`);
    if (!res.ok) throw new Error(`/healthz answered ${res.status}:\n${out}`);
  } catch (e) {
    await dispose();
    throw e;
  }
  const server: Server = {
    base,
    output: () => out,
    stop: async () => {
      live.delete(server);
      await dispose();
    },
  };
  live.add(server);
  return server;
}
