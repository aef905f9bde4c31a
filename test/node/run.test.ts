// ./run.ts: a command's exit code and output, without holding the event loop while it runs (the
// reason it exists: see its header).
import { describe, expect, it } from "vitest";
import { runCommand } from "./run";

describe("runCommand", () => {
  it("gives the exit code and both streams", async () => {
    const r = await runCommand(process.execPath, [
      "-e",
      "process.stdout.write('out');process.stderr.write('err');process.exit(3)",
    ]);
    expect(r).toEqual({ status: 3, stdout: "out", stderr: "err" });
  });

  it("leaves the event loop running meanwhile: a timer fires while the command runs", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    try {
      await runCommand(process.execPath, ["-e", "setTimeout(() => {}, 400)"]);
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it("ends a command at its timeout (status null) and rejects a command that cannot start", async () => {
    const started = Date.now();
    const r = await runCommand(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { timeout: 300 });
    expect(r.status).toBeNull();
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect(runCommand("/nonexistent/command", [])).rejects.toThrow(/ENOENT/);
  });
});
