// What `npm start` shows of `wrangler d1 migrations apply --local`, which it runs when its own
// migrations in one workerd fail (scripts/start.mjs). wrangler prints its table of
// migrations before it starts and again after each migration it applies (ten tables for nine
// migrations on a fresh state directory). When it succeeds, npm start prints one line per database
// instead, and its warnings except the wrangler.toml notes that `wrangler dev` prints again right
// after. When it fails, npm start prints everything it wrote (scripts/start.mjs).

import { stripVTControlCharacters } from "node:util";

/**
 * One line for a successful run's stdout: the migrations it applied, or that there were none. Null
 * when the output is not in a form this knows (npm start then prints it as it is).
 * @param {string} binding
 * @param {string} stdout
 * @returns {string | null}
 */
export function migrationSummary(binding, stdout) {
  const text = stripVTControlCharacters(stdout);
  if (/No migrations to apply/.test(text)) return appliedLine(binding, []);
  const applied = [];
  for (const m of text.matchAll(/│ (\S+\.sql)\s+│ ✅/g)) if (!applied.includes(m[1])) applied.push(m[1]);
  if (!applied.length) return null;
  return appliedLine(binding, applied);
}

/**
 * The one line for the migrations a run applied to a database, in order (none: there were none).
 * @param {string} binding
 * @param {readonly string[]} applied
 * @returns {string}
 */
export function appliedLine(binding, applied) {
  if (!applied.length) return `D1 ${binding}: no migrations to apply`;
  const names = applied.length === 1 ? applied[0] : `${applied[0]} to ${applied[applied.length - 1]}`;
  return `D1 ${binding}: applied ${applied.length} migration${applied.length === 1 ? "" : "s"} (${names})`;
}

/**
 * A successful run's stderr without the "Processing wrangler.toml configuration" notes (every wrangler
 * command reading the file prints them; `wrangler dev` does next). Any other warning or error block
 * is kept as it is.
 * @param {string} stderr
 * @returns {string}
 */
export function migrationWarnings(stderr) {
  const blocks = [];
  for (const line of stderr.split(/\r?\n/)) {
    if (/^(▲ \[WARNING\]|✘ \[ERROR\])/.test(stripVTControlCharacters(line)) || !blocks.length) blocks.push([line]);
    else blocks[blocks.length - 1].push(line);
  }
  return blocks
    .filter((b) => !/^▲ \[WARNING\] Processing .*configuration:/.test(stripVTControlCharacters(b[0])))
    .map((b) => b.join("\n"))
    .join("\n")
    .trim();
}
