// Operator notices (docs/operations.md "Notices"), in D1 `notices`: a condition an operator must act
// on, raised where it happens (idempotently: raised again, it stays one notice) and resolved by the
// operator's action. Every admin answer carries them (`Admin-Warning`), so the CLI's next call
// prints them. Texts are ASCII and hold no personal data.

type DbEnv = { DB: D1Database };

export type NoticeKind = "test_number.suspended";

export interface Notice {
  kind: NoticeKind;
  subject: string;
  text: string;
  createdAt: number;
}

/** Raises a notice; one already raised for the same kind and subject stays as it was. */
export async function raiseNotice(env: DbEnv, kind: NoticeKind, subject: string, text: string): Promise<void> {
  await env.DB.prepare("INSERT OR IGNORE INTO notices (kind, subject, text, created_at) VALUES (?, ?, ?, ?)")
    .bind(kind, subject, text, Date.now())
    .run();
}

/** Resolves a notice (nothing when there is none). */
export async function resolveNotice(env: DbEnv, kind: NoticeKind, subject: string): Promise<void> {
  await env.DB.prepare("DELETE FROM notices WHERE kind = ? AND subject = ?").bind(kind, subject).run();
}

/** The open notices, oldest first, at most `limit`. */
export async function openNotices(env: DbEnv, limit: number): Promise<Notice[]> {
  const { results } = await env.DB.prepare(
    "SELECT kind, subject, text, created_at FROM notices ORDER BY created_at, kind, subject LIMIT ?",
  )
    .bind(limit)
    .all<{ kind: NoticeKind; subject: string; text: string; created_at: number }>();
  return results.map((r) => ({ kind: r.kind, subject: r.subject, text: r.text, createdAt: r.created_at }));
}

/** How many notices of a kind are open. */
export async function countNotices(env: DbEnv, kind: NoticeKind): Promise<number> {
  const r = await env.DB.prepare("SELECT count(*) AS n FROM notices WHERE kind = ?").bind(kind).first<{ n: number }>();
  return r?.n ?? 0;
}

/** The text of a test number's suspension (masked number: `010-****-0001`). */
export function suspendedText(masked: string, failures: number): string {
  return `test number ${masked} is suspended after ${failures} wrong codes: register it again with a new code (test-numbers add)`;
}
