-- What an app's events did (docs/events.md "Deliveries and pausing"): its last 100 delivery attempts
-- by status class (no plid, no timing), and since when its events are paused after 24 hours of
-- failures (NULL: flowing). Paused events are kept, delivered once resumed, up to 7 days.
ALTER TABLE clients ADD COLUMN events_paused_at INTEGER;
CREATE TABLE event_deliveries (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  client_id TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  type      TEXT NOT NULL,            -- plid-deleted, test
  class     TEXT NOT NULL CHECK (class IN ('delivered', 'refused', 'failed', 'timed_out')),
  attempt   INTEGER NOT NULL,
  at        INTEGER NOT NULL
);
CREATE INDEX event_deliveries_app ON event_deliveries (client_id, id);
