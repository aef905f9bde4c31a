// Shared test helpers: drive the all-in-one worker through HTTP, and obtain codes for a seed
// subscriber through the one core minting function (as the sign-in pages do).

import { exports } from "cloudflare:workers";
import { compactVerify, errors } from "jose";
import { env } from "./env";
import { mintCode } from "../../workers/provider/codes";
import type { CodeGrant, RedeemArgs, RedeemRequest } from "../../workers/provider/store/one-time/tables/codes";
import { SEED_CLIENTS, SEED_SUBSCRIBERS } from "../../workers/all-in-one/seed";
import { IDENTITY_ITEMS, type IdentityItem } from "../../workers/core/spec";
import { subscriberByPhone, type DirectoryEntry } from "../../workers/provider/store/directory/directory";
import { recordConsent } from "./store";
import { providerConfig } from "../../workers/provider/config";

export const BASE = "http://localhost:8787";
export const DEMO = SEED_CLIENTS[0]!;
export const LIMITED = SEED_CLIENTS[1]!;
export const HONG = SEED_SUBSCRIBERS[0]!;
export const KIM = SEED_SUBSCRIBERS[1]!;
export const SMITH = SEED_SUBSCRIBERS[2]!;
export const LEE = SEED_SUBSCRIBERS[3]!;

/** Sends a request to the all-in-one worker. `path` may be relative to BASE. */
export function call(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(new Request(new URL(path, BASE), init));
}

export function basic(id: string, secret: string): string {
  return "Basic " + btoa(`${id}:${secret}`);
}

export function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

export const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

export interface MintOptions {
  client?: { clientId: string; redirectUris: string[]; items: readonly IdentityItem[] };
  autoLogin?: CodeGrant["autoLogin"];
  codeChallenge?: string;
  redirectUri?: string;
  /** The login that ticked the automatic-login box: its grant's first report becomes pending. */
  optIn?: boolean;
  /** The person as a sign-in found them earlier (it read the directory before a change landed). */
  as?: DirectoryEntry;
}

/** Consents the subscriber to the client (making the plid) and mints a code, as a finished sign-in does. */
export async function mintFor(
  phone: string,
  opts: MintOptions = {},
): Promise<{ code: string; plid: string; subscriberId: number }> {
  const client = opts.client ?? DEMO;
  const s = opts.as ?? (await subscriberByPhone(env, phone));
  if (!s) throw new Error(`no subscriber ${phone}`);
  const items = client.items.length ? client.items : IDENTITY_ITEMS;
  const plid = await recordConsent(env, client.clientId, s.id, items);
  if (plid === null) throw new Error(`subscriber ${phone} gone`);
  const cfg = providerConfig(env);
  const { testOtpHash: _, ...subscriber } = s;
  const code = await mintCode(env, cfg.oneTimeShards, cfg.codeTtlMs, {
    clientId: client.clientId,
    subscriber,
    plid,
    items,
    redirectUri: opts.redirectUri ?? client.redirectUris[0]!,
    autoLogin: opts.autoLogin ?? null,
    ...(opts.optIn ? { firstReportTtlMs: 14 * 86400_000 } : {}),
    codeChallenge: opts.codeChallenge ?? null,
  });
  return { code, plid, subscriberId: s.id };
}

/** Exchanges a code at the token endpoint with Basic authentication. */
export function exchange(
  code: string,
  client: { clientId: string; secret: string } = DEMO,
  extra: Record<string, string> = {},
): Promise<Response> {
  return call("/oauth2/token", {
    method: "POST",
    headers: { ...FORM, Authorization: basic(client.clientId, client.secret) },
    body: form({ grant_type: "authorization_code", code, ...extra }),
  });
}

/** Mints a code for `phone` and exchanges it: the access token. */
export async function tokenFor(
  phone: string,
  opts: MintOptions & { secret?: string } = {},
): Promise<{ token: string; plid: string }> {
  const { code, plid } = await mintFor(phone, opts);
  const client = opts.client ? { clientId: opts.client.clientId, secret: opts.secret ?? "" } : DEMO;
  const res = await exchange(code, client);
  if (res.status !== 200) throw new Error(`exchange failed ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { access_token: string };
  return { token: body.access_token, plid };
}

export function userMe(token: string): Promise<Response> {
  return call("/v1/user/me", { headers: { Authorization: `Bearer ${token}` } });
}

/**
 * A request's body as UTF-8 text, read as bytes: workerd warns when `.text()` is called on a body
 * whose Content-Type is not textual (a form, a secevent+jwt), and a green run prints no warnings.
 */
export async function bodyText(req: Request): Promise<string> {
  return new TextDecoder().decode(await req.arrayBuffer());
}

/**
 * `target` (a real binding: D1, KV, a statement) with some members replaced, to interleave another
 * request at a chosen point or add a deployed platform limit; every other member is the real one.
 */
export function intercept<T extends object>(target: T, overrides: Record<string, unknown>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (typeof prop === "string" && prop in overrides) return overrides[prop];
      const v = Reflect.get(t, prop, t) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

/**
 * The real D1, running `meanwhile` once, right after the first statement whose SQL `match`es has
 * read its rows (`all` or `first`) and before its caller goes on: another request's step landing
 * between a read and the write that follows it.
 */
export function afterRead(
  db: D1Database,
  match: (sql: string) => boolean,
  meanwhile: () => Promise<unknown>,
): D1Database {
  let done = false;
  const after = async <T>(read: Promise<T>): Promise<T> => {
    const rows = await read;
    if (!done) {
      done = true;
      await meanwhile();
    }
    return rows;
  };
  return intercept(db, {
    prepare: (sql: string) => {
      const stmt = db.prepare(sql);
      if (done || !match(sql)) return stmt;
      return intercept(stmt, {
        bind: (...args: unknown[]) => {
          const bound = stmt.bind(...args);
          return intercept(bound, {
            all: () => after(bound.all()),
            first: (column?: string) => after(column === undefined ? bound.first() : bound.first(column)),
          });
        },
      });
    },
  });
}

/** A `RedeemRequest` as the store's `redeemCode` takes it: positional values, in its order. */
export const redeemArgs = (r: RedeemRequest): RedeemArgs => [
  r.codeHash,
  r.clientId,
  r.tokenHash,
  r.secretId,
  r.tokenTtlMs,
  r.verifierChallenge,
  r.redirectUri,
  r.withIdClaims,
];

/** Whether an HS256 compact JWS verifies under `key`, by `jose` (not the service's own code path). */
export async function hs256Valid(token: string, key: string): Promise<boolean> {
  try {
    await compactVerify(token, new TextEncoder().encode(key), { algorithms: ["HS256"] });
    return true;
  } catch (err) {
    if (err instanceof errors.JWSSignatureVerificationFailed) return false;
    throw err;
  }
}
