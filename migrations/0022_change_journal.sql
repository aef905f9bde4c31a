-- Operators' and developers' changes in flight (workers/provider/store/change-journal.ts,
-- docs/operations.md "Unfinished changes"): a row is written before a change's handler runs and
-- deleted once it has answered; a row left behind (the worker was killed, or failed between its
-- change and its audit event) becomes a `request.unfinished` audit event naming who made it.
CREATE TABLE change_journal (
  id TEXT PRIMARY KEY,
  actor TEXT NOT NULL,
  worker TEXT NOT NULL,
  method TEXT NOT NULL,
  route TEXT NOT NULL,
  started_at INTEGER NOT NULL
);
CREATE INDEX change_journal_started ON change_journal (started_at);
