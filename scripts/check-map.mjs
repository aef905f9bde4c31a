#!/usr/bin/env node
// The map cannot drift (part of `npm run check`): every folder of workers/ (and of the provider),
// every store module and every [env.*] of wrangler.toml is named where a newcomer reads the map:
// README's folder block and worker table, docs/architecture.md §1 and docs/storage.md. The deploy
// steps of docs/operations.md are read against wrangler.toml by test/node/deploy-steps.test.ts.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The sub-folders of a folder of the repository. */
function folders(dir) {
  return readdirSync(join(root, dir)).filter((n) => statSync(join(root, dir, n)).isDirectory());
}

/** The env names of wrangler.toml (`[env.X]` tables). */
function envs(toml) {
  return [...new Set([...toml.matchAll(/^\[env\.([A-Za-z0-9_-]+)\]/gm)].map((m) => m[1]))];
}

/** The text between a heading (its line starts with `start`) and the next heading of its level. */
function section(doc, start) {
  const i = doc.indexOf(`\n${start}`);
  if (i < 0) return "";
  const level = /^#+/.exec(start)?.[0] ?? "##";
  const j = doc.indexOf(`\n${level} `, i + 1);
  return doc.slice(i, j < 0 ? undefined : j);
}

/**
 * What the map leaves out, given the repository's texts and listings: one line a missing name.
 * @param {{ readme: string; architecture: string; storage: string; toml: string;
 *   workerFolders: string[]; providerFolders: string[]; storeModules: string[] }} m
 */
export function mapGaps(m) {
  const gaps = [];
  const block = /\n```\n(packages\/kit\/[\s\S]*?)\n```/.exec(m.readme)?.[1] ?? "";
  const deployment = section(m.readme, "## Deployment");
  const table = deployment.slice(0, deployment.indexOf("\n\n", deployment.indexOf("| env |")));
  const layout = section(m.architecture, "## §1");
  for (const f of m.workerFolders) {
    if (!new RegExp(`^workers/${f}/`, "m").test(block)) gaps.push(`README.md folder block: workers/${f}/`);
    if (!new RegExp(`^  ${f}/`, "m").test(layout)) gaps.push(`docs/architecture.md §1: workers/${f}/`);
  }
  for (const f of m.providerFolders) {
    if (!block.includes(`${f}/`)) gaps.push(`README.md folder block: workers/provider/${f}/`);
    if (!new RegExp(`^    ${f}/`, "m").test(layout)) gaps.push(`docs/architecture.md §1: workers/provider/${f}/`);
  }
  for (const e of envs(m.toml))
    if (!table.includes(`| \`${e}\` |`)) gaps.push(`README.md worker table (Deployment): [env.${e}]`);
  // what holds no data (the store's variables, host rules, the classes' export, the flows, the SMS senders) is not storage.md's
  const notData = ["config.ts", "hosts.ts", "objects.ts", "flows/", "sms/"];
  for (const s of m.storeModules) {
    if (!notData.includes(s) && !m.storage.includes(s)) gaps.push(`docs/storage.md: store/${s}`);
    if (!layout.includes(s)) gaps.push(`docs/architecture.md §1: store/${s}`);
  }
  return gaps;
}

/** The repository as it is. */
export function currentMap() {
  return {
    readme: readFileSync(join(root, "README.md"), "utf8"),
    architecture: readFileSync(join(root, "docs", "architecture.md"), "utf8"),
    storage: readFileSync(join(root, "docs", "storage.md"), "utf8"),
    toml: readFileSync(join(root, "wrangler.toml"), "utf8"),
    workerFolders: folders("workers"),
    providerFolders: folders("workers/provider"),
    storeModules: readdirSync(join(root, "workers", "provider", "store"))
      .filter((n) => n.endsWith(".ts") || statSync(join(root, "workers", "provider", "store", n)).isDirectory())
      .map((n) => (n.endsWith(".ts") ? n : `${n}/`)),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const gaps = mapGaps(currentMap());
  for (const g of gaps) console.error(`not on the map: ${g}`);
  process.exitCode = gaps.length ? 1 : 0;
}
