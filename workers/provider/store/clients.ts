// The client registry in D1 (docs/storage.md): registered apps, their redirect URIs and agreed
// items, and their secrets sealed with AES-256-GCM under SEAL_KEY (recoverable: the field cipher of
// spec §2.2 is keyed by them). Read-mostly, cached per isolate for CLIENT_CACHE_SECONDS.

import { configOf, keyVar } from "../../core/config";
import { importSealKey, seal, sha256, unseal, utf8 } from "../../core/crypto";
import { isIdentityItem, type IdentityItem } from "../../core/spec";

export interface Client {
  clientId: string;
  name: string;
  redirectUris: string[];
  items: IdentityItem[];
  autoLogin: boolean;
  status: "active" | "disabled";
  /** Where signed events about its users go (docs/events.md), or null. */
  eventsUri: string | null;
  /** The consent page's purpose of use and retention period (null: the defaults). */
  purpose: string | null;
  retention: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The types of signed event an app can take (docs/events.md), by their names in the admin API. */
export const EVENT_TYPES = ["plid-deleted"] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** What an app takes unless registered otherwise; every app registered before types existed took it (migration 0011). */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = ["plid-deleted"];
export const isEventType = (s: string): s is EventType => (EVENT_TYPES as readonly string[]).includes(s);

/** A client as registered: what the sign-in reads, and the event types it takes (event delivery, the admin API). */
export interface RegisteredClient extends Client {
  eventTypes: EventType[];
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
  status: "active" | "disabled";
  events_uri: string | null;
  /** JSON array of EventType. */
  event_types: string;
  purpose: string | null;
  retention: string | null;
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
    status: r.status,
    eventsUri: r.events_uri ?? null,
    eventTypes: (JSON.parse(r.event_types) as string[]).filter(isEventType),
    purpose: r.purpose ?? null,
    retention: r.retention ?? null,
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
