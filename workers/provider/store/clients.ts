// The client registry in D1 (table `clients`, docs/storage.md "D1"): registered apps, their
// redirect URIs and agreed items, and their secrets sealed with AES-256-GCM under SEAL_KEY
// (recoverable: the field cipher of spec §2.2 is keyed by them). Read-mostly, cached per isolate
// for CLIENT_CACHE_SECONDS. Every statement on `clients` is in this module: the sign-in's and the
// API's reads, the admin API's writes, the dev seed's, and the reads of the flows that end plids.
//
// Invariants:
// - a secret is stored sealed, bound to its client id, never in clear; one previous generation is
//   kept, and accepted only until its grace end;
// - a client id is given once (an insert never replaces a row);
// - a client's row goes last when it is deleted, after its links (store/flows/delete-client.ts),
//   so a deletion that dies midway leaves the client to delete again;
// - an isolate's cached record is at most CLIENT_CACHE_SECONDS old; an admin change drops it.

import { configOf, keyVar } from "../../core/config";
import { keptInIsolate } from "./config";
import { importSealKey, seal, sha256, unseal, utf8 } from "../../core/crypto";
import { isIdentityItem, type IdentityItem } from "../../core/spec";
import { DEFAULT_EVENT_TYPES, EVENT_TYPES } from "../../core/event-types.js";

export interface Client {
  clientId: string;
  name: string;
  redirectUris: string[];
  items: IdentityItem[];
  autoLogin: boolean;
  /** OpenID Connect on (docs/oidc.md): an `openid` request gets an id_token. */
  oidc: boolean;
  status: "active" | "disabled";
  /**
   * `testing`: only its team and its test numbers sign in (docs/developers.md "Testing stage");
   * `live`: everyone. A developer's new app starts testing; an operator's is live.
   */
  stage: "testing" | "live";
  /** Where signed events about its users go (docs/events.md), or null. */
  eventsUri: string | null;
  /** The consent page's purpose of use and retention period (null: the defaults). */
  purpose: string | null;
  retention: string | null;
  /**
   * Messages its sign-ins may send in a Korean day (docs/operations.md "SMS budgets"), or null for
   * SMS_APP_DAILY_BUDGET: `appSmsBudget` (store/config.ts) gives the one that applies.
   */
  smsDailyBudget: number | null;
  createdAt: number;
  updatedAt: number;
}

/** The types of signed event an app can take, and the default (event-types.js, also the admin CLI's). */
export { DEFAULT_EVENT_TYPES, EVENT_TYPES };
export type EventType = (typeof EVENT_TYPES)[number];
export const isEventType = (s: string): s is EventType => (EVENT_TYPES as readonly string[]).includes(s);

/** A client as registered: what the sign-in reads, and the event types it takes (event delivery, the admin API). */
export interface RegisteredClient extends Client {
  eventTypes: EventType[];
  /** Since when its events are paused after 24 hours of failures (docs/events.md), or null. */
  eventsPausedAt: number | null;
}

/** A clients row as D1 returns it (also read by the admin store). */
export interface ClientRow {
  client_id: string;
  name: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: number | null;
  redirect_uris: string;
  items: string;
  auto_login: number;
  oidc: number;
  status: "active" | "disabled";
  stage: "testing" | "live";
  events_uri: string | null;
  /** JSON array of EventType. */
  event_types: string;
  purpose: string | null;
  retention: string | null;
  sms_daily_budget: number | null;
  events_paused_at: number | null;
  created_at: number;
  updated_at: number;
}

type DbEnv = { DB: D1Database };
type SealEnv = { SEAL_KEY: string };

function parseSealKey(env: SealEnv): string {
  return keyVar(env, "SEAL_KEY");
}

/** SEAL_KEY (a Workers secret): the AES-256-GCM key sealing client secrets at rest, checked once. */
export function sealKeyVar(env: SealEnv): string {
  return configOf(env, parseSealKey);
}

