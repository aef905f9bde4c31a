// /admin/test-numbers: test numbers for app review (docs/operations.md "Test numbers"). App stores
// review a login with a test account; a registered test number is a subscriber with a fixed code
// that signs in only for the listed clients until its expiry, never receives an SMS, is marked in
// the audit and is never locked by wrong codes. Off unless registered.

import { adminConfig, type AdminEnv } from "./config";
import { E } from "../core/errors";
import { sha256 } from "../core/crypto";
import { json } from "../core/http";
import { MOBILE_NUMBER } from "../core/spec";
import type { RequestContext } from "../core/router";
import { COLUMNS, validateRow } from "./directory-input";
import { deleteTestNumber } from "./store";
import { onlyFields, readJsonObject } from "./steps";
import { audit } from "../provider/store/audit";

const FIELDS = [...COLUMNS, "code", "clients", "expiresAt"] as const;
const MAX_CLIENTS = 50;
/** A registration lasts at most a year: review accounts are temporary by design. */
const MAX_LIFETIME_MS = 366 * 86_400_000;
const KST_OFFSET_MS = 9 * 3600_000;

interface TestNumberRow {
  telco: string;
  phone: string;
  name: string;
  test_clients: string;
  test_expires_at: number;
  created_at: number;
}

function view(r: TestNumberRow) {
  return {
    telcoCd: r.telco,
    phoneNo: r.phone,
    name: r.name,
    clients: JSON.parse(r.test_clients) as string[],
    expires_at: new Date(r.test_expires_at).toISOString(),
    created_at: new Date(r.created_at).toISOString(),
  };
}

/** `POST /admin/test-numbers`: registers (or replaces) one test number. */
export async function addTestNumber(req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const body = await readJsonObject(req, adminConfig(env).maxBodyBytes);
  onlyFields(body, FIELDS);
  const now = Date.now();
  const row = validateRow(body, new Date(now + KST_OFFSET_MS).toISOString().slice(0, 10));
  if (typeof row === "string") {
    const field = row.split(" ")[0]!;
    throw row.endsWith(" is missing") ? E.missing(field) : E.invalidBecause(field, row.slice(field.length + 1));
  }
  const code = body.code;
  if (typeof code !== "string" || !/^\d{6}$/.test(code)) throw E.invalidBecause("code", "must be 6 digits");
  const clients = body.clients;
  if (
    !Array.isArray(clients) ||
    clients.length === 0 ||
    clients.length > MAX_CLIENTS ||
    !clients.every((c) => typeof c === "string" && c.length > 0 && c.length <= 100)
  )
    throw E.invalidBecause("clients", `must be a list of 1 to ${MAX_CLIENTS} client ids`);
  const ids = [...new Set(clients as string[])];
  const known = await env.DB.prepare(
    "SELECT count(*) AS n FROM clients WHERE client_id IN (SELECT value FROM json_each(?))",
  )
    .bind(JSON.stringify(ids))
    .first<{ n: number }>();
  if (known!.n !== ids.length) throw E.invalidBecause("clients", "every entry must be a registered client id");
  const expiresAt = typeof body.expiresAt === "string" ? Date.parse(body.expiresAt) : NaN;
  if (!Number.isFinite(expiresAt) || !/^\d{4}-\d{2}-\d{2}T/.test(body.expiresAt as string))
    throw E.invalidBecause("expiresAt", "must be an ISO 8601 date and time");
  if (expiresAt <= now || expiresAt > now + MAX_LIFETIME_MS)
    throw E.invalidBecause("expiresAt", "must be in the future and within a year");

  const existing = await env.DB.prepare("SELECT id, test_clients, ci FROM subscribers WHERE phone = ?")
    .bind(row.phone)
    .first<{ id: number; test_clients: string | null; ci: string }>();
  const directoryOwns = () => E.invalidBecause("phoneNo", "a subscriber of the directory has this number");
  if (existing && existing.test_clients === null) throw directoryOwns();
  // Another persona (another ci) is another person: the previous one's logins end with its row, and
  // the new one gets a new id, so it never inherits a plid (as a reassigned number does).
  // By the id read: a directory row that replaced it meanwhile is another id, and is left alone.
  if (existing && existing.ci !== row.ci) await deleteTestNumber(env, existing.id);
  // The update touches test numbers only: a directory import landing after the read above keeps its row.
  const written = await env.DB.prepare(
    `INSERT INTO subscribers (telco, phone, name, gender, birth, foreign_cd, ci, test_otp_hash, test_clients, test_expires_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (phone) DO UPDATE SET telco = excluded.telco, name = excluded.name, gender = excluded.gender,
       birth = excluded.birth, foreign_cd = excluded.foreign_cd, ci = excluded.ci, test_otp_hash = excluded.test_otp_hash,
       test_clients = excluded.test_clients, test_expires_at = excluded.test_expires_at
     WHERE subscribers.test_clients IS NOT NULL AND subscribers.ci = excluded.ci`,
  )
    .bind(
      row.telco,
      row.phone,
      row.name,
      row.gender,
      row.birth,
      row.foreign,
      row.ci,
      await sha256(code),
      JSON.stringify(ids),
      expiresAt,
      now,
    )
    .run();
  if (written.meta.changes === 0) throw directoryOwns();
  rc.log.event = "test_number.added";
  await audit(env, "test_number.added", null, "ok", { clients: ids.length, replaced: existing !== null });
  const saved = await env.DB.prepare(
    "SELECT telco, phone, name, test_clients, test_expires_at, created_at FROM subscribers WHERE phone = ?",
  )
    .bind(row.phone)
    .first<TestNumberRow>();
  return json(view(saved!), existing ? 200 : 201);
}

/** `GET /admin/test-numbers`: every registered test number (never its code). */
export async function listTestNumbers(_req: Request, env: AdminEnv): Promise<Response> {
  const rows = (
    await env.DB.prepare(
      "SELECT telco, phone, name, test_clients, test_expires_at, created_at FROM subscribers WHERE test_clients IS NOT NULL ORDER BY phone",
    ).all<TestNumberRow>()
  ).results;
  return json({ test_numbers: rows.map(view) });
}

/** `DELETE /admin/test-numbers/:phone`: ends its logins (as a subscriber's removal) and removes it. */
export async function removeTestNumber(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const phone = rc.params.phone!.replace(/[-\s]/g, "");
  if (!MOBILE_NUMBER.test(phone)) throw E.invalidBecause("phone", "must be a mobile number: 01X then 7 or 8 digits");
  const row = await env.DB.prepare("SELECT id FROM subscribers WHERE phone = ? AND test_clients IS NOT NULL")
    .bind(phone)
    .first<{ id: number }>();
  // By the id read, never the phone again: an import giving the number to a real person since
  // this read replaced the test number's row, and that person is not removed (nothing is: 404).
  if (!row || !(await deleteTestNumber(env, row.id))) throw E.noSuch("test number");
  await audit(env, "test_number.removed", null, "ok");
  return json({ deleted: true });
}
