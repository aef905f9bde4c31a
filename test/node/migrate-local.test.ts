// `npm start`'s local migrations (scripts/lib/migrate-local.mjs) write what `wrangler d1 migrations
// apply --local` writes, where `wrangler dev --persist-to` reads it: wrangler finds nothing left to
// apply after them, and they find nothing after wrangler. A file that fails leaves nothing of
// itself, stops the files after it, and is named in the error.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { getPlatformProxy } from "wrangler";
import { applyLocalMigrations, localD1Databases } from "../../scripts/lib/migrate-local.mjs";
import { migrationSummary, migrationWarnings } from "../../scripts/lib/migrations.mjs";
import { runCommand } from "./run";

const root = join(import.meta.dirname, "..", "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const env = {
  ...process.env,
  WRANGLER_LOG: "log",
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: "true",
};
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "phone-login-migrate-test-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function wranglerApply(configPath: string, persist: string, binding = "DB"): Promise<string> {
  const run = await runCommand(
    wrangler,
    ["d1", "migrations", "apply", binding, "--local", "--persist-to", persist, "-c", configPath],
    { cwd: root, env },
  );
  expect(run.status, run.stdout + run.stderr).toBe(0);
  stderr = run.stderr;
  return stripVTControlCharacters(run.stdout);
}
/** The last `wranglerApply`'s stderr. */
let stderr = "";

/** The rows of `sql` in the local D1 of `configPath` under `persist`. */
async function query(configPath: string, persist: string, sql: string): Promise<Record<string, unknown>[]> {
  const proxy = await getPlatformProxy<{
    DB: { prepare(sql: string): { all(): Promise<{ results: Record<string, unknown>[] }> } };
  }>({ configPath, persist: { path: join(persist, "v3") } });
  try {
    return (await proxy.env.DB.prepare(sql).all()).results;
  } finally {
    await proxy.dispose();
  }
}

/** DB, its migrations in `migrations/`. */
const DB = { binding: "DB", database_name: "t", database_id: "11111111-1111-4111-8111-111111111111" };

/** A temporary project: its wrangler.json with these databases, and where its local state goes. */
function project(databases: Record<string, string>[]): { dir: string; configPath: string; persist: string } {
  const dir = tempDir();
  const configPath = join(dir, "wrangler.json");
  writeFileSync(
    configPath,
    JSON.stringify({ name: "migrate-test", compatibility_date: "2026-04-20", d1_databases: databases }),
  );
  return { dir, configPath, persist: join(dir, "state") };
}

