// The service's signing keys (D1 `signing_keys`, migrations/0020_signing_keys.sql; docs/oidc.md
// "Signing keys"): ES256 key pairs the service generates itself, the private half sealed with
// SEAL_KEY. The JWKS publishes every key from its creation; a key signs from its `signs_from`, until
// the next key's; it stays published until everything it signed has expired.
//
// Invariants:
// - a verifier that caches the JWKS for as long as its answer allows (JWKS_MAX_AGE_SECONDS) and
//   never fetches it again on an unknown `kid` never meets a token whose key it does not hold: a
//   new key is published `publishAheadMs` (that lifetime, this isolate cache's, and a margin) before
//   it signs, counted by the rotating worker's lifetime and by the publishing worker's own
//   (`startOf`), and an old one stays published RETIRED_KEEP_MS after it stops (the longest life
//   of what it signed);
// - exactly one first key, however many isolates ask at once (an insert only into an empty table);
// - at most one key waiting to sign (a rotation inserts only while none is pending), so the order
//   of keys is the order of their `signs_from`;
// - both ends of a key's life are derived from the rows: a rotation is one insert, never a
//   multi-row update that could stop half way;
// - each isolate reads the table at most once a minute (`keysCacheMs`, config.ts `keyTimes`).

import { importSealKey, randomToken, seal, unseal } from "../../core/crypto";
import { keptInIsolate, keyTimes, storeConfig, type StoreVars } from "./config";

/**
 * A rotated-in key is published this long before it signs, by default (JWKS_MAX_AGE_SECONDS 300):
 * the JWKS's cache lifetime, an isolate's copy of the keys (a minute), and a minute.
 */
export const PUBLISH_AHEAD_MS = keyTimes(300).publishAheadMs;
/**
 * A key that stopped signing stays published this long: the longest life of an id_token (the
 * access token's, at most 24 hours) and a minute. (Events signed with it would add their 7-day
 * delivery window; today's events are HS256 under each client's secret.)
 */
export const RETIRED_KEEP_MS = 86_400_000 + 60_000;

type KeyEnv = StoreVars & { DB: D1Database; SEAL_KEY: string };

interface KeyRow {
  kid: string;
  alg: string;
  public_jwk: string;
  private_sealed: string;
  created_at: number;
  signs_from: number;
  created_by: string;
}

/** A key as the JWKS publishes it (RFC 7517): its public half. */
export interface PublicJwk {
  kty: "EC";
  crv: "P-256";
  x: string;
  y: string;
  kid: string;
  alg: "ES256";
  use: "sig";
}

/** A key's life, as the operator sees it. */
export interface KeyView {
  kid: string;
  state: "next" | "signing" | "retired";
  created_at: number;
  created_by: string;
  signs_from: number;
  /** When the next key takes over (null: none yet). */
  signs_until: number | null;
  /** When it leaves the JWKS (null: while it signs, or waits to). */
  published_until: number | null;
}

let cache: { rows: KeyRow[]; at: number; db: D1Database } | null = null;
const privateKeys = new Map<string, Promise<CryptoKey>>();
keptInIsolate(() => {
  cache = null;
  privateKeys.clear();
  signer = null;
});

const sealContext = (kid: string) => `signing-key:${kid}`;

/** A new ES256 key pair: its kid, public JWK and sealed private JWK. */
async function newKey(env: KeyEnv): Promise<{ kid: string; publicJwk: string; sealed: string }> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  const kid = randomToken(16);
  const publicJwk = JSON.stringify({ kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y });
  const sealed = await seal(await importSealKey(env.SEAL_KEY), JSON.stringify(jwk), sealContext(kid));
  return { kid, publicJwk, sealed };
}

async function readRows(env: KeyEnv): Promise<KeyRow[]> {
  const { results } = await env.DB.prepare("SELECT * FROM signing_keys ORDER BY signs_from, kid").all<KeyRow>();
  return results;
}

