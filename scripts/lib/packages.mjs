// The packages beside the product (bench/, capacity/, investigations/): each has its own
// package.json and package-lock.json, outside the root's install (the root's `npm ci` installs the
// product and its tests only). `ensureInstalled` installs one with `npm ci --prefix <dir>` when its
// node_modules was not installed from its lock as it is now (a stamp holds the lock's hash), so
// `npm run bench` and `npm run check` work from a clean clone and install nothing twice.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const STAMP = ".installed-lock";

/** The lock's hash: what the package's node_modules was installed from. */
function lockHash(dir) {
  return createHash("sha256")
    .update(readFileSync(join(root, dir, "package-lock.json")))
    .digest("hex");
}

/** Whether `dir`'s node_modules was installed from its lock as it is now. */
export function isInstalled(dir) {
  const stamp = join(root, dir, "node_modules", STAMP);
  return existsSync(stamp) && readFileSync(stamp, "utf8").trim() === lockHash(dir);
}

/** Installs `dir` (`npm ci --prefix dir`) unless it is installed from its lock; throws when npm fails. */
export function ensureInstalled(dir) {
  if (isInstalled(dir)) return;
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["ci", "--prefix", dir, "--no-audit", "--no-fund"], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.status !== 0) throw new Error(`npm ci --prefix ${dir} failed (exit ${r.status ?? r.signal})`);
  writeFileSync(join(root, dir, "node_modules", STAMP), `${lockHash(dir)}\n`);
}