describe("npm start's local D1 migrations", () => {
  it("every D1 database of the configuration, each from its own folder into its own table; wrangler then finds none to apply in either", async () => {
    const { dir, configPath, persist } = project([
      DB,
      {
        binding: "EXTRA",
        database_name: "x",
        database_id: "22222222-2222-4222-8222-222222222222",
        migrations_dir: "extra-migrations",
        migrations_table: "extra_migrations",
      },
    ]);
    for (const m of ["migrations", "extra-migrations"]) mkdirSync(join(dir, m));
    writeFileSync(join(dir, "migrations", "0001_one.sql"), "CREATE TABLE one (x INTEGER);");
    writeFileSync(join(dir, "extra-migrations", "0001_a.sql"), "CREATE TABLE a (x INTEGER);");
    writeFileSync(join(dir, "extra-migrations", "0002_b.sql"), "CREATE TABLE b (x INTEGER);");
    // what npm start's fallback goes over, one wrangler run a binding
    expect((await localD1Databases(configPath)).map((d) => d.binding)).toEqual(["DB", "EXTRA"]);
    expect(await applyLocalMigrations({ configPath, persist })).toEqual([
      "D1 DB: applied 1 migration (0001_one.sql)",
      "D1 EXTRA: applied 2 migrations (0001_a.sql to 0002_b.sql)",
    ]);
    expect(await wranglerApply(configPath, persist, "DB")).toContain("No migrations to apply");
    expect(await wranglerApply(configPath, persist, "EXTRA")).toContain("No migrations to apply");
  });

  it("a fresh state gets every file of migrations/ in one line, and wrangler then finds none to apply", async () => {
    const persist = tempDir();
    const configPath = join(root, "wrangler.toml");
    const sql = readdirSync(join(root, "migrations"))
      .filter((f) => f.endsWith(".sql"))
      .sort();
    expect(await applyLocalMigrations({ configPath, persist })).toEqual([
      `D1 DB: applied ${sql.length} migrations (${sql[0]} to ${sql[sql.length - 1]})`,
    ]);
    const none = await wranglerApply(configPath, persist);
    expect(none).toContain("No migrations to apply");
    // npm start's fallback shows wrangler's run in the same line as its own (scripts/lib/migrations.mjs)
    expect(migrationSummary("DB", none)).toBe("D1 DB: no migrations to apply");
    // wrangler's notes on wrangler.toml, which wrangler dev prints again next, are left out; other blocks kept
    expect(stderr).toContain("Processing wrangler.toml configuration");
    expect(migrationWarnings(stderr)).toBe("");
    const other = "▲ [WARNING] Something else\n\n    a detail\n";
    expect(migrationWarnings(stderr + other)).toBe(other.trim());
    expect(migrationSummary("DB", "an output in a form wrangler did not print before")).toBeNull();
    expect(await applyLocalMigrations({ configPath, persist })).toEqual(["D1 DB: no migrations to apply"]);
  });

  it("after wrangler has applied some files, only the rest run, in name order; a failing file leaves nothing and stops the later ones", async () => {
    const { dir, configPath, persist } = project([DB]);
    const migrations = join(dir, "migrations");
    mkdirSync(migrations);
    writeFileSync(join(migrations, "0001_one.sql"), "CREATE TABLE one (x INTEGER);\nINSERT INTO one VALUES (1);\n");
    const one = await wranglerApply(configPath, persist);
    expect(one).toMatch(/0001_one\.sql\s+│ ✅/);
    expect(migrationSummary("DB", one)).toBe("D1 DB: applied 1 migration (0001_one.sql)");
    writeFileSync(join(migrations, "0003_three.sql"), "CREATE TABLE three (x INTEGER);");
    writeFileSync(
      join(migrations, "0002_two.sql"),
      "-- a comment; with a semicolon\nCREATE TABLE two (x TEXT);\nINSERT INTO two VALUES ('a;b');\n",
    );
    expect(await applyLocalMigrations({ configPath, persist })).toEqual([
      "D1 DB: applied 2 migrations (0002_two.sql to 0003_three.sql)",
    ]);
    expect(await query(configPath, persist, "SELECT x FROM two")).toEqual([{ x: "a;b" }]);
    expect(await wranglerApply(configPath, persist)).toContain("No migrations to apply");

    writeFileSync(
      join(migrations, "0004_bad.sql"),
      "CREATE TABLE four (x INTEGER);\nINSERT INTO nowhere VALUES (1);\n",
    );
    writeFileSync(join(migrations, "0005_after.sql"), "CREATE TABLE five (x INTEGER);");
    await expect(applyLocalMigrations({ configPath, persist })).rejects.toThrow(
      /^D1 DB: migration 0004_bad\.sql failed: .*no such table: nowhere/,
    );
    const tables = (await query(configPath, persist, "SELECT name FROM sqlite_master WHERE type = 'table'")).map(
      (r) => r.name,
    );
    expect(tables).toEqual(expect.arrayContaining(["one", "two", "three"]));
    expect(tables).not.toContain("four");
    expect(tables).not.toContain("five");
    const applied = await query(configPath, persist, "SELECT name FROM d1_migrations ORDER BY id");
    expect(applied.map((r) => r.name)).toEqual(["0001_one.sql", "0002_two.sql", "0003_three.sql"]);
  });
});
