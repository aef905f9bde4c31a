#!/usr/bin/env node
// `npm run bench [-- options]`: installs the bench package (bench/, a package of its own outside the
// root's install) when it is not installed from its lock, then runs `node bench/run.mjs` with the
// same options (docs/benchmarks.md).
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInstalled } from "./lib/packages.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
ensureInstalled("bench");
const r = spawnSync(process.execPath, [join(root, "bench", "run.mjs"), ...process.argv.slice(2)], { stdio: "inherit" });
process.exitCode = r.status ?? 1;
