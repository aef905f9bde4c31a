// The layout's rules (docs/architecture.md), checked by reading every import of workers/:
// core/ imports nothing of the project outside core/ and stays small; the kit imports core/ only
// (it must work against any compatible service); the provider never imports the kit, the admin
// API or the all-in-one worker; the admin API may use the provider's store only.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const workers = join(root, "workers");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Each file's project imports, as paths relative to workers/ (`kit/client.ts` → `core/http`). */
function imports(): { file: string; target: string }[] {
  const out: { file: string; target: string }[] = [];
  for (const f of files(workers)) {
    const text = readFileSync(f, "utf8");
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?from\s+"(\.{1,2}\/[^"]+)"/g)) {
      out.push({ file: relative(workers, f), target: relative(workers, resolve(dirname(f), m[1]!)) });
    }
  }
  return out;
}

const top = (p: string) => p.split("/")[0]!;

describe("the layout's import rules", () => {
  const all = imports();

  it("reads the imports it checks (the rules below are not vacuous)", () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all.some((i) => top(i.file) === "kit" && top(i.target) === "core")).toBe(true);
  });

  it("core/ knows no route, store or domain: it imports only core/", () => {
    expect(all.filter((i) => top(i.file) === "core" && top(i.target) !== "core")).toEqual([]);
  });

  it("the kit imports core/ only, never the provider (it must work against the reference service)", () => {
    expect(all.filter((i) => top(i.file) === "kit" && !["kit", "core"].includes(top(i.target)))).toEqual([]);
  });

  it("the provider never imports the kit, the admin API or the all-in-one worker", () => {
    expect(all.filter((i) => top(i.file) === "provider" && !["provider", "core"].includes(top(i.target)))).toEqual([]);
  });

  it("the admin API uses core/ and the provider's store only", () => {
    const bad = all.filter(
      (i) =>
        top(i.file) === "admin" &&
        !["admin", "core"].includes(top(i.target)) &&
        !i.target.startsWith("provider/store/"),
    );
    expect(bad).toEqual([]);
  });

  it("core/ is at most 1,350 lines", () => {
    const lines = files(join(workers, "core")).reduce((n, f) => n + readFileSync(f, "utf8").split("\n").length, 0);
    expect(lines).toBeLessThanOrEqual(1350);
  });
});
