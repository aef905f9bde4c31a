// The tables of the single-database layout (D1 `subscribers`, `links`, `auto_login_grants`,
// `audit_events`; `subscriber_ids` and `import_rows` are read by nothing), read only by the move to
// the directory shards and the R2 audit trail (workers/admin/migrate/migrate.ts; docs/operations.md
// "Moving a single-database deployment to shards"). Nothing writes them.

type DbEnv = { DB: D1Database };

export interface LegacySubscriber {
  id: number;
  telco: string;
  phone: string;
  name: string;
  gender: string;
  birth: string;
  foreign_cd: string;
  ci: string;
  test_otp_hash: string | null;
  test_clients: string | null;
  test_expires_at: number | null;
  created_at: number;
}

export interface LegacyLink {
  client_id: string;
  subscriber_id: number;
  plid: string;
  items: string;
  consented_at: number;
  linked_at: number | null;
  last_login_at: number | null;
}

export interface LegacyAuditEvent {
  id: number;
  at: number;
  type: string;
  client_id: string | null;
  outcome: string;
  detail: string | null;
}

/** The next `limit` people after D1 id `after`, by id. */
export async function legacyPeople(env: DbEnv, after: number, limit: number): Promise<LegacySubscriber[]> {
  return (
    await env.DB.prepare("SELECT * FROM subscribers WHERE id > ? ORDER BY id LIMIT ?")
      .bind(after, limit)
      .all<LegacySubscriber>()
  ).results;
}

/** The links of these people (D1 ids), by person. */
export async function legacyLinksOf(env: DbEnv, ids: readonly number[]): Promise<LegacyLink[]> {
  return (
    await env.DB.prepare(
      "SELECT * FROM links WHERE subscriber_id IN (SELECT value FROM json_each(?)) ORDER BY subscriber_id",
    )
      .bind(JSON.stringify(ids))
      .all<LegacyLink>()
  ).results;
}

/** How many automatic-login grants these people (D1 ids) hold. */
export async function legacyGrantCount(env: DbEnv, ids: readonly number[]): Promise<number> {
  return (
    (
      await env.DB.prepare(
        "SELECT count(*) AS n FROM auto_login_grants WHERE subscriber_id IN (SELECT value FROM json_each(?))",
      )
        .bind(JSON.stringify(ids))
        .first<{ n: number }>()
    )?.n ?? 0
  );
}

/** The next `limit` audit events after D1 id `after`, by id. */
export async function legacyAuditEvents(env: DbEnv, after: number, limit: number): Promise<LegacyAuditEvent[]> {
  return (
    await env.DB.prepare(
      "SELECT id, at, type, client_id, outcome, detail FROM audit_events WHERE id > ? ORDER BY id LIMIT ?",
    )
      .bind(after, limit)
      .all<LegacyAuditEvent>()
  ).results;
}
