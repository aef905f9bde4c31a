#!/usr/bin/env node
// `npm start`: the local world of README "Quick start". Creates .dev.vars from the committed example on a
// fresh checkout, applies the D1 migrations locally (one line of output when they succeed), then
// serves the all-in-one worker with `wrangler dev` on http://localhost:8787 (PORT overrides). The dev
// seed is applied by the worker itself on its first request (DEV_MODE=true). A port already taken (another `npm start`) is refused
// in one line before anything runs: workerd would fail only after the migrations, in a stack trace.
//   PERSIST_DIR  where local D1/KV/DO state lives (default .wrangler/state)
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyLocalMigrations, localD1Databases } from "./lib/migrate-local.mjs";
import { migrationSummary, migrationWarnings } from "./lib/migrations.mjs";
import { nextFreePort, portInUse, portInUseMessage } from "./lib/port.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const port = process.env.PORT || "8787";
const persist = process.env.PERSIST_DIR || join(root, ".wrangler", "state");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
// wrangler.toml declares each worker's required secrets in `secrets.required`: what types them
// (worker-configuration.d.ts), what `wrangler dev` checks .dev.vars against ("Missing required
// secrets") and what `wrangler deploy` refuses to publish without. wrangler calls the field
// experimental in a five-line WARNING at every start, which reads as something broken: a start
// leaves that one notice out (WRANGLER_DISABLE_EXPERIMENTAL_WARNING), and every other warning in.
const env = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: "true",
  WRANGLER_DISABLE_EXPERIMENTAL_WARNING: "1",
};

if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
  console.error(`PORT must be a port number from 1 to 65535, not "${port}"`);
  process.exit(1);
}
if (await portInUse(Number(port))) {
  console.error(portInUseMessage(Number(port), await nextFreePort(Number(port))));
  process.exit(1);
}

if (!existsSync(join(root, ".dev.vars"))) {
  copyFileSync(join(root, ".dev.vars.example"), join(root, ".dev.vars"));
  console.log("created .dev.vars from .dev.vars.example (local development keys only)");
} else {
  // A checkout from before a new dev secret was added (e.g. ADMIN_TOKEN): append the missing names.
  const have = new Set(
    readFileSync(join(root, ".dev.vars"), "utf8")
      .split(/\r?\n/)
      .map((l) => l.split("=")[0].trim()),
  );
  const missing = readFileSync(join(root, ".dev.vars.example"), "utf8")
    .split(/\r?\n/)
    .filter((l) => /^[A-Z_]+=/.test(l) && !have.has(l.split("=")[0]));
  if (missing.length) {
    appendFileSync(
      join(root, ".dev.vars"),
      (readFileSync(join(root, ".dev.vars"), "utf8").endsWith("\n") ? "" : "\n") + missing.join("\n") + "\n",
    );
    console.log(`added ${missing.map((l) => l.split("=")[0]).join(", ")} to .dev.vars from .dev.vars.example`);
  }
}

// The migrations in one workerd (scripts/lib/migrate-local.mjs: what `wrangler d1 migrations apply
// --local` does, without its Miniflare per file), one line for each database. Should that fail (one
// start in about 45 of the test run's saw workerd refuse a migration's batch with "false == true",
// which the next start applied), wrangler's own command applies what is left (each file that failed
// left nothing of itself), with one line for its result, or all of its output when it fails too.
Object.assign(process.env, { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" });
try {
  for (const line of await applyLocalMigrations({ configPath: join(root, "wrangler.toml"), persist }))
    console.log(line);
} catch (e) {
  console.error(`local migrations: ${e instanceof Error ? e.message : String(e)}; applying them with wrangler`);
  // every database the one workerd would have gone over, each by its binding, as wrangler names it
  for (const { binding } of await localD1Databases(join(root, "wrangler.toml"))) {
    const migrate = spawnSync(wrangler, ["d1", "migrations", "apply", binding, "--local", "--persist-to", persist], {
      cwd: root,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (migrate.status !== 0) {
      process.stdout.write(migrate.stdout ?? "");
      process.stderr.write(migrate.stderr ?? "");
      console.error(`D1 migrations failed${migrate.error ? `: ${migrate.error.message}` : ""}; see above`);
      process.exit(migrate.status ?? 1);
    }
    const warnings = migrationWarnings(migrate.stderr);
    if (warnings) console.error(warnings);
    console.log(migrationSummary(binding, migrate.stdout) ?? migrate.stdout.trim());
  }
}

// Every address of the local world follows the port: the service's public URL (events' `iss`, the
// demo app's events address), and the kit's view of the service and of itself.
const origin = `http://localhost:${port}`;
const vars = [
  `PUBLIC_BASE_URL:${origin}`,
  `PROVIDER_BASE_URL:${origin}`,
  `RP_PUBLIC_ORIGIN:${origin}`,
  `RP_REDIRECT_URI:${origin}/auth/callback`,
].flatMap((v) => ["--var", v]);
const dev = spawn(
  wrangler,
  [
    "dev",
    "--port",
    port,
    "--persist-to",
    persist,
    "--show-interactive-dev-session=false",
    ...vars,
    ...process.argv.slice(2),
  ],
  { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] },
);
for (const sig of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.on(sig, () => dev.kill(sig));
dev.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
