// Shared Signals streams in D1 (docs/events.md "Shared Signals"; OpenID SSF 1.0 §8): at most one
// stream per app (`ssf_streams`), a poll stream's SETs waiting to be polled (`ssf_poll`, RFC 8936),
// and the stream API's access tokens (`ssf_tokens`). Every statement on these tables is here.
//
// Invariants:
// - a stream belongs to exactly one app, found only by that app's id: every read and write names
//   the app (`client_id`) beside the stream id, so no app reaches another's stream;
// - a push stream's Authorization header is stored sealed under SEAL_KEY, bound to the app, and
//   never answered back;
// - an access token is kept as its SHA-256 only, bound to one app and the secret it was issued under;
// - a polled SET leaves only when its app acknowledges it (or the stream is deleted): at least once.

import { importSealKey, seal, unseal } from "../../core/crypto";

type DbEnv = { DB: D1Database };
type SealEnv = DbEnv & { SEAL_KEY: string };

export type StreamStatus = "enabled" | "paused" | "disabled";

export interface Stream {
  clientId: string;
  streamId: string;
  method: "push" | "poll";
  /** Push: the receiver's URL. */
  endpointUrl: string | null;
  /** Push: whether an Authorization header is set (its value is never read back out but to send). */
  hasAuthorization: boolean;
  eventsRequested: string[];
  description: string | null;
  status: StreamStatus;
  reason: string | null;
  createdAt: number;
  updatedAt: number;
}

interface StreamRow {
  client_id: string;
  stream_id: string;
  method: "push" | "poll";
  endpoint_url: string | null;
  auth_sealed: string | null;
  events_requested: string;
  description: string | null;
  status: StreamStatus;
  reason: string | null;
  created_at: number;
  updated_at: number;
}

