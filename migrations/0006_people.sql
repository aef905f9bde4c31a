-- People in control of their login (docs/account.md, docs/events.md): a client's optional
-- address for signed events about its users (RFC 8417 security event tokens, pushed per RFC 8935),
-- and each link's first consent and last login, shown on the person's /account page (links made
-- before this migration show their latest consent instead of the first).
ALTER TABLE clients ADD COLUMN events_uri TEXT;
ALTER TABLE links ADD COLUMN last_login_at INTEGER;
ALTER TABLE links ADD COLUMN linked_at INTEGER;
