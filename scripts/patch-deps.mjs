#!/usr/bin/env node
// `postinstall`: one change to a test dependency, made after every `npm install` / `npm ci`, checked
// by `test/node/patched-deps.test.ts`.
//
// @cloudflare/vitest-pool-workers runs every call into the worker under test (`SELF`,
// `exports.default`, each Durable Object call) through a wrapper that, on every call, parses the
// pool's options from JSON and imports the worker's main module again through the runner Durable
// Object (two extra Durable Object round trips, `importModule` and `getSerializedOptions` in its
// dist/worker/lib/cloudflare/test-internal.mjs). In one workerd of `vitest run` neither ever
// changes: each test file gets a workerd of its own, and no source changes under a run. The change
// keeps the first parse and the first import for that workerd. Measured on the 2-core machine:
// `race.test.ts` at 100 trials a property, 21.4-22.4 s of tests before, 9.0-9.2 s after
// (docs/testing.md). Nothing the tests check is changed: the worker's code, its storage and
// its Durable Objects are the same; only the pool's lookups of them are not repeated.
//
// The version is pinned in package.json. When the package is not that version or its text is not
// the expected text, nothing is written and one line says so: the tests then run as they are, slower.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const MARKER = "/* phone-login-edge: scripts/patch-deps.mjs */";

export const patches = [
  {
    name: "@cloudflare/vitest-pool-workers",
    version: "0.15.1",
    file: "dist/worker/lib/cloudflare/test-internal.mjs",
    edits: [
      {
        find: "function getSerializedOptions() {\n",
        replace: `${MARKER}
let parsedOptionsSource;
let parsedOptions;
function getSerializedOptions() {
	const source = typeof __vitest_worker__ === "object" ? __vitest_worker__.providedContext.cloudflarePoolOptions : void 0;
	if (source !== void 0 && source === parsedOptionsSource) return parsedOptions;
	parsedOptions = getSerializedOptionsUncached();
	parsedOptionsSource = source;
	return parsedOptions;
}
function getSerializedOptionsUncached() {
`,
      },
      {
        find: "async function importModule(specifier) {\n",
        replace: `${MARKER}
const importedModules = new Map();
function importModule(specifier) {
	let imported = importedModules.get(specifier);
	if (imported === void 0) {
		imported = importModuleUncached(specifier);
		importedModules.set(specifier, imported);
		imported.catch(() => importedModules.delete(specifier));
	}
	return imported;
}
async function importModuleUncached(specifier) {
`,
      },
    ],
  },
];

/** Applies `patches` under `modules` (a node_modules folder); one line for each that cannot be applied. */
export function applyPatches(modules = join(root, "node_modules"), log = console.warn) {
  const results = [];
  for (const p of patches) {
    const dir = join(modules, ...p.name.split("/"));
    let version;
    let text;
    try {
      version = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;
      text = readFileSync(join(dir, p.file), "utf8");
    } catch {
      results.push({ name: p.name, status: "absent" });
      continue;
    }
    if (text.includes(MARKER)) {
      results.push({ name: p.name, status: "already" });
      continue;
    }
    const unmatched = p.edits.filter((e) => text.split(e.find).length !== 2);
    if (version !== p.version || unmatched.length) {
      const why =
        version !== p.version
          ? `is not the ${p.version} this patch was written for`
          : "does not hold the text this patch changes";
      log(`scripts/patch-deps.mjs: ${p.name} ${version} ${why}; left as it is (its tests run slower)`);
      results.push({ name: p.name, status: "skipped" });
      continue;
    }
    for (const e of p.edits) text = text.replace(e.find, e.replace);
    writeFileSync(join(dir, p.file), text);
    results.push({ name: p.name, status: "applied" });
  }
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) applyPatches();
