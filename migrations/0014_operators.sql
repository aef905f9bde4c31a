-- Operators and API tokens (docs/operations.md "Operators and roles"). No number and no name: an
-- invitation is found by a keyed hash of its number (HKDF of SEAL_KEY), an operator by the person's
-- directory id; both show a masked number. A token is found by the SHA-256 of its secret.
CREATE TABLE operator_invites (
  phone_key  TEXT PRIMARY KEY,        -- derivedToken(SEAL_KEY, "operator-invite", number)
  role       TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
  masked     TEXT NOT NULL,           -- 010-****-9012
  granted_by TEXT NOT NULL,           -- the actor: operator:<id> or token:<name>
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE TABLE operators (
  id            TEXT PRIMARY KEY,     -- op_ and 16 random characters: the audit's actor
  subscriber_id INTEGER NOT NULL UNIQUE, -- the person (as links are): ends when the person leaves the directory
  role          TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
  masked        TEXT NOT NULL,        -- the number they took the role with, masked
  granted_by    TEXT NOT NULL,
  taken_at      INTEGER NOT NULL,
  last_seen_at  INTEGER
);
CREATE TABLE api_tokens (
  name         TEXT PRIMARY KEY,      -- [a-z0-9][a-z0-9-]{0,31}: the audit's actor token:<name>
  secret_hash  TEXT NOT NULL UNIQUE,  -- SHA-256 of the token
  role         TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
  created_by   TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER
);
