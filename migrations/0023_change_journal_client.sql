-- The app a journaled change was made to, when its route names one (`/admin/clients/:id`,
-- `/console/apps/:id`, `/developers/api/apps/:id` and the routes under them): its
-- `request.unfinished` event carries it as the event's client id (docs/operations.md
-- "Unfinished changes").
ALTER TABLE change_journal ADD COLUMN client_id TEXT;
