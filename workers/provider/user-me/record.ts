// The user record of spec §2.1, built for one client: its agreed items only, encrypted items under
// the spec §2.2 cipher keyed by the client's secret, agegroup computed at request time.

import { encryptField } from "../../core/crypto";
import { ENCRYPTED_ITEMS, type IdentityItem, type YN } from "../../core/spec";
import type { SubscriberSnapshot } from "../store/one-time/index";

const KST_OFFSET_MS = 9 * 3600 * 1000; // Korea has no daylight saving time

/** International age on `now` (in Korean time) for a YYYY-MM-DD birth date. */
export function ageOn(birth: string, now: number): number {
  const [y, m, d] = birth.split("-").map(Number) as [number, number, number];
  const today = new Date(now + KST_OFFSET_MS);
  const ty = today.getUTCFullYear();
  const tm = today.getUTCMonth() + 1;
  const td = today.getUTCDate();
  return ty - y - (tm < m || (tm === m && td < d) ? 1 : 0);
}

/** spec §2.1 agegroup: the decade's lower bound, as a string ("0", "10", "20", ...). */
export function ageGroup(birth: string, now: number): string {
  return String(Math.max(0, Math.floor(ageOn(birth, now) / 10) * 10));
}

/** The plain value of one identity item for a subscriber (formats of reference behaviour.md). */
export function itemValue(item: IdentityItem, s: SubscriberSnapshot, now: number): string {
  switch (item) {
    case "ci":
      return s.ci;
    case "phoneNo":
      return s.phone;
    case "name":
      return s.name;
    case "gender":
      return s.gender;
    case "agegroup":
      return ageGroup(s.birth, now);
    case "birthday":
      return s.birth.slice(5, 7) + s.birth.slice(8, 10); // MMDD
    case "birthdate":
      return s.birth.slice(2, 4) + s.birth.slice(5, 7) + s.birth.slice(8, 10); // YYMMDD
    case "foreign":
      return s.foreign;
    case "telcoCd":
      return s.telco;
  }
}

export interface RecordInput {
  plid: string;
  items: readonly IdentityItem[];
  /** null: mode 2 of spec §2.1 (automatic login, identity fields empty). */
  subscriber: SubscriberSnapshot | null;
  autoLoginYn: YN;
  autoStatusCheck: YN;
  secret: string;
  now: number;
}

/**
 * The `user` object as JSON text, its keys in the agreed order. Mode-2 records carry every agreed
 * item, empty (encryptions of ""). Written as text rather than built as an object and serialized:
 * the keys are the spec's item names and the flags, and every value goes through `JSON.stringify`
 * (docs/benchmarks.md: the object's keyed stores and its serialization cost more than the text).
 */
export async function userRecordJson(r: RecordInput): Promise<string> {
  // every encryption starts before the first is awaited
  const values = r.items.map((item) => {
    const plain = r.subscriber ? itemValue(item, r.subscriber, r.now) : "";
    return ENCRYPTED_ITEMS.has(item) ? encryptField(r.secret, plain) : plain; // never a plain value where a cipher text belongs
  });
  let json = `{"plid":${JSON.stringify(r.plid)}`;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    json += `,"${r.items[i]}":${JSON.stringify(typeof v === "string" ? v : await v)}`;
  }
  return `${json},"autoLoginYn":"${r.autoLoginYn}","autoStatusCheck":"${r.autoStatusCheck}"}`;
}
