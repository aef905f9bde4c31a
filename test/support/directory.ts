// The carrier directory as the tests drive it: rows imported through the admin API, and the codes
// the dev SMS outbox received.
import { env } from "./env";
import { expect } from "vitest";
import { admin } from "./admin";

/** A canonical Base64 `ci` of 64 bytes (88 characters). */
export const ciOf = (n: number) => btoa(String.fromCharCode(...new Uint8Array(64).fill(n)));

/** `POST /admin/directory/import`; its report. */
export async function importRows(rows: Record<string, string>[]): Promise<Record<string, unknown>> {
  const res = await admin("POST", "/admin/directory/import", { json: rows });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** The latest SMS code sent to `phone` (the dev outbox). */
export async function lastCode(phone: string): Promise<string> {
  // the latest message with a code (a passkey notice has none)
  const r = await env.DB.prepare("SELECT body FROM sms_outbox WHERE phone = ? ORDER BY id DESC LIMIT 10")
    .bind(phone)
    .all<{ body: string }>();
  const body = r.results.find((m) => /\d{6}/.test(m.body))!.body;
  return /\d{6}/.exec(body)![0];
}
