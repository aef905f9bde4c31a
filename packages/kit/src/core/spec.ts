// The interface's vocabulary (spec §2.1, §4), one home for each rule both sides need: the identity
// items and which are encrypted, Y/N flags, carrier codes, the mobile-number rule, the shape of
// the 256-bit random values, and the loopback hosts that may use plain http.

/** The nine identity items of spec §2.1, in the order records list them. */
export const IDENTITY_ITEMS = [
  "ci",
  "phoneNo",
  "name",
  "gender",
  "agegroup",
  "birthday",
  "birthdate",
  "foreign",
  "telcoCd",
] as const;
export type IdentityItem = (typeof IDENTITY_ITEMS)[number];

/** Items sent encrypted (spec §2.1 "encrypted string", §2.2). */
export const ENCRYPTED_ITEMS: ReadonlySet<IdentityItem> = new Set(["ci", "phoneNo", "name", "birthday", "birthdate"]);

export function isIdentityItem(s: string): s is IdentityItem {
  return (IDENTITY_ITEMS as readonly string[]).includes(s);
}

/** spec §2.1 flags. */
export type YN = "Y" | "N";

/** Carrier codes (spec §2.1 `telcoCd`): SKT, KT, LG U+. */
export type Telco = "S" | "K" | "L";

export function isTelco(v: string | undefined): v is Telco {
  return v === "S" || v === "K" || v === "L";
}

/** A Korean mobile number as stored and sent (spec §2.1 `phoneNo`): 010 and 8 digits, or 011/016-019 and 7-8. */
export const MOBILE_NUMBER = /^010\d{8}$|^01[16789]\d{7,8}$/;

/**
 * A mobile number as digits (`01012345678`), accepting hyphens, spaces, dots, parentheses and a
 * +82 / 0082 prefix; undefined when it is not a mobile number.
 */
export function normalizePhone(input: string): string | undefined {
  let d = input.replace(/[\s\-.()]/g, "");
  if (d.startsWith("+82")) d = "0" + d.slice(3).replace(/^0/, "");
  else if (d.startsWith("0082")) d = "0" + d.slice(4).replace(/^0/, "");
  return MOBILE_NUMBER.test(d) ? d : undefined;
}

/** 256 random bits in base64url (43 characters): codes, tokens, states, session and transaction ids. */
export const RANDOM_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function isRandomValue(v: string | undefined | null): v is string {
  return typeof v === "string" && RANDOM_SHAPE.test(v);
}

/** Hosts where plain http is allowed for development (spec §1 is "HTTPS only" everywhere else). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);
