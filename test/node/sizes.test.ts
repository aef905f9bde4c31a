// The worker sizes in README.md and docs/operations.md cannot drift from `npm run build`: the build
// writes docs/sizes.json and both tables (scripts/build.mjs), `npm run check` compares the tables with
// the JSON (scripts/check-sizes.mjs), and CI's build fails when a fresh build is more than 5% from the
// JSON (sizeDrift). Nothing here builds.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BEGIN, END, overBudget, sizeDrift, sizeTable, withSizeTable } from "../../scripts/lib/size-table.mjs";

const root = join(import.meta.dirname, "..", "..");
const checkSizes = (dir: string) =>
  spawnSync(process.execPath, [join(root, "scripts", "check-sizes.mjs"), dir], { encoding: "utf8" });

/** A copy of the files check-sizes reads, to change one of them. */
const copies: string[] = [];
function copy(): string {
  const dir = mkdtempSync(join(tmpdir(), "phone-login-sizes-"));
  copies.push(dir);
  mkdirSync(join(dir, "docs"));
  for (const f of ["README.md", "docs/operations.md", "docs/sizes.json", "wrangler.toml"])
    cpSync(join(root, f), join(dir, f));
  return dir;
}
afterAll(() => {
  for (const d of copies) rmSync(d, { recursive: true, force: true });
});

describe("worker sizes", () => {
  it("the docs' tables are the ones docs/sizes.json gives, for every worker npm run build builds", () => {
    const run = checkSizes(root);
    expect(run.status, run.stderr).toBe(0);
  });

  it("check fails when a table differs from docs/sizes.json by one figure", () => {
    const dir = copy();
    const ops = join(dir, "docs/operations.md");
    const text = readFileSync(ops, "utf8");
    const changed = text.replace(
      /(\| `token` \| [0-9.]+ \| )([0-9.]+)( \|)/,
      (_, a, gz, b) => `${a}${(Number(gz) + 0.1).toFixed(1)}${b}`,
    );
    expect(changed).not.toBe(text);
    writeFileSync(ops, changed);
    const run = checkSizes(dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("docs/operations.md's size table is not the one docs/sizes.json gives");
    expect(run.stderr).not.toContain("README.md");
  });

  it("check fails when wrangler.toml gains a worker docs/sizes.json does not have", () => {
    const dir = copy();
    writeFileSync(
      join(dir, "wrangler.toml"),
      readFileSync(join(dir, "wrangler.toml"), "utf8") + '\n[env.extra]\nname = "x"\n',
    );
    const run = checkSizes(dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/npm run build builds all-in-one, .*, extra/);
  });

  it("check fails when a document has lost its markers", () => {
    const dir = copy();
    writeFileSync(join(dir, "README.md"), readFileSync(join(dir, "README.md"), "utf8").replace(END, ""));
    const run = checkSizes(dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("README.md has no size table between");
  });

  it("the table: KiB with one decimal, the top level named as npm start's; written between the markers only", () => {
    const sizes = { "all-in-one": { minified: 254301, gzip: 85741 }, token: { minified: 22057, gzip: 8945 } };
    expect(sizeTable(sizes)).toBe(
      [
        "| worker | minified KiB | gzip KiB |",
        "|---|---|---|",
        "| all-in-one (top level, `npm start`) | 248.3 | 83.7 |",
        "| `token` | 21.5 | 8.7 |",
      ].join("\n"),
    );
    const doc = `before\n${BEGIN}\nold\n${END}\nafter\n`;
    expect(withSizeTable(doc, sizes)).toBe(`before\n${BEGIN}\n${sizeTable(sizes)}\n${END}\nafter\n`);
    expect(() => withSizeTable("no markers", sizes)).toThrow();
  });

  it("CI's rule: a figure may move 5% of the recorded one, not more; a worker added or removed is drift", () => {
    const recorded = { token: { minified: 20000, gzip: 8000 } };
    expect(sizeDrift({ token: { minified: 21000, gzip: 7600 } }, recorded)).toEqual([]);
    expect(sizeDrift({ token: { minified: 21001, gzip: 8000 } }, recorded)).toEqual([
      "token: minified 20.5 KiB, recorded 19.5 KiB (more than 5% apart)",
    ]);
    expect(sizeDrift({ token: { minified: 20000, gzip: 7599 } }, recorded)).toEqual([
      "token: gzip 7.4 KiB, recorded 7.8 KiB (more than 5% apart)",
    ]);
    expect(sizeDrift({ token: recorded.token, admin: { minified: 1, gzip: 1 } }, recorded)).toEqual([
      "admin: built, not in docs/sizes.json",
    ]);
    expect(sizeDrift({}, recorded)).toEqual(["token: in docs/sizes.json, not built"]);
  });

  it("the sign-in pages' workers are held at 120 KiB gzip each: authorize and console (and the developer console)", () => {
    const kib = (n: number) => Math.round(n * 1024);
    // the figures before the cut: authorize ~195 KiB, console ~226 KiB
    expect(
      overBudget({
        authorize: { minified: kib(640), gzip: kib(195) },
        console: { minified: kib(730), gzip: kib(226) },
        token: { minified: kib(41), gzip: kib(16) },
      }),
    ).toEqual([
      "authorize: gzip 195.0 KiB, over its budget of 120.0 KiB",
      "console: gzip 226.0 KiB, over its budget of 120.0 KiB",
    ]);
    const at = { minified: kib(400), gzip: kib(120) };
    expect(overBudget({ authorize: at, console: at, developers: at })).toEqual([]);
    expect(overBudget({ developers: { minified: kib(400), gzip: kib(120) + 1 } })).toEqual([
      "developers: gzip 120.0 KiB, over its budget of 120.0 KiB",
    ]);
  });

  it("check fails when docs/sizes.json records authorize above its budget, the tables agreeing", () => {
    const dir = copy();
    const json = join(dir, "docs/sizes.json");
    const sizes = JSON.parse(readFileSync(json, "utf8")).workers;
    sizes.authorize = { minified: 651674, gzip: 198582 };
    writeFileSync(json, JSON.stringify({ workers: sizes }, null, 2) + "\n");
    for (const doc of ["README.md", "docs/operations.md"])
      writeFileSync(join(dir, doc), withSizeTable(readFileSync(join(dir, doc), "utf8"), sizes));
    const run = checkSizes(dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("docs/sizes.json: authorize: gzip 193.9 KiB, over its budget of 120.0 KiB");
    expect(run.stderr).not.toContain("size table is not");
  });
});
