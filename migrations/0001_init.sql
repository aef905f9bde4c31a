-- Provider storage in D1 (DESIGN.md §3; docs/storage.md describes every table).

-- Registered applications. The secret is sealed (AES-256-GCM under SEAL_KEY) because the field
-- cipher of spec §2.2 is keyed by it, so it must be recoverable; a rotated-out secret stays usable
-- until previous_secret_until (issue 5).
CREATE TABLE clients (
  client_id              TEXT PRIMARY KEY,
  name                   TEXT NOT NULL,
  secret_sealed          TEXT NOT NULL,
  previous_secret_sealed TEXT,
  previous_secret_until  INTEGER,
  redirect_uris          TEXT NOT NULL,              -- JSON array of exact strings
  items                  TEXT NOT NULL,              -- JSON array of agreed identity items
  auto_login             INTEGER NOT NULL DEFAULT 0, -- 1: automatic login allowed
  status                 TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL
);

-- The embedded carrier directory (the default `confirm` implementation reads it).
CREATE TABLE subscribers (
  id             INTEGER PRIMARY KEY,
  telco          TEXT NOT NULL CHECK (telco IN ('S', 'K', 'L')),
  phone          TEXT NOT NULL UNIQUE,               -- 01012345678, digits only
  name           TEXT NOT NULL,
  gender         TEXT NOT NULL CHECK (gender IN ('M', 'F')),
  birth          TEXT NOT NULL,                      -- YYYY-MM-DD
  foreign_cd     TEXT NOT NULL CHECK (foreign_cd IN ('L', 'F')),
  ci             TEXT NOT NULL,
  test_otp_hash  TEXT,                               -- test numbers: SHA-256 of the fixed code; no SMS
  created_at     INTEGER NOT NULL
);

-- Pairwise identifiers: one plid per (client, subscriber). Disconnect deletes the row; the next
-- login makes a new plid.
CREATE TABLE links (
  client_id     TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  subscriber_id INTEGER NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
  plid          TEXT NOT NULL UNIQUE,
  items         TEXT NOT NULL,                       -- JSON array: the items consented to
  consented_at  INTEGER NOT NULL,
  PRIMARY KEY (client_id, subscriber_id)
);

-- Automatic-login grants: one per (device, client); the device id lives in a cookie, only its
-- hash here. first_report_pending drives autoStatusCheck=Y (DESIGN.md §4.7).
CREATE TABLE auto_login_grants (
  device_hash          TEXT NOT NULL,
  client_id            TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  subscriber_id        INTEGER NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
  expires_at           INTEGER NOT NULL,
  first_report_pending INTEGER NOT NULL DEFAULT 1,
  created_at           INTEGER NOT NULL,
  PRIMARY KEY (device_hash, client_id)
);
CREATE INDEX auto_login_grants_by_subscriber ON auto_login_grants (client_id, subscriber_id);

-- Audit events: what happened, never personal data (no names, numbers, ci, codes or tokens).
CREATE TABLE audit_events (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  at        INTEGER NOT NULL,
  type      TEXT NOT NULL,
  client_id TEXT,
  outcome   TEXT NOT NULL DEFAULT 'ok',
  detail    TEXT                                     -- JSON, no personal data
);
CREATE INDEX audit_events_by_time ON audit_events (at);
