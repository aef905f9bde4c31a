// The client of a carrier verification API (CARRIER_DIRECTORY=http; the wire format, for the carrier
// side, is docs/carrier-api.md). One signed JSON question, one signed JSON answer: the carrier says
// whether the name and number are its subscriber's, and if so gives the person's ci, gender, birth
// date and foreign flag, and may say when the number's SIM last changed (and by whom) and when it
// was last ported (the risk signals, store/directory/risk.ts). Anything short of an answer we can trust (a timeout, a network error, a
// non-200 status, a wrong signature, a stale or replayed answer, another request's answer, a body
// that is not exactly one of the two shapes) is a fault of the carrier, never a match and never a
// no-match: the page asks the person to try again shortly.

import { constantTimeEqual, hmacSha256Hex } from "../../core/crypto";
import type { Telco } from "../../core/spec";
import { readSignals, SIGNAL_FIELDS, type SimSignal } from "../store/directory/index";

/** How far a signature's timestamp may be from our clock, either way (seconds). */
export const SIGNATURE_WINDOW_SECONDS = 300;
/** The largest answer read: the match shape is about 250 bytes. */
const MAX_ANSWER_BYTES = 8192;

/**
 * Why an answer was not one to trust (logged and audited; never shown, never personal data). Each
 * says whose side it was: `directory_busy` (its directory object did not answer in time) and
 * `service_busy` (the worker itself was too busy to read the answer in time) are the service's
 * own, every other reason the carrier's.
 */
export type CarrierFaultReason =
  | "timeout"
  | "network"
  | "status"
  | "too_large"
  | "bad_signature"
  | "stale"
  | "malformed"
  | "request_id"
  | "invalid_person"
  | "directory_busy"
  | "service_busy";

/** The carrier gave no answer to trust: the person tries again shortly; nothing counts against them. */
export class CarrierUnavailable extends Error {
  constructor(
    readonly reason: CarrierFaultReason,
    detail?: string,
  ) {
    super(`carrier api: ${reason}${detail ? ` (${detail})` : ""}`);
    this.name = "CarrierUnavailable";
  }
}

/** What a matching answer says of the person, as sent (the directory's row rules check it next). */
export interface CarrierSubscriber {
  ci: string;
  gender: string;
  birth: string;
  foreign: string;
}

/** A matching answer; `sim`, the risk signals it carried (absent when it carried none). */
export type CarrierAnswer = { match: false } | { match: true; person: CarrierSubscriber; sim?: SimSignal };

export interface CarrierApiOptions {
  url: string;
  secret: string;
  /** During a change of secret, the next one: requests carry a second signature under it, answers may be signed with it. */
  nextSecret?: string;
  timeoutMs: number;
  /** Injected for tests; the platform's fetch otherwise. */
  fetcher?: typeof fetch;
  /** Injected for tests; the platform's clock and timers otherwise. */
  clock?: CarrierClock;
}

