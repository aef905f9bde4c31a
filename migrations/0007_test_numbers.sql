-- Test numbers for app review (docs/operations.md "Test numbers"): a subscriber row with a fixed
-- code (test_otp_hash) that signs in only for the listed clients until its expiry. The dev seed's
-- test numbers leave both NULL (any client, no expiry).
ALTER TABLE subscribers ADD COLUMN test_clients TEXT;        -- JSON array of client ids
ALTER TABLE subscribers ADD COLUMN test_expires_at INTEGER;  -- epoch ms
