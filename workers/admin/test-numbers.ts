// /admin/test-numbers: test numbers for app review (docs/operations.md "Test numbers"). App stores
// review a login with a test account; a registered test number is a subscriber with a fixed code
// that signs in only for the listed clients until its expiry, never receives an SMS and is marked in
// the audit; its wrong codes lock the networks they come from, never the number, and at
// TEST_NUMBER_MAX_FAILURES of them over its registration it is suspended until registered again
// with a new code. Off unless registered.

import { auditBy, service } from "./access";
import type { AdminEnv } from "./config";
import { E } from "../core/errors";
import { sha256 } from "../core/crypto";
import { MOBILE_NUMBER } from "../core/spec";
import { countClients } from "../provider/store/clients";
import { storeConfig } from "../provider/store/config";
import {
  subscriberRowAtNumber,
  dirAt,
  dirShards,
  COLUMNS,
  validateRow,
  type SubscriberRow,
} from "../provider/store/directory/index";
import { removeHolder } from "../provider/store/flows/directory-write";
import { putTestNumber } from "../provider/store/flows/test-numbers";
import { resolveNotice } from "../provider/store/notices";
import { phoneKey, testFailuresKey, storeFor } from "../provider/store/one-time/index";

/** The fields of a registration: a directory row's, its code, its clients and its expiry. */
export const TEST_NUMBER_FIELDS = [...COLUMNS, "code", "clients", "expiresAt"] as const;
const MAX_CLIENTS = 50;
/** A registration lasts at most a year: review accounts are temporary by design. */
const MAX_LIFETIME_MS = 366 * 86_400_000;
const KST_OFFSET_MS = 9 * 3600_000;

/** Wrong codes entered for the registration `r` (its number and code) from all networks. */
async function wrongCodes(env: AdminEnv, r: SubscriberRow): Promise<number> {
  if (r.test_otp_hash === null) return 0;
  const key = await phoneKey(r.phone);
  const store = storeFor(env, key, storeConfig(env).oneTimeShards);
  return (await store.peek(testFailuresKey(key, r.test_otp_hash))).count;
}

/** A test number as the API answers it (never its code). */
export interface TestNumberView {
  telcoCd: string;
  phoneNo: string;
  name: string;
  clients: string[];
  expires_at: string;
  created_at: string;
  wrong_codes: number;
  suspended: boolean;
}

async function view(env: AdminEnv, r: SubscriberRow): Promise<TestNumberView> {
  const wrong = await wrongCodes(env, r);
  return {
    telcoCd: r.telco,
    phoneNo: r.phone,
    name: r.name,
    clients: JSON.parse(r.test_clients ?? "[]") as string[],
    expires_at: new Date(r.test_expires_at ?? 0).toISOString(),
    created_at: new Date(r.created_at).toISOString(),
    wrong_codes: wrong,
    suspended: wrong >= storeConfig(env).testNumberMaxFailures,
  };
}

/** `POST /admin/test-numbers`: registers (or replaces) one test number; `replaced` says which. */
export const addTestNumber = service<
  Partial<Record<(typeof TEST_NUMBER_FIELDS)[number], unknown>>,
  { number: TestNumberView; replaced: boolean }
>("editor", "POST", async (env, caller, body) => {
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
  if ((await countClients(env, ids)) !== ids.length)
    throw E.invalidBecause("clients", "every entry must be a registered client id");
  const expiresAt = typeof body.expiresAt === "string" ? Date.parse(body.expiresAt) : NaN;
  if (!Number.isFinite(expiresAt) || !/^\d{4}-\d{2}-\d{2}T/.test(body.expiresAt as string))
    throw E.invalidBecause("expiresAt", "must be an ISO 8601 date and time");
  if (expiresAt <= now || expiresAt > now + MAX_LIFETIME_MS)
    throw E.invalidBecause("expiresAt", "must be in the future and within a year");

  const test = { otpHash: await sha256(code), clients: JSON.stringify(ids), expiresAt };
  const { saved, replaced } = await putTestNumber(env, row, test, async (holder) => {
    if (holder.test_clients === null)
      throw E.invalidBecause("phoneNo", "a subscriber of the directory has this number");
    // A suspended number's code was guessed at: it is armed again only with another.
    if (holder.test_otp_hash === test.otpHash && (await view(env, holder)).suspended)
      throw E.invalidBecause("code", "this test number is suspended after too many wrong codes: give it a new code");
  });
  caller.rc.log.event = "test_number.added";
  await auditBy(env, caller, "test_number.added", null, "ok", { clients: ids.length, replaced });
  await resolveNotice(env, "test_number.suspended", await phoneKey(row.phone));
  return { number: await view(env, saved), replaced };
});

/** Test numbers per page of `GET /admin/test-numbers`. */
const PAGE = 100;

/**
 * `GET /admin/test-numbers[?after=<phone>]`: registered test numbers by number (never their codes),
 * a page at a time: each shard gives its next ones after the cursor and the smallest win.
 */
export const listTestNumbers = service<
  { after: string },
  { test_numbers: TestNumberView[]; next_after: string | null }
>("viewer", "GET", async (env, _caller, { after }) => {
  if (after !== "" && !/^\d{10,11}$/.test(after)) throw E.invalidBecause("after", "must be a phone number");
  const all = await Promise.all(
    Array.from({ length: dirShards(env) }, (_, s) => dirAt(env, s).testNumbers(after, PAGE + 1)),
  );
  const rows = all
    .flat()
    .sort((a, b) => (a.phone < b.phone ? -1 : 1))
    .slice(0, PAGE + 1);
  const page = rows.slice(0, PAGE);
  return {
    test_numbers: await Promise.all(page.map((r) => view(env, r))),
    next_after: rows.length > PAGE ? page[page.length - 1]!.phone : null,
  };
});

/** `DELETE /admin/test-numbers/:phone`: ends its logins (as a subscriber's removal) and removes it. */
export const removeTestNumber = service<{ phone: string }, { deleted: true }>(
  "editor",
  "DELETE",
  async (env, caller, input) => {
    const phone = input.phone.replace(/[-\s]/g, "");
    if (!MOBILE_NUMBER.test(phone)) throw E.invalidBecause("phone", "must be a mobile number: 01X then 7 or 8 digits");
    const row = await subscriberRowAtNumber(env, phone);
    // By the id read: an import giving the number to a real person since this read replaced the
    // test number's holder, and that person is not removed (nothing is: 404).
    if (!row || row.test_clients === null || !(await removeHolder(env, phone, row.id))) throw E.noSuch("test number");
    await auditBy(env, caller, "test_number.removed", null, "ok");
    await resolveNotice(env, "test_number.suspended", await phoneKey(phone));
    return { deleted: true };
  },
);