/** This isolate's copy of the keys while it is fresh (read at most `keysCacheMs` ago, not in the future). */
function freshRows(env: KeyEnv, now: number): KeyRow[] | undefined {
  const fresh = storeConfig(env).keys.keysCacheMs;
  return cache && cache.db === env.DB && now - cache.at < fresh && now >= cache.at ? cache.rows : undefined;
}

/** The keys, from this isolate's copy while it is fresh; the first key made when there is none. */
async function keysOf(env: KeyEnv, now: number): Promise<KeyRow[]> {
  const cached = freshRows(env, now);
  if (cached) return cached;
  let rows = await readRows(env);
  if (rows.length === 0) {
    // the first key signs at once: no verifier can have cached a JWKS without it
    const k = await newKey(env);
    await env.DB.prepare(
      `INSERT INTO signing_keys (kid, alg, public_jwk, private_sealed, created_at, signs_from, created_by)
       SELECT ?1, 'ES256', ?2, ?3, ?4, ?4, 'service' WHERE NOT EXISTS (SELECT 1 FROM signing_keys)`,
    )
      .bind(k.kid, k.publicJwk, k.sealed, now)
      .run();
    rows = await readRows(env);
  }
  cache = { rows, at: now, db: env.DB };
  return rows;
}

/**
 * When a key signs, as this worker counts: from its `signs_from`, but never before this worker's
 * own wait since its creation (`aheadMs`, from this worker's JWKS_MAX_AGE_SECONDS). The worker that
 * rotated wrote `signs_from` with its own lifetime; were the publishing worker's longer, its
 * verifiers could otherwise meet a key their cached JWKS lacks. The first key signs at once.
 * Non-decreasing along the rows: a key is created only once the one before it signs.
 */
function startOf(row: KeyRow, i: number, aheadMs: number): number {
  return i === 0 ? row.signs_from : Math.max(row.signs_from, row.created_at + aheadMs);
}

/** Each key with when it signs and when the next one does (undefined: none yet). */
function lives(rows: readonly KeyRow[], aheadMs: number): { row: KeyRow; from: number; next: number | undefined }[] {
  const starts = rows.map((row, i) => startOf(row, i, aheadMs));
  return rows.map((row, i) => ({ row, from: starts[i]!, next: starts[i + 1] }));
}

function stateOf(from: number, next: number | undefined, now: number): KeyView["state"] {
  if (from > now) return "next";
  return next !== undefined && next <= now ? "retired" : "signing";
}

const aheadOf = (env: KeyEnv) => storeConfig(env).keys.publishAheadMs;

/** The JWKS at `now`: every key created, waiting or signing, and the retired ones still needed. */
export async function publishedKeys(env: KeyEnv, now = Date.now()): Promise<PublicJwk[]> {
  return lives(await keysOf(env, now), aheadOf(env))
    .filter(({ row, next }) => row.created_at <= now && (next === undefined || next + RETIRED_KEEP_MS > now))
    .map(({ row }) => ({
      ...(JSON.parse(row.public_jwk) as Omit<PublicJwk, "kid" | "alg" | "use">),
      kid: row.kid,
      alg: "ES256",
      use: "sig",
    }));
}

/**
 * The last key `signingKey` chose, with the copy of the rows and the span it was chosen for: while
 * that copy is fresh and `now` inside the span, the same key signs (`signerNow`, no await).
 */
let signer: { kid: string; key: CryptoKey; rows: KeyRow[]; ahead: number; from: number; until: number } | null = null;

/**
 * The key that signs at `now` when this isolate already holds it: the answer `signingKey` would
 * give, without a promise (every OpenID Connect token exchange asks); undefined: ask `signingKey`.
 */
export function signerNow(env: KeyEnv, now = Date.now()): { kid: string; key: CryptoKey } | undefined {
  const s = signer;
  if (s === null || now < s.from || now >= s.until) return undefined;
  return freshRows(env, now) === s.rows && aheadOf(env) === s.ahead ? s : undefined;
}

