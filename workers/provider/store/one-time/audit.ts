// Audit events (docs/operations.md "Audit events"): client id, event type, outcome and a detail free
// of personal data, codes and tokens. An event goes to the audit outbox of one one-time-store object
// in one call (tables/audit-outbox.ts); the object's outbox goes to R2 in batches
// (store/audit-archive.ts).

import { randomToken } from "../../../core/crypto";
import { storeConfig, type StoreVars } from "../config";
import { storeFor, type OneTimeEnv } from "./one-time-store";
import type { AuditRecord } from "./tables/audit-outbox";

export type { AuditRecord } from "./tables/audit-outbox";

type AuditEnv = OneTimeEnv & StoreVars;

export type AuditType =
  | "signin.success"
  | "signin.failure"
  | "sms.attempt"
  | "sms.inbound"
  | "carrier.unavailable"
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
  | "directory.import_committed"
  | "directory.deleted"
  | "test_number.added"
  | "test_number.removed"
  | "test_number.suspended"
  | "plid.ended"
  | "account.signin"
  | "console.signin"
  | "developer.signin"
  | "developer.refused"
  | "team.invited"
  | "team.invite_withdrawn"
  | "team.joined"
  | "team.declined"
  | "team.removed"
  | "team.role_changed"
  | "review.submitted"
  | "review.withdrawn"
  | "review.approved"
  | "review.rejected"
  | "test_number.renewed"
  | "operator.granted"
  | "operator.invite_withdrawn"
  | "operator.taken"
  | "operator.revoked"
  | "operator.ended"
  | "token.created"
  | "token.revoked"
  | "migration.batch"
  | "account.end_auto_login"
  | "account.terminate"
  | "event.delivered"
  | "event.failed"
  | "event.abandoned"
  | "event.paused"
  | "event.resumed"
  | "event.test"
  | "ssf.stream_paused"
  | "ssf.stream_resumed"
  | "guard.state"
  | "guard.decision"
  | "passkey.created"
  | "passkey.refused"
  | "passkey.removed"
  | "passkey.cancelled"
  | "passkey.ended"
  | "passkey.notified"
  | "risk.window_opened"
  | "risk.refused"
  | "signing_key.rotated"
  | "request.unfinished";

type Detail = Record<string, string | number | boolean>;

/** An event for `auditAll`, timed now. */
export function auditRecord(
  type: AuditType,
  clientId: string | null,
  outcome: "ok" | "refused" = "ok",
  detail?: Detail,
): AuditRecord {
  return [Date.now(), type, clientId, outcome, detail ? JSON.stringify(detail) : null];
}

/** Appends an audit event. `detail` must hold no personal data, codes or tokens. */
export function audit(
  env: AuditEnv,
  type: AuditType,
  clientId: string | null,
  outcome: "ok" | "refused" = "ok",
  detail?: Detail,
): Promise<void> {
  return auditAll(env, [auditRecord(type, clientId, outcome, detail)]);
}

/**
 * Appends audit events in one call, to a random object of the one-time store: any object will do
 * (each writes its own outbox to R2), and a random one spreads the writes over all of them.
 */
export async function auditAll(env: AuditEnv, records: readonly AuditRecord[]): Promise<void> {
  if (records.length === 0) return;
  await storeFor(env, randomToken(1), storeConfig(env).oneTimeShards).appendAudit(records);
}

/**
 * How long `auditOnce` remembers an event it wrote: a job run again after its last step is run by
 * its shard's next alarm (store/flows/directory-jobs.ts), far within this.
 */
export const AUDIT_ONCE_MS = 7 * 86_400_000;

/**
 * Appends audit events of a step that may run again (a directory job, store/flows/directory-jobs.ts):
 * each under its key (`onceKey`, keys.ts), written once in `AUDIT_ONCE_MS` however often or at once
 * the step runs; all in one call to the object of `placeBy` (a random base64url value, e.g. a hash
 * of what the step does, so a rerun reaches the same object).
 */
export async function auditOnce(
  env: AuditEnv,
  placeBy: string,
  keyed: readonly (readonly [key: string, record: AuditRecord])[],
): Promise<void> {
  if (keyed.length === 0) return;
  await storeFor(env, placeBy, storeConfig(env).oneTimeShards).appendAuditOnce(keyed, AUDIT_ONCE_MS);
}
