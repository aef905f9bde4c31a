// The kit's KV namespace (docs/rp-kit.md "Storage"): every key is named here, and here are the
// records every kit keeps in KV, with its Durable Object store or without: sessions, sealed
// identities, the /auth/token rate counter (what every request reads at the edge). Keys hold hashes
// of the random values (state, session id) and of the plid, never the values themselves;
// identities are sealed (AES-256-GCM, context bound to the plid).
//
// KV is eventually consistent and has no compare-and-set: a deleted session or identity may still
// be readable for up to 60 s in other locations. Deployed KV takes one write to a key per second
// (a delete counts as one); the local KV does not enforce it.

import { seal, sha256, unseal } from "./core/crypto.js";
import { IDENTITY_ITEMS, isRandomValue, type IdentityItem } from "./core/spec.js";
import type { ProviderUser } from "./client.js";
import type { SessionKind, SessionRecord, StoredIdentity } from "./storage.js";

export const KEY = {
  state: (hash: string) => `state:${hash}`,
  session: (hash: string) => `session:${hash}`,
  identity: (plidHash: string) => `identity:${plidHash}`,
  rate: (ipHash: string, window: number) => `rate:token:${ipHash}:${window}`,
  redemption: (hash: string) => `redeem:${hash}`,
  redemptionOutcome: (hash: string) => `redeem-outcome:${hash}`,
  plidSession: (plidHash: string, sessionHash: string) => `plid-session:${plidHash}:${sessionHash}`,
  plidEnded: (plidHash: string) => `plid-ended:${plidHash}`,
  eventJti: (hash: string) => `event-jti:${hash}`,
} as const;

/** Deployed KV takes one write to a key per second: a write refused for that goes through after it. */
const KV_KEY_WRITE_INTERVAL_MS = 1100;

/**
 * Deletes a key, once more a second on if KV refuses: a delete is a write, and deployed KV takes one
 * write a second to a key (an automatic login's callback can end its state well within a second of
 * the login's start, an end can follow a login of its plid as closely). Refused twice: thrown.
 */
export async function deleteKey(kv: KVNamespace, key: string): Promise<void> {
  try {
    await kv.delete(key);
  } catch {
    await new Promise((resolve) => setTimeout(resolve, KV_KEY_WRITE_INTERVAL_MS));
    await kv.delete(key);
  }
}

// ---- sessions ----

/** Writes a session record under the hash of its id (`sessionHash`), for `ttlSeconds`. */
export async function putSession(
  kv: KVNamespace,
  sessionHash: string,
  record: SessionRecord,
  ttlSeconds: number,
): Promise<void> {
  await kv.put(KEY.session(sessionHash), JSON.stringify(record), { expirationTtl: ttlSeconds });
}

/** The session of `id` if it exists, is of `kind` and has not outlived `ttlSeconds`. */
export async function readSession(
  kv: KVNamespace,
  id: string,
  kind: SessionKind,
  ttlSeconds: number,
  now = Date.now(),
): Promise<SessionRecord | null> {
  if (!isRandomValue(id)) return null;
  const s = await kv.get<SessionRecord>(KEY.session(await sha256(id)), "json");
  if (!s || s.kind !== kind || now - s.loginAt > ttlSeconds * 1000) return null;
  return s;
}

export async function endSession(kv: KVNamespace, id: string): Promise<void> {
  if (!isRandomValue(id)) return;
  await deleteKey(kv, KEY.session(await sha256(id)));
}

// ---- identities by plid ----

const identityContext = (plid: string) => `rp-identity:${plid}`;

const sameIdentity = (a: StoredIdentity, b: StoredIdentity) =>
  a.plid === b.plid && a.placeholder === b.placeholder && JSON.stringify(a.items) === JSON.stringify(b.items);

/**
 * Seals the identity with the plid as context (a value moved to another plid's key does not open).
 *
 * KV refuses a second write to one key within a second (429). A `writeBack` (an automatic login
 * renewing the identity it read, or a placeholder) then gives way: whatever was written in that
 * second serves its session as well, and a full record written meanwhile must not be overwritten
 * by the older identity. A full record (what the service has just reported) is written again once
 * the second has passed, unless what is stored is the same already: it replaces an automatic
 * login's write-back of the previous identity.
 */
export async function putIdentity(
  kv: KVNamespace,
  key: CryptoKey,
  identity: StoredIdentity,
  ttlSeconds: number,
  { writeBack = false }: { writeBack?: boolean } = {},
): Promise<void> {
  const sealed = await seal(key, JSON.stringify(identity), identityContext(identity.plid));
  const at = KEY.identity(await sha256(identity.plid));
  for (let attempt = 1; ; attempt++) {
    try {
      return await kv.put(at, sealed, { expirationTtl: ttlSeconds });
    } catch (err) {
      const stored = await getIdentity(kv, key, identity.plid);
      if (stored && (writeBack || sameIdentity(stored, identity))) return;
      if (writeBack || attempt === 3) throw err;
      await new Promise((r) => setTimeout(r, KV_KEY_WRITE_INTERVAL_MS));
    }
  }
}

/** The stored identity of `plid`, or null when absent or when it does not open. */
export async function getIdentity(kv: KVNamespace, key: CryptoKey, plid: string): Promise<StoredIdentity | null> {
  const sealed = await kv.get(KEY.identity(await sha256(plid)));
  if (sealed === null) return null;
  try {
    const v = JSON.parse(await unseal(key, sealed, identityContext(plid))) as StoredIdentity;
    return v.plid === plid ? v : null;
  } catch {
    return null;
  }
}

/** Forgets the identity: every session of this plid then ends (a session needs its identity). */
export async function forgetIdentity(kv: KVNamespace, plid: string): Promise<void> {
  await deleteKey(kv, KEY.identity(await sha256(plid)));
}

/** The identity items of a user record, as stored. */
export function identityItems(user: ProviderUser): Partial<Record<IdentityItem, string>> {
  const items: Partial<Record<IdentityItem, string>> = {};
  for (const item of IDENTITY_ITEMS) if (user[item] !== undefined) items[item] = user[item];
  return items;
}

// ---- soft per-IP rate limit ----

/**
 * A fixed-window counter in KV. KV has no atomic increment, so concurrent requests can each read
 * the same count: the limit is soft (it may admit a few more than `limit` in a burst). It guards
 * the kit's secret-bearing exchange from casual abuse; the service's own limits stay in force.
 */
export async function hitRateLimit(
  kv: KVNamespace,
  ip: string,
  limit: number,
  windowSeconds: number,
  now = Date.now(),
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const window = Math.floor(now / 1000 / windowSeconds);
  const key = KEY.rate(await sha256(ip), window);
  const count = Number((await kv.get(key)) ?? "0") || 0;
  if (count >= limit) return { ok: false, retryAfterSeconds: (window + 1) * windowSeconds - now / 1000 };
  // Expires with its window (KV's shortest TTL is 60 s). KV refuses a second write to one key within
  // a second (429): that hit goes uncounted (the limit is soft) rather than failing the request.
  await kv.put(key, String(count + 1), { expirationTtl: Math.max(60, windowSeconds * 2) }).catch(() => {});
  return { ok: true };
}
