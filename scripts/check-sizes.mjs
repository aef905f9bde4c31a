#!/usr/bin/env node
// Part of `npm run check`: the size tables of README.md and docs/operations.md are the ones
// docs/sizes.json gives (scripts/lib/size-table.mjs renders them), and docs/sizes.json has exactly
// the workers `npm run build` builds from wrangler.toml. Builds nothing; `npm run build` rewrites all
// three, and in CI fails when a fresh build is more than 5% from docs/sizes.json. A worker recorded
// above its gzip budget (BUDGETS) fails here too.
//   node scripts/check-sizes.mjs [root]   root: the repository (default: this one)
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { envNames } from "./build.mjs";
import { BEGIN, END, SIZE_DOCS, SIZES_JSON, TOP, markedTable, overBudget, sizeTable } from "./lib/size-table.mjs";

const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..");
const problems = [];
const json = join(root, SIZES_JSON);
const sizes = existsSync(json) ? JSON.parse(readFileSync(json, "utf8")).workers : null;
if (!sizes) problems.push(`${SIZES_JSON} is missing`);
else {
  const built = [TOP, ...envNames(readFileSync(join(root, "wrangler.toml"), "utf8"))];
  const recorded = Object.keys(sizes);
  if (built.join() !== recorded.join())
    problems.push(`${SIZES_JSON} has ${recorded.join(", ")}; npm run build builds ${built.join(", ")}`);
  for (const o of overBudget(sizes)) problems.push(`${SIZES_JSON}: ${o}`);
  const table = sizeTable(sizes);
  for (const doc of SIZE_DOCS) {
    const shown = markedTable(readFileSync(join(root, doc), "utf8"));
    if (shown === null) problems.push(`${doc} has no size table between ${BEGIN} and ${END}`);
    else if (shown !== table) problems.push(`${doc}'s size table is not the one ${SIZES_JSON} gives`);
  }
}
if (problems.length) {
  console.error(`worker sizes: ${problems.join("; ")}\nrun \`npm run build\`: it writes ${SIZES_JSON} and the tables`);
  process.exit(1);
}
