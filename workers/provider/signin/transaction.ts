// The sign-in transaction (docs/signin.md "State machine"): what one person's sign-in has proven
// so far, kept in the one-time store under the hash of its random id. Each step is one call on
// the object that holds it (workers/provider/store/one-time/signin-store.ts). An app's first page stores
// nothing: its `tx` is the page (`pageToken`), the authorization request signed as the record it
// would be. The identify step opens the sign-in in the object of the phone number's counters under
// an id derived from the page's id (or the previous record's) and the number; a previous record
// points there ("moved"), masked with its own id.

import { B64URL_ALPHABET, base64ToBytes, bytesToBase64url, randomToken, sha256 } from "../../core/crypto";
import { hostCookie, readHostCookie } from "../../core/cookies";
import { isRandomValue } from "../../core/spec";
import type { Lang } from "./i18n";
import {
  inShard,
  shardOf,
  transactionKey,
  storeFor,
  type OneTimeStore,
  sameHash,
  type Prompt,
  type SigninRecord,
  type StepGate,
} from "../store/one-time/index";
import type { Client } from "../store/clients";
import { openJson, signJson } from "./signed-json";

export type { SigninRecord as Transaction, Step } from "../store/one-time/index";

type TxEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/**
 * What an app's sign-in starts from: the validated authorization request
 * (workers/provider/authorize/validate.ts).
 */
export interface SigninRequest {
  client: Client;
  redirectUri: string;
  /** Echoed byte for byte in the redirect. */
  state: string;
  prompt: Prompt;
  isHybrid: boolean;
  /** `lang` of the request, when it named one. */
  lang: Lang | undefined;
  codeChallenge: string | null;
  /** An OpenID Connect request's nonce holder (docs/oidc.md); absent or null otherwise. */
  oidc?: { nonce?: string } | null;
}

/** A loaded transaction: its id, where it lives and what it holds. */
export interface TxHandle {
  id: string;
  key: string;
  stub: DurableObjectStub<OneTimeStore>;
  tx: SigninRecord;
  /** A first page (`pageToken`): what its forms post as `tx`; nothing is stored under `key`. */
  page?: string;
}

export const TX_COOKIE = "pl_tx";
/** A moved record is followed at most this far (a person re-entering the number a few times). */
const MAX_HOPS = 8;

/** The browser-binding cookie value: the request's when well-formed, else a new one to set. */
export function browserBinding(req: Request): { value: string; setCookie: string | null } {
  const have = readHostCookie(req, TX_COOKIE);
  if (isRandomValue(have)) return { value: have, setCookie: null };
  const value = randomToken(32);
  return { value, setCookie: hostCookie(TX_COOKIE, value) };
}

/** The entry of a sign-in record (the one-time store's keys name every entry). */
export const txKey = transactionKey;

/**
 * A new transaction id in the object of `near` (the request's network, `ipKey`): its step-1
 * submission is read there with the network's count (`loadTransaction`'s `firstRead`).
 */
function firstTxId(near: string, shards: number): string {
  return inShard(randomToken(32), shardOf(near, shards), shards);
}

type PageEnv = { SEAL_KEY: string };

const PAGE_PREFIX = "pg1.";
const PAGE_PURPOSE = "signin-page-v1";
/**
 * The longest page carried in the page (a usual request signs to under 1,000 characters); a longer
 * one (a state of kilobytes) is stored as a record instead (`createTransaction`), so every page
 * posts back well within MAX_BODY_BYTES.
 */
const MAX_PAGE_CHARS = 4096;

/**
 * The `tx` of an app's first page: the sign-in's record as it would be stored, with the page's
 * random id, signed with a key derived from SEAL_KEY. Nothing is written until a number is
 * posted: the page is the authorization request the browser already holds, bound to its cookie
 * and CSRF token and expiring with it, and as replayable as the URL that drew it.
 */
export function pageToken(env: PageEnv, id: string, tx: SigninRecord): Promise<string> {
  return signJson(env, PAGE_PREFIX, PAGE_PURPOSE, [id, tx]);
}

