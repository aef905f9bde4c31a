-- An import run's progress through its file (docs/operations.md "Importing a large file", "From the
-- browser"): the console's import keeps its place here, so a person who closed the tab chooses the
-- same file again and resumes. The file is known by its SHA-256 and size; the rows applied are a
-- prefix of it. No personal data: the rejected rows are kept as numbers and fixed reasons only,
-- never their content. Rows not updated for 30 days are dropped by the next commit.
CREATE TABLE import_progress (
  run            TEXT PRIMARY KEY,
  file_hash      TEXT NOT NULL,     -- SHA-256 of the whole file, 64 lower-case hex digits
  file_size      INTEGER NOT NULL,  -- bytes
  format         TEXT NOT NULL,     -- as sent: csv, or json (an NDJSON file's lines are sent as JSON arrays)
  rows_done      INTEGER NOT NULL,  -- rows applied, contiguous from the file's start
  bytes_done     INTEGER NOT NULL,  -- the file offset after the last of them
  inserted       INTEGER NOT NULL,
  updated        INTEGER NOT NULL,
  reassigned     INTEGER NOT NULL,
  rejected_count INTEGER NOT NULL,
  rejected       TEXT NOT NULL,     -- JSON [{row, reason}] by file row, the first 1,000
  started_by     TEXT NOT NULL,     -- the actor: operator:<id> or token:<name>
  started_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  committed_at   INTEGER
);
CREATE INDEX import_progress_file ON import_progress (file_hash, file_size, started_at);
CREATE INDEX import_progress_updated ON import_progress (updated_at);
