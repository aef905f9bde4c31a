// A directory shard's tables (docs/storage.md "Directory shards"). Which module reads and writes
// each: people.ts (`people`, `numbers`, `meta`), ci-index.ts (`by_ci`, `ci_leases`), links.ts
// (`links`, `ended_clients`, `plid_homes`), grants.ts (`grants`), jobs.ts (`jobs`); adoption.ts
// writes people, numbers, links and plid_homes as the single database held them (the move,
// workers/admin/migrate/).

const SCHEMA = `
CREATE TABLE IF NOT EXISTS people (
  id              INTEGER PRIMARY KEY,   -- sequence × SHARD_SLOTS + this shard: never given twice
  ci              TEXT NOT NULL,
  telco           TEXT NOT NULL,
  phone           TEXT NOT NULL,         -- the number they hold (its entry in numbers may be in another shard)
  name            TEXT NOT NULL,
  gender          TEXT NOT NULL,
  birth           TEXT NOT NULL,
  foreign_cd      TEXT NOT NULL,
  test_otp_hash   TEXT,                  -- test numbers: SHA-256 of the fixed code
  test_clients    TEXT,                  -- registered review test numbers: JSON array of client ids
  test_expires_at INTEGER,
  created_at      INTEGER NOT NULL,
  sim_changed_at  INTEGER,               -- the carrier's risk signals (risk.ts): when the SIM last changed,
  sim_change_kind TEXT,                  -- by whom ('person', 'carrier'; null: the person's),
  ported_at       INTEGER                -- and when the number was last ported (epoch ms)
);
CREATE TABLE IF NOT EXISTS numbers (phone TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS by_ci (ci TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
-- who is deciding a ci's person now (an import's rows, a carrier-API sign-in): one writer per ci
CREATE TABLE IF NOT EXISTS ci_leases (ci TEXT PRIMARY KEY, holder TEXT NOT NULL, until INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS links (
  subscriber_id INTEGER NOT NULL,
  client_id     TEXT NOT NULL,
  plid          TEXT NOT NULL UNIQUE,
  items         INTEGER NOT NULL,        -- consented items, one bit each in IDENTITY_ITEMS order
  consented_at  INTEGER NOT NULL,
  linked_at     INTEGER NOT NULL,
  last_login_at INTEGER,
  PRIMARY KEY (subscriber_id, client_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_by_client ON links (client_id);
CREATE TABLE IF NOT EXISTS grants (
  device_hash   TEXT NOT NULL,
  client_id     TEXT NOT NULL,
  subscriber_id INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  PRIMARY KEY (device_hash, client_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS grants_by_subscriber ON grants (subscriber_id, client_id);
CREATE INDEX IF NOT EXISTS grants_by_expiry ON grants (expires_at);
-- plids made before the directory was sharded (moved from the single database): their first hex
-- digits do not name their person's home, so the shard they name keeps where their link is
CREATE TABLE IF NOT EXISTS plid_homes (plid TEXT PRIMARY KEY, home INTEGER NOT NULL) WITHOUT ROWID;
-- clients deleted: a consent (or a link moved in) for one is refused here; written by the
-- deletion's first sweep of this shard's links, in the same step (takeClientLinks)
CREATE TABLE IF NOT EXISTS ended_clients (client_id TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('sequence', 0), ('people', 0), ('test_numbers', 0);
CREATE TABLE IF NOT EXISTS jobs (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  job        TEXT NOT NULL,              -- JSON of a DirectoryJob
  created_at INTEGER NOT NULL,
  attempts   INTEGER NOT NULL DEFAULT 0,
  next_at    INTEGER NOT NULL,
  run        TEXT                        -- held for an import run until it commits (or RUN_HOLD_MS)
);
-- a claim checks for a queued removal of the person it gives a number to (an import run may hold
-- thousands); only removals are indexed
CREATE INDEX IF NOT EXISTS jobs_removals ON jobs (job ->> '$.id') WHERE job ->> '$.kind' = 'remove';
-- registered review test numbers (few): listed and counted through this index, never a scan of people
CREATE INDEX IF NOT EXISTS people_review ON people (phone) WHERE test_clients IS NOT NULL;
-- passkeys (passkeys.ts): one user handle per person (ours, naming this shard), their credentials,
-- and the challenges their assertions and enrolments took (each once, kept until it would expire)
CREATE TABLE IF NOT EXISTS passkey_people (
  subscriber_id INTEGER PRIMARY KEY,
  handle        TEXT NOT NULL UNIQUE,
  confirmed_at  INTEGER NOT NULL         -- the number last confirmed for them (the carrier's re-check)
);
CREATE TABLE IF NOT EXISTS passkeys (
  credential_id TEXT PRIMARY KEY,        -- base64url, the authenticator's
  subscriber_id INTEGER NOT NULL,
  public_key    BLOB NOT NULL,           -- COSE, as the authenticator gave it
  counter       INTEGER NOT NULL,
  transports    TEXT NOT NULL,           -- JSON array
  name          TEXT NOT NULL,
  device        TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  usable_at     INTEGER NOT NULL,
  last_used_at  INTEGER,
  made_with     TEXT NOT NULL,           -- 'sms' (waits the activation delay) or 'passkey'
  told          INTEGER NOT NULL DEFAULT 0 -- 'sms': the "now usable" SMS went out
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS passkeys_by_subscriber ON passkeys (subscriber_id);
CREATE TABLE IF NOT EXISTS passkey_uses (challenge TEXT PRIMARY KEY, until INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS passkey_uses_by_until ON passkey_uses (until);
CREATE TRIGGER IF NOT EXISTS people_counted AFTER INSERT ON people BEGIN
  UPDATE meta SET value = value + 1 WHERE key = 'people';
  UPDATE meta SET value = value + 1 WHERE key = 'test_numbers' AND NEW.test_otp_hash IS NOT NULL;
END;
CREATE TRIGGER IF NOT EXISTS people_uncounted AFTER DELETE ON people BEGIN
  UPDATE meta SET value = value - 1 WHERE key = 'people';
  UPDATE meta SET value = value - 1 WHERE key = 'test_numbers' AND OLD.test_otp_hash IS NOT NULL;
END;
`;

/** Creates the tables, indexes and triggers where they are missing, and adds the columns added since. */
export function createTables(sql: SqlStorage): void {
  sql.exec(SCHEMA);
  const columns = new Set(
    sql
      .exec<{ name: string }>("PRAGMA table_info(people)")
      .toArray()
      .map((c) => c.name),
  );
  for (const [name, type] of [
    ["sim_changed_at", "INTEGER"],
    ["sim_change_kind", "TEXT"],
    ["ported_at", "INTEGER"],
  ] as const)
    if (!columns.has(name)) sql.exec(`ALTER TABLE people ADD COLUMN ${name} ${type}`);
}
