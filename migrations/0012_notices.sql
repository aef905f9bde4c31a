-- Operator notices (docs/operations.md "Notices"): a condition an operator must act on, raised where
-- it happens and shown with every admin answer (the CLI prints it as a warning) until it is
-- resolved. No personal data: a suspended test number is named by its number's key and shown
-- masked.
CREATE TABLE notices (
  kind       TEXT NOT NULL,      -- e.g. test_number.suspended
  subject    TEXT NOT NULL,      -- what it is about, within the kind (a test number: SHA-256 key of the number)
  text       TEXT NOT NULL,      -- one ASCII line for the operator
  created_at INTEGER NOT NULL,
  PRIMARY KEY (kind, subject)
);
