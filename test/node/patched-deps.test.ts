// scripts/patch-deps.mjs (`postinstall`): the installed test pool carries its changes, and the
// script applies each exactly once, to the version it was written for only.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyPatches, patches } from "../../scripts/patch-deps.mjs";

const root = join(import.meta.dirname, "..", "..");
const pool = patches[0]!;
const installed = join(root, "node_modules", ...pool.name.split("/"));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A node_modules holding the pool's package.json and the file the patch changes, as published. */
function copyOfPool(version: string, text: string): string {
  const modules = mkdtempSync(join(tmpdir(), "phone-login-patch-"));
  dirs.push(modules);
  const dir = join(modules, ...pool.name.split("/"));
  mkdirSync(dirname(join(dir, pool.file)), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: pool.name, version }));
  writeFileSync(join(dir, pool.file), text);
  return modules;
}

/** The published text: the installed file with the patch's replacements undone. */
function published(): string {
  let text = readFileSync(join(installed, pool.file), "utf8");
  for (const e of pool.edits) text = text.replace(e.replace, e.find);
  return text;
}

describe("patched dependencies (scripts/patch-deps.mjs)", () => {
  it("the installed pool keeps one options parse and one main-module import per workerd", () => {
    const text = readFileSync(join(installed, pool.file), "utf8");
    expect(JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).version).toBe(pool.version);
    const unpatched =
      "the installed test pool is not patched: run `node scripts/patch-deps.mjs` (`npm ci --ignore-scripts` skips it)";
    for (const e of pool.edits) expect(text.split(e.replace).length, unpatched).toBe(2);
    expect(text).toContain("const importedModules = new Map();");
  });

  it("applies once to the published text, and a second run changes nothing", () => {
    const original = published();
    expect(original).not.toContain("patch-deps.mjs");
    const modules = copyOfPool(pool.version, original);
    const file = join(modules, ...pool.name.split("/"), pool.file);
    expect(applyPatches(modules, () => {})).toEqual([{ name: pool.name, status: "applied" }]);
    const once = readFileSync(file, "utf8");
    expect(once).toBe(readFileSync(join(installed, pool.file), "utf8"));
    expect(applyPatches(modules, () => {})).toEqual([{ name: pool.name, status: "already" }]);
    expect(readFileSync(file, "utf8")).toBe(once);
  });

  it("an install patched by an earlier script (its first edits only) gets the edits it lacks, once", () => {
    const [first, second] = pool.edits;
    const earlier = published().replace(first!.find, first!.replace).replace(second!.find, second!.replace);
    const modules = copyOfPool(pool.version, earlier);
    const file = join(modules, ...pool.name.split("/"), pool.file);
    expect(applyPatches(modules, () => {})).toEqual([{ name: pool.name, status: "applied" }]);
    expect(readFileSync(file, "utf8")).toBe(readFileSync(join(installed, pool.file), "utf8"));
    expect(applyPatches(modules, () => {})).toEqual([{ name: pool.name, status: "already" }]);
  });

  it("the wrapper classes' prototype is wrapped in its Proxy once, not at every construction", () => {
    const text = readFileSync(join(installed, pool.file), "utf8");
    const made =
      /function createProxyPrototypeClass\([^)]*\) \{\n\tfunction Class\(\.\.\.args\) \{\n([^]*?)\n\t\}\n/.exec(text);
    expect(made, "createProxyPrototypeClass not found").not.toBeNull();
    expect(made![1]).not.toContain("new Proxy");
    expect(text.split("Class.prototype = new Proxy(Class.prototype").length).toBe(2);
  });

  it("another version, or text it does not expect, is left as it is with one line saying so", () => {
    const lines: string[] = [];
    const other = copyOfPool("0.16.0", published());
    expect(applyPatches(other, (l: string) => lines.push(l))).toEqual([{ name: pool.name, status: "skipped" }]);
    const changed = copyOfPool(pool.version, published().replace("async function importModule(specifier) {\n", ""));
    expect(applyPatches(changed, (l: string) => lines.push(l))).toEqual([{ name: pool.name, status: "skipped" }]);
    expect(readFileSync(join(changed, ...pool.name.split("/"), pool.file), "utf8")).not.toContain("patch-deps.mjs");
    expect(lines).toEqual([
      `scripts/patch-deps.mjs: ${pool.name} 0.16.0 is not the ${pool.version} this patch was written for; left as it is (its tests run slower)`,
      `scripts/patch-deps.mjs: ${pool.name} ${pool.version} does not hold the text this patch changes; left as it is (its tests run slower)`,
    ]);
  });
});
