// D1 access for the provider: clients, the carrier directory, plid links, automatic-login grants
// and audit events (DESIGN.md §3). Table names live here and in migrations/ only.

import { sealKeyVar } from "../../core/config";
import { constantTimeEqual, importSealKey, randomUuid, seal, sha256, unseal } from "../../core/crypto";
import { E, type ClientAuthSite } from "../../core/errors";
import { isIdentityItem, type IdentityItem, type Telco } from "../../core/spec";

export interface Client {
  clientId: string;
  name: string;
  redirectUris: string[];
  items: IdentityItem[];
  autoLogin: boolean;
  status: "active" | "disabled";
  createdAt: number;
  updatedAt: number;
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
  created_at: number;
  updated_at: number;
}

export interface Subscriber {
  id: number;
  telco: Telco;
  phone: string;
  name: string;
  gender: "M" | "F";
  birth: string; // YYYY-MM-DD
  foreign: "L" | "F";
  ci: string;
}

interface SubscriberRow {
  id: number;
  telco: "S" | "K" | "L";
  phone: string;
  name: string;
  gender: "M" | "F";
  birth: string;
  foreign_cd: "L" | "F";
  ci: string;
}

type DbEnv = { DB: D1Database };
type SealEnv = { SEAL_KEY: string };

export function toClient(r: ClientRow): Client {
  return {
    clientId: r.client_id,
    name: r.name,
    redirectUris: JSON.parse(r.redirect_uris) as string[],
    items: (JSON.parse(r.items) as string[]).filter(isIdentityItem),
    autoLogin: r.auto_login === 1,
    status: r.status,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function toSubscriber(r: SubscriberRow): Subscriber {
  return { id: r.id, telco: r.telco, phone: r.phone, name: r.name, gender: r.gender, birth: r.birth, foreign: r.foreign_cd, ci: r.ci };
}

// ---- clients, cached read-mostly per isolate (CLIENT_CACHE_SECONDS) ----

interface CachedClient {
  at: number;
  row: ClientRow | null;
  client: Client | null;
  secrets?: Promise<ClientSecrets>;
}

/** A client secret with its fingerprint (`secretFingerprint`), computed once per cache fill. */
export interface ClientSecret {
  secret: string;
  id: string;
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

async function loadClient(env: DbEnv, clientId: string, cacheMs: number): Promise<CachedClient> {
  const hit = clientCache.get(clientId);
  const now = Date.now();
  if (hit && now - hit.at < cacheMs) return hit;
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

/** The client's secrets, unsealed (cached with the client). */
export async function clientSecrets(env: DbEnv & SealEnv, clientId: string, cacheMs: number): Promise<ClientSecrets> {
  const entry = await loadClient(env, clientId, cacheMs);
  const row = entry.row;
  if (!row) throw new Error("client vanished");
  entry.secrets ??= (async () => {
    const key = await importSealKey(sealKeyVar(env));
    const open = async (sealed: string): Promise<ClientSecret> => {
      const secret = await unseal(key, sealed, secretContext(row.client_id));
      return { secret, id: await secretFingerprint(secret) };
    };
    const current = await open(row.secret_sealed);
    const previous =
      row.previous_secret_sealed && row.previous_secret_until
        ? { ...(await open(row.previous_secret_sealed)), until: row.previous_secret_until }
        : null;
    return { current, previous };
  })();
  entry.secrets.catch(() => {
    entry.secrets = undefined;
  });
  return entry.secrets;
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
export async function secretFingerprint(secret: string): Promise<string> {
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

export interface AuthenticatedClient {
  client: Client;
  /** The secret that matched, and its fingerprint (what a token records). */
  secret: string;
  secretId: string;
}

/**
 * Checks a client id and secret in constant time. Unknown id, disabled client and wrong secret
 * give the same answer (DESIGN.md §4.7); the reason goes only to the log.
 */
export async function authenticateClient(
  env: DbEnv & SealEnv,
  clientId: string,
  secret: string,
  site: ClientAuthSite,
  cacheMs: number,
): Promise<AuthenticatedClient> {
  const client = await findClient(env, clientId, cacheMs);
  if (!client) {
    await constantTimeEqual(secret, "x".repeat(32)); // same work as a known client
    throw E.badClient(site, "unknown or disabled client");
  }
  const s = await clientSecrets(env, clientId, cacheMs);
  if (await constantTimeEqual(secret, s.current.secret)) return { client, secret: s.current.secret, secretId: s.current.id };
  if (s.previous && s.previous.until > Date.now() && (await constantTimeEqual(secret, s.previous.secret))) {
    return { client, secret: s.previous.secret, secretId: s.previous.id };
  }
  throw E.badClient(site, "wrong secret");
}

// ---- carrier directory ----

export async function subscriberById(env: DbEnv, id: number): Promise<Subscriber | null> {
  const r = await env.DB.prepare("SELECT * FROM subscribers WHERE id = ?").bind(id).first<SubscriberRow>();
  return r ? toSubscriber(r) : null;
}

export async function subscriberByPhone(env: DbEnv, phone: string): Promise<(Subscriber & { testOtpHash: string | null }) | null> {
  const r = await env.DB.prepare("SELECT * FROM subscribers WHERE phone = ?")
    .bind(phone)
    .first<SubscriberRow & { test_otp_hash: string | null }>();
  return r ? { ...toSubscriber(r), testOtpHash: r.test_otp_hash } : null;
}

// ---- links (plid per client and subscriber) ----

export interface Link {
  plid: string;
  items: IdentityItem[];
  consentedAt: number;
}

export async function findLink(env: DbEnv, clientId: string, subscriberId: number): Promise<Link | null> {
  const r = await env.DB.prepare("SELECT plid, items, consented_at FROM links WHERE client_id = ? AND subscriber_id = ?")
    .bind(clientId, subscriberId)
    .first<{ plid: string; items: string; consented_at: number }>();
  return r ? { plid: r.plid, items: (JSON.parse(r.items) as string[]).filter(isIdentityItem), consentedAt: r.consented_at } : null;
}

/**
 * Records consent to `items`: keeps the existing plid (consent asked again when items grew,
 * DESIGN.md §4.7), or makes a new UUID v4 plid for a first login or after a disconnect.
 */
export async function recordConsent(env: DbEnv, clientId: string, subscriberId: number, items: readonly IdentityItem[]): Promise<string> {
  const r = await env.DB.prepare(
    `INSERT INTO links (client_id, subscriber_id, plid, items, consented_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (client_id, subscriber_id) DO UPDATE SET items = excluded.items, consented_at = excluded.consented_at
     RETURNING plid`,
  )
    .bind(clientId, subscriberId, randomUuid(), JSON.stringify(items), Date.now())
    .first<{ plid: string }>();
  return r!.plid;
}

/** The subscriber and consented items behind a client's plid, or null when the link is gone. */
export async function linkedSubscriber(env: DbEnv, clientId: string, plid: string): Promise<{ subscriber: Subscriber; items: IdentityItem[] } | null> {
  const r = await env.DB.prepare(
    "SELECT s.*, l.items AS link_items FROM links l JOIN subscribers s ON s.id = l.subscriber_id WHERE l.client_id = ? AND l.plid = ?",
  )
    .bind(clientId, plid)
    .first<SubscriberRow & { link_items: string }>();
  return r ? { subscriber: toSubscriber(r), items: (JSON.parse(r.link_items) as string[]).filter(isIdentityItem) } : null;
}

/** Removes a client's link for `plid` and that subscriber's automatic-login grants for the client. */
export async function disconnectLink(env: DbEnv, clientId: string, plid: string): Promise<boolean> {
  const [grants, links] = await env.DB.batch([
    env.DB.prepare(
      "DELETE FROM auto_login_grants WHERE client_id = ?1 AND subscriber_id = (SELECT subscriber_id FROM links WHERE client_id = ?1 AND plid = ?2)",
    ).bind(clientId, plid),
    env.DB.prepare("DELETE FROM links WHERE client_id = ? AND plid = ?").bind(clientId, plid),
  ]);
  void grants;
  return (links?.meta.changes ?? 0) > 0;
}

// ---- automatic-login grants ----

export interface AutoLoginGrant {
  deviceHash: string;
  clientId: string;
  subscriberId: number;
  expiresAt: number;
  firstReportPending: boolean;
}

/** Expired grants deleted per opt-in: nothing else removes a grant whose device never returns. */
const GRANT_PURGE_BATCH = 50;

/** Creates or renews the grant of (device, client) with a pending first report; purges a few expired grants. */
export async function putAutoLoginGrant(env: DbEnv, g: Omit<AutoLoginGrant, "firstReportPending">): Promise<void> {
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO auto_login_grants (device_hash, client_id, subscriber_id, expires_at, first_report_pending, created_at)
       VALUES (?, ?, ?, ?, 1, ?)
       ON CONFLICT (device_hash, client_id) DO UPDATE SET subscriber_id = excluded.subscriber_id,
         expires_at = excluded.expires_at, first_report_pending = 1, created_at = excluded.created_at`,
    ).bind(g.deviceHash, g.clientId, g.subscriberId, g.expiresAt, now),
    env.DB.prepare(
      "DELETE FROM auto_login_grants WHERE rowid IN (SELECT rowid FROM auto_login_grants WHERE expires_at <= ? LIMIT ?)",
    ).bind(now, GRANT_PURGE_BATCH),
  ]);
}

/**
 * A fresh device id replaces the one a browser held (an automatic-login opt-in): the same
 * subscriber's grants move to the new id, and the old id's grant for `clientId` ends whoever it
 * was for. The old id itself is never promoted to a new grant (it may have been planted).
 */
export async function replaceDevice(env: DbEnv, oldHash: string, newHash: string, subscriberId: number, clientId: string): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM auto_login_grants WHERE device_hash = ? AND client_id = ?").bind(oldHash, clientId),
    env.DB.prepare("UPDATE auto_login_grants SET device_hash = ? WHERE device_hash = ? AND subscriber_id = ?").bind(newHash, oldHash, subscriberId),
  ]);
}

/** The live grant of (device, client), or null. */
export async function findAutoLoginGrant(env: DbEnv, deviceHash: string, clientId: string): Promise<AutoLoginGrant | null> {
  const r = await env.DB.prepare(
    "SELECT subscriber_id, expires_at, first_report_pending FROM auto_login_grants WHERE device_hash = ? AND client_id = ? AND expires_at > ?",
  )
    .bind(deviceHash, clientId, Date.now())
    .first<{ subscriber_id: number; expires_at: number; first_report_pending: number }>();
  return r
    ? { deviceHash, clientId, subscriberId: r.subscriber_id, expiresAt: r.expires_at, firstReportPending: r.first_report_pending === 1 }
    : null;
}

/** Ends the grant of (device, client), if any (another subscriber signed in on that device). */
export async function deleteAutoLoginGrant(env: DbEnv, deviceHash: string, clientId: string): Promise<void> {
  await env.DB.prepare("DELETE FROM auto_login_grants WHERE device_hash = ? AND client_id = ?").bind(deviceHash, clientId).run();
}

/**
 * The automatic-login flags for a `/v1/user/me` read under a grant: atomically clears the
 * first-report flag, returning whether this read is the first report (autoStatusCheck=Y), and
 * whether the grant still exists.
 */
export async function takeFirstReport(env: DbEnv, deviceHash: string, clientId: string): Promise<{ exists: boolean; first: boolean }> {
  // A batch is one transaction: the read and the clear cannot interleave with another report.
  const [read] = await env.DB.batch([
    env.DB.prepare("SELECT first_report_pending AS was FROM auto_login_grants WHERE device_hash = ? AND client_id = ?").bind(deviceHash, clientId),
    env.DB.prepare("UPDATE auto_login_grants SET first_report_pending = 0 WHERE device_hash = ? AND client_id = ?").bind(deviceHash, clientId),
  ]);
  const row = (read?.results as { was: number }[] | undefined)?.[0];
  return row ? { exists: true, first: row.was === 1 } : { exists: false, first: false };
}

// ---- audit ----

export type AuditType =
  | "signin.success"
  | "signin.failure"
  | "consent"
  | "code.redeemed"
  | "code.refused"
  | "disconnect"
  | "client.created"
  | "client.updated"
  | "client.secret_rotated"
  | "client.disabled"
  | "client.deleted"
  | "directory.imported"
  | "directory.deleted";

/** Appends an audit event. `detail` must hold no personal data, codes or tokens. */
export async function audit(
  env: DbEnv,
  type: AuditType,
  clientId: string | null,
  outcome: "ok" | "refused" = "ok",
  detail?: Record<string, string | number | boolean>,
): Promise<void> {
  await env.DB.prepare("INSERT INTO audit_events (at, type, client_id, outcome, detail) VALUES (?, ?, ?, ?, ?)")
    .bind(Date.now(), type, clientId, outcome, detail ? JSON.stringify(detail) : null)
    .run();
}
