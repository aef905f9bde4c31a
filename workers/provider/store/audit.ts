// Audit events in D1 (docs/operations.md): client id, event type, outcome and a detail free of
// personal data, codes and tokens.

type DbEnv = { DB: D1Database };

export type AuditType =
  | "signin.success"
  | "signin.failure"
  | "consent"
  | "code.redeemed"
  | "code.refused"
  | "disconnect"
  | "client.created"
  | "client.updated"
  | "client.secret_rotated"
  | "client.disabled"
  | "client.deleted"
  | "directory.imported"
  | "directory.deleted"
  | "test_number.added"
  | "test_number.removed"
  | "plid.ended"
  | "account.signin"
  | "account.end_auto_login"
  | "account.terminate"
  | "event.delivered"
  | "event.failed"
  | "event.abandoned";

/** Appends an audit event. `detail` must hold no personal data, codes or tokens. */
export async function audit(
  env: DbEnv,
  type: AuditType,
  clientId: string | null,
  outcome: "ok" | "refused" = "ok",
  detail?: Record<string, string | number | boolean>,
): Promise<void> {
  await env.DB.prepare("INSERT INTO audit_events (at, type, client_id, outcome, detail) VALUES (?, ?, ?, ?, ?)")
    .bind(Date.now(), type, clientId, outcome, detail ? JSON.stringify(detail) : null)
    .run();
}