const toStream = (r: StreamRow): Stream => ({
  clientId: r.client_id,
  streamId: r.stream_id,
  method: r.method,
  endpointUrl: r.endpoint_url,
  hasAuthorization: r.auth_sealed !== null,
  eventsRequested: JSON.parse(r.events_requested) as string[],
  description: r.description,
  status: r.status,
  reason: r.reason,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const sealContext = (clientId: string) => `ssf-authorization:${clientId}`;

/** What a stream is set to: its delivery and the types it asked for. */
export interface StreamFields {
  method: "push" | "poll";
  endpointUrl: string | null;
  /** Push: the header to send; undefined keeps the one set (an update), null removes it. */
  authorization?: string | null;
  eventsRequested: string[];
  description: string | null;
}

/** The app's stream, or null. */
export async function streamOf(env: DbEnv, clientId: string): Promise<Stream | null> {
  const r = await env.DB.prepare("SELECT * FROM ssf_streams WHERE client_id = ?").bind(clientId).first<StreamRow>();
  return r ? toStream(r) : null;
}

/** The streams of these apps, by app. */
export async function streamsOf(env: DbEnv, clientIds: readonly string[]): Promise<Map<string, Stream>> {
  const { results } = await env.DB.prepare(
    "SELECT * FROM ssf_streams WHERE client_id IN (SELECT value FROM json_each(?))",
  )
    .bind(JSON.stringify(clientIds))
    .all<StreamRow>();
  return new Map(results.map((r) => [r.client_id, toStream(r)]));
}

/** Creates the app's stream; false when it has one already (one per app). */
export async function createStream(
  env: SealEnv,
  clientId: string,
  streamId: string,
  f: StreamFields,
  now: number,
): Promise<boolean> {
  const auth = f.authorization
    ? await seal(await importSealKey(env.SEAL_KEY), f.authorization, sealContext(clientId))
    : null;
  const r = await env.DB.prepare(
    `INSERT INTO ssf_streams (client_id, stream_id, method, endpoint_url, auth_sealed, events_requested, description,
       status, reason, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'enabled', NULL, ?, ?) ON CONFLICT (client_id) DO NOTHING`,
  )
    .bind(clientId, streamId, f.method, f.endpointUrl, auth, JSON.stringify(f.eventsRequested), f.description, now, now)
    .run();
  return r.meta.changes === 1;
}

/** Sets the app's stream `streamId` to `f`; false when the app has no such stream. */
export async function updateStream(
  env: SealEnv,
  clientId: string,
  streamId: string,
  f: StreamFields,
  now: number,
): Promise<boolean> {
  const sets = ["method = ?", "endpoint_url = ?", "events_requested = ?", "description = ?", "updated_at = ?"];
  const values: unknown[] = [f.method, f.endpointUrl, JSON.stringify(f.eventsRequested), f.description, now];
  if (f.authorization !== undefined || f.method === "poll") {
    sets.push("auth_sealed = ?");
    values.push(
      f.authorization && f.method === "push"
        ? await seal(await importSealKey(env.SEAL_KEY), f.authorization, sealContext(clientId))
        : null,
    );
  }
  const r = await env.DB.prepare(`UPDATE ssf_streams SET ${sets.join(", ")} WHERE client_id = ? AND stream_id = ?`)
    .bind(...values, clientId, streamId)
    .run();
  return r.meta.changes === 1;
}

/** Deletes the app's stream `streamId` and its waiting SETs; false when the app has no such stream. */
export async function deleteStream(env: DbEnv, clientId: string, streamId: string): Promise<boolean> {
  const [r] = await env.DB.batch([
    env.DB.prepare("DELETE FROM ssf_streams WHERE client_id = ? AND stream_id = ?").bind(clientId, streamId),
    env.DB.prepare(
      "DELETE FROM ssf_poll WHERE client_id = ? AND NOT EXISTS (SELECT 1 FROM ssf_streams WHERE client_id = ?)",
    ).bind(clientId, clientId),
  ]);
  return r!.meta.changes === 1;
}

/** Sets the app's stream's status (SSF 1.0 §8.1.2.2); false when the app has no such stream. */
export async function setStreamStatus(
  env: DbEnv,
  clientId: string,
  streamId: string,
  status: StreamStatus,
  reason: string | null,
  now: number,
): Promise<boolean> {
  const r = await env.DB.prepare(
    "UPDATE ssf_streams SET status = ?, reason = ?, updated_at = ? WHERE client_id = ? AND stream_id = ?",
  )
    .bind(status, reason, now, clientId, streamId)
    .run();
  return r.meta.changes === 1;
}

/** The Authorization header a push stream sends, or null. */
export async function streamAuthorization(env: SealEnv, clientId: string): Promise<string | null> {
  const r = await env.DB.prepare("SELECT auth_sealed FROM ssf_streams WHERE client_id = ?")
    .bind(clientId)
    .first<{ auth_sealed: string | null }>();
  if (!r?.auth_sealed) return null;
  return unseal(await importSealKey(env.SEAL_KEY), r.auth_sealed, sealContext(clientId));
}

/** Queues SETs (their claims) for the app to poll; a `jti` already waiting is kept as it is. */
export async function queueForPoll(
  env: DbEnv,
  clientId: string,
  sets: readonly { jti: string; claims: Record<string, unknown> }[],
  now: number,
): Promise<void> {
  if (sets.length === 0) return;
  await env.DB.batch(
    sets.map((s) =>
      env.DB.prepare(
        "INSERT INTO ssf_poll (client_id, jti, claims, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
      ).bind(clientId, s.jti, JSON.stringify(s.claims), now),
    ),
  );
}

/** Drops the SETs the app acknowledged (only its own). */
export async function acknowledge(env: DbEnv, clientId: string, jtis: readonly string[]): Promise<void> {
  if (jtis.length === 0) return;
  await env.DB.prepare("DELETE FROM ssf_poll WHERE client_id = ? AND jti IN (SELECT value FROM json_each(?))")
    .bind(clientId, JSON.stringify(jtis))
    .run();
}

/** Up to `max` of the app's waiting SETs, oldest first, and whether more wait. */
export async function waitingSets(
  env: DbEnv,
  clientId: string,
  max: number,
): Promise<{ sets: { jti: string; claims: Record<string, unknown> }[]; more: boolean }> {
  const { results } = await env.DB.prepare(
    "SELECT jti, claims FROM ssf_poll WHERE client_id = ? ORDER BY created_at, jti LIMIT ?",
  )
    .bind(clientId, max + 1)
    .all<{ jti: string; claims: string }>();
  return {
    sets: results.slice(0, max).map((r) => ({ jti: r.jti, claims: JSON.parse(r.claims) as Record<string, unknown> })),
    more: results.length > max,
  };
}

/** How many SETs wait for the app to poll. */
export async function waitingCount(env: DbEnv, clientId: string): Promise<number> {
  const r = await env.DB.prepare("SELECT count(*) AS n FROM ssf_poll WHERE client_id = ?")
    .bind(clientId)
    .first<{ n: number }>();
  return r?.n ?? 0;
}

/** The most live stream API tokens an app holds; a new one past this ends the oldest. */
export const SSF_TOKENS_PER_APP = 20;

/**
 * Keeps a stream API token (its SHA-256 `tokenHash`) for the app until `expiresAt`; drops the app's
 * expired ones, and the oldest beyond SSF_TOKENS_PER_APP.
 */
export async function keepToken(
  env: DbEnv,
  tokenHash: string,
  clientId: string,
  secretId: string,
  expiresAt: number,
  now: number,
): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM ssf_tokens WHERE client_id = ? AND expires_at <= ?").bind(clientId, now),
    env.DB.prepare("INSERT INTO ssf_tokens (token_hash, client_id, secret_id, expires_at) VALUES (?, ?, ?, ?)").bind(
      tokenHash,
      clientId,
      secretId,
      expiresAt,
    ),
    env.DB.prepare(
      `DELETE FROM ssf_tokens WHERE client_id = ? AND token_hash NOT IN
         (SELECT token_hash FROM ssf_tokens WHERE client_id = ? ORDER BY expires_at DESC LIMIT ?)`,
    ).bind(clientId, clientId, SSF_TOKENS_PER_APP),
  ]);
}

/** The app and secret of an unexpired stream API token (by its SHA-256), or null. */
export async function tokenOwner(
  env: DbEnv,
  tokenHash: string,
  now: number,
): Promise<{ clientId: string; secretId: string } | null> {
  const r = await env.DB.prepare("SELECT client_id, secret_id FROM ssf_tokens WHERE token_hash = ? AND expires_at > ?")
    .bind(tokenHash, now)
    .first<{ client_id: string; secret_id: string }>();
  return r ? { clientId: r.client_id, secretId: r.secret_id } : null;
}
