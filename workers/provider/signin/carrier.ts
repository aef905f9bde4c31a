// The carrier directory behind step 1 of the sign-in (docs/architecture.md §4.4): one interface,
// `confirm(telco, name, phone) → subscriber | none`. `d1` reads the embedded directory (the dev
// seed and admin imports fill it); `http` asks the carrier's verification API
// (docs/carrier-api.md) and writes the person it confirms to the directory as an import row is
// written, so plids, consent, automatic login and reassignment by ci work as with an import.

import { signinConfig, type SigninVars } from "./config";
import { ConfigError } from "../../core/config";
import type { Telco } from "../../core/spec";
import {
  type DirectoryEntry,
  type ReviewRestriction,
  type Subscriber,
  subscriberByPhone,
  type LinkRow,
  kstToday,
  validateRow,
  type SubscriberInput,
  applySignal,
  type SimColumns,
} from "../store/directory/index";
import type { JobEnv } from "../store/flows/directory-jobs";
import { DirectoryBusy, writeSubscriber } from "../store/flows/directory-write";
import { noteSignals } from "../store/flows/sim-signals";
import { askCarrier, canonicalName, CarrierUnavailable, type CarrierApiOptions } from "./carrier-api";

export { CarrierUnavailable } from "./carrier-api";

/**
 * A confirmed subscriber; `testOtpHash` is set for test numbers (fixed code, no SMS), `review` for
 * test numbers registered for app review (listed clients only, until an expiry).
 */
export interface ConfirmedSubscriber {
  subscriber: Subscriber;
  testOtpHash: string | null;
  review?: ReviewRestriction | null;
  /** The person's link to the client asked about, when the directory read it with the number (else absent). */
  link?: LinkRow | null;
  /** When the number's latest risky change was (a person-kind SIM change or a port; risk.ts), or null. */
  riskFrom: number | null;
}

export interface CarrierDirectory {
  /**
   * The subscriber when carrier, name and number all match; null otherwise, never saying which.
   * Throws CarrierUnavailable when the carrier could not be asked (the person tries again shortly).
   */
  confirm(telco: Telco, name: string, phone: string, clientId?: string): Promise<ConfirmedSubscriber | null>;
}

/** A name for comparison: its canonical form (NFC, trimmed, inner whitespace collapsed), letter case ignored. */
export function normalizeName(input: string): string {
  return canonicalName(input).toUpperCase();
}

/** `010-****-5678`: what the verify page shows of the number. */
export function maskPhone(phone: string): string {
  return `${phone.slice(0, 3)}-${"*".repeat(phone.length - 7)}-${phone.slice(-4)}`;
}

/** The directory's answer for an entry: the subscriber when carrier and name match it. */
function matchEntry(s: DirectoryEntry, telco: Telco, name: string): ConfirmedSubscriber | null {
  // Compare both fields whatever the first gives: no early exit that tells them apart.
  const sameTelco = s.telco === telco;
  const sameName = normalizeName(s.name) === normalizeName(name);
  if (!(sameTelco && sameName)) return null;
  const { testOtpHash, review, link, sim: _, riskFrom, ...subscriber } = s;
  return { subscriber, testOtpHash, review, link, riskFrom };
}

/** The default directory: the embedded one in the directory shards (the dev seed and admin imports fill it). */
export function d1Directory(env: Parameters<typeof subscriberByPhone>[0]): CarrierDirectory {
  return {
    async confirm(telco, name, phone, clientId) {
      const s = await subscriberByPhone(env, phone, clientId);
      return s ? matchEntry(s, telco, name) : null;
    },
  };
}

/**
 * How long a sign-in waits for the service's own directory: another writer deciding the same ci (an
 * import's chunk, a twin sign-in), or the directory object itself busy (an import's chunks queued
 * on it). Past it the sign-in ends with `directory_busy`, the service's side, never the carrier's.
 */
const CI_WAIT_MS = 2000;

/**
 * `work` (a call to the service's directory) if it settles within `ms`; else CarrierUnavailable
 * `directory_busy`. A call given up on goes on by itself: a person it writes is the same person
 * the next attempt confirms.
 */
