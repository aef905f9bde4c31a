-- The stream API's access tokens (docs/events.md "Shared Signals"): an app's token from the token
-- endpoint's client_credentials grant, scope `ssf`, good only on its own stream. Only the SHA-256 of
-- the token is kept, with the secret it was issued under (a token ends with that secret).
CREATE TABLE ssf_tokens (
  token_hash TEXT PRIMARY KEY,
  client_id  TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  secret_id  TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX ssf_tokens_client ON ssf_tokens (client_id, expires_at);
