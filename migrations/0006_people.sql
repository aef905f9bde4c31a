-- People in control of their login (docs/account.md, docs/events.md): a client's optional
-- address for signed events about its users (RFC 8417 security event tokens, pushed per RFC 8935),
-- and each link's last login, shown on the person's /account page.
ALTER TABLE clients ADD COLUMN events_uri TEXT;
ALTER TABLE links ADD COLUMN last_login_at INTEGER;
