-- A subscriber id is never given twice. Sign-in transactions and /account sessions hold a
-- subscriber by id for minutes (docs/storage.md); SQLite gives a new row the largest id + 1, so
-- once the largest row was deleted (a number reassigned, a subscriber removed) the next person
-- imported would get that same id, and a transaction or session opened by the previous person
-- would resolve to the new one. AUTOINCREMENT would need the table rebuilt, which D1 cannot do
-- under the foreign keys of links and grants without rebuilding those too; instead `high` keeps the
-- largest id ever given, and a row inserted at or under it moves above it in the same statement.
CREATE TABLE subscriber_ids (
  one  INTEGER PRIMARY KEY CHECK (one = 1),
  high INTEGER NOT NULL
);
INSERT INTO subscriber_ids (one, high) SELECT 1, coalesce(max(id), 0) FROM subscribers;
CREATE TRIGGER subscriber_id_never_reused AFTER INSERT ON subscribers
BEGIN
  UPDATE subscribers SET id = (SELECT high + 1 FROM subscriber_ids)
    WHERE id = NEW.id AND NEW.id <= (SELECT high FROM subscriber_ids);
  UPDATE subscriber_ids SET high = (SELECT max(id) FROM subscribers);
END;
