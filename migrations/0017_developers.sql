-- The developer console (docs/developers.md). An app's stage beside its status: a developer's new
-- app starts in `testing` (only its team and its test numbers sign in) and goes `live` when an
-- editor approves its review; every app registered so far (by operators, the seed) is live.
ALTER TABLE clients ADD COLUMN stage TEXT NOT NULL DEFAULT 'live' CHECK (stage IN ('testing', 'live'));

-- An app's team. A membership is the person's (by directory id, as operator roles and links are)
-- and ends when the number passes to another person; `phone_key` (a keyed hash of the number,
-- HKDF of SEAL_KEY) lets the testing stage admit the team's numbers before anyone is looked up.
CREATE TABLE app_members (
  client_id     TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  subscriber_id INTEGER NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('owner', 'member')),
  phone_key     TEXT NOT NULL,        -- derivedToken(SEAL_KEY, "developer-member", number)
  masked        TEXT NOT NULL,        -- 010-****-5678
  developer     TEXT NOT NULL,        -- the person's opaque developer id (the audit's actor developer:<id>)
  added_by      TEXT NOT NULL,        -- the actor who invited (or created the app)
  added_at      INTEGER NOT NULL,
  PRIMARY KEY (client_id, subscriber_id)
);
CREATE INDEX app_members_person ON app_members (subscriber_id, role);
CREATE INDEX app_members_phone ON app_members (client_id, phone_key);

-- Invitations to a team, found by a keyed hash of the number; accepted by the number's person on
-- /developers (never silently), within 7 days.
CREATE TABLE app_invites (
  client_id  TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  phone_key  TEXT NOT NULL,           -- derivedToken(SEAL_KEY, "developer-member", number)
  role       TEXT NOT NULL CHECK (role IN ('owner', 'member')),
  masked     TEXT NOT NULL,
  invited_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (client_id, phone_key)
);

-- Test numbers the service allocated to an app, from a range no subscriber holds (docs/developers.md
-- "Test numbers"); each is also a review test number of the directory listing only its app.
CREATE TABLE app_test_numbers (
  phone      TEXT PRIMARY KEY,        -- 0100100xxxx..: never a subscriber's number
  client_id  TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX app_test_numbers_app ON app_test_numbers (client_id);

-- Reviews: an owner submits the app (or, once live, a change of its name, items, purposes or
-- retention); an editor approves or rejects with a reason. At most one pending a time per app.
CREATE TABLE app_reviews (
  id           TEXT PRIMARY KEY,      -- rv_ and 16 random characters
  client_id    TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  state        TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'withdrawn')),
  proposed     TEXT NOT NULL,         -- JSON {name, items, purpose, retention}
  submitted_by TEXT NOT NULL,
  submitted_at INTEGER NOT NULL,
  decided_by   TEXT,
  decided_at   INTEGER,
  reason       TEXT
);
CREATE UNIQUE INDEX app_reviews_pending ON app_reviews (client_id) WHERE state = 'pending';
CREATE INDEX app_reviews_queue ON app_reviews (state, submitted_at);
