#!/usr/bin/env node
// `npm run build`: dry-run-builds every deployable worker of wrangler.toml without an account —
// the all-in-one top level and each [env.<route>] — with
//   wrangler deploy --dry-run --minify [--env X] --outdir dist/X
// then prints a size table (minified and gzip KiB per worker) and fails when any build fails.
//   node scripts/build.mjs [env ...]   build only these (use "all-in-one" for the top level)
//   BUILD_JOBS=n                       builds run n at a time (default 2)
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

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

  const rows = results.map((r) => {
    if (!r.ok) return [r.target, "-", "-", "FAILED"];
    const s = sizes(r.target);
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
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
