-- Platform review: keys that statements look rows up by, and that had no index leading with them.
-- links and auto_login_grants are keyed (client_id, ...), so deleting one subscriber
-- (admin-store.deleteSubscriber) and D1's ON DELETE CASCADE check from subscribers scanned both
-- whole tables; expired grants are purged by expiry (registry.putAutoLoginGrant).
CREATE INDEX links_by_subscriber ON links (subscriber_id);
CREATE INDEX auto_login_grants_by_subscriber_id ON auto_login_grants (subscriber_id);
CREATE INDEX auto_login_grants_by_expiry ON auto_login_grants (expires_at);
