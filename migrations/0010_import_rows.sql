-- The directory import (workers/admin/store.ts upsertSubscribers, docs/account.md): who holds each
-- imported number used to be decided by reads, and written later by an upsert that took any row
-- at the number; a row written there in between (a test number registered, another import giving
-- the number to someone who then signed in) was rewritten in place as the imported person, keeping
-- its id, links, grants and test code. The file's rows are now staged here, and the decision and
-- the writes are one D1 batch (one transaction) reading them from this table, so nothing lands
-- between them. Staged rows are personal data: deleted when the import ends, and any left by an
-- import that died midway by the next import after an hour.
CREATE TABLE import_rows (
  import_id     TEXT NOT NULL,
  seq           INTEGER NOT NULL,                    -- the row's place in the file
  telco         TEXT NOT NULL,
  phone         TEXT NOT NULL,
  name          TEXT NOT NULL,
  gender        TEXT NOT NULL,
  birth         TEXT NOT NULL,
  foreign_cd    TEXT NOT NULL,
  ci            TEXT NOT NULL,
  staged_at     INTEGER NOT NULL,
  subscriber_id INTEGER,                             -- the decision: this person's row (same ci), or NULL: new
  displaced_id  INTEGER,                             -- the decision: another person's row at this number, removed
  PRIMARY KEY (import_id, seq),
  UNIQUE (import_id, phone),                         -- a file names a number once and a person once
  UNIQUE (import_id, ci)
);
CREATE INDEX import_rows_by_subscriber ON import_rows (import_id, subscriber_id);
-- The import finds each person's row by ci: without this index, each staged row scanned the table.
CREATE INDEX subscribers_by_ci ON subscribers (ci);