export function toClient(r: ClientRow): RegisteredClient {
  return {
    clientId: r.client_id,
    name: r.name,
    redirectUris: JSON.parse(r.redirect_uris) as string[],
    items: (JSON.parse(r.items) as string[]).filter(isIdentityItem),
    autoLogin: r.auto_login === 1,
    oidc: r.oidc === 1,
    status: r.status,
    stage: r.stage ?? "live",
    eventsUri: r.events_uri ?? null,
    eventTypes: (JSON.parse(r.event_types) as string[]).filter(isEventType),
    eventsPausedAt: r.events_paused_at ?? null,
    purpose: r.purpose ?? null,
    retention: r.retention ?? null,
    smsDailyBudget: r.sms_daily_budget ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

interface CachedClient {
  at: number;
  row: ClientRow | null;
  client: RegisteredClient | null;
  secrets?: Promise<ClientSecrets>;
  /** The active client with its unsealed `secrets`: the hot paths take it without awaiting. */
  opened?: ActiveClient;
}

/** An active client with its secrets, as the token and user/me routes use it. */
export interface ActiveClient {
  client: Client;
  secrets: ClientSecrets;
}

/** A client secret with its fingerprint (`secretFingerprint`), computed once per cache fill. */
export interface ClientSecret {
  secret: string;
  id: string;
  /** SHA-256 of the secret, for the constant-time compare (`constantTimeEqual`). */
  digest: ArrayBuffer;
}

export interface ClientSecrets {
  current: ClientSecret;
  /** The rotated-out secret; it authenticates until `until` (the grace period). */
  previous: (ClientSecret & { until: number }) | null;
}

const clientCache = new Map<string, CachedClient>();
keptInIsolate(() => clientCache.clear());

/** Drops a client from this isolate's cache (after an admin change). */
export function forgetClient(clientId: string): void {
  clientCache.delete(clientId);
}

/** The isolate's entry for a client while it is fresh, else undefined. */
function cached(clientId: string, cacheMs: number): CachedClient | undefined {
  const hit = clientCache.get(clientId);
  return hit && Date.now() - hit.at < cacheMs ? hit : undefined;
}

async function loadClient(env: DbEnv, clientId: string, cacheMs: number): Promise<CachedClient> {
  const hit = cached(clientId, cacheMs);
  if (hit) return hit;
  const now = Date.now();
  const row = await env.DB.prepare("SELECT * FROM clients WHERE client_id = ?").bind(clientId).first<ClientRow>();
  const entry: CachedClient = { at: now, row, client: row ? toClient(row) : null };
  if (clientCache.size > 5000) clientCache.clear();
  if (cacheMs > 0) clientCache.set(clientId, entry);
  return entry;
}

/** The active client with this id, or null (unknown or disabled). */
export async function findClient(env: DbEnv, clientId: string, cacheMs: number): Promise<Client | null> {
  const c = (await loadClient(env, clientId, cacheMs)).client;
  return c && c.status === "active" ? c : null;
}

/** The client with this id whatever its status (a disabled app still hears its plids end), or null. */
export async function clientOfAnyStatus(
  env: DbEnv,
  clientId: string,
  cacheMs: number,
): Promise<RegisteredClient | null> {
  return (await loadClient(env, clientId, cacheMs)).client;
}

/**
 * The client's secrets, unsealed (cached with the client); null when the client is gone (deleted
 * between a caller's `findClient` and this read, each reading D1 once the cache has expired).
 */
export async function clientSecrets(
  env: DbEnv & SealEnv,
  clientId: string,
  cacheMs: number,
): Promise<ClientSecrets | null> {
  return clientSecretsOf(env, await loadClient(env, clientId, cacheMs));
}

/** The secrets of a loaded entry, unsealed once per entry. */
function clientSecretsOf(env: SealEnv, entry: CachedClient): Promise<ClientSecrets> | null {
  const row = entry.row;
  if (!row) return null;
  if (entry.secrets) return entry.secrets;
  const secrets = (async () => {
    const key = await importSealKey(sealKeyVar(env));
    const open = async (sealed: string): Promise<ClientSecret> => {
      const secret = await unseal(key, sealed, secretContext(row.client_id));
      const [id, digest] = await Promise.all([
        secretFingerprint(secret),
        crypto.subtle.digest("SHA-256", utf8(secret)),
      ]);
      return { secret, id, digest };
    };
    const current = await open(row.secret_sealed);
    const previous =
      row.previous_secret_sealed && row.previous_secret_until
        ? { ...(await open(row.previous_secret_sealed)), until: row.previous_secret_until }
        : null;
    return { current, previous };
  })();
  entry.secrets = secrets;
  // a failed unseal is not cached: the next request tries again (set once, not on every hit)
  secrets.then(
    (opened) => void (entry.opened = entry.client ? { client: entry.client, secrets: opened } : undefined),
    () => {
      if (entry.secrets === secrets) entry.secrets = undefined;
    },
  );
  return secrets;
}

/**
 * The active client with its secrets, from one read of its record: null when unknown, disabled or
 * deleted. What the token and user/me routes need; `cachedClientWithSecrets` first, which answers
 * with no promise when the isolate has both cached.
 */
export async function clientWithSecrets(
  env: DbEnv & SealEnv,
  clientId: string,
  cacheMs: number,
): Promise<ActiveClient | null> {
  const entry = cached(clientId, cacheMs) ?? (await loadClient(env, clientId, cacheMs));
  const client = entry.client;
  if (!client || client.status !== "active") return null;
  const secrets = entry.opened?.secrets ?? (await clientSecretsOf(env, entry));
  return secrets && { client, secrets };
}

/** `clientWithSecrets`' answer from this isolate's cache alone, or undefined when it must read or unseal. */
export function cachedClientWithSecrets(clientId: string, cacheMs: number): ActiveClient | null | undefined {
  const entry = cached(clientId, cacheMs);
  if (!entry) return undefined;
  if (!entry.client || entry.client.status !== "active") return null;
  return entry.opened;
}

export function secretContext(clientId: string): string {
  return `client-secret:${clientId}`;
}

/** Seals a client secret for the clients table. */
export async function sealSecret(env: SealEnv, clientId: string, secret: string): Promise<string> {
  return seal(await importSealKey(sealKeyVar(env)), secret, secretContext(clientId));
}

/**
 * A short id of a client secret (SHA-256 prefix, 128 bits): a token records which secret
 * authenticated its exchange, so user/me encrypts with that one whatever rotations happened since.
 */
async function secretFingerprint(secret: string): Promise<string> {
  return (await sha256(`client-secret-id:${secret}`)).slice(0, 22);
}

/**
 * The secret a token's record must be encrypted with (spec §2.2): the one whose fingerprint the
 * token carries, while the client still holds it (a token lives at most 10 minutes, so a grace
 * period that ended since the exchange does not matter); null once it was rotated out and dropped.
 */
export function secretForToken(secrets: ClientSecrets, secretId: string): string | null {
  if (secrets.current.id === secretId) return secrets.current.secret;
  if (secrets.previous && secrets.previous.id === secretId) return secrets.previous.secret;
  return null;
}

// ---- the admin API's reads and writes

/** A client as the operator sees it: never a secret, but when the rotated-out one stops working. */
export interface AdminClient extends RegisteredClient {
  previousSecretUntil: number | null;
}

function toAdminClient(r: ClientRow, now: number): AdminClient {
  const until =
    r.previous_secret_sealed && r.previous_secret_until && r.previous_secret_until > now
      ? r.previous_secret_until
      : null;
  return { ...toClient(r), previousSecretUntil: until };
}

export async function listClients(env: DbEnv): Promise<AdminClient[]> {
  const { results } = await env.DB.prepare("SELECT * FROM clients ORDER BY created_at, client_id").all<ClientRow>();
  const now = Date.now();
  return results.map((r) => toAdminClient(r, now));
}

export async function getClient(env: DbEnv, clientId: string): Promise<AdminClient | null> {
  const r = await env.DB.prepare("SELECT * FROM clients WHERE client_id = ?").bind(clientId).first<ClientRow>();
  return r ? toAdminClient(r, Date.now()) : null;
}

export interface NewClient {
  clientId: string;
  name: string;
  secretSealed: string;
  redirectUris: string[];
  items: IdentityItem[];
  autoLogin: boolean;
  /** Off unless given. */
  oidc?: boolean;
  eventsUri: string | null;
  eventTypes: EventType[];
  purpose: string | null;
  retention: string | null;
  smsDailyBudget: number | null;
  /** Live unless given (a developer's new app starts testing). */
  stage?: "testing" | "live";
}

/** Inserts a client; false when the id is taken (the caller draws another). */
export async function insertClient(env: DbEnv, c: NewClient): Promise<boolean> {
  const r = await insertClientStatement(env, c, Date.now()).run();
  return r.meta.changes === 1;
}

/**
 * The insert of a client, for a batch; `onlyIf` (SQL with its bindings) must hold for the row to be
 * written (a developer's cap of apps, counted in the same transaction).
 */
export function insertClientStatement(
  env: DbEnv,
  c: NewClient,
  now: number,
  onlyIf?: { sql: string; bind: unknown[] },
): D1PreparedStatement {
  return env.DB.prepare(
    `INSERT INTO clients (client_id, name, secret_sealed, redirect_uris, items, auto_login, oidc, events_uri, event_types, purpose, retention, sms_daily_budget, status, stage, created_at, updated_at)
     SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ? WHERE ${onlyIf?.sql ?? "1"} ON CONFLICT (client_id) DO NOTHING`,
  ).bind(
    c.clientId,
    c.name,
    c.secretSealed,
    JSON.stringify(c.redirectUris),
    JSON.stringify(c.items),
    c.autoLogin ? 1 : 0,
    c.oidc ? 1 : 0,
    c.eventsUri,
    JSON.stringify(c.eventTypes),
    c.purpose,
    c.retention,
    c.smsDailyBudget,
    c.stage ?? "live",
    now,
    now,
    ...(onlyIf?.bind ?? []),
  );
}

export interface ClientPatch {
  name?: string;
  redirectUris?: string[];
  items?: IdentityItem[];
  autoLogin?: boolean;
  oidc?: boolean;
  /** null removes it. */
  eventsUri?: string | null;
  eventTypes?: EventType[];
  /** null restores the default text. */
  purpose?: string | null;
  retention?: string | null;
  /** null: SMS_APP_DAILY_BUDGET. */
  smsDailyBudget?: number | null;
  status?: "active" | "disabled";
  stage?: "testing" | "live";
}

/**
 * The write of an approved review (store/reviews.ts): its name, items and consent texts, and the
 * live stage; for a batch, after the statement that decided the review, and only when that one
 * changed a row (`changes()`), so a review decided twice writes once.
 */
export function approvedClientStatement(
  env: DbEnv,
  clientId: string,
  p: { name: string; items: IdentityItem[]; purpose: string | null; retention: string | null },
  now: number,
): D1PreparedStatement {
  return env.DB.prepare(
    `UPDATE clients SET name = ?, items = ?, purpose = ?, retention = ?, stage = 'live', updated_at = ?
     WHERE client_id = ? AND changes() = 1`,
  ).bind(p.name, JSON.stringify(p.items), p.purpose, p.retention, now, clientId);
}

/** Pauses the app's events (a delivery failing for 24 hours); false when they were paused already. */
export async function pauseClientEvents(env: DbEnv, clientId: string, now: number): Promise<boolean> {
  const r = await env.DB.prepare(
    "UPDATE clients SET events_paused_at = ? WHERE client_id = ? AND events_paused_at IS NULL",
  )
    .bind(now, clientId)
    .run();
  forgetClient(clientId);
  return r.meta.changes > 0;
}

/** Resumes the app's events; false when they were not paused. */
export async function resumeClientEvents(env: DbEnv, clientId: string): Promise<boolean> {
  const r = await env.DB.prepare(
    "UPDATE clients SET events_paused_at = NULL WHERE client_id = ? AND events_paused_at IS NOT NULL",
  )
    .bind(clientId)
    .run();
  forgetClient(clientId);
  return r.meta.changes > 0;
}

/** Applies the given fields; false when no such client. */
export async function updateClient(env: DbEnv, clientId: string, p: ClientPatch): Promise<boolean> {
  const sets: string[] = [];
  const values: (string | number | null)[] = [];
  if (p.name !== undefined) (sets.push("name = ?"), values.push(p.name));
  if (p.redirectUris !== undefined) (sets.push("redirect_uris = ?"), values.push(JSON.stringify(p.redirectUris)));
  if (p.items !== undefined) (sets.push("items = ?"), values.push(JSON.stringify(p.items)));
  if (p.autoLogin !== undefined) (sets.push("auto_login = ?"), values.push(p.autoLogin ? 1 : 0));
  if (p.oidc !== undefined) (sets.push("oidc = ?"), values.push(p.oidc ? 1 : 0));
  if (p.eventsUri !== undefined) (sets.push("events_uri = ?"), values.push(p.eventsUri));
  if (p.eventTypes !== undefined) (sets.push("event_types = ?"), values.push(JSON.stringify(p.eventTypes)));
  if (p.purpose !== undefined) (sets.push("purpose = ?"), values.push(p.purpose));
  if (p.retention !== undefined) (sets.push("retention = ?"), values.push(p.retention));
  if (p.smsDailyBudget !== undefined) (sets.push("sms_daily_budget = ?"), values.push(p.smsDailyBudget));
  if (p.status !== undefined) (sets.push("status = ?"), values.push(p.status));
  if (p.stage !== undefined) (sets.push("stage = ?"), values.push(p.stage));
  sets.push("updated_at = ?");
  values.push(Date.now());
  const r = await env.DB.prepare(`UPDATE clients SET ${sets.join(", ")} WHERE client_id = ?`)
    .bind(...values, clientId)
    .run();
  return r.meta.changes === 1;
}

/**
 * Makes `newSealed` the current secret. With `graceUntil` the current one becomes the previous
 * secret, accepted until then; with null it stops at once. A secret still in an earlier grace
 * period is replaced: only one previous generation is kept. SQLite evaluates every SET expression
 * against the old row, so the move is one statement.
 */
export async function rotateClientSecret(
  env: DbEnv,
  clientId: string,
  newSealed: string,
  graceUntil: number | null,
): Promise<boolean> {
  const r = await env.DB.prepare(
    `UPDATE clients SET
       previous_secret_sealed = CASE WHEN ?2 IS NULL THEN NULL ELSE secret_sealed END,
       previous_secret_until = ?2,
       secret_sealed = ?1,
       updated_at = ?3
     WHERE client_id = ?4`,
  )
    .bind(newSealed, graceUntil, Date.now(), clientId)
    .run();
  return r.meta.changes === 1;
}

/** Deletes the client's row (its links went first: store/flows/delete-client.ts); false when absent. */
export async function deleteClientRow(env: DbEnv, clientId: string): Promise<boolean> {
  const r = await env.DB.prepare("DELETE FROM clients WHERE client_id = ?").bind(clientId).run();
  // D1 counts the rows its ON DELETE CASCADE removed with it (a team, reviews, test numbers)
  return r.meta.changes > 0;
}

/** How many of `ids` are registered clients (each counted once: the caller passes distinct ids). */
export async function countClients(env: DbEnv, ids: readonly string[]): Promise<number> {
  const known = await env.DB.prepare(
    "SELECT count(*) AS n FROM clients WHERE client_id IN (SELECT value FROM json_each(?))",
  )
    .bind(JSON.stringify(ids))
    .first<{ n: number }>();
  return known!.n;
}

// ---- the dev seed's and the flows' statements

/** A client of the dev seed, inserted where absent (operator changes to seed rows are kept). */
export type SeedClientRow = Omit<NewClient, "eventTypes" | "purpose" | "retention" | "smsDailyBudget">;

/** The statement inserting a seed client where absent (batched by the seed). */
export function insertSeedClient(env: DbEnv, c: SeedClientRow, now: number): D1PreparedStatement {
  return env.DB.prepare(
    `INSERT OR IGNORE INTO clients (client_id, name, secret_sealed, redirect_uris, items, auto_login, oidc, events_uri, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
  ).bind(
    c.clientId,
    c.name,
    c.secretSealed,
    JSON.stringify(c.redirectUris),
    JSON.stringify(c.items),
    c.autoLogin ? 1 : 0,
    c.oidc ? 1 : 0,
    c.eventsUri,
    now,
    now,
  );
}

/** The names of the clients among `ids` that exist, by id (a deleted client's id is absent). */
export async function clientNames(env: DbEnv, ids: readonly string[]): Promise<Map<string, string>> {
  const { results } = await env.DB.prepare(
    "SELECT client_id, name FROM clients WHERE client_id IN (SELECT value FROM json_each(?))",
  )
    .bind(JSON.stringify(ids))
    .all<{ client_id: string; name: string }>();
  return new Map(results.map((c) => [c.client_id, c.name]));
}

/**
 * The name and own daily SMS budget (null: the default) of each client among `ids` that exists, by
 * id: what the alerts judge each app's SMS of the day against (store/flows/alerts.ts).
 */
export async function clientSmsBudgets(
  env: DbEnv,
  ids: readonly string[],
): Promise<Map<string, { name: string; smsDailyBudget: number | null }>> {
  const { results } = await env.DB.prepare(
    "SELECT client_id, name, sms_daily_budget FROM clients WHERE client_id IN (SELECT value FROM json_each(?))",
  )
    .bind(JSON.stringify(ids))
    .all<{ client_id: string; name: string; sms_daily_budget: number | null }>();
  return new Map(results.map((c) => [c.client_id, { name: c.name, smsDailyBudget: c.sms_daily_budget ?? null }]));
}

/** The clients among `ids` to tell of `type` events: those with an events_uri that take the type. */
export async function clientsTold(env: DbEnv, ids: readonly string[], type: EventType): Promise<Set<string>> {
  const { results } = await env.DB.prepare(
    `SELECT client_id FROM clients WHERE client_id IN (SELECT value FROM json_each(?))
           AND events_uri <> '' AND EXISTS (SELECT 1 FROM json_each(event_types) WHERE value = ?)`,
  )
    .bind(JSON.stringify(ids), type)
    .all<{ client_id: string }>();
  return new Set(results.map((c) => c.client_id));
}
