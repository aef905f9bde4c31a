// The sign-in transaction (issue 3): what one person's sign-in has proven so far, kept in the
// one-time store under the hash of its random id. It advances only by compare-and-set, so two
// concurrent submissions of one step cannot both advance, and it is deleted when it ends.

import { randomToken, sha256, constantTimeEqual } from "../core/crypto";
import { hostCookie, readCookie } from "../core/html";
import type { Lang } from "../core/i18n";
import { storeFor, type OneTimeStore } from "../core/one-time-store";
import type { Telco } from "../core/carrier";
import type { AuthorizeRequest, Prompt } from "./validate";

export type Step = "identify" | "verify" | "consent";

export interface Transaction {
  clientId: string;
  redirectUri: string;
  state: string;
  prompt: Prompt;
  isHybrid: boolean;
  lang: Lang;
  /** Whether the authorize URL fixed the language (kept in a "start again" link). */
  langGiven: boolean;
  codeChallenge: string | null;
  csrfHash: string;
  browserHash: string;
  createdAt: number;
  expiresAt: number;
  step: Step;
  /** Set by the identify step. */
  subscriber?: {
    id: number;
    telco: Telco;
    /** SHA-256 of the number: the key of its counters (no number in the store's keys). */
    phoneKey: string;
    /** `010-****-5678`, shown on the verify page. */
    masked: string;
    /** Test numbers: SHA-256 of the fixed code (nothing is sent); null for real numbers. */
    testOtpHash: string | null;
  };
  otpExpiresAt?: number;
  autoLoginEligible?: boolean;
  autoLoginOptIn?: boolean;
}

type TxEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/** A loaded transaction: its id, where it lives, and the exact stored text (for compare-and-set). */
export interface TxHandle {
  id: string;
  key: string;
  stub: DurableObjectStub<OneTimeStore>;
  raw: string;
  tx: Transaction;
}

export const TX_COOKIE = "pl_tx";
export const AUTO_COOKIE = "pl_auto";
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** How long an ended-by-time transaction is kept to show "expired" with a start-again link. */
const RETAIN_MS = 3600_000;

export function isToken(v: string | undefined): v is string {
  return v !== undefined && TOKEN_SHAPE.test(v);
}

/** The browser-binding cookie value: the request's when well-formed, else a new one to set. */
export function browserBinding(req: Request): { value: string; setCookie: string | null } {
  const have = readCookie(req, `__Host-${TX_COOKIE}`);
  if (isToken(have)) return { value: have, setCookie: null };
  const value = randomToken(32);
  return { value, setCookie: hostCookie(TX_COOKIE, value) };
}

/** Creates the transaction of a new authorization request; returns its id and CSRF token. */
export async function createTransaction(
  env: TxEnv,
  shards: number,
  ar: AuthorizeRequest,
  lang: Lang,
  browser: string,
  ttlMs: number,
): Promise<{ id: string; csrf: string; tx: Transaction }> {
  const id = randomToken(32);
  const csrf = randomToken(32);
  const now = Date.now();
  const tx: Transaction = {
    clientId: ar.client.clientId,
    redirectUri: ar.redirectUri,
    state: ar.state,
    prompt: ar.prompt,
    isHybrid: ar.isHybrid,
    lang,
    langGiven: ar.lang !== undefined,
    codeChallenge: ar.codeChallenge,
    csrfHash: await sha256(csrf),
    browserHash: await sha256(browser),
    createdAt: now,
    expiresAt: now + ttlMs,
    step: "identify",
  };
  await storeFor(env, id, shards).putEntry(await txKey(id), JSON.stringify(tx), ttlMs + RETAIN_MS);
  return { id, csrf, tx };
}

async function txKey(id: string): Promise<string> {
  return `tx:${await sha256(id)}`;
}

/** The stored transaction for a posted id, or null (unknown, malformed or long gone). */
export async function loadTransaction(env: TxEnv, shards: number, id: string | undefined): Promise<TxHandle | null> {
  if (!isToken(id)) return null;
  const key = await txKey(id);
  const stub = storeFor(env, id, shards);
  const raw = await stub.getEntry(key);
  if (raw === null) return null;
  return { id, key, stub, raw, tx: JSON.parse(raw) as Transaction };
}

/** True when the posted CSRF token and the browser cookie both belong to this transaction. */
export async function bindingHolds(req: Request, h: TxHandle, csrf: string | undefined): Promise<boolean> {
  const browser = readCookie(req, `__Host-${TX_COOKIE}`);
  const [csrfOk, browserOk] = await Promise.all([
    constantTimeEqual(await sha256(csrf ?? ""), h.tx.csrfHash),
    constantTimeEqual(await sha256(browser ?? ""), h.tx.browserHash),
  ]);
  return csrf !== undefined && browser !== undefined && csrfOk && browserOk;
}

/** Advances the transaction if nobody else did first; the new handle, or null on a conflict. */
export async function advance(h: TxHandle, next: Transaction): Promise<TxHandle | null> {
  const raw = JSON.stringify(next);
  const ttl = Math.max(1, next.expiresAt - Date.now()) + RETAIN_MS;
  return (await h.stub.swapEntry(h.key, h.raw, raw, ttl)) ? { ...h, raw, tx: next } : null;
}

/** Ends the transaction (single use); false when another submission ended or advanced it first. */
export function end(h: TxHandle): Promise<boolean> {
  return h.stub.swapEntry(h.key, h.raw, null, 0);
}

/** The one-time-code challenge's key (in the transaction's store object). */
export function challengeKey(h: { key: string }): string {
  return `otp:${h.key.slice(3)}`;
}

/** The authorize URL that starts this sign-in again (the "start again" link). */
export function restartUrl(tx: Transaction): string {
  const q = new URLSearchParams({ response_type: "code", client_id: tx.clientId, redirect_uri: tx.redirectUri, state: tx.state });
  if (tx.prompt) q.set("prompt", tx.prompt);
  if (tx.isHybrid) q.set("isHybrid", "Y");
  if (tx.langGiven) q.set("lang", tx.lang);
  if (tx.codeChallenge) {
    q.set("code_challenge", tx.codeChallenge);
    q.set("code_challenge_method", "S256");
  }
  return `/oauth2/authorize?${q}`;
}
