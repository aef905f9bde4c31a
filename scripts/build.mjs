#!/usr/bin/env node
// `npm run build`: dry-run-builds every deployable worker of wrangler.toml without an account —
// the all-in-one top level and each [env.<route>] — with
//   wrangler deploy --dry-run --minify [--env X] --outdir dist/X
// then prints a size table (minified and gzip KiB per worker) and fails when any build fails.
// A build of every worker records the sizes (scripts/lib/size-table.mjs): it writes docs/sizes.json
// and the size tables of README.md and docs/operations.md; in CI (CI set) it writes nothing and
// fails when any figure is more than 5% from docs/sizes.json, or a worker was added or removed.
// Any build fails when a worker is over its gzip budget (BUDGETS: authorize, console, developers).
//   node scripts/build.mjs [env ...]   build only these (use "all-in-one" for the top level); records nothing
//   BUILD_JOBS=n                       builds run n at a time (default 2)
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { SIZE_DOCS, SIZES_JSON, TOLERANCE, overBudget, sizeDrift, withSizeTable } from "./lib/size-table.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const childEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };
const TOP = "all-in-one";

/** Env names declared in wrangler.toml: `[env.X]`, `[env.X.sub]`, `[[env.X.list]]`, in file order. */
export function envNames(toml) {
  const names = [];
  for (const line of toml.split(/\r?\n/)) {
    const m = /^\s*\[\[?\s*env\.("([^"]+)"|[A-Za-z0-9_-]+)[\].]/.exec(line);
    if (!m) continue;
    const name = m[2] ?? m[1];
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

function run(target) {
  const outdir = join("dist", target);
  rmSync(join(root, outdir), { recursive: true, force: true });
  const args = ["deploy", "--dry-run", "--minify", "--outdir", outdir];
  if (target !== TOP) args.push("--env", target);
  return new Promise((resolve) => {
    let output = "";
    const child = spawn(wrangler, args, { cwd: root, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", (e) => resolve({ target, ok: false, output: String(e) }));
    child.on("close", (code) => resolve({ target, ok: code === 0, output }));
  });
}

/** Sizes of the built modules (the .map files are not uploaded). */
function sizes(target) {
  const dir = join(root, "dist", target);
  let raw = 0;
  let gz = 0;
  for (const f of readdirSync(dir)) {
    if (!/\.(m?js|wasm)$/.test(f)) continue;
    const bytes = readFileSync(join(dir, f));
    if (!statSync(join(dir, f)).isFile()) continue;
    raw += bytes.length;
    gz += gzipSync(bytes).length;
  }
  return { raw, gz };
}

async function main() {
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
  const all = [TOP, ...envNames(toml)];
  const asked = process.argv.slice(2);
  const unknown = asked.filter((a) => !all.includes(a));
  if (unknown.length) {
    console.error(`unknown env: ${unknown.join(", ")} (wrangler.toml has: ${all.join(", ")})`);
    process.exit(2);
  }
  const targets = asked.length ? asked : all;
  const jobs = Math.max(1, Number(process.env.BUILD_JOBS) || 2);
  const results = [];
  const queue = [...targets];
  await Promise.all(
    Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      for (let t = queue.shift(); t !== undefined; t = queue.shift()) {
        const r = await run(t);
        process.stdout.write(`${r.ok ? "built " : "FAILED"} ${t}\n`);
        results.push(r);
      }
    }),
  );
  results.sort((a, b) => targets.indexOf(a.target) - targets.indexOf(b.target));

  /** @type {Record<string, { minified: number, gzip: number }>} */
  const measured = {};
  const rows = results.map((r) => {
    if (!r.ok) return [r.target, "-", "-", "FAILED"];
    const s = sizes(r.target);
    measured[r.target] = { minified: s.raw, gzip: s.gz };
    return [r.target, (s.raw / 1024).toFixed(1), (s.gz / 1024).toFixed(1), "ok"];
  });
  const head = ["worker (env)", "minified KiB", "gzip KiB", "build"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r) => r.map((c, i) => (i === 0 || i === 3 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  console.log("\n" + fmt(head) + "\n" + widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(fmt(r));
  console.log(
    "\n(wrangler deploy --dry-run --minify; output in dist/<worker>; the free plan's limit is 3 MiB gzip per worker)",
  );

  const failed = results.filter((r) => !r.ok);
  for (const f of failed) console.error(`\n---- ${f.target} failed ----\n${f.output.trim()}`);
  if (failed.length) process.exit(1);
  const over = overBudget(measured);
  if (over.length) {
    console.error(`\nover budget:\n  ${over.join("\n  ")}`);
    process.exit(1);
  }
  if (targets.length === all.length && !record(measured)) process.exit(1);
}

/**
 * After a build of every worker: in CI, false when the sizes moved beyond TOLERANCE from
 * docs/sizes.json; elsewhere writes docs/sizes.json and the docs' tables from `measured`.
 * @param {Record<string, { minified: number, gzip: number }>} measured
 */
function record(measured) {
  const json = join(root, SIZES_JSON);
  const recorded = existsSync(json) ? JSON.parse(readFileSync(json, "utf8")).workers : {};
  const drift = sizeDrift(measured, recorded);
  if (process.env.CI && process.env.CI !== "false") {
    if (!drift.length) {
      console.log(`sizes within ${TOLERANCE * 100}% of ${SIZES_JSON}`);
      return true;
    }
    console.error(`\nsizes moved since ${SIZES_JSON}:\n  ${drift.join("\n  ")}`);
    console.error(`run \`npm run build\` (it rewrites ${[SIZES_JSON, ...SIZE_DOCS].join(", ")}) and commit them`);
    return false;
  }
  writeFileSync(json, JSON.stringify({ workers: measured }, null, 2) + "\n");
  for (const doc of SIZE_DOCS) {
    const path = join(root, doc);
    const text = readFileSync(path, "utf8");
    const next = withSizeTable(text, measured);
    if (next !== text) writeFileSync(path, next);
  }
  console.log(
    `sizes written to ${[SIZES_JSON, ...SIZE_DOCS].join(", ")}` +
      (drift.length ? `; CI refuses this build until they are committed:\n  ${drift.join("\n  ")}` : ""),
  );
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
