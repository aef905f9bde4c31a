// The carrier directory behind step 1 of the sign-in (docs/architecture.md §4.4): one interface,
// `confirm(telco, name, phone) → subscriber | none`. The default reads the embedded D1 directory;
// docs/signin.md explains how a deployment plugs in a carrier's verification API.

import { signinConfig, type SigninVars } from "./config";
import type { Telco } from "../../core/spec";
import { type DirectoryEnv, type ReviewRestriction, type Subscriber, subscriberByPhone } from "../store/directory";

/**
 * A confirmed subscriber; `testOtpHash` is set for test numbers (fixed code, no SMS), `review` for
 * test numbers registered for app review (listed clients only, until an expiry).
 */
export interface ConfirmedSubscriber {
  subscriber: Subscriber;
  testOtpHash: string | null;
  review?: ReviewRestriction | null;
}

export interface CarrierDirectory {
  /** The subscriber when carrier, name and number all match; null otherwise, never saying which. */
  confirm(telco: Telco, name: string, phone: string): Promise<ConfirmedSubscriber | null>;
}

/** A name for comparison: NFC, trimmed, inner whitespace collapsed, letter case ignored. */
export function normalizeName(input: string): string {
  return input.normalize("NFC").trim().replace(/\s+/g, " ").toUpperCase();
}

/** `010-****-5678`: what the verify page shows of the number. */
export function maskPhone(phone: string): string {
  return `${phone.slice(0, 3)}-${"*".repeat(phone.length - 7)}-${phone.slice(-4)}`;
}

/** The default directory: the embedded one in the directory shards (the dev seed and admin imports fill it). */
export function d1Directory(env: DirectoryEnv): CarrierDirectory {
  return {
    async confirm(telco, name, phone) {
      const s = await subscriberByPhone(env, phone);
      if (!s) return null;
      // Compare both fields whatever the first gives: no early exit that tells them apart.
      const sameTelco = s.telco === telco;
      const sameName = normalizeName(s.name) === normalizeName(name);
      if (!(sameTelco && sameName)) return null;
      const { testOtpHash, review, ...subscriber } = s;
      return { subscriber, testOtpHash, review };
    },
  };
}

/** The configured directory (`CARRIER_DIRECTORY`; `d1` is the only built-in). */
export function carrierDirectory(env: DirectoryEnv & SigninVars): CarrierDirectory {
  switch (signinConfig(env).carrierDirectory) {
    case "d1":
      return d1Directory(env);
  }
}
