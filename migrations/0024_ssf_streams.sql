-- Shared Signals streams (docs/events.md "Shared Signals"): at most one stream per app, created by
-- the app through the SSF stream configuration API. An app with a stream is sent the standard
-- events (SETs signed ES256 with the published key) and no more of the service's own.
CREATE TABLE ssf_streams (
  client_id        TEXT PRIMARY KEY REFERENCES clients (client_id) ON DELETE CASCADE,
  stream_id        TEXT NOT NULL UNIQUE,
  method           TEXT NOT NULL CHECK (method IN ('push', 'poll')),
  endpoint_url     TEXT,                 -- push: the receiver's URL; poll: NULL (the service's)
  auth_sealed      TEXT,                 -- push: the Authorization header to send, sealed under SEAL_KEY
  events_requested TEXT NOT NULL,        -- JSON array of event type URIs
  description      TEXT,
  status           TEXT NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'paused', 'disabled')),
  reason           TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
);
-- A poll stream's SETs waiting for the receiver to poll and acknowledge them (RFC 8936): the claims,
-- signed at each poll with the key that signs then; a SET leaves when acknowledged.
CREATE TABLE ssf_poll (
  client_id  TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  jti        TEXT NOT NULL,
  claims     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (client_id, jti)
);
