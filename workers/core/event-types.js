// The types of signed event an app can take (docs/events.md), by their names in the admin API and
// the events' `urn:phone-login:event:<name>`: the one list that the service checks names against
// (provider/store/clients.ts) and that the admin CLI's help shows (scripts/admin.mjs). Plain
// JavaScript typed by JSDoc, so that the CLI, which runs in Node without a build step, imports the
// same list.
export const EVENT_TYPES = /** @type {const} */ (["plid-deleted", "credential-change", "test"]);

/**
 * What an app takes unless registered otherwise; every app registered before types existed took it
 * (migration 0011).
 * @type {readonly (typeof EVENT_TYPES)[number][]}
 */
export const DEFAULT_EVENT_TYPES = ["plid-deleted"];
