// Operators, their invitations and the API tokens (docs/operations.md "Operators and roles"), in D1
// `operator_invites`, `operators` and `api_tokens`. Every statement on them is here. No number and
// no name is stored: an invitation is found by a keyed hash of its number, an operator by the
// person's directory id (a role is the person's, as links are), a token by the SHA-256 of its secret.
// A token's record is cached per isolate for CLIENT_CACHE_SECONDS, as clients are, so a revocation
// holds everywhere within that time.

import { derivedToken, randomToken, sha256 } from "../../core/crypto";
import { keptInIsolate } from "./config";

type DbEnv = { DB: D1Database };

export const ROLES = ["viewer", "editor", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** Whether `have` may do what needs `need`: viewer < editor < admin. */
export function roleCovers(have: Role, need: Role): boolean {
  return ROLES.indexOf(have) >= ROLES.indexOf(need);
}

export function isRole(v: unknown): v is Role {
  return typeof v === "string" && (ROLES as readonly string[]).includes(v);
}

/** The key an invitation is found by: a keyed hash of the number (SEAL_KEY), so D1 never holds the number. */
export function inviteKey(sealKey: string, phone: string): Promise<string> {
  return derivedToken(sealKey, "operator-invite", phone);
}

/** How long a grant waits for its number's holder to sign in to the console. */
export const INVITE_MS = 7 * 86_400_000;

export interface Invite {
  phoneKey: string;
  role: Role;
  masked: string;
  grantedBy: string;
  createdAt: number;
  expiresAt: number;
}

export interface Operator {
  id: string;
  subscriberId: number;
  role: Role;
  masked: string;
  grantedBy: string;
  takenAt: number;
  lastSeenAt: number | null;
}

type InviteRow = {
  phone_key: string;
  role: Role;
  masked: string;
  granted_by: string;
  created_at: number;
  expires_at: number;
};
type OperatorRow = {
  id: string;
  subscriber_id: number;
  role: Role;
  masked: string;
  granted_by: string;
  taken_at: number;
  last_seen_at: number | null;
};

const toInvite = (r: InviteRow): Invite => ({
  phoneKey: r.phone_key,
  role: r.role,
  masked: r.masked,
  grantedBy: r.granted_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});
const toOperator = (r: OperatorRow): Operator => ({
  id: r.id,
  subscriberId: r.subscriber_id,
  role: r.role,
  masked: r.masked,
  grantedBy: r.granted_by,
  takenAt: r.taken_at,
  lastSeenAt: r.last_seen_at,
});

/** Opens (or replaces) the invitation of a number for `role`, valid INVITE_MS. */
export async function putInvite(env: DbEnv, invite: Omit<Invite, "createdAt" | "expiresAt">): Promise<Invite> {
  const now = Date.now();
  const full: Invite = { ...invite, createdAt: now, expiresAt: now + INVITE_MS };
  await env.DB.prepare(
    `INSERT INTO operator_invites (phone_key, role, masked, granted_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (phone_key) DO UPDATE SET role = excluded.role, masked = excluded.masked,
       granted_by = excluded.granted_by, created_at = excluded.created_at, expires_at = excluded.expires_at`,
  )
    .bind(full.phoneKey, full.role, full.masked, full.grantedBy, full.createdAt, full.expiresAt)
    .run();
  return full;
}

/** Withdraws a number's invitation; whether there was one. */
export async function dropInvite(env: DbEnv, phoneKey: string): Promise<boolean> {
  const r = await env.DB.prepare("DELETE FROM operator_invites WHERE phone_key = ?").bind(phoneKey).run();
  return r.meta.changes > 0;
}

/** How many admins there are, inside a statement that must keep one (the console always keeps an admin). */
const ADMINS = "(SELECT count(*) FROM operators WHERE role = 'admin')";

/**
 * The person who signed in with the invited number takes its role, in one step: the invitation goes
 * and the person's role is written (replacing one they held). Null when no live invitation names the
 * number (none, taken by a concurrent sign-in, or expired: an expired one is dropped).
 * `"kept_last_admin"`: the invitation named a lesser role for the last admin, who stays admin (the
 * console always keeps one, as `revokeOperatorRole`); the invitation is taken all the same.
 */
export async function takeInvite(
  env: DbEnv,
  phoneKey: string,
  subscriberId: number,
  masked: string,
): Promise<Operator | "kept_last_admin" | null> {
  const now = Date.now();
  // one transaction: the role is written from the invitation only while it is live, and the
  // invitation goes with it (a second sign-in finds none: exactly one take); the last admin's role
  // is never lowered, checked in the statement that writes it (two admins lowered at once: one is)
  const [written, dropped] = await env.DB.batch<Record<string, unknown>>([
    env.DB.prepare(
      `INSERT INTO operators (id, subscriber_id, role, masked, granted_by, taken_at, last_seen_at)
       SELECT ?, ?, role, ?, granted_by, ?, ? FROM operator_invites WHERE phone_key = ? AND expires_at > ?
       ON CONFLICT (subscriber_id) DO UPDATE SET role = excluded.role, masked = excluded.masked,
         granted_by = excluded.granted_by, taken_at = excluded.taken_at, last_seen_at = excluded.last_seen_at
       WHERE NOT (operators.role = 'admin' AND excluded.role <> 'admin' AND ${ADMINS} = 1)
       RETURNING *`,
    ).bind(`op_${randomToken(12)}`, subscriberId, masked, now, now, phoneKey, now),
    env.DB.prepare("DELETE FROM operator_invites WHERE phone_key = ? RETURNING expires_at").bind(phoneKey),
  ]);
  const row = written!.results[0] as OperatorRow | undefined;
  if (row) return toOperator(row);
  // a live invitation went, and no role was written: the last admin's, kept
  const live = (dropped!.results as { expires_at: number }[]).some((r) => r.expires_at > now);
  return live ? "kept_last_admin" : null;
}

/** The person's role, or null. */
export async function operatorOf(env: DbEnv, subscriberId: number): Promise<Operator | null> {
  const r = await env.DB.prepare("SELECT * FROM operators WHERE subscriber_id = ?")
    .bind(subscriberId)
    .first<OperatorRow>();
  return r && toOperator(r);
}

/** Records that the operator was seen (at most once a minute a session, by the caller). */
export async function operatorSeen(env: DbEnv, id: string): Promise<void> {
  await env.DB.prepare("UPDATE operators SET last_seen_at = ? WHERE id = ?").bind(Date.now(), id).run();
}

/** Ends an operator's role; the operator it ended, or null when there was none. */
export async function endOperator(env: DbEnv, id: string): Promise<Operator | null> {
  const r = await env.DB.prepare("DELETE FROM operators WHERE id = ? RETURNING *").bind(id).first<OperatorRow>();
  return r && toOperator(r);
}

/**
 * Revokes an operator's role, never the last admin's (`"last_admin"`): the console always keeps an
 * admin. The check is in the statement that deletes, so two admins revoking each other at once
 * cannot both pass. Null when there is no such operator. (A role whose person left the directory
 * ends by `endOperator`, last admin or not.)
 */
export async function revokeOperatorRole(env: DbEnv, id: string): Promise<Operator | null | "last_admin"> {
  const r = await env.DB.prepare(
    `DELETE FROM operators WHERE id = ? AND (role <> 'admin' OR ${ADMINS} > 1) RETURNING *`,
  )
    .bind(id)
    .first<OperatorRow>();
  if (r) return toOperator(r);
  const left = await env.DB.prepare("SELECT role FROM operators WHERE id = ?").bind(id).first<{ role: Role }>();
  return left ? "last_admin" : null;
}

/** Every operator and every live invitation (expired ones are dropped first). */
export async function listOperators(env: DbEnv): Promise<{ operators: Operator[]; invites: Invite[] }> {
  const [, ops, invites] = await env.DB.batch([
    env.DB.prepare("DELETE FROM operator_invites WHERE expires_at <= ?").bind(Date.now()),
    env.DB.prepare("SELECT * FROM operators ORDER BY taken_at, id"),
    env.DB.prepare("SELECT * FROM operator_invites ORDER BY created_at, phone_key"),
  ]);
  return {
    operators: (ops!.results as OperatorRow[]).map(toOperator),
    invites: (invites!.results as InviteRow[]).map(toInvite),
  };
}

// ---------------------------------------------------------------- API tokens

export interface ApiToken {
  name: string;
  role: Role;
  createdBy: string;
  createdAt: number;
  lastUsedAt: number | null;
}

type TokenRow = {
  name: string;
  role: Role;
  created_by: string;
  created_at: number;
  last_used_at: number | null;
};
const toToken = (r: TokenRow): ApiToken => ({
  name: r.name,
  role: r.role,
  createdBy: r.created_by,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

/** A token's name: what the audit names its actions by (`token:<name>`). */
export const TOKEN_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
/** The prefix of every API token: a leaked one is recognisable (secret scanners) and never an ADMIN_TOKEN. */
export const TOKEN_PREFIX = "plt_";

/** Creates a token; its secret, shown once. Null when the name is taken. */
export async function createToken(
  env: DbEnv,
  name: string,
  role: Role,
  createdBy: string,
): Promise<{ token: ApiToken; secret: string } | null> {
  const secret = `${TOKEN_PREFIX}${randomToken(32)}`;
  const r = await env.DB.prepare(
    `INSERT INTO api_tokens (name, secret_hash, role, created_by, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (name) DO NOTHING RETURNING name, role, created_by, created_at, last_used_at`,
  )
    .bind(name, await sha256(secret), role, createdBy, Date.now())
    .first<TokenRow>();
  return r && { token: toToken(r), secret };
}

/** Revokes a token; whether there was one. */
export async function revokeToken(env: DbEnv, name: string): Promise<boolean> {
  const r = await env.DB.prepare("DELETE FROM api_tokens WHERE name = ?").bind(name).run();
  for (const [hash, hit] of tokenCache) if (hit.token?.name === name) tokenCache.delete(hash);
  return r.meta.changes > 0;
}

export async function listTokens(env: DbEnv): Promise<ApiToken[]> {
  const { results } = await env.DB.prepare(
    "SELECT name, role, created_by, created_at, last_used_at FROM api_tokens ORDER BY created_at, name",
  ).all<TokenRow>();
  return results.map(toToken);
}

/** How often a token's last use is written: once a minute at most per isolate. */
const LAST_USE_EVERY_MS = 60_000;

const tokenCache = new Map<string, { token: ApiToken | null; at: number; wroteUse: number }>();
keptInIsolate(() => tokenCache.clear());

/**
 * The token a presented secret names, or null; cached per isolate for `cacheMs` (a revocation holds
 * everywhere within it). `seen` is the write of its last use, at most once a minute, for the caller
 * to leave to `waitUntil`.
 */
export async function findToken(
  env: DbEnv,
  secret: string,
  cacheMs: number,
): Promise<{ token: ApiToken; seen?: Promise<unknown> } | null> {
  if (!secret.startsWith(TOKEN_PREFIX)) return null;
  const hash = await sha256(secret);
  const now = Date.now();
  let hit = tokenCache.get(hash);
  if (!hit || now - hit.at >= cacheMs) {
    const r = await env.DB.prepare(
      "SELECT name, role, created_by, created_at, last_used_at FROM api_tokens WHERE secret_hash = ?",
    )
      .bind(hash)
      .first<TokenRow>();
    hit = { token: r && toToken(r), at: now, wroteUse: hit?.wroteUse ?? 0 };
    if (tokenCache.size > 1000) tokenCache.clear();
    if (cacheMs > 0) tokenCache.set(hash, hit);
  }
  if (!hit.token) return null;
  if (now - hit.wroteUse < LAST_USE_EVERY_MS) return { token: hit.token };
  hit.wroteUse = now;
  const seen = env.DB.prepare("UPDATE api_tokens SET last_used_at = ? WHERE name = ? AND secret_hash = ?")
    .bind(now, hit.token.name, hash)
    .run();
  return { token: hit.token, seen };
}
