// The admin API's storage: client registration and secret rotation (D1), and removals from the
// directory shards (docs/storage.md).

import { type IdentityItem } from "../core/spec";
import { type ClientRow, type EventType, type RegisteredClient, toClient } from "../provider/store/clients";
import { countSubscribers, personAtNumber } from "../provider/store/directory/directory";
import { dirAt } from "../provider/store/directory/directory-shard";
import { dirShards } from "../provider/store/directory/keys";
import { storeConfig } from "../provider/store/config";
import { revokePlids } from "../provider/store/directory/links";
import { numberShard } from "../provider/store/directory/keys";
import { runJob, type JobEnv } from "../provider/store/flows/directory-jobs";

type DbEnv = { DB: D1Database };
type StoreEnv = JobEnv;

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
  eventsUri: string | null;
  eventTypes: EventType[];
  purpose: string | null;
  retention: string | null;
}

/** Inserts a client; false when the id is taken (the caller draws another). */
export async function insertClient(env: DbEnv, c: NewClient): Promise<boolean> {
  const now = Date.now();
  const r = await env.DB.prepare(
    `INSERT INTO clients (client_id, name, secret_sealed, redirect_uris, items, auto_login, events_uri, event_types, purpose, retention, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?) ON CONFLICT (client_id) DO NOTHING`,
  )
    .bind(
      c.clientId,
      c.name,
      c.secretSealed,
      JSON.stringify(c.redirectUris),
      JSON.stringify(c.items),
      c.autoLogin ? 1 : 0,
      c.eventsUri,
      JSON.stringify(c.eventTypes),
      c.purpose,
      c.retention,
      now,
      now,
    )
    .run();
  return r.meta.changes === 1;
}

export interface ClientPatch {
  name?: string;
  redirectUris?: string[];
  items?: IdentityItem[];
  autoLogin?: boolean;
  /** null removes it. */
  eventsUri?: string | null;
  eventTypes?: EventType[];
  /** null restores the default text. */
  purpose?: string | null;
  retention?: string | null;
  status?: "active" | "disabled";
}

/** Applies the given fields; false when no such client. */
export async function updateClient(env: DbEnv, clientId: string, p: ClientPatch): Promise<boolean> {
  const sets: string[] = [];
  const values: (string | number | null)[] = [];
  if (p.name !== undefined) (sets.push("name = ?"), values.push(p.name));
  if (p.redirectUris !== undefined) (sets.push("redirect_uris = ?"), values.push(JSON.stringify(p.redirectUris)));
  if (p.items !== undefined) (sets.push("items = ?"), values.push(JSON.stringify(p.items)));
  if (p.autoLogin !== undefined) (sets.push("auto_login = ?"), values.push(p.autoLogin ? 1 : 0));
  if (p.eventsUri !== undefined) (sets.push("events_uri = ?"), values.push(p.eventsUri));
  if (p.eventTypes !== undefined) (sets.push("event_types = ?"), values.push(JSON.stringify(p.eventTypes)));
  if (p.purpose !== undefined) (sets.push("purpose = ?"), values.push(p.purpose));
  if (p.retention !== undefined) (sets.push("retention = ?"), values.push(p.retention));
  if (p.status !== undefined) (sets.push("status = ?"), values.push(p.status));
  sets.push("updated_at = ?");
  values.push(Date.now());
  const r = await env.DB.prepare(`UPDATE clients SET ${sets.join(", ")} WHERE client_id = ?`)
    .bind(...values, clientId)
    .run();
  return r.meta.changes === 1;
}

/**
 * Makes `newSealed` the current secret. With `graceUntil` the current one becomes the previous
 * secret, accepted until then (registry.authenticateClient); with null it stops at once. A secret
 * still in an earlier grace period is replaced: only one previous generation is kept.
 * SQLite evaluates every SET expression against the old row, so the move is one statement.
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

/** A deleted client's links, in every shard: taken 200 at a time, their plids ended (no events). */
async function endClientLinks(env: StoreEnv, clientId: string): Promise<void> {
  const cfg = storeConfig(env);
  await Promise.all(
    Array.from({ length: dirShards(env) }, async (_, s) => {
      for (;;) {
        const plids = await dirAt(env, s).takeClientLinks(clientId, CLIENT_LINKS_CHUNK);
        if (plids.length) await revokePlids(env, plids, cfg.oneTimeShards, cfg.revocationRetainMs);
        if (plids.length < CLIENT_LINKS_CHUNK) return;
      }
    }),
  );
}

const CLIENT_LINKS_CHUNK = 200;

/**
 * Deletes a client with its links and automatic-login grants; false when absent. The links go
 * before the client: each shard records the client's end in the step that first takes its links,
 * so a consent landing there afterwards is refused in its own step (directory-shard.ts
 * `takeClientLinks`), and one that landed before is among the links taken.
 */
export async function deleteClient(env: StoreEnv, clientId: string): Promise<boolean> {
  if (!(await getClient(env, clientId))) return false;
  await endClientLinks(env, clientId);
  const r = await env.DB.prepare("DELETE FROM clients WHERE client_id = ?").bind(clientId).run();
  return r.meta.changes === 1;
}

// ---- carrier directory ----

/**
 * Removes the person holding `phone` (by the id read, only while they still hold it): the number
 * is freed and the removal queued in one step of its shard, then run (their logins end as
 * disconnects do, reason `subscriber_removed`, then the row goes with anything linked meanwhile).
 * A removal that fails after its first step is finished by that shard's alarm. False when `id`
 * no longer held the number.
 */
export async function removeHolder(env: StoreEnv, phone: string, id: number): Promise<boolean> {
  const s = numberShard(phone, dirShards(env));
  const shard = dirAt(env, s);
  const job = await shard.startRemoval(phone, id, "subscriber_removed");
  if (!job) return false;
  await runJob(env, job.job);
  await shard.jobsDone([job.id]);
  return true;
}

/** Removes the subscriber at `phone`; the removed id, or null. */
export async function deleteSubscriber(env: StoreEnv, phone: string): Promise<number | null> {
  const p = await personAtNumber(env, phone);
  if (!p) return null;
  return (await removeHolder(env, phone, p.id)) ? p.id : null;
}

export { countSubscribers };
