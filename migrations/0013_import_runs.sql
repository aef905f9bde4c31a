-- Import runs' commits (docs/storage.md "Import runs"): the people each run's commits removed, so
-- that a commit sent again after its answer was lost reports the run's true totals. Rows older than
-- 30 days are dropped by the next commit.
CREATE TABLE import_runs (
  run          TEXT PRIMARY KEY,
  removed      INTEGER NOT NULL,
  left_over    INTEGER NOT NULL,  -- removals the last commit left to the shards' alarms
  committed_at INTEGER NOT NULL
);
