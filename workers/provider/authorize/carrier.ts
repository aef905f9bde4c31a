// The carrier directory behind step 1 of the sign-in (issue 3, DESIGN.md §4.4): one interface,
// `confirm(telco, name, phone) → subscriber | none`. The default reads the embedded D1 directory;
// docs/signin.md explains how a deployment plugs in a carrier's verification API.

import { signinConfig } from "./config";
import { subscriberByPhone, type Subscriber } from "../store/registry";

export type Telco = "S" | "K" | "L";

/** A confirmed subscriber; `testOtpHash` is set for test numbers (fixed code, no SMS). */
export interface ConfirmedSubscriber {
  subscriber: Subscriber;
  testOtpHash: string | null;
}

export interface CarrierDirectory {
  /** The subscriber when carrier, name and number all match; null otherwise, never saying which. */
  confirm(telco: Telco, name: string, phone: string): Promise<ConfirmedSubscriber | null>;
}

export function isTelco(v: string | undefined): v is Telco {
  return v === "S" || v === "K" || v === "L";
}

/**
 * A Korean mobile number as digits (`01012345678`), accepting hyphens, spaces, dots and a +82
 * prefix; undefined when it is not a mobile number.
 */
export function normalizePhone(input: string): string | undefined {
  let d = input.replace(/[\s\-.()]/g, "");
  if (d.startsWith("+82")) d = "0" + d.slice(3).replace(/^0/, "");
  else if (d.startsWith("0082")) d = "0" + d.slice(4).replace(/^0/, "");
  return /^010\d{8}$|^01[16789]\d{7,8}$/.test(d) ? d : undefined;
}

/** A name for comparison: NFC, trimmed, inner whitespace collapsed, letter case ignored. */
export function normalizeName(input: string): string {
  return input.normalize("NFC").trim().replace(/\s+/g, " ").toUpperCase();
}

/** `010-****-5678`: what the verify page shows of the number. */
export function maskPhone(phone: string): string {
  return `${phone.slice(0, 3)}-${"*".repeat(phone.length - 7)}-${phone.slice(-4)}`;
}

/** The default directory: the D1 `subscribers` table (the dev seed and admin imports fill it). */
export function d1Directory(env: { DB: D1Database }): CarrierDirectory {
  return {
    async confirm(telco, name, phone) {
      const s = await subscriberByPhone(env, phone);
      if (!s) return null;
      // Compare both fields whatever the first gives: no early exit that tells them apart.
      const sameTelco = s.telco === telco;
      const sameName = normalizeName(s.name) === normalizeName(name);
      if (!(sameTelco && sameName)) return null;
      const { testOtpHash, ...subscriber } = s;
      return { subscriber, testOtpHash };
    },
  };
}

/** The configured directory (`CARRIER_DIRECTORY`; `d1` is the only built-in). */
export function carrierDirectory(env: { DB: D1Database } & Record<string, unknown>): CarrierDirectory {
  switch (signinConfig(env).carrierDirectory) {
    case "d1":
      return d1Directory(env);
  }
}
