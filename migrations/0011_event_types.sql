-- The types of signed event each app takes (docs/events.md "Registering"): a JSON array of type
-- names, set by the operator (admin API `event_types`). An app is sent only the types it lists, so
-- a later type reaches only apps that asked for it. Every app registered so far takes the one type
-- that exists, plid-deleted.
ALTER TABLE clients ADD COLUMN event_types TEXT NOT NULL DEFAULT '["plid-deleted"]';
