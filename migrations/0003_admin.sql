-- Admin API (issue 5): the audit listing pages newest first by id, optionally for one client or
-- one event type; these indexes keep those pages from scanning the whole table as it grows.
CREATE INDEX audit_events_by_client ON audit_events (client_id, id);
CREATE INDEX audit_events_by_type ON audit_events (type, id);
