// D1 access for the admin API: client registration and secret rotation, and the carrier
// directory import. Tables are those of migrations/0001_init.sql (docs/storage.md).

import { type IdentityItem } from "../core/spec";
import { type Client, type ClientRow, toClient } from "../provider/store/clients";
import { type Subscriber } from "../provider/store/directory";
import { storeConfig, type StoreVars } from "../provider/store/config";
import { endLateLinks, endLinks, revokePlids } from "../provider/store/links";
import type { EndReason } from "../provider/store/events";
import type { OneTimeStore } from "../provider/store/one-time-store";

type DbEnv = { DB: D1Database };
type StoreEnv = DbEnv & StoreVars & { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/** A client as the operator sees it: never a secret, but when the rotated-out one stops working. */
export interface AdminClient extends Client {
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
  purpose: string | null;
  retention: string | null;
}

/** Inserts a client; false when the id is taken (the caller draws another). */
export async function insertClient(env: DbEnv, c: NewClient): Promise<boolean> {
  const now = Date.now();
  const r = await env.DB.prepare(
    `INSERT INTO clients (client_id, name, secret_sealed, redirect_uris, items, auto_login, events_uri, purpose, retention, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?) ON CONFLICT (client_id) DO NOTHING`,
  )
    .bind(
      c.clientId,
      c.name,
      c.secretSealed,
      JSON.stringify(c.redirectUris),
      JSON.stringify(c.items),
      c.autoLogin ? 1 : 0,
      c.eventsUri,
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

/** Ends every plid of the links a statement selects (their codes and tokens read nothing from now on). */
async function revokeLinks(env: StoreEnv, select: D1PreparedStatement): Promise<string[]> {
  const plids = (await select.all<{ plid: string }>()).results.map((r) => r.plid);
  const cfg = storeConfig(env);
  if (plids.length) await revokePlids(env, plids, cfg.oneTimeShards, cfg.revocationRetainMs);
  return plids;
}

/** Deletes a client with its links and automatic-login grants (one transaction); false when absent. */
export async function deleteClient(env: StoreEnv, clientId: string): Promise<boolean> {
  const ended = await revokeLinks(env, env.DB.prepare("SELECT plid FROM links WHERE client_id = ?").bind(clientId));
  const results = await env.DB.batch<{ plid: string }>([
    env.DB.prepare("DELETE FROM auto_login_grants WHERE client_id = ?").bind(clientId),
    env.DB.prepare("DELETE FROM links WHERE client_id = ? RETURNING plid").bind(clientId),
    env.DB.prepare("DELETE FROM clients WHERE client_id = ?").bind(clientId),
  ]);
  // a link made by a consent that landed after the read above ends too
  const seen = new Set(ended);
  const late = (results[1]?.results ?? []).map((r) => r.plid).filter((p) => !seen.has(p));
  const cfg = storeConfig(env);
  if (late.length) await revokePlids(env, late, cfg.oneTimeShards, cfg.revocationRetainMs);
  return (results[2]?.meta.changes ?? 0) === 1;
}

// ---- carrier directory ----

/** One validated directory row, in the table's terms. */
export type SubscriberInput = Omit<Subscriber, "id">;

/** Rows per staging statement: the rows travel as one JSON parameter (D1 binds at most 100 values). */
const IMPORT_CHUNK = 500;

/** Staged rows (personal data) left by an import that died midway are deleted by the next after this. */
const STAGED_MAX_MS = 3600_000;

/** How an import changed the directory. */
export interface ImportCounts {
  inserted: number;
  updated: number;
  /** Numbers that passed to another person (another `ci`): the previous person's logins ended. */
  reassigned: number;
}

const STAGE = `INSERT INTO import_rows (import_id, seq, telco, phone, name, gender, birth, foreign_cd, ci, staged_at)
  SELECT ?2, ?3 + key, json_extract(value, '$.telco'), json_extract(value, '$.phone'), json_extract(value, '$.name'),
         json_extract(value, '$.gender'), json_extract(value, '$.birth'), json_extract(value, '$.foreign'),
         json_extract(value, '$.ci'), ?4
  FROM json_each(?1)`;

/**
 * The decision, made from the directory as it is when these statements run: each staged row's
 * person is the row with its `ci` (the one at its number first), a registered test number never
 * (its persona and fixed code belong to the review, not to a directory person); every other row
 * at a staged number is another person's, displaced.
 */
const DECIDE = [
  `UPDATE import_rows SET subscriber_id = coalesce(
     (SELECT s.id FROM subscribers s WHERE s.ci = import_rows.ci AND s.phone = import_rows.phone AND s.test_clients IS NULL),
     (SELECT min(s.id) FROM subscribers s WHERE s.ci = import_rows.ci AND s.test_clients IS NULL))
   WHERE import_id = ?1`,
  `UPDATE import_rows SET displaced_id = (
     SELECT s.id FROM subscribers s WHERE s.phone = import_rows.phone AND s.id NOT IN
       (SELECT c.subscriber_id FROM import_rows c WHERE c.import_id = ?1 AND c.subscriber_id IS NOT NULL))
   WHERE import_id = ?1`,
];

const COUNT = `SELECT count(*) - count(subscriber_id) AS inserted, count(subscriber_id) AS updated,
  count(displaced_id) AS reassigned FROM import_rows WHERE import_id = ?1`;

const DISPLACED = "SELECT displaced_id FROM import_rows WHERE import_id = ? AND displaced_id IS NOT NULL";

/**
 * Applies the rows to the directory. A subscriber is a person, identified by `ci`
 * (docs/account.md "A reassigned number is a new person"):
 * - the same `ci` at the same number (another name or carrier) is an update: id, plids and
 *   consent kept;
 * - the same `ci` under a new number is the person who changed number: the row moves (plids
 *   kept), the old number is freed;
 * - a number whose row has another `ci` (not moving elsewhere in this import), or is a registered
 *   test number, passed to another person: the previous person's record for that number ends,
 *   every link of every app ended as a disconnect is (codes and tokens end, an event with reason
 *   `number_reassigned` to apps that registered one, audited), and the new person starts with
 *   nothing.
 * A row's `ci` is never written once the row exists, and a test number's code never: a row holds
 * one person for its life. The rows are staged, then decided and written in one D1 batch (a
 * transaction), so a write landing before it (a test number registered, another import) is
 * decided on, never overwritten in place. With `dryRun` nothing is written.
 */
export async function upsertSubscribers(
  env: StoreEnv,
  rows: readonly SubscriberInput[],
  dryRun: boolean,
): Promise<ImportCounts> {
  const db = env.DB;
  const importId = crypto.randomUUID();
  const now = Date.now();
  await db
    .prepare("DELETE FROM import_rows WHERE staged_at < ?")
    .bind(now - STAGED_MAX_MS)
    .run();
  const decide = DECIDE.map((sql) => db.prepare(sql).bind(importId));
  const count = db.prepare(COUNT).bind(importId);
  let staged = true;
  try {
    // The whole file first: who is displaced is decided against every row, whatever their order or
    // the statement that staged them (a person who changed number keeps their row and plids even
    // when the new owner of their old number comes 500 rows earlier).
    for (let i = 0; i < rows.length; i += IMPORT_CHUNK)
      await db
        .prepare(STAGE)
        .bind(JSON.stringify(rows.slice(i, i + IMPORT_CHUNK)), importId, i, now)
        .run();
    const [, , planned, windows] = await db.batch<ImportCounts & { w: number }>([
      ...decide,
      count,
      db
        .prepare(
          `SELECT DISTINCT seq / ${IMPORT_CHUNK} AS w FROM import_rows WHERE import_id = ? AND displaced_id IS NOT NULL ORDER BY w`,
        )
        .bind(importId),
    ]);
    if (dryRun) return planned!.results[0]!;
    // The displaced people's logins end before the transaction, as any removal's do (the store
    // calls cannot be in it), those of IMPORT_CHUNK rows at a time. A person displaced only by a
    // write landing after this is ended from the links the transaction deletes; one planned here
    // but no longer displaced by then keeps the row, and the links ended here stay ended.
    for (const { w } of windows!.results)
      await endLinks(
        env,
        `l.subscriber_id IN (${DISPLACED} AND seq >= ? AND seq < ?)`,
        [importId, w * IMPORT_CHUNK, (w + 1) * IMPORT_CHUNK],
        "number_reassigned",
      );
    const applied = await db.batch<{ client_id: string; plid: string; subscriber_id: number } & ImportCounts>([
      ...decide,
      db
        .prepare(`DELETE FROM links WHERE subscriber_id IN (${DISPLACED}) RETURNING client_id, plid, subscriber_id`)
        .bind(importId),
      db.prepare(`DELETE FROM auto_login_grants WHERE subscriber_id IN (${DISPLACED})`).bind(importId),
      db.prepare(`DELETE FROM subscribers WHERE id IN (${DISPLACED})`).bind(importId),
      // through a placeholder first, so two people trading numbers never meet on one
      db
        .prepare(
          `UPDATE subscribers SET phone = 'moving:' || id WHERE id IN (SELECT r.subscriber_id FROM import_rows r
           JOIN subscribers s ON s.id = r.subscriber_id WHERE r.import_id = ?1 AND s.phone != r.phone)`,
        )
        .bind(importId),
      db
        .prepare(
          `UPDATE subscribers SET telco = r.telco, phone = r.phone, name = r.name, gender = r.gender,
             birth = r.birth, foreign_cd = r.foreign_cd
           FROM import_rows r WHERE r.import_id = ?1 AND r.subscriber_id = subscribers.id`,
        )
        .bind(importId),
      db
        .prepare(
          `INSERT INTO subscribers (telco, phone, name, gender, birth, foreign_cd, ci, created_at)
           SELECT telco, phone, name, gender, birth, foreign_cd, ci, ?2 FROM import_rows
           WHERE import_id = ?1 AND subscriber_id IS NULL ORDER BY seq`,
        )
        .bind(importId, now),
      count,
      db.prepare("DELETE FROM import_rows WHERE import_id = ?").bind(importId),
    ]);
    staged = false;
    await endLateLinks(env, applied[2]?.results ?? [], "number_reassigned");
    return applied[8]!.results[0]!;
  } finally {
    // A dry run or a failed import leaves no personal data staged (else the next one deletes it
    // after STAGED_MAX_MS); the original error, if any, is the one that propagates.
    if (staged)
      await db
        .prepare("DELETE FROM import_rows WHERE import_id = ?")
        .bind(importId)
        .run()
        .catch(() => undefined);
  }
}

/**
 * Removes the subscriber at `phone`: their logins with every app end as disconnects do (reason
 * `subscriber_removed`), then the row goes. By the id read and only while that person still holds
 * the number, in every statement of the removal: an import moving them to another number since the
 * read leaves them (and whoever holds the number now) as they are. The removed id, or null.
 */
export async function deleteSubscriber(env: StoreEnv, phone: string): Promise<number | null> {
  const row = await env.DB.prepare("SELECT id FROM subscribers WHERE phone = ?").bind(phone).first<{ id: number }>();
  if (!row) return null;
  const which = { sql: "SELECT id FROM subscribers WHERE id = ? AND phone = ?", binds: [row.id, phone] };
  return (await removeSubscribers(env, which, "subscriber_removed")) > 0 ? row.id : null;
}

/**
 * Removes a registered test number by the id its caller read, as `deleteSubscriber` does; false when
 * that row is no longer a test number. By id and with the test condition in the removal's own
 * statements: an import may have given the number to a real person since the caller's read (the
 * test number's row deleted, the person's row another id, ids never given twice), and that person
 * and their links stay.
 */
export async function deleteTestNumber(env: StoreEnv, id: number): Promise<boolean> {
  const which = { sql: "SELECT id FROM subscribers WHERE id = ? AND test_clients IS NOT NULL", binds: [id] };
  return (await removeSubscribers(env, which, "subscriber_removed")) > 0;
}

/** The subscribers a removal takes: an SQL query of their ids, with its bound values. */
interface Selection {
  sql: string;
  binds: readonly unknown[];
}

/**
 * Removes subscribers: their links end as disconnects do (codes and tokens, events, audit), then
 * the rows go with their links and grants. The links are deleted by that statement itself, so one
 * made by a consent that landed after `endLinks` read them is returned and ended too. The
 * selection is evaluated again by each statement (the rows' deletion last); the rows removed.
 */
async function removeSubscribers(env: StoreEnv, which: Selection, reason: EndReason): Promise<number> {
  await endLinks(env, `l.subscriber_id IN (${which.sql})`, which.binds, reason);
  const [late, , removed] = await env.DB.batch<{ client_id: string; plid: string; subscriber_id: number }>([
    env.DB.prepare(
      `DELETE FROM links WHERE subscriber_id IN (${which.sql}) RETURNING client_id, plid, subscriber_id`,
    ).bind(...which.binds),
    env.DB.prepare(`DELETE FROM auto_login_grants WHERE subscriber_id IN (${which.sql})`).bind(...which.binds),
    env.DB.prepare(`DELETE FROM subscribers WHERE id IN (${which.sql})`).bind(...which.binds),
  ]);
  await endLateLinks(env, late?.results ?? [], reason);
  return removed?.meta.changes ?? 0;
}

export async function countSubscribers(env: DbEnv): Promise<{ total: number; testNumbers: number }> {
  const r = await env.DB.prepare("SELECT COUNT(*) AS total, COUNT(test_otp_hash) AS test FROM subscribers").first<{
    total: number;
    test: number;
  }>();
  return { total: r?.total ?? 0, testNumbers: r?.test ?? 0 };
}
