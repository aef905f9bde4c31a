// The relying-party kit's KV storage (docs/architecture.md §6, docs/rp-kit.md "Storage"). Every key is named
// here. Keys hold hashes of the random values (state, session id) and of the plid, never the
// values themselves; identities are sealed (AES-256-GCM, context bound to the plid).
//
// KV is eventually consistent and has no compare-and-set. That is acceptable here because a state
// is also bound to a browser cookie and the service's code is single use (docs/architecture.md §6); a
// deleted session or identity may still be readable for up to 60 s in other locations.

import { constantTimeEqual, randomToken, seal, sha256, unseal } from "./core/crypto.js";
import { IDENTITY_ITEMS, isRandomValue, type IdentityItem, type YN } from "./core/spec.js";
import type { ProviderUser } from "./client.js";
import { storeAt, type PhoneLoginStore } from "./login-store.js";

type KvEnv = { RP_KV: KVNamespace; RP_STORE?: DurableObjectNamespace<PhoneLoginStore> | undefined };

const KEY = {
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

// ---- state nonces (/auth/login → /auth/callback) ----

export interface PendingLogin {
  /** SHA-256 of the browser's binding cookie. */
  bindingHash: string;
  /** Same-origin path to return to (validated by `safeReturnTo`). */
  returnTo: string;
  /** Epoch ms; the state is refused after RP_STATE_TTL_SECONDS even if KV still holds it. */
  created: number;
  /** The PKCE verifier, when a challenge was sent. */
  verifier?: string;
  /** The `prompt` sent, so a forced re-login is not repeated. */
  prompt?: string;
  /** This login is the automatic fresh start after a `login_required` return: it is not repeated. */
  restarted?: true;
}

export async function putState(env: KvEnv, state: string, pending: PendingLogin, ttlSeconds: number): Promise<void> {
  const hash = await sha256(state);
  if (env.RP_STORE)
    return storeAt(env.RP_STORE, hash).putState(hash, JSON.stringify(pending), Date.now() + ttlSeconds * 1000);
  await env.RP_KV.put(KEY.state(hash), JSON.stringify(pending), { expirationTtl: ttlSeconds });
}

/** The hash a state is kept under (its KV key, its redemption), or null for a value no login made. */
export async function stateHash(state: string): Promise<string | null> {
  return isRandomValue(state) ? sha256(state) : null;
}

/**
 * The pending login of a state (by `stateHash`), or null. Reading changes nothing: a callback that
 * fails the browser check must not spend its owner's state; the state ends when its login is
 * redeemed (`endState`), which `redemption` records for the duplicates.
 */
export async function readState(env: KvEnv, hash: string): Promise<PendingLogin | null> {
  return env.RP_KV.get<PendingLogin>(KEY.state(hash), "json");
}

/** Ends a state (by `stateHash`): its login was redeemed, refused by the service, or cancelled. */
export async function endState(env: KvEnv, hash: string): Promise<void> {
  await deleteKey(env, KEY.state(hash));
}

/**
 * Deletes a key, once more a second on if KV refuses: a delete is a write, and deployed KV takes one
 * write a second to a key (an automatic login's callback can end its state well within a second of
 * the login's start, an end can follow a login of its plid as closely). Refused twice: thrown.
 */
async function deleteKey(env: KvEnv, key: string): Promise<void> {
  try {
    await env.RP_KV.delete(key);
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await env.RP_KV.delete(key);
  }
}

// ---- redemptions: one code exchange per login (docs/rp-kit.md "Duplicated callbacks") ----

/** How a redemption ended, for the duplicate requests that follow it. Holds no secret. */
export type RedeemOutcome =
  { kind: "session" } | { kind: "relogin" } | { kind: "failed"; failure: "upstream" | "invalid_code" };

export interface Redemption {
  /** A random tag of the request that claimed it. */
  owner: string;
  /** What a duplicate must prove it shares with the claimer (SHA-256 of the binding cookie, of the verifier). */
  proofHash: string;
  /** The callback's destination (a duplicate may arrive after the state ended). */
  returnTo?: string;
}

/** KV keeps a value at least 60 s: duplicates and replays of that minute find the outcome. */
export const REDEMPTION_TTL_SECONDS = 60;

export async function getRedemption(env: KvEnv, keyHash: string): Promise<Redemption | null> {
  return env.RP_KV.get<Redemption>(KEY.redemption(keyHash), "json");
}

export async function putRedemption(env: KvEnv, keyHash: string, r: Redemption): Promise<void> {
  await env.RP_KV.put(KEY.redemption(keyHash), JSON.stringify(r), { expirationTtl: REDEMPTION_TTL_SECONDS });
}

/**
 * The outcome lives under a key of its own: KV refuses a second write to one key within a second
 * (429), and the outcome follows the claim by the length of one exchange.
 */
export async function getOutcome(env: KvEnv, keyHash: string): Promise<RedeemOutcome | null> {
  return env.RP_KV.get<RedeemOutcome>(KEY.redemptionOutcome(keyHash), "json");
}

export async function putOutcome(env: KvEnv, keyHash: string, outcome: RedeemOutcome): Promise<void> {
  await env.RP_KV.put(KEY.redemptionOutcome(keyHash), JSON.stringify(outcome), {
    expirationTtl: REDEMPTION_TTL_SECONDS,
  });
}

/** The hash a binding cookie is compared by, or null for a value no login made (or none). */
export async function bindingHashOf(cookie: string | undefined): Promise<string | null> {
  return cookie !== undefined && isRandomValue(cookie) ? sha256(cookie) : null;
}

/** True when the cookie is the one the state was bound to (compared in constant time). */
export async function bindingMatches(
  pending: Pick<PendingLogin, "bindingHash">,
  cookie: string | undefined,
): Promise<boolean> {
  const hash = await bindingHashOf(cookie);
  return hash !== null && constantTimeEqual(hash, pending.bindingHash);
}

// ---- sessions ----

/** "cookie": a browser session (HttpOnly cookie); "token": a native app's Bearer session token. */
export type SessionKind = "cookie" | "token";

export interface SessionRecord {
  plid: string;
  kind: SessionKind;
  /** Epoch ms of the login. */
  loginAt: number;
  autoLoginYn?: YN;
  autoStatusCheck?: YN;
  /**
   * A browser session made by /auth/callback: SHA-256 of the login binding cookie it was made
   * with. The session is valid only with that cookie, which logout clears: a callback still under
   * way in another tab when the person logs out makes a session that no request can use.
   */
  bindingHash?: string;
}

/**
 * Creates a session under `id` (a fresh 256-bit value by default; a login that duplicates may
 * share must derive it) ; only its hash is stored. Returns the id.
 */
export async function createSession(
  env: KvEnv,
  record: SessionRecord,
  ttlSeconds: number,
  id = randomToken(32),
): Promise<string> {
  return (await createLoginSession(env, record, ttlSeconds, id, record.loginAt)).id;
}

/**
 * `createSession` for a login that began at `startedAt` (before its exchange and user read), and
 * when its plid was ended at or after that moment (`endedAt`): the plid's end (`endPlid`), read
 * after the session, its index entry and the identity were written. The caller ends such a session.
 */
export async function createLoginSession(
  env: KvEnv,
  record: SessionRecord,
  ttlSeconds: number,
  id: string,
  startedAt: number,
): Promise<{ id: string; endedAt: number | null }> {
  const [hash, plidHash] = await Promise.all([sha256(id), sha256(record.plid)]);
  const ttl = { expirationTtl: ttlSeconds };
  if (env.RP_STORE) {
    // the session first, then its index entry with the read of the plid's end, in one call
    await env.RP_KV.put(KEY.session(hash), JSON.stringify(record), ttl);
    const at = await storeAt(env.RP_STORE, plidHash).indexSession(
      plidHash,
      hash,
      Date.now() + ttlSeconds * 1000,
      startedAt,
    );
    return { id, endedAt: at };
  }
  await Promise.all([
    env.RP_KV.put(KEY.session(hash), JSON.stringify(record), ttl),
    // The session in its plid's index, so that an end of the plid ends it (docs/rp-kit.md "Events").
    // A key of its own: no login reads and writes back a list another one is writing. A failed
    // write leaves the session out; the identity's removal, which every session checks, still ends it.
    env.RP_KV.put(KEY.plidSession(plidHash, hash), "", ttl).catch(() => {}),
  ]);
  const end = await env.RP_KV.get<PlidEnd>(KEY.plidEnded(plidHash), "json");
  return { id, endedAt: end !== null && end.at >= startedAt ? end.at : null };
}

/** When a plid was last ended here (a disconnect, an event). Only `endPlid` writes it. */
interface PlidEnd {
  at: number;
}

/**
 * How long the end of a plid is kept: longer than a login can be under way (its exchange and user
 * read, each bounded by RP_PROVIDER_TIMEOUT_MS, at most 60 s), and than the service's retries of
 * an event within the hour.
 */
const ENDED_TTL_SECONDS = 3600;

/** The most sessions one end deletes itself (KV allows 1,000 operations per invocation); the rest end with the identity. */
const MAX_ENDED_SESSIONS = 500;

/**
 * Ends every session of a plid and forgets its identity (a disconnect, an event from the service).
 * The end is recorded first, under a key no login writes (so none writes back an older value over
 * it, and KV's one write per key per second never refuses it because a login just wrote there): a
 * login of the plid under way meanwhile reads it after storing its identity, session and index
 * entry (`createLoginSession`), and if it read before the end was recorded, its writes came before
 * it and these deletions come after them. The index entries stay until they expire, so a retry of
 * an end that failed midway finds the sessions again.
 */
export async function endPlid(env: KvEnv, plid: string): Promise<number> {
  const plidHash = await sha256(plid);
  if (env.RP_STORE) {
    const now = Date.now();
    const stub = storeAt(env.RP_STORE, plidHash);
    const hashes = await stub.endPlid(plidHash, now, now + ENDED_TTL_SECONDS * 1000, MAX_ENDED_SESSIONS);
    await Promise.all([...hashes.map((h) => deleteKey(env, KEY.session(h))), forgetIdentity(env, plid)]);
    return hashes.length;
  }
  const key = KEY.plidEnded(plidHash);
  await env.RP_KV.put(key, JSON.stringify({ at: Date.now() } satisfies PlidEnd), {
    expirationTtl: ENDED_TTL_SECONDS,
  }).catch(async (err: unknown) => {
    // refused within a second of another end of the plid (a disconnect and its event): that one
    // holds, and a login that began after it cannot have read the ended plid at the service
    if ((await env.RP_KV.get(key)) === null) throw err;
  });
  const prefix = KEY.plidSession(plidHash, "");
  const { keys } = await env.RP_KV.list({ prefix, limit: MAX_ENDED_SESSIONS });
  const sessions = keys.map((k) => k.name.slice(prefix.length));
  await Promise.all([...sessions.map((h) => deleteKey(env, KEY.session(h))), forgetIdentity(env, plid)]);
  return sessions.length;
}

/**
 * Claims an event's `jti` for `ttlSeconds`: false when it was acted on already (a replay) or, with
 * the kit's store, while another copy of the event holds it. With the store the claim is one call,
 * so exactly one of concurrent copies is acted on; in KV alone this is a read (KV has no
 * compare-and-set), so copies racing within KV's propagation may all pass (ending a plid twice is
 * harmless) and the jti is recorded only by `jtiActedOn`.
 */
export async function claimJti(env: KvEnv, jti: string, ttlSeconds: number): Promise<boolean> {
  const hash = await sha256(jti);
  if (env.RP_STORE) return storeAt(env.RP_STORE, hash).claimJti(hash, Date.now() + ttlSeconds * 1000);
  return (await env.RP_KV.get(KEY.eventJti(hash))) === null;
}

/** The event of a claimed `jti` was acted on: in KV alone its jti is recorded now (the store's claim stays). */
export async function jtiActedOn(env: KvEnv, jti: string, ttlSeconds: number): Promise<void> {
  if (env.RP_STORE) return;
  await env.RP_KV.put(KEY.eventJti(await sha256(jti)), "1", { expirationTtl: ttlSeconds });
}

/** The event of a claimed `jti` could not be acted on: the claim goes, so the service's retry is accepted. */
export async function releaseJti(env: KvEnv, jti: string): Promise<void> {
  if (!env.RP_STORE) return;
  const hash = await sha256(jti);
  await storeAt(env.RP_STORE, hash).releaseJti(hash);
}

/** The session of `id` if it exists, is of `kind` and has not outlived `ttlSeconds`. */
export async function readSession(
  env: KvEnv,
  id: string,
  kind: SessionKind,
  ttlSeconds: number,
  now = Date.now(),
): Promise<SessionRecord | null> {
  if (!isRandomValue(id)) return null;
  const s = await env.RP_KV.get<SessionRecord>(KEY.session(await sha256(id)), "json");
  if (!s || s.kind !== kind || now - s.loginAt > ttlSeconds * 1000) return null;
  return s;
}

export async function endSession(env: KvEnv, id: string): Promise<void> {
  if (!isRandomValue(id)) return;
  await deleteKey(env, KEY.session(await sha256(id)));
}

// ---- identities by plid ----

/** The identity kept for automatic logins (spec §2.1 mode 2 returns only the plid). */
export interface StoredIdentity {
  plid: string;
  items: Partial<Record<IdentityItem, string>>;
  /** Epoch ms of the login that reported it. */
  storedAt: number;
  /**
   * Not the person's identity: a mode-2 record's empty values, stored (for the session TTL) only so
   * the sessions of an automatic login that found nothing stored work. An automatic login never
   * takes it as the identity; a full record replaces it.
   */
  placeholder?: true;
}

const identityContext = (plid: string) => `rp-identity:${plid}`;

/** Deployed KV takes one write to a key per second: a write refused for that goes through after it. */
const KV_KEY_WRITE_INTERVAL_MS = 1100;

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
  env: KvEnv,
  key: CryptoKey,
  identity: StoredIdentity,
  ttlSeconds: number,
  { writeBack = false }: { writeBack?: boolean } = {},
): Promise<void> {
  const sealed = await seal(key, JSON.stringify(identity), identityContext(identity.plid));
  const at = KEY.identity(await sha256(identity.plid));
  for (let attempt = 1; ; attempt++) {
    try {
      return await env.RP_KV.put(at, sealed, { expirationTtl: ttlSeconds });
    } catch (err) {
      const stored = await getIdentity(env, key, identity.plid);
      if (stored && (writeBack || sameIdentity(stored, identity))) return;
      if (writeBack || attempt === 3) throw err;
      await new Promise((r) => setTimeout(r, KV_KEY_WRITE_INTERVAL_MS));
    }
  }
}

