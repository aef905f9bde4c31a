// The worker sizes in the docs: docs/sizes.json holds the bytes of every worker `npm run build`
// built (minified, and gzip as uploaded); README.md and docs/operations.md show them as a table
// between two marker comments. scripts/build.mjs writes all three after a full build;
// scripts/check-sizes.mjs (`npm run check`) fails when a table differs from the JSON or the JSON
// misses a worker of wrangler.toml; in CI, scripts/build.mjs fails when a fresh build moved any
// figure by more than TOLERANCE from the JSON. The sign-in pages' workers have a hard budget besides
// (BUDGETS): any build of one, and the JSON itself (`npm run check`), fail above it.

/** Files, from the repository root. */
export const SIZES_JSON = "docs/sizes.json";
export const SIZE_DOCS = ["README.md", "docs/operations.md"];

/** How far (relative) a fresh build may be from docs/sizes.json before CI fails. */
export const TOLERANCE = 0.05;

/**
 * The most gzip bytes a worker may upload, for the workers a person waits on at sign-in: the first
 * page and the code steps (`authorize`) and the consoles' sign-in and pages (`console`,
 * `developers`). A passkey's library is the WebAuthn verifier's (`webauthn`), reached by a binding.
 */
export const BUDGETS = { authorize: 120 * 1024, console: 120 * 1024, developers: 120 * 1024 };

export const BEGIN =
  "<!-- sizes: written by `npm run build` (scripts/build.mjs) from docs/sizes.json; `npm run check` compares -->";
export const END = "<!-- /sizes -->";

/** The top-level worker's name in scripts/build.mjs (wrangler.toml's top level). */
export const TOP = "all-in-one";

/**
 * @typedef {{ minified: number, gzip: number }} Size bytes
 * @typedef {Record<string, Size>} Sizes by worker, in build order
 */

const kib = (/** @type {number} */ bytes) => (bytes / 1024).toFixed(1);

/**
 * The markdown table of `sizes`.
 * @param {Sizes} sizes
 */
export function sizeTable(sizes) {
  const rows = Object.entries(sizes).map(
    ([name, s]) =>
      `| ${name === TOP ? "all-in-one (top level, `npm start`)" : `\`${name}\``} | ${kib(s.minified)} | ${kib(s.gzip)} |`,
  );
  return ["| worker | minified KiB | gzip KiB |", "|---|---|---|", ...rows].join("\n");
}

/**
 * The text between the markers (without them), or null when a document has no such pair.
 * @param {string} doc
 */
export function markedTable(doc) {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) return null;
  return doc.slice(start + BEGIN.length, end).trim();
}

/**
 * `doc` with the table of `sizes` between its markers.
 * @param {string} doc
 * @param {Sizes} sizes
 */
export function withSizeTable(doc, sizes) {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`no ${BEGIN} ... ${END} pair`);
  return `${doc.slice(0, start + BEGIN.length)}\n${sizeTable(sizes)}\n${doc.slice(end)}`;
}

/**
 * How `fresh` differs from `recorded` beyond `tolerance`: workers built but not recorded, recorded
 * but not built, and figures moved by more than `tolerance` of the recorded one. Empty when none.
 * @param {Sizes} fresh
 * @param {Sizes} recorded
 * @param {number} [tolerance]
 */
export function sizeDrift(fresh, recorded, tolerance = TOLERANCE) {
  const out = [];
  for (const name of Object.keys(fresh)) if (!(name in recorded)) out.push(`${name}: built, not in ${SIZES_JSON}`);
  for (const name of Object.keys(recorded)) if (!(name in fresh)) out.push(`${name}: in ${SIZES_JSON}, not built`);
  for (const [name, was] of Object.entries(recorded)) {
    const now = fresh[name];
    if (!now) continue;
    for (const k of /** @type {const} */ (["minified", "gzip"])) {
      if (Math.abs(now[k] - was[k]) > tolerance * was[k])
        out.push(`${name}: ${k} ${kib(now[k])} KiB, recorded ${kib(was[k])} KiB (more than ${tolerance * 100}% apart)`);
    }
  }
  return out;
}

/**
 * The workers of `sizes` above their budget (BUDGETS), one line each. Empty when none.
 * @param {Partial<Sizes>} sizes
 * @param {Record<string, number>} [budgets]
 */
export function overBudget(sizes, budgets = BUDGETS) {
  const out = [];
  for (const [name, max] of Object.entries(budgets)) {
    const s = sizes[name];
    if (s && s.gzip > max) out.push(`${name}: gzip ${kib(s.gzip)} KiB, over its budget of ${kib(max)} KiB`);
  }
  return out;
}
