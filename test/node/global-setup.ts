// The node project's run-wide setup, made once for every test file (vitest's `provide`):
// - what every server of ./server.ts starts from: the all-in-one worker bundled (esbuild, as
//   wrangler bundles it for workerd), wrangler.toml's top level as Miniflare options, and a D1
//   with every migration applied, which each server copies;
// - one server of `npm start`'s configuration for the files that need nothing else (`sharedServer`);
// - one Chromium for every browser test (./chromium.ts).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { kCurrentWorker, Miniflare } from "miniflare";
import type { TestProject } from "vitest/node";
import { applyMigrationFiles } from "../../scripts/lib/migrate-local.mjs";
import { chromiumServer } from "./chromium";
import { startServer, type ServerKit } from "./server";

const root = join(import.meta.dirname, "..", "..");

/** Bundles workers/all-in-one/index.ts into `outdir` as wrangler would for `wrangler dev`; the bundle's path. */
async function bundleWorker(outdir: string): Promise<string> {
  const outfile = join(outdir, "index.js");
  await build({
    entryPoints: [join(root, "workers", "all-in-one", "index.ts")],
    outfile,
    bundle: true,
    format: "esm",
    target: "es2024",
    platform: "neutral",
    // wrangler's settings for workerd: its import conditions and main fields, names kept
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    keepNames: true,
    external: ["cloudflare:*"],
    sourcemap: "linked",
    logLevel: "warning",
  });
  return outfile;
}

/** The kit of ./server.ts under `dir`. */
async function serverKit(dir: string): Promise<ServerKit> {
  const { unstable_getMiniflareWorkerOptions } = await import("wrangler");
  // without wrangler's notice that the `secrets` field is experimental (npm start leaves it out too);
  // only for this call: the test files' processes inherit this one's environment
  const quiet = process.env.WRANGLER_DISABLE_EXPERIMENTAL_WARNING;
  process.env.WRANGLER_DISABLE_EXPERIMENTAL_WARNING = "1";
  const { workerOptions: options } = unstable_getMiniflareWorkerOptions(join(root, "wrangler.toml"));
  if (quiet === undefined) delete process.env.WRANGLER_DISABLE_EXPERIMENTAL_WARNING;
  else process.env.WRANGLER_DISABLE_EXPERIMENTAL_WARNING = quiet;
  const bundle = await bundleWorker(join(dir, "worker"));
  // the migrations, applied once as npm start applies them (scripts/lib/migrate-local.mjs)
  const d1 = join(dir, "d1");
  mkdirSync(d1);
  const mf = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response(null, { status: 404 }); } }",
    compatibilityDate: options.compatibilityDate,
    d1Databases: options.d1Databases,
    d1Persist: d1,
  });
  try {
    await applyMigrationFiles(await mf.getD1Database("DB"), join(root, "migrations"));
  } finally {
    await mf.dispose();
  }
  // The worker's binding to its own entrypoint (WEBAUTHN, the WebAuthn verifier) names it by a
  // symbol, which `provide` cannot pass to the test files: it names the worker, as wrangler.toml does.
  const name = "phone-login";
  const serviceBindings = { ...options.serviceBindings };
  for (const [binding, target] of Object.entries(serviceBindings)) {
    if (typeof target === "object" && "name" in target && target.name === kCurrentWorker) {
      serviceBindings[binding] = { ...target, name };
    }
  }
  return { bundle, options: { ...options, name, serviceBindings }, d1 };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), "phone-login-servers-"));
  const [kit, browser] = await Promise.all([serverKit(dir), chromiumServer()]);
  project.provide("serverKit", kit);
  project.provide("chromiumEndpoint", browser.wsEndpoint());
  const shared = await startServer({ kit });
  project.provide("sharedBase", shared.base);
  return async () => {
    await Promise.all([shared.stop(), browser.close()]);
    rmSync(dir, { recursive: true, force: true });
  };
}
