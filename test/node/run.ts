// Runs a command to completion without blocking the event loop. spawnSync would hold it for the
// whole run: meanwhile a test server closes fetch's idle keep-alive socket, fetch cannot see the
// close, and the next request on that socket fails with "other side closed" (seen in CI after a
// 13 s spawnSync in start.test.ts).
import { spawn } from "node:child_process";

export interface Ran {
  /** The exit code, or null when a signal (the timeout's included) ended the command. */
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runCommand(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = opts.timeout ? setTimeout(() => child.kill("SIGKILL"), opts.timeout) : undefined;
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
