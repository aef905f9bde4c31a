// Faults on real bindings: the real namespace, with one call refused, as a dead object or a worker
// killed at that point would leave it (the change journal's tests, test/admin/change-journal.test.ts).
import { env } from "./env";

/** The real ONE_TIME namespace, but every object refuses audit appends: a change's last step fails. */
export function auditRefused(): typeof env.ONE_TIME {
  return new Proxy(env.ONE_TIME, {
    get(t, prop) {
      if (prop !== "get") {
        const v = Reflect.get(t, prop, t) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      }
      return (id: DurableObjectId) => {
        const stub = t.get(id) as unknown as Record<string, (...a: unknown[]) => unknown>;
        return new Proxy(stub, {
          get: (s, p) =>
            p === "appendAudit"
              ? () => Promise.reject(new Error("object unreachable"))
              : typeof p === "string"
                ? (...a: unknown[]) => s[p]!(...a)
                : undefined,
        });
      };
    },
  });
}

/**
 * Every change journal row ever written, kept by a trigger in the real D1 (the journal's own rows
 * are deleted when their change answers): which requests ran under the journal, and as whom.
 */
export async function watchJournal(): Promise<void> {
  await env.DB.exec(
    "CREATE TABLE IF NOT EXISTS journal_seen (actor TEXT, method TEXT, route TEXT, client_id TEXT, seq INTEGER PRIMARY KEY)",
  );
  await env.DB.exec(
    "CREATE TRIGGER IF NOT EXISTS journal_seen_insert AFTER INSERT ON change_journal BEGIN INSERT INTO journal_seen (actor, method, route, client_id) VALUES (NEW.actor, NEW.method, NEW.route, NEW.client_id); END",
  );
}

type JournalSeen = { method: string; route: string; client_id: string | null; seq: number };

/** The journal rows written since `after` (a `seq`), oldest first: `actor`'s, or (null) everyone's. */
export async function journalSeen(actor: string | null, after = 0): Promise<JournalSeen[]> {
  const { results } = await env.DB.prepare(
    "SELECT method, route, client_id, seq FROM journal_seen WHERE (?1 IS NULL OR actor = ?1) AND seq > ?2 ORDER BY seq",
  )
    .bind(actor, after)
    .all<JournalSeen>();
  return results;
}

/** The last journal row's `seq` so far (0: none). */
export async function journalSeq(): Promise<number> {
  return (await env.DB.prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM journal_seen").first<{ n: number }>())!.n;
}
