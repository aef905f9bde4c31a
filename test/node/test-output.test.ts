// A green `npm test` prints no exception or warning line. This runs three workers test files, each of
// which printed one before it was fixed: any file (the pool's WebSocket to workerd, dropped as it
// ends: vitest.config.ts filters that line), test/admin/audit.test.ts (workerd's warning when the
// audit export's NDJSON was read with .text()) and test/provider/token/interop.test.ts (vite's warning
// about oauth4webapi's source map). Everything vitest prints, apart from its lines for single tests,
// is scanned.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const files = ["test/core/cookies.test.ts", "test/admin/audit.test.ts", "test/provider/token/interop.test.ts"];

describe("test output", () => {
  it("three workers test files run green and print no exception or warning line", () => {
    // a run of its own, as `npm test` starts it (not inside this run's vitest)
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST") && k !== "TEST" && k !== "NODE_ENV"),
    );
    const run = spawnSync(
      process.execPath,
      [join(root, "node_modules", "vitest", "vitest.mjs"), "run", "--project", "workers", ...files],
      // 30-40 s inside a CI run; over 110 s once with another vitest run beside that one
      { cwd: root, env, encoding: "utf8", timeout: 170_000 },
    );
    const out = stripVTControlCharacters(run.stdout + run.stderr);
    expect(run.status, out).toBe(0);
    expect(out).toMatch(/Test Files\s+3 passed \(3\)/);
    const lines = out.split("\n").filter((l) => !/^\s*[✓×↓]/.test(l)); // not the lines naming a test
    expect(
      lines.filter((l) => /exception|warn|error|deprecat|source ?map/i.test(l)),
      out,
    ).toEqual([]);
  }, 180_000);
});
