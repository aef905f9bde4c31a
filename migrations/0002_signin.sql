-- Sign-in (issue 3, docs/signin.md): the development SMS outbox. Written only by the `outbox`
-- sender, which refuses to run unless DEV_MODE=true; rows older than an hour are deleted on write.
CREATE TABLE sms_outbox (
  id    INTEGER PRIMARY KEY AUTOINCREMENT,
  at    INTEGER NOT NULL,
  phone TEXT NOT NULL,   -- the test world's numbers only (DEV_MODE)
  body  TEXT NOT NULL
);
CREATE INDEX sms_outbox_by_phone ON sms_outbox (phone, id);