/** The clock and timer the carrier's budget is kept with. */
export interface CarrierClock {
  now(): number;
  /** Calls `fn` after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

const PLATFORM_CLOCK: CarrierClock = {
  now: () => Date.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/**
 * How late a timer may fire before the lateness is the worker's own: an isolate busy with other
 * requests' work (an import in the same worker) runs a due timer only when it is free, and the
 * carrier's answer may have been waiting there all along.
 */
export function lateLimitMs(timeoutMs: number): number {
  return Math.max(100, Math.round(timeoutMs / 10));
}

/**
 * The carrier's budget: aborts `ctrl` with the reason when it is spent. A timer that fires late by
 * more than `lateLimitMs` means the worker, not the carrier, was slow: the answer gets one more
 * short wait (the limit itself) to be read; if that wait fires late too the reason is
 * `service_busy`, else `timeout`.
 */
export function carrierBudget(
  clock: CarrierClock,
  timeoutMs: number,
  ctrl: AbortController,
): { reason(): CarrierFaultReason | null; cancel(): void } {
  const limit = lateLimitMs(timeoutMs);
  let reason: CarrierFaultReason | null = null;
  let cancel = () => {};
  const arm = (ms: number, graced: boolean) => {
    const due = clock.now() + ms;
    cancel = clock.after(ms, () => {
      const late = clock.now() - due > limit;
      if (late && !graced) return arm(limit, true);
      reason = late ? "service_busy" : "timeout";
      ctrl.abort();
    });
  };
  arm(timeoutMs, false);
  return { reason: () => reason, cancel: () => cancel() };
}

/**
 * The name as the carrier is sent it and as the directory stores what the carrier confirms: Unicode
 * NFC, trimmed, each run of white space inside it one space (docs/carrier-api.md "The request").
 */
export function canonicalName(input: string): string {
  return input.normalize("NFC").trim().replace(/\s+/g, " ");
}

/** `sha256=<lower-case hex of HMAC-SHA256(secret, timestamp + "." + body)>`: both directions sign this way. */
export async function carrierSignature(secret: string, timestamp: string, body: string): Promise<string> {
  return "sha256=" + (await hmacSha256Hex(secret, `${timestamp}.${body}`));
}

/** Asks the carrier whether (telco, name, phone) is its subscriber; throws CarrierUnavailable when no trusted answer came. */
export async function askCarrier(
  opts: CarrierApiOptions,
  q: { telco: Telco; name: string; phone: string },
): Promise<CarrierAnswer> {
  const doFetch = opts.fetcher ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const requestId = crypto.randomUUID();
  const body = JSON.stringify({ telcoCd: q.telco, name: canonicalName(q.name), phoneNo: q.phone, requestId });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signed = {
    "Content-Type": "application/json",
    Accept: "application/json",
    "X-Signature-Timestamp": timestamp,
    "X-Signature": await carrierSignature(opts.secret, timestamp, body),
    ...(opts.nextSecret && { "X-Signature-Next": await carrierSignature(opts.nextSecret, timestamp, body) }),
  };
  // The carrier's budget starts as the request is sent: the service's own work before it (the
  // directory's read, the signatures) is never counted against the carrier, nor a worker too busy
  // to read the answer (carrierBudget).
  const ctrl = new AbortController();
  const signal = ctrl.signal;
  const budget = carrierBudget(opts.clock ?? PLATFORM_CLOCK, opts.timeoutMs, ctrl);
  let status: number;
  let headers: Headers;
  let bytes: Uint8Array | null;
  try {
    const res = await doFetch(opts.url, {
      method: "POST",
      headers: signed,
      body,
      redirect: "manual",
      signal,
    });
    status = res.status;
    headers = res.headers;
    if (status !== 200) {
      await res.body?.cancel();
      throw new CarrierUnavailable("status", String(status));
    }
    bytes = await readCapped(res, MAX_ANSWER_BYTES);
  } catch (err) {
    if (err instanceof CarrierUnavailable) throw err;
    // The budget covers the whole exchange, the answer's body included.
    const spent = budget.reason();
    if (signal.aborted && spent) throw new CarrierUnavailable(spent, `${opts.timeoutMs} ms`);
    throw new CarrierUnavailable("network", err instanceof Error ? err.name : undefined);
  } finally {
    budget.cancel();
  }
  if (bytes === null) throw new CarrierUnavailable("too_large");
  return readAnswer(opts.nextSecret ? [opts.secret, opts.nextSecret] : [opts.secret], headers, bytes, requestId);
}

/** The body's bytes, or null when it is longer than `max`. */
async function readCapped(res: Response, max: number): Promise<Uint8Array | null> {
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    parts.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const MATCH_KEYS = ["birth", "ci", "foreign", "gender", "match", "requestId"];
/** The match shape's optional risk signals (docs/carrier-api.md "The answer"). */
const SIGNAL_KEYS: readonly string[] = SIGNAL_FIELDS;
const NO_MATCH_KEYS = ["match", "requestId"];

/**
 * Checks an answer in the order that trusts nothing unchecked: its signature over the exact bytes
 * (under any of `secrets`: the current one, and the next during a change) and its timestamp's
 * freshness, then that it answers our request, then its JSON shape.
 */
async function readAnswer(
  secrets: string[],
  headers: Headers,
  bytes: Uint8Array,
  requestId: string,
): Promise<CarrierAnswer> {
  const timestamp = headers.get("X-Signature-Timestamp") ?? "";
  const signature = headers.get("X-Signature") ?? "";
  if (!/^\d{1,12}$/.test(timestamp) || !/^sha256=[0-9a-f]{64}$/.test(signature))
    throw new CarrierUnavailable("bad_signature", "missing or malformed signature headers");
  let body: string;
  try {
    // fatal and BOM kept: `body` encodes back to exactly the bytes received, which were signed
    body = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new CarrierUnavailable("malformed", "not UTF-8");
  }
  // every secret is compared, whichever matches
  const matches = await Promise.all(
    secrets.map(async (secret) => constantTimeEqual(await carrierSignature(secret, timestamp, body), signature)),
  );
  if (!matches.includes(true)) throw new CarrierUnavailable("bad_signature");
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) throw new CarrierUnavailable("stale");
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    throw new CarrierUnavailable("malformed", "not JSON");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw new CarrierUnavailable("malformed", "not an object");
  const a = doc as Record<string, unknown>;
  if (a.requestId !== requestId) throw new CarrierUnavailable("request_id");
  const keys = Object.keys(a).sort().join(",");
  if (a.match === false && keys === NO_MATCH_KEYS.join(",")) return { match: false };
  // the match shape: its six keys, and any of the optional signals (never on the no-match shape)
  const required = Object.keys(a)
    .filter((k) => !SIGNAL_KEYS.includes(k))
    .sort()
    .join(",");
  if (a.match !== true || required !== MATCH_KEYS.join(","))
    throw new CarrierUnavailable("malformed", "neither the match nor the no-match shape");
  const { ci, gender, birth, foreign } = a;
  if (typeof ci !== "string" || typeof gender !== "string" || typeof birth !== "string" || typeof foreign !== "string")
    throw new CarrierUnavailable("malformed", "a field is not a string");
  if (!/^[MF]$/.test(gender) || !/^[LF]$/.test(foreign) || !/^\d{4}-\d{2}-\d{2}$/.test(birth))
    throw new CarrierUnavailable("malformed", "gender, foreign or birth out of shape");
  const sim = readSignals(a, Date.now());
  if (typeof sim === "string") throw new CarrierUnavailable("malformed", sim);
  return { match: true, person: { ci, gender, birth, foreign }, ...(sim && { sim }) };
}
