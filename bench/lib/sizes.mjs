// Size of every route worker as deployed. The builds are `npm run build`'s (scripts/build.mjs:
// `wrangler deploy --dry-run --minify --env X --outdir dist/X` for each [env.X] of wrangler.toml);
// this reads what it wrote and measures it the same way (minified bytes, gzip bytes).

import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

function build(root, envs) {
  return new Promise((resolve) => {
    let output = "";
    const child = spawn(process.execPath, [join(root, "scripts", "build.mjs"), ...envs], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
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

/** Builds every route worker with scripts/build.mjs and measures each: [{ env, minified, gzip, error }]. */
export async function routeSizes(root) {
  const { envNames } = await import(join(root, "scripts", "build.mjs"));
  const envs = envNames(readFileSync(join(root, "wrangler.toml"), "utf8"));
  const { output } = await build(root, envs);
  return envs.map((env) => {
    const dir = join(root, "dist", env);
    const failed = new RegExp(`^FAILED\\s+${env}$`, "m").test(output) || !existsSync(dir);
    if (failed) return { env, minified: null, gzip: null, error: (new RegExp(`---- ${env} failed ----\\n([^]*?)(\\n----|$)`).exec(output)?.[1] ?? "build failed").trim().slice(-300) };
    return { env, ...measure(dir), error: null };
  });
}