/** The id and record of a page this worker signed, or null (malformed, altered, another key). */
async function openPage(env: PageEnv, token: string): Promise<{ id: string; tx: SigninRecord } | null> {
  const page = await openJson<[string, SigninRecord]>(env, PAGE_PREFIX, PAGE_PURPOSE, token, MAX_PAGE_CHARS);
  if (!page) return null;
  const [id, tx] = page;
  return isRandomValue(id) && tx.step === "identify" ? { id, tx } : null;
}

/**
 * The first page of a new authorization request: its `tx`, CSRF token and record. The `tx` is the
 * signed page (`pageToken`), with no store call: the sign-in is opened by its identify step. A
 * request too long to carry that way is stored in the object of `near` (the request's network,
 * `ipKey`), where its step-1 submission is read with the network's count (`loadTransaction`'s
 * `firstRead`), and `tx` is its random id.
 */
export async function createTransaction(
  env: TxEnv & PageEnv,
  shards: number,
  ar: SigninRequest,
  lang: Lang,
  browser: string,
  ttlMs: number,
  near: () => Promise<string>,
): Promise<{ id: string; csrf: string; tx: SigninRecord }> {
  const csrf = randomToken(32);
  const now = Date.now();
  const [csrfHash, browserHash] = await Promise.all([sha256(csrf), sha256(browser)]);
  const tx: SigninRecord = {
    v: 0,
    clientId: ar.client.clientId,
    redirectUri: ar.redirectUri,
    state: ar.state,
    prompt: ar.prompt,
    isHybrid: ar.isHybrid,
    lang,
    langGiven: ar.lang !== undefined,
    codeChallenge: ar.codeChallenge,
    // only the nonce goes on: max_age was spent deciding that the pages are shown
    ...(ar.oidc && { oidc: ar.oidc.nonce !== undefined ? { nonce: ar.oidc.nonce } : {} }),
    csrfHash,
    browserHash,
    createdAt: now,
    expiresAt: now + ttlMs,
    step: "identify",
  };
  const page = await pageToken(env, randomToken(32), tx);
  if (page.length <= MAX_PAGE_CHARS) return { id: page, csrf, tx };
  const id = firstTxId(await near(), shards);
  await storeFor(env, id, shards).signinCreate(await txKey(id), tx);
  return { id, csrf, tx };
}

/**
 * Creates the transaction of a person proving their number for one of the service's own pages
 * (/account, docs/account.md, or a console): the same record and steps as an app's sign-in, with
 * no app behind it, marked with the page's `mark` (`SigninRecord.purpose`).
 */
export async function createFirstPartyTransaction(
  env: TxEnv,
  shards: number,
  lang: Lang,
  langGiven: boolean,
  browser: string,
  ttlMs: number,
  near: string,
  mark: string,
  /** Where a first-party page goes once the number is proven (a path of its own, checked by its caller). */
  next = "",
): Promise<{ id: string; csrf: string }> {
  const id = firstTxId(near, shards);
  const csrf = randomToken(32);
  const now = Date.now();
  const tx: SigninRecord = {
    v: 0,
    clientId: "",
    redirectUri: next,
    state: "",
    prompt: undefined,
    isHybrid: false,
    lang,
    langGiven,
    codeChallenge: null,
    csrfHash: await sha256(csrf),
    browserHash: await sha256(browser),
    createdAt: now,
    expiresAt: now + ttlMs,
    step: "identify",
    purpose: mark,
  };
  await storeFor(env, id, shards).signinCreate(await txKey(id), tx);
  return { id, csrf };
}

/** `a XOR b` of two 32-byte base64url values. */
function xor32(a: string, b: string): string {
  const x = base64ToBytes(a);
  const y = base64ToBytes(b);
  return bytesToBase64url(x.map((v, i) => v ^ y[i]!));
}

/** The mask of a "moved" pointer: only a holder of the previous id can read where it leads. */
function moveMask(fromId: string): Promise<string> {
  return sha256(`signin-moved:${fromId}`);
}

