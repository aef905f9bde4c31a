#!/usr/bin/env node
// `npm run check`: the checks that need no server, at once (docs/testing.md). Formatting,
// the docs' size tables, the map (every folder, store module and env named in the docs), the type checks of the workers and of the Node-side code, and wrangler's
// binding types. The bench package (bench/, outside the root's install) is installed first when it
// is not, for the type checks of bench/, capacity/ and investigations/, which use its harness. Each runs in its own process; their outputs are printed in this order once all
// have ended, so a failure reads as if they had run one after another. Run one at a time they
// took 57 s on the 2-core CI machine (prettier 17 s, the two tsc 14 s and 11 s); at once, the
// machine's cores share them.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInstalled } from "./lib/packages.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(root, "node_modules", ".bin", name);

/** @type {[label: string, command: string, args: string[], env?: Record<string, string>][]} */
const CHECKS = [
  ["prettier --check .", bin("prettier"), ["--check", "."]],
  ["node scripts/check-sizes.mjs", process.execPath, [join(root, "scripts", "check-sizes.mjs")]],
  ["node scripts/check-map.mjs", process.execPath, [join(root, "scripts", "check-map.mjs")]],
  ["tsc --noEmit -p tsconfig.json", bin("tsc"), ["--noEmit", "-p", "tsconfig.json"]],
  ["tsc --noEmit -p tsconfig.node.json", bin("tsc"), ["--noEmit", "-p", "tsconfig.node.json"]],
  ["wrangler types --check", bin("wrangler"), ["types", "--check"], { WRANGLER_LOG: "error" }],
];

/**
 * One check: its combined output and exit code (a spawn error counts as a failure).
 * @param {(typeof CHECKS)[number]} check
 * @returns {Promise<{ out: string; code: number }>}
 */
function run([, command, args, env]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.once("error", (e) => resolve({ out: `${out}${e.message}\n`, code: 1 }));
    child.once("close", (code, signal) => resolve({ out, code: code ?? (signal ? 1 : 0) }));
  });
}

// the bench's types (autocannon, the peers) are its own package's: installed first when they are not
ensureInstalled("bench");
const results = await Promise.all(CHECKS.map(run));
let failed = 0;
for (const [i, { out, code }] of results.entries()) {
  if (out) process.stdout.write(out.endsWith("\n") ? out : `${out}\n`);
  if (code !== 0) {
    failed++;
    console.error(`check failed: ${CHECKS[i][0]} (exit ${code})`);
  }
}
process.exitCode = failed ? 1 : 0;
