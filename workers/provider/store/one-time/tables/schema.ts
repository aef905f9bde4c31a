// A one-time-store object's tables (docs/storage.md "Durable Object OneTimeStore"), and the
// migration that brings an object made by an earlier release to them. Which module reads and writes
// each: codes.ts (`codes`, `tokens`), entries.ts (`entries`, `counters`), ended-plids.ts
// (`revoked_plids`, `event_outbox`), audit-outbox.ts (`audit_outbox`, `audit_mark`).

const SCHEMA = `
CREATE TABLE IF NOT EXISTS codes (
  hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, grant_json TEXT NOT NULL, challenge TEXT,
  expires_at INTEGER NOT NULL, used_at INTEGER, token_hash TEXT, purge_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
  hash TEXT PRIMARY KEY, grant_json TEXT NOT NULL, expires_at INTEGER NOT NULL,
  reads INTEGER NOT NULL DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS entries (
  key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS counters (
  key TEXT PRIMARY KEY, count INTEGER NOT NULL, window_end INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS entries_expiry ON entries (expires_at);
CREATE INDEX IF NOT EXISTS counters_expiry ON counters (window_end);
CREATE TABLE IF NOT EXISTS revoked_plids (
  plid TEXT PRIMARY KEY, at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS event_outbox (
  jti TEXT PRIMARY KEY, client_id TEXT NOT NULL, plid TEXT NOT NULL, reason TEXT NOT NULL,
  created_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER, last_outcome TEXT,
  event_at INTEGER);
CREATE TABLE IF NOT EXISTS audit_outbox (
  id INTEGER PRIMARY KEY, at INTEGER NOT NULL, type TEXT NOT NULL,
  client_id TEXT, outcome TEXT NOT NULL, detail TEXT);
CREATE TABLE IF NOT EXISTS audit_mark (
  id INTEGER PRIMARY KEY CHECK (id = 1), tokens_rowid INTEGER NOT NULL);
`;

/** Creates the tables where they are missing and migrates an object made by an earlier release. */
export function createTables(sql: SqlStorage): void {
  sql.exec(SCHEMA);
  migrate(sql);
}

/** Columns added after the first release: an object created before gets them once. */
function migrate(sql: SqlStorage): void {
  const columns = new Set(
    sql
      .exec<{ name: string }>("PRAGMA table_info(tokens)")
      .toArray()
      .map((c) => c.name),
  );
  if (!columns.has("plid")) sql.exec("ALTER TABLE tokens ADD COLUMN plid TEXT");
  if (!columns.has("issued_at")) sql.exec("ALTER TABLE tokens ADD COLUMN issued_at INTEGER NOT NULL DEFAULT 0");
  if (!columns.has("secret_id")) sql.exec("ALTER TABLE tokens ADD COLUMN secret_id TEXT");
  if (!columns.has("first_key")) sql.exec("ALTER TABLE tokens ADD COLUMN first_key TEXT");
  if (!columns.has("client_id")) sql.exec("ALTER TABLE tokens ADD COLUMN client_id TEXT");
  // OpenID Connect UserInfo's reads, counted apart from /v1/user/me's (docs/oidc.md "UserInfo")
  if (!columns.has("info_reads")) sql.exec("ALTER TABLE tokens ADD COLUMN info_reads INTEGER NOT NULL DEFAULT 0");
  // the audit counts tokens above the mark: the rows an object holds when the count begins were
  // audited one by one before
  sql.exec("INSERT OR IGNORE INTO audit_mark (id, tokens_rowid) SELECT 1, coalesce(max(rowid), 0) FROM tokens");
  // the audit events' sequence number (`<object>-<seq>` ids, store/audit-archive.ts): it never goes
  // back, where the outbox's own ids start again once it is empty
  const markColumns = sql
    .exec<{ name: string }>("PRAGMA table_info(audit_mark)")
    .toArray()
    .map((c) => c.name);
  if (!markColumns.includes("audit_seq"))
    sql.exec("ALTER TABLE audit_mark ADD COLUMN audit_seq INTEGER NOT NULL DEFAULT 0");
  // the object's name in the trail, kept (an object woken by its alarm is not told its name), and
  // the last outbox row of the batch being written, so a retry writes exactly that batch again
  if (!markColumns.includes("label")) sql.exec("ALTER TABLE audit_mark ADD COLUMN label TEXT");
  if (!markColumns.includes("inflight_last")) sql.exec("ALTER TABLE audit_mark ADD COLUMN inflight_last INTEGER");
  const codeColumns = new Set(
    sql
      .exec<{ name: string }>("PRAGMA table_info(codes)")
      .toArray()
      .map((c) => c.name),
  );
  if (!codeColumns.has("plid")) sql.exec("ALTER TABLE codes ADD COLUMN plid TEXT");
  // a credential change's event carries the change's time (its event_timestamp)
  if (
    !sql
      .exec<{ name: string }>("PRAGMA table_info(event_outbox)")
      .toArray()
      .some((c) => c.name === "event_at")
  )
    sql.exec("ALTER TABLE event_outbox ADD COLUMN event_at INTEGER");
  // codes.issued_at is neither written nor read: an ended plid is refused whatever the issue time.
  // tokens.issued_at is the redemption's time (the audit counts it).
  if (!codeColumns.has("issued_at")) sql.exec("ALTER TABLE codes ADD COLUMN issued_at INTEGER NOT NULL DEFAULT 0");
  if (!codeColumns.has("secret_id")) sql.exec("ALTER TABLE codes ADD COLUMN secret_id TEXT");
  if (!codeColumns.has("first_key")) sql.exec("ALTER TABLE codes ADD COLUMN first_key TEXT");
  // what an OpenID Connect code's id_token claims of its sign-in (tables/codes.ts `idClaimsOf`)
  if (!codeColumns.has("id_claims")) sql.exec("ALTER TABLE codes ADD COLUMN id_claims TEXT");
  // A code's redemption (used_at set once) stores its token in the same statement: the code's
  // grant, with the secret that authenticated the exchange, the key of its first report, and its
  // client and time, which are the redemption's audit record. An object whose trigger wrote one
  // audit row per redemption has it replaced once.
  const trigger = sql
    .exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'code_redeemed'")
    .toArray()[0];
  if (trigger && !trigger.sql.includes("NEW.client_id)")) sql.exec("DROP TRIGGER code_redeemed");
  sql.exec(`CREATE TRIGGER IF NOT EXISTS code_redeemed AFTER UPDATE OF used_at ON codes
    WHEN OLD.used_at IS NULL AND NEW.used_at IS NOT NULL
    BEGIN
      INSERT INTO tokens (hash, grant_json, expires_at, plid, issued_at, secret_id, first_key, client_id)
        VALUES (NEW.token_hash, NEW.grant_json, NEW.purge_at, NEW.plid, NEW.used_at, NEW.secret_id, NEW.first_key, NEW.client_id);
    END`);
}

/** Whether the object holds anything (the question that re-arms the sweep): `EXISTS`, not a count that walks every row. */
export function holdsAnything(sql: SqlStorage): boolean {
  return (
    sql
      .exec<{ n: number }>(
        `SELECT EXISTS (SELECT 1 FROM codes) OR EXISTS (SELECT 1 FROM tokens) OR EXISTS (SELECT 1 FROM entries)
           OR EXISTS (SELECT 1 FROM counters) OR EXISTS (SELECT 1 FROM revoked_plids)
           OR EXISTS (SELECT 1 FROM event_outbox) OR EXISTS (SELECT 1 FROM audit_outbox) AS n`,
      )
      .one().n > 0
  );
}
