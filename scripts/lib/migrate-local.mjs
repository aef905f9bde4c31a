// The local D1 migrations of `npm start`, applied in one workerd. `wrangler d1 migrations apply
// --local` starts a Miniflare of its own for every migration file: on the 2-core CI machine 9.8 s for
// the 20 files of a fresh state directory, most of `npm start`'s 13 s before Ready, paid again by
// every test server and capacity run. This applies the same files, the same way, through one
// getPlatformProxy (wrangler's own local D1, persisted where `wrangler dev --persist-to` reads it):
// 2.8 s with wrangler's import. What it writes is what wrangler writes, so either tool sees the
// other's migrations as applied:
// - the `d1_migrations` table (wrangler.toml's `migrations_table` when set), in wrangler's form;
// - each pending file in name order, its statements split as wrangler splits them
//   (`unstable_splitSqlQuery`), run in one D1 batch with the row that records it: a file that fails
//   leaves nothing of itself, and nothing after it runs.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { appliedLine } from "./migrations.mjs";

/**
 * What this uses of a D1 binding (the node type checks do not load the Workers types).
 * @typedef {{ bind(...values: unknown[]): LocalD1Statement, run(): Promise<unknown>, all(): Promise<{ results: Record<string, unknown>[] }> }} LocalD1Statement
 * @typedef {{ prepare(sql: string): LocalD1Statement, batch(statements: LocalD1Statement[]): Promise<unknown> }} LocalD1
 */

/**
 * The top-level D1 databases of `configPath`, as `wrangler dev` binds them locally: what both this
 * and wrangler's own `d1 migrations apply --local` (npm start's fallback) go over.
 * @param {string} configPath
 * @returns {Promise<{ binding: string, database_name?: string, database_id?: string, migrations_dir?: string, migrations_table?: string }[]>}
 */
export async function localD1Databases(configPath) {
  const { experimental_readRawConfig } = await import("wrangler");
  return experimental_readRawConfig({ config: configPath }).rawConfig.d1_databases ?? [];
}

/**
 * Applies every migration of each D1 database in `configPath` that its local state under `persist`
 * (a `wrangler dev --persist-to` directory) has not applied. Returns one line per database (the form
 * `npm start` prints); throws with the database and file named when a migration fails.
 * @param {{ configPath: string, persist: string }} opts
 * @returns {Promise<string[]>}
 */
export async function applyLocalMigrations({ configPath, persist }) {
  const { getPlatformProxy } = await import("wrangler");
  const databases = await localD1Databases(configPath);
  if (!databases.length) return [];
  // Only the databases: the full configuration would start its Durable Objects without their code
  // (workerd warns of each) and print wrangler's notes on it, which `wrangler dev` prints next.
  const dir = mkdtempSync(join(tmpdir(), "phone-login-migrate-"));
  const lines = [];
  try {
    const config = join(dir, "wrangler.json");
    writeFileSync(
      config,
      JSON.stringify({
        name: "phone-login-migrate",
        compatibility_date: "2026-04-20",
        // each database as wrangler dev binds it locally (its ids, preview_database_id included)
        d1_databases: databases.map(({ migrations_dir: _dir, migrations_table: _table, ...binding }) => binding),
      }),
    );
    const proxy = await getPlatformProxy({ configPath: config, persist: { path: join(persist, "v3") } });
    try {
      for (const d of databases) {
        const db = /** @type {LocalD1} */ (proxy.env[d.binding]);
        const folder = resolve(configPath, "..", d.migrations_dir ?? "migrations");
        let pending;
        try {
          pending = await applyMigrationFiles(db, folder, d.migrations_table);
        } catch (e) {
          throw new Error(`D1 ${d.binding}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
        }
        lines.push(appliedLine(d.binding, pending));
      }
    } finally {
      await proxy.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

/**
 * Applies the migrations of `folder` that `db`'s table `table` does not list, each file in one batch
 * with the row that records it, as wrangler does; the files applied, in order. Also what the node
 * tests' servers run on their in-memory D1 (test/node/worker.ts).
 * @param {LocalD1} db
 * @param {string} folder
 * @param {string} [table]
 * @returns {Promise<string[]>}
 */
export async function applyMigrationFiles(db, folder, table = "d1_migrations") {
  const { unstable_splitSqlQuery } = await import("wrangler");
  await db
    .prepare(
      `CREATE TABLE IF NOT EXISTS ${table}(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)`,
    )
    .run();
  const done = new Set((await db.prepare(`SELECT name FROM ${table}`).all()).results.map((r) => r.name));
  const pending = readdirSync(folder)
    .filter((f) => f.endsWith(".sql") && !done.has(f))
    .sort();
  for (const file of pending) {
    const statements = unstable_splitSqlQuery(readFileSync(join(folder, file), "utf8"));
    try {
      await db.batch([
        ...statements.map((s) => db.prepare(s)),
        db.prepare(`INSERT INTO ${table} (name) VALUES (?)`).bind(file),
      ]);
    } catch (e) {
      throw new Error(`migration ${file} failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }
  return pending;
}
