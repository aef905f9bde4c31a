#!/usr/bin/env node
// `postinstall`: two changes to a test dependency, made after every `npm install` / `npm ci`, checked
// by `test/node/patched-deps.test.ts`.
//
// @cloudflare/vitest-pool-workers runs every call into the worker under test (`SELF`,
// `exports.default`, each Durable Object call) through a wrapper that, on every call, parses the
// pool's options from JSON and imports the worker's main module again through the runner Durable
// Object (two extra Durable Object round trips, `importModule` and `getSerializedOptions` in its
// dist/worker/lib/cloudflare/test-internal.mjs). In one workerd of `vitest run` neither ever
// changes: the files it serves one after the other share the options and the module instances (no
// file resets the modules: docs/testing.md), and no source changes under a run. The change keeps
// the first parse and the first import for that workerd. Measured on the 2-core machine:
// `race.test.ts` at 100 trials a property, 21.4-22.4 s of tests before, 9.0-9.2 s after
// (docs/testing.md). Nothing the tests check is changed: the worker's code, its storage and
// its Durable Objects are the same; only the pool's lookups of them are not repeated.
//
// The second: the pool's wrapper classes (of the default entrypoint and of each Durable Object)
// wrapped their prototype in a new Proxy at every construction, around the previous one. A call
// into the worker constructs an entrypoint wrapper, so the n-th call's method lookup went through
// n Proxy traps and a file's calls cost the square of their count: 100 requests to /healthz
// through `exports.default` took 0.1 s as a file's first, 3.5 s as its fourth hundred. The change
// wraps the prototype once, when the class is made; what a lookup finds is the same.
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
      {
        // the prototype wrapped in its Proxy once, when the class is made, not again at every
        // construction: each request into the worker under test (SELF, exports.default) constructs
        // an entrypoint wrapper, and each construction wrapped the previous Proxy in a new one, so a
        // lookup on the n-th request's instance went through n traps (measured: 100 requests to
        // /healthz took 0.1 s first, 3.5 s after 300 more; flat at 0.015 s with this)
        find: `function createProxyPrototypeClass(superClass, getUnknownPrototypeKey) {
	function Class(...args) {
		Class.prototype = new Proxy(Class.prototype, { get(target, key, receiver) {
			const value = Reflect.get(target, key, receiver);
			if (value !== void 0) return value;
			if (typeof key === "symbol" || IGNORED_KEYS.includes(key)) return;
			return getUnknownPrototypeKey.call(receiver, key);
		} });
		return Reflect.construct(superClass, args, Class);
	}
`,
        replace: `${MARKER}
function createProxyPrototypeClass(superClass, getUnknownPrototypeKey) {
	function Class(...args) {
		return Reflect.construct(superClass, args, Class);
	}
	Reflect.setPrototypeOf(Class.prototype, superClass.prototype);
	Class.prototype = new Proxy(Class.prototype, { get(target, key, receiver) {
		const value = Reflect.get(target, key, receiver);
		if (value !== void 0) return value;
		if (typeof key === "symbol" || IGNORED_KEYS.includes(key)) return;
		return getUnknownPrototypeKey.call(receiver, key);
	} });
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
    // an edit is made once: a file holding some (an install patched by an earlier version of this
    // script) gets the others
    const missing = p.edits.filter((e) => !text.includes(e.replace));
    if (missing.length === 0) {
      results.push({ name: p.name, status: "already" });
      continue;
    }
    const unmatched = missing.filter((e) => text.split(e.find).length !== 2);
    if (version !== p.version || unmatched.length) {
      const why =
        version !== p.version
          ? `is not the ${p.version} this patch was written for`
          : "does not hold the text this patch changes";
      log(`scripts/patch-deps.mjs: ${p.name} ${version} ${why}; left as it is (its tests run slower)`);
      results.push({ name: p.name, status: "skipped" });
      continue;
    }
    for (const e of missing) text = text.replace(e.find, e.replace);
    writeFileSync(join(dir, p.file), text);
    results.push({ name: p.name, status: "applied" });
  }
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) applyPatches();
