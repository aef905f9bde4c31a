// Which object of the one-time store holds what, and the keys of its entries and counters
// (docs/storage.md "Durable Object OneTimeStore"). Pure functions, so every worker and the object
// agree; the objects' stubs are taken by these rules in one-time-store.ts (`storeFor`).
//
// Values are spread over ONE_TIME_SHARDS objects named `shard-<n>`, so no one object is the whole
// service's bottleneck. A random base64url value (a code, a token, a transaction id) lives in the
// object of its first character (`shardOf`). An authorization code's first character is chosen
// from its plid (`inShard(…, plidShard(…))`) and a token takes its code's, so every code and token
// of a plid lives in one object, with the plid's end and its automatic-login first report. A keyed
// value (a number's counters and its sign-in, a network's limit) lives in the object of the key's
// hash.
//
// Entries (table `entries`): `tx:` a sign-in record (`transactionKey`), `acct:` an /account session
// (`accountSessionKey`), `cons:` a /console session (`consoleSessionKey`), `devs:` a /developers session (`developerSessionKey`), `first:` a grant's pending first report (`firstReportKey`), `once:` an audit event written once (`onceKey`). Counters
// (table `counters`): a number's `lock:`, `fail:`, `cool:` and `sends:`, `lock:` and `fail:` per
// network (`SIGNIN_COUNTERS`), a review test number's `tfail:` (`testFailuresKey`), a network's
// `ip:` (`ipCounter`). A number appears only as the SHA-256 of `phone:<number>` (`phoneKey`).

import { B64URL_ALPHABET, sha256 } from "../../../core/crypto";
import { MAX_SHARDS } from "../config";

/** The shard of a random base64url value: its first character (uniform), masked to the shard count. */
export function shardOf(value: string, shards: number): number {
  const i = B64URL_ALPHABET.indexOf(value.charAt(0));
  return i < 0 ? 0 : i & (shards - 1);
}

/**
 * `value` (random base64url) with its first character changed so that it lives in `shard`; only
 * the low bits of that character change, so log2(shards) of its bits are spent.
 */
export function inShard(value: string, shard: number, shards: number): string {
  const i = B64URL_ALPHABET.indexOf(value.charAt(0));
  return B64URL_ALPHABET.charAt((i & ~(shards - 1)) | shard) + value.slice(1);
}

/**
 * The shard of a plid: every code and token of one plid lives there, with its revocation and its
 * automatic-login first report, so ending a plid is one call. A UUID v4's last byte is random.
 */
export function plidShard(plid: string, shards: number): number {
  const n = parseInt(plid.slice(-2), 16);
  return Number.isNaN(n) ? 0 : n & (shards - 1);
}

/**
 * Every object a plid's codes and tokens can be in, whichever ONE_TIME_SHARDS the worker that
 * minted them had: a power of two up to MAX_SHARDS, so at most 7 objects. A worker ending a plid
 * need not share the minting worker's setting (or the setting changed since): its own shard alone
 * would leave the plid's tokens reading in another object.
 */
export function plidShardsAnyCount(plid: string): Set<number> {
  const out = new Set<number>();
  for (let k = 1; k <= MAX_SHARDS; k *= 2) out.add(plidShard(plid, k));
  return out;
}

/** The name of shard `shard`'s object. */
export function objectName(shard: number): string {
  return `shard-${shard}`;
}

/** The entry of a sign-in record: the SHA-256 of its transaction id. */
export async function transactionKey(id: string): Promise<string> {
  return `tx:${await sha256(id)}`;
}

/** The entry of a /console session: the SHA-256 of its session id. */
export async function consoleSessionKey(id: string): Promise<string> {
  return `cons:${await sha256(id)}`;
}

/** The entry of a /developers session: the SHA-256 of its session id. */
export async function developerSessionKey(id: string): Promise<string> {
  return `devs:${await sha256(id)}`;
}

/** The entry of an /account session: the SHA-256 of its session id. */
export async function accountSessionKey(id: string): Promise<string> {
  return `acct:${await sha256(id)}`;
}

/** The entry marking an audit event as written (one-time/audit.ts `auditOnce`): the SHA-256 of what it records. */
export async function onceKey(what: string): Promise<string> {
  return `once:${await sha256(what)}`;
}

/** The entry marking an automatic-login grant's first report as pending (spec §2.1 autoStatusCheck). */
export function firstReportKey(deviceHash: string, clientId: string): string {
  return `first:${deviceHash}:${clientId}`;
}

/** The store key of a phone number's counters: the SHA-256 of the number, never the number. */
export function phoneKey(phone: string): Promise<string> {
  return sha256(`phone:${phone}`);
}

/**
 * The entry of a text a person is asked to send (docs/signin.md "A text the person sends"): the
 * SHA-256 of the number's key and the phrase's digits, in the number's object, so the text's sender
 * and digits alone find it.
 */
export async function textKey(phoneKey: string, digits: string): Promise<string> {
  return `text:${await sha256(`text:${phoneKey}:${digits}`)}`;
}

/** A number's counters (by its `phoneKey`), and those of one network (`net`) at that number. */
export const SIGNIN_COUNTERS = {
  lock: (phone: string) => `lock:${phone}`,
  fail: (phone: string) => `fail:${phone}`,
  netLock: (phone: string, net: string) => `lock:${phone}:${net}`,
  netFail: (phone: string, net: string) => `fail:${phone}:${net}`,
  cool: (phone: string) => `cool:${phone}`,
  sends: (phone: string) => `sends:${phone}`,
} as const;

/**
 * The counter of a review test number's wrong codes over its registration, in the number's object:
 * keyed by the registration's code, so registering the number again with a new code starts afresh.
 */
export function testFailuresKey(phoneKey: string, testOtpHash: string): string {
  return `tfail:${phoneKey}:${testOtpHash}`;
}

/** The per-network limit's counter, by the network's hash. */
export const ipCounter = (key: string): string => `ip:${key}`;