export async function maskMove(fromId: string, toId: string): Promise<string> {
  return xor32(toId, await moveMask(fromId));
}

/**
 * The id that continues sign-in `fromId` for the number `phoneKey`: derived from both (a repeated
 * submission of the same number finds the same record and sends nothing twice), its first
 * character chosen so it lives in the number's store object (`shardOf`).
 */
export async function nextTxId(fromId: string, phoneKey: string, shards: number): Promise<string> {
  const id = await sha256(`signin-next:${fromId}:${phoneKey}`);
  const i = B64URL_ALPHABET.indexOf(id.charAt(0));
  const first = B64URL_ALPHABET.charAt((i & ~(shards - 1)) | shardOf(phoneKey, shards));
  return first + id.slice(1);
}

/**
 * The stored transaction for a posted id, or null (unknown, malformed or long gone). A moved
 * record is followed to the one that continues the sign-in. `firstRead`, when given, reads the
 * posted id's record in place of `signinGet` (a read with another step of the same object).
 */
export async function loadTransaction(
  env: TxEnv & PageEnv,
  shards: number,
  id: string | undefined,
  firstRead?: (stub: DurableObjectStub<OneTimeStore>, key: string) => Promise<SigninRecord | null>,
): Promise<TxHandle | null> {
  if (id?.startsWith(PAGE_PREFIX)) {
    const page = await openPage(env, id);
    // nothing is stored for a page: its object is taken only if something asks for it
    return (
      page && {
        id: page.id,
        key: "",
        tx: page.tx,
        page: id,
        get stub() {
          return storeFor(env, page.id, shards);
        },
      }
    );
  }
  if (!isRandomValue(id)) return null;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const key = await txKey(id);
    const stub = storeFor(env, id, shards);
    const tx = hop === 0 && firstRead ? await firstRead(stub, key) : await stub.signinGet(key);
    if (tx === null) return null;
    if (tx.step !== "moved") return { id, key, stub, tx };
    id = xor32(tx.movedTo!, await moveMask(id));
  }
  return null;
}

/** The handle of a record the store just returned (no second read). */
export function handleOf(h: TxHandle, tx: SigninRecord): TxHandle {
  return { ...h, tx };
}

/** True when the posted CSRF token and the browser cookie both belong to this transaction. */
export async function bindingHolds(req: Request, tx: SigninRecord, csrf: string | undefined): Promise<boolean> {
  const [csrfOk, browserOk] = await Promise.all([
    sha256(csrf ?? "").then((h) => sameHash(h, tx.csrfHash)),
    sameBrowser(req, tx),
  ]);
  return csrf !== undefined && csrfOk && browserOk;
}

/** Whether the request carries the browser-binding cookie of the sign-in (constant time). */
export async function sameBrowser(req: Request, tx: SigninRecord): Promise<boolean> {
  const browser = readHostCookie(req, TX_COOKIE);
  const ok = sameHash(await sha256(browser ?? ""), tx.browserHash);
  return browser !== undefined && ok;
}

/**
 * The stored hash of a one-time code: bound to the transaction id, a secret the store never holds
 * and derived from the number at the identify step (`nextTxId`), so a code verifies only in the
 * sign-in and for the number it was sent to. `codeDigest` is SHA-256 of the code (a test number's
 * directory entry holds just that). A record's challenge without `txBound` (made before the number
 * was left out) was hashed with the number too: pass its `phoneKey` to verify it.
 */
export function challengeHash(txId: string, codeDigest: string, phoneKey?: string): Promise<string> {
  return sha256(phoneKey === undefined ? `otp:${txId}:${codeDigest}` : `otp:${txId}:${phoneKey}:${codeDigest}`);
}

/** What a gated step presents for the page's CSRF token and the browser's binding cookie. */
export async function stepGate(csrf: string, browser: string): Promise<StepGate> {
  const [csrfHash, browserHash] = await Promise.all([sha256(csrf), sha256(browser)]);
  return { csrfHash, browserHash };
}
