// One directory row as the carriers' data gives it, checked the same way wherever it comes from: an
// admin import file (workers/admin/directory-input.ts), a test-number registration, or a carrier
// verification API's answer (workers/provider/authorize/carrier-api.ts). Reasons are fixed phrases,
// never the row's content (personal data).

import { MOBILE_NUMBER } from "../../../core/spec";
import type { Subscriber } from "./directory";
import { readSignals, type SignalField, type SimSignal } from "./risk";

/** One validated directory row, in the table's terms; `sim`, the risk signals it carried (risk.ts), if any. */
export type SubscriberInput = Omit<Subscriber, "id"> & { sim?: SimSignal };

/**
 * A `ci` as the carriers issue it: Base64 of 64 bytes, canonical (88 characters, `==` padded, the
 * last data character's unused bits zero), so it decodes to 64 bytes and encodes back to itself.
 */
export const CI_SHAPE = /^[A-Za-z0-9+/]{85}[AQgw]==$/;

export const COLUMNS = ["telcoCd", "phoneNo", "name", "gender", "birth", "foreign", "ci"] as const;
export type Column = (typeof COLUMNS)[number];

const KST_OFFSET_MS = 9 * 3600 * 1000;

/** Today as YYYY-MM-DD in Korean time (a birth date may not be after it). */
export function kstToday(now: number): string {
  return new Date(now + KST_OFFSET_MS).toISOString().slice(0, 10);
}

function isValidDate(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/**
 * The numbers the service allocates to apps as their test numbers (docs/developers.md "Test
 * numbers"): 010-0100-0000 to 010-0999-9999. Korean carriers give no subscriber a 010 number whose
 * middle block starts with 0, and the dev seed's fixed-code numbers (010-0000-xxxx) stay apart.
 * No import or review registration may use them.
 */
export const APP_TEST_RANGE = { first: 1001000000, size: 9_000_000, label: "010-0100-0000 – 010-0999-9999" };
export const isAppTestNumber = (phone: string) => /^0100[1-9]\d{6}$/.test(phone);

/** One row to a subscriber, or the reason it is refused. `today` is YYYY-MM-DD in Korean time. */
export function validateRow(
  raw: Partial<Record<Column | SignalField, unknown>>,
  today: string,
  now = Date.now(),
): SubscriberInput | string {
  const text: Partial<Record<Column, string>> = {};
  for (const col of COLUMNS) {
    const v = raw[col];
    if (v === undefined || v === null || (typeof v === "string" && v.trim() === "")) return `${col} is missing`;
    if (typeof v !== "string") return `${col} must be text (a JSON string)`;
    text[col] = v.trim();
  }
  const telco = text.telcoCd!.toUpperCase();
  if (telco !== "S" && telco !== "K" && telco !== "L") return "telcoCd must be S, K or L";
  const phone = text.phoneNo!.replace(/[-\s]/g, "");
  if (!MOBILE_NUMBER.test(phone)) return "phoneNo must be a mobile number: 01X then 7 or 8 digits";
  if (isAppTestNumber(phone)) return `phoneNo is in the range kept for apps' test numbers (${APP_TEST_RANGE.label})`;
  const name = text.name!.normalize("NFC");
  if (name.length > 100) return "name must be at most 100 characters";
  if (/[\x00-\x1f\x7f]/.test(name)) return "name must not contain control characters";
  const gender = text.gender!.toUpperCase();
  if (gender !== "M" && gender !== "F") return "gender must be M or F";
  const b = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(text.birth!);
  if (!b) return "birth must be YYYY-MM-DD";
  const [y, m, d] = [Number(b[1]), Number(b[2]), Number(b[3])];
  const birth = `${b[1]}-${b[2]}-${b[3]}`;
  if (!isValidDate(y, m, d) || y < 1900) return "birth must be a real date after 1900";
  if (birth > today) return "birth must not be in the future";
  const foreign = text.foreign!.toUpperCase();
  if (foreign !== "L" && foreign !== "F") return "foreign must be L (national) or F (foreign)";
  const ci = text.ci!;
  if (!CI_SHAPE.test(ci)) return "ci must be canonical Base64 of 64 bytes (88 characters)";
  const sim = readSignals(raw, now);
  if (typeof sim === "string") return sim;
  return { telco, phone, name, gender, birth, foreign, ci, ...(sim && { sim }) };
}