/** The key that signs at `now`: its kid and private key. */
export async function signingKey(env: KeyEnv, now = Date.now()): Promise<{ kid: string; key: CryptoKey }> {
  const rows = await keysOf(env, now);
  // the newest key that signs by now (the first key signs from its creation, whatever `now` says)
  const ahead = aheadOf(env);
  let i = rows.length - 1;
  while (i > 0 && startOf(rows[i]!, i, ahead) > now) i--;
  const row = rows[i]!;
  const from = i === 0 ? -Infinity : startOf(row, i, ahead);
  const until = i + 1 < rows.length ? startOf(rows[i + 1]!, i + 1, ahead) : Infinity;
  let key = privateKeys.get(row.kid);
  if (!key) {
    key = (async () => {
      const jwk = JSON.parse(await unseal(await importSealKey(env.SEAL_KEY), row.private_sealed, sealContext(row.kid)));
      return crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
    })();
    // a failed unseal is not kept: the next request tries again
    key.catch(() => privateKeys.delete(row.kid));
    privateKeys.set(row.kid, key);
  }
  const chosen = { kid: row.kid, key: await key, rows, ahead, from, until };
  signer = chosen;
  return chosen;
}

/** When the rotation waiting at `now` starts to sign (read now, not from the isolate's copy); none: undefined. */
async function waitingFrom(env: KeyEnv, now: number): Promise<number | undefined> {
  return (await readRows(env)).filter((r) => r.signs_from > now).at(-1)?.signs_from;
}

/**
 * Rotates: a new key, published now and signing `publishAheadMs` from now, while no rotation is
 * pending. The new key's view, or the pending one's start when one waits (nothing made).
 */
export async function rotateSigningKey(
  env: KeyEnv,
  actor: string,
  now = Date.now(),
): Promise<{ ok: true; key: KeyView } | { ok: false; pendingFrom: number }> {
  await keysOf(env, now); // the first key, when there is none
  // a rotation already waiting: refused before a key pair is made and sealed for nothing (the
  // INSERT below still decides between two rotations at once)
  const waiting = await waitingFrom(env, now);
  if (waiting !== undefined) return { ok: false, pendingFrom: waiting };
  const k = await newKey(env);
  const signsFrom = now + storeConfig(env).keys.publishAheadMs;
  const inserted = await env.DB.prepare(
    `INSERT INTO signing_keys (kid, alg, public_jwk, private_sealed, created_at, signs_from, created_by)
     SELECT ?1, 'ES256', ?2, ?3, ?4, ?5, ?6 WHERE NOT EXISTS (SELECT 1 FROM signing_keys WHERE signs_from > ?4)`,
  )
    .bind(k.kid, k.publicJwk, k.sealed, now, signsFrom, actor)
    .run();
  cache = null;
  if (inserted.meta.changes === 0) return { ok: false, pendingFrom: (await waitingFrom(env, now)) ?? now };
  return {
    ok: true,
    key: {
      kid: k.kid,
      state: "next",
      created_at: now,
      created_by: actor,
      signs_from: signsFrom,
      signs_until: null,
      published_until: null,
    },
  };
}

/** Every key with its life, newest first (read now, not from the isolate's copy). */
export async function listSigningKeys(env: KeyEnv, now = Date.now()): Promise<KeyView[]> {
  cache = null;
  return lives(await keysOf(env, now), aheadOf(env))
    .map(({ row, from, next }) => ({
      kid: row.kid,
      state: stateOf(from, next, now),
      created_at: row.created_at,
      created_by: row.created_by,
      signs_from: from,
      signs_until: next ?? null,
      published_until: next === undefined ? null : next + RETIRED_KEEP_MS,
    }))
    .reverse();
}

/** Forgets this isolate's copy (tests that move the clock back). */
export function forgetSigningKeys(): void {
  cache = null;
  signer = null;
}