async function directoryWithin<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer = 0;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CarrierUnavailable("directory_busy", `no answer in ${ms} ms`)), ms);
  });
  work.catch(() => {}); // a call given up on may still fail: nobody waits for it
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether two sets of stored signals are the same. */
function sameSignals(a: SimColumns, b: SimColumns): boolean {
  return (
    a.sim_changed_at === b.sim_changed_at && a.sim_change_kind === b.sim_change_kind && a.ported_at === b.ported_at
  );
}

/** The directory already holds exactly this person at this number: nothing to write. */
function holds(s: DirectoryEntry, row: SubscriberInput): boolean {
  return (
    s.ci === row.ci &&
    s.telco === row.telco &&
    s.gender === row.gender &&
    s.birth === row.birth &&
    s.foreign === row.foreign &&
    normalizeName(s.name) === normalizeName(row.name)
  );
}

/**
 * The carrier's verification API as the directory. A test number (the dev seed's, or one registered
 * for app review) is answered by the embedded directory without asking: the carriers know nothing
 * of its fixed code, and an app reviewer must get in whatever the carrier says of the number.
 * Everyone else is asked; a match is written as an import row is (a repeat sign-in of the same
 * person with the same fields writes nothing), so a number answering with another ci is a
 * reassignment and a ci answering at a new number is the person moving, plids kept.
 */
export function httpDirectory(env: JobEnv, api: CarrierApiOptions, ciWaitMs = CI_WAIT_MS): CarrierDirectory {
  return {
    async confirm(telco, name, phone, clientId) {
      const held = await directoryWithin(ciWaitMs, subscriberByPhone(env, phone, clientId));
      if (held && held.testOtpHash !== null) return matchEntry(held, telco, name);
      const answer = await askCarrier(api, { telco, name, phone });
      if (!answer.match) return null;
      // the name stored is the name the carrier confirmed: askCarrier sent it in this form
      const row = validateRow(
        { telcoCd: telco, phoneNo: phone, name: canonicalName(name), ...answer.person },
        kstToday(Date.now()),
      );
      // The import's rules: a ci that is not canonical Base64 of 64 bytes, a birth date in the
      // future... are the carrier's fault, never a person written (the reason names no value).
      if (typeof row === "string") throw new CarrierUnavailable("invalid_person", row);
      const same = held !== null && holds(held, row);
      let id: number;
      if (same) id = held.id;
      else
        try {
          // its own wait for the ci, and a second more for the directory objects to take the write
          id = await directoryWithin(ciWaitMs + 1000, writeSubscriber(env, row, ciWaitMs));
        } catch (err) {
          if (err instanceof DirectoryBusy) throw new CarrierUnavailable("directory_busy");
          throw err;
        }
      // The signals the answer carried, written when they change what is stored (a change that
      // opens a risk window tells the person's apps); the same values again write nothing.
      const prior = held !== null && held.ci === row.ci ? held : null;
      let risk = prior ? prior.riskFrom : null;
      if (answer.sim && !(prior && sameSignals(prior.sim, applySignal(prior.sim, answer.sim)))) {
        const noted = await directoryWithin(ciWaitMs, noteSignals(env, [{ id, ci: row.ci, sim: answer.sim }]));
        risk = noted.riskFrom.get(id) ?? null;
      }
      if (same)
        return {
          subscriber: { ...row, id, name: held.name },
          testOtpHash: null,
          review: null,
          link: held.link,
          riskFrom: risk,
        };
      return { subscriber: { ...row, id }, testOtpHash: null, review: null, riskFrom: risk };
    },
  };
}

/** The configured directory (`CARRIER_DIRECTORY`); throws ConfigError naming a missing carrier API variable. */
export function carrierDirectory(env: JobEnv & SigninVars): CarrierDirectory {
  const cfg = signinConfig(env);
  switch (cfg.carrierDirectory) {
    case "d1":
      return d1Directory(env);
    case "http": {
      const { url, secret, nextSecret, timeoutMs } = cfg.carrierApi;
      if (!url) throw new ConfigError("CARRIER_API_URL", "is required for CARRIER_DIRECTORY=http");
      if (!secret) throw new ConfigError("CARRIER_API_SECRET", "is required for CARRIER_DIRECTORY=http");
      return httpDirectory(env, { url, secret, nextSecret, timeoutMs });
    }
  }
}
