// The layout's rules (docs/architecture.md), checked by reading every import of workers/ and of the
// kit package (packages/kit/src, named `package/` below): core/ imports nothing of the project
// outside core/ and the package's core, and stays small; the package imports nothing outside itself
// and no module but hono (its Hono adapter), so it installs alone; the kit's route workers use the
// package only; the provider never imports the kit, the admin API or the all-in-one worker; the
// admin API may use the provider's store only.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const workers = join(root, "workers");
const kitPackage = join(root, "packages", "kit", "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** A path relative to workers/, the package's files as `package/...` (`package/core/http.js`). */
function named(p: string): string {
  const inPackage = relative(kitPackage, p);
  return inPackage.startsWith("..") ? relative(workers, p) : `package/${inPackage.replace(/\.js$/, "")}`;
}

/** Each file's project imports (`kit/login/index.ts` → `package/routes/login`); `bare` for modules. */
function imports(): { file: string; target: string }[] {
  const out: { file: string; target: string }[] = [];
  for (const f of [...files(workers), ...files(kitPackage)]) {
    const text = readFileSync(f, "utf8");
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?from\s+"([^"]+)"/g)) {
      const spec = m[1]!;
      const target = spec.startsWith(".") ? named(resolve(dirname(f), spec)) : `bare:${spec}`;
      out.push({ file: named(f), target });
    }
  }
  return out;
}

const top = (p: string) => p.split("/")[0]!;

describe("the layout's import rules", () => {
  const all = imports();

  it("reads the imports it checks (the rules below are not vacuous)", () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all.some((i) => top(i.file) === "kit" && top(i.target) === "package")).toBe(true);
    expect(all.some((i) => i.file.startsWith("package/") && i.target.startsWith("package/core/"))).toBe(true);
  });

  it("core/ knows no route, store or domain: it imports only core/ and the package's core", () => {
    const bad = all.filter(
      (i) =>
        (top(i.file) === "core" && !(top(i.target) === "core" || i.target.startsWith("package/core/"))) ||
        (i.file.startsWith("package/core/") && !i.target.startsWith("package/core/")),
    );
    expect(bad.filter((i) => i.target !== "bare:itty-router" || i.file !== "core/router.ts")).toEqual([]);
  });

  it("the package imports only itself, the Workers runtime's own module, and hono only in its Hono adapter (it installs with no dependency)", () => {
    const bad = all.filter(
      (i) =>
        top(i.file) === "package" &&
        top(i.target) !== "package" &&
        // the kit's Durable Object store extends the runtime's class: a module of workerd, not of npm
        !(i.file === "package/login-store.ts" && i.target === "bare:cloudflare:workers") &&
        !(i.file === "package/hono.ts" && i.target === "bare:hono"),
    );
    expect(bad).toEqual([]);
  });

  it("the kit's route workers use the package only, never the provider (it must work against the reference service)", () => {
    expect(all.filter((i) => top(i.file) === "kit" && !["kit", "package"].includes(top(i.target)))).toEqual([]);
  });

  it("the provider never imports the kit, the admin API or the all-in-one worker", () => {
    expect(
      all.filter(
        (i) =>
          top(i.file) === "provider" && !["provider", "core"].includes(top(i.target)) && !i.target.startsWith("bare:"),
      ),
    ).toEqual([]);
  });

  it("the admin API uses core/ and the provider's store only", () => {
    const bad = all.filter(
      (i) =>
        top(i.file) === "admin" &&
        !["admin", "core"].includes(top(i.target)) &&
        !i.target.startsWith("bare:") &&
        !i.target.startsWith("provider/store/"),
    );
    expect(bad).toEqual([]);
  });

  it("core/ (the package's, and the service's re-exports of it) is at most 1,400 lines", () => {
    // a re-export file is two lines of pointer, not code
    const reexport = (f: string) => /^\/\/.*\nexport \* from "[^"]+";\n$/.test(readFileSync(f, "utf8"));
    const core = [...files(join(workers, "core")).filter((f) => !reexport(f)), ...files(join(kitPackage, "core"))];
    const lines = core.reduce((n, f) => n + readFileSync(f, "utf8").split("\n").length, 0);
    expect(lines).toBeLessThanOrEqual(1400);
  });
});
