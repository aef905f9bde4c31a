// Size of every route worker as deployed. The builds are `npm run build`'s (scripts/build.mjs:
// `wrangler deploy --dry-run --minify --env X --outdir dist/X` for each [env.X] of wrangler.toml);
// this reads what it wrote and measures it the same way (minified bytes, gzip bytes).

import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

function build(root, envs) {
  return new Promise((resolve) => {
    let output = "";
    const child = spawn(process.execPath, [join(root, "scripts", "build.mjs"), ...envs], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (code) => resolve({ ok: code === 0, output }));
  });
}

/** Minified and gzip bytes of the modules in dist/<env> (source maps are not uploaded). */
function measure(dir) {
  let minified = 0;
  let gzip = 0;
  for (const f of readdirSync(dir)) {
    if (!/\.(m?js|wasm)$/.test(f)) continue;
    const b = readFileSync(join(dir, f));
    minified += b.length;
    gzip += gzipSync(b).length;
  }
  return { minified, gzip };
}

/** Newest modification time of the sources a build depends on. */
function newestSource(root) {
  let newest = 0;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(join(root, "workers"));
  for (const f of ["wrangler.toml", "package-lock.json"])
    if (existsSync(join(root, f))) newest = Math.max(newest, statSync(join(root, f)).mtimeMs);
  return newest;
}

/** True when dist/<env> holds a build newer than every source (CI runs `npm run build` just before). */
function fresh(root, envs) {
  const newest = newestSource(root);
  return envs.every((env) => {
    const dir = join(root, "dist", env);
    return existsSync(join(dir, "index.js")) && statSync(join(dir, "index.js")).mtimeMs > newest;
  });
}

/**
 * Builds every route worker with scripts/build.mjs (or, with `reuse`, takes dist/ when it is
 * newer than the sources) and measures each: [{ env, minified, gzip, error }].
 */
export async function routeSizes(root, { reuse = false } = {}) {
  const { envNames } = await import(join(root, "scripts", "build.mjs"));
  const envs = envNames(readFileSync(join(root, "wrangler.toml"), "utf8"));
  const reused = reuse && fresh(root, envs);
  const { output } = reused ? { output: "" } : await build(root, envs);
  return envs.map((env) => {
    const dir = join(root, "dist", env);
    const failed = new RegExp(`^FAILED\\s+${env}$`, "m").test(output) || !existsSync(dir);
    if (failed)
      return {
        env,
        minified: null,
        gzip: null,
        error: (new RegExp(`---- ${env} failed ----\\n([^]*?)(\\n----|$)`).exec(output)?.[1] ?? "build failed")
          .trim()
          .slice(-300),
      };
    return { env, ...measure(dir), error: null, reused };
  });
}
