-- What an app's other owners are told on their next visit to /developers (docs/developers.md
-- "Review"): a live app's redirect URIs changed or its secret rotated by one of them. Shown once.
CREATE TABLE developer_notices (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  subscriber_id INTEGER NOT NULL,     -- the owner to tell (as app_members)
  client_id     TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  kind          TEXT NOT NULL CHECK (kind IN ('redirect_uris', 'secret_rotated', 'review_approved', 'review_rejected', 'events_paused')),
  actor         TEXT NOT NULL,        -- developer:<id> or operator:<id>
  created_at    INTEGER NOT NULL
);
CREATE INDEX developer_notices_person ON developer_notices (subscriber_id);