/** The stored identity of `plid`, or null when absent or when it does not open. */
export async function getIdentity(env: KvEnv, key: CryptoKey, plid: string): Promise<StoredIdentity | null> {
  const sealed = await env.RP_KV.get(KEY.identity(await sha256(plid)));
  if (sealed === null) return null;
  try {
    const v = JSON.parse(await unseal(key, sealed, identityContext(plid))) as StoredIdentity;
    return v.plid === plid ? v : null;
  } catch {
    return null;
  }
}

/** Forgets the identity: every session of this plid then ends (a session needs its identity). */
export async function forgetIdentity(env: KvEnv, plid: string): Promise<void> {
  await deleteKey(env, KEY.identity(await sha256(plid)));
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
  env: KvEnv,
  ip: string,
  limit: number,
  windowSeconds: number,
  now = Date.now(),
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const window = Math.floor(now / 1000 / windowSeconds);
  const key = KEY.rate(await sha256(ip), window);
  const count = Number((await env.RP_KV.get(key)) ?? "0") || 0;
  if (count >= limit) return { ok: false, retryAfterSeconds: (window + 1) * windowSeconds - now / 1000 };
  // Expires with its window (KV's shortest TTL is 60 s). KV refuses a second write to one key within
  // a second (429): that hit goes uncounted (the limit is soft) rather than failing the request.
  await env.RP_KV.put(key, String(count + 1), { expirationTtl: Math.max(60, windowSeconds * 2) }).catch(() => {});
  return { ok: true };
}
