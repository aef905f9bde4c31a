// The app's Shared Signals stream (docs/events.md "The kit's stream"; OpenID SSF 1.0, CAEP 1.0,
// RISC 1.0). POST {basePath}/ssf takes the SETs the service pushes on it (RFC 8935): each is
// verified before anything changes: ES256 under a key of the service's published JWKS (the
// `jwks_uri` of its configuration document, cached per isolate, fetched again on an unknown `kid`;
// core/jws.ts `verifyEs256Set`, with `jose`),
// header `typ` secevent+jwt, `iss` the configured service, `aud` this app's client id, `iat` within
// 10 minutes, a `jti`. CAEP session-revoked, RISC account-purged and identifier-recycled end every
// session of the subject's plid as the service's plid-deleted event does (events.ts
// `endClaimedPlid`: the same store calls and onLogout, once for the SETs of one change, one `txn`);
// any other verified SET (the verification event, credential-change) is acknowledged and changes
// nothing. A `jti` already acted on is acknowledged again (202) and changes nothing: the service
// sends every SET of a change again when one of them failed. Refusals are RFC 8935 §2.3 errors.
//
// `ensureStream` creates the stream at the service if the app has none: a push stream to
// {publicOrigin}{basePath}/ssf, through the stream API with an access token of the app (the token
// endpoint's client_credentials grant, scope `ssf`).

import { call, readCapped, readJson, RpClientError, basicAuthorization, PLID_SHAPE } from "./client.js";
import type { KitContext } from "./context.js";
import { E } from "./core/errors.js";
import { verifyEs256Set, type JwsRefusal } from "./core/jws.js";
import { readBodyText } from "./core/http.js";
import type { RequestContext } from "./core/router.js";
import {
  accepted,
  endClaimedPlid,
  JTI_TTL_SECONDS,
  MAX_BODY_BYTES,
  MAX_SKEW_SECONDS,
  refuse,
  type SetError,
} from "./events.js";

const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
/** The event types the kit's stream asks for. */
export const SIGNAL_EVENTS = [
  `${CAEP}session-revoked`,
  `${RISC}account-purged`,
  `${RISC}identifier-recycled`,
  `${CAEP}credential-change`,
] as const;
/** The types that end every session of the subject's plid. */
const ENDS_PLID: ReadonlySet<string> = new Set(SIGNAL_EVENTS.slice(0, 3));
const PUSH = "urn:ietf:rfc:8935";
/** The JWKS is fetched again after this long, and on an unknown `kid` at most once per cooldown. */
const KEYS_MAX_AGE_MS = 5 * 60_000;
const KEYS_COOLDOWN_MS = 10_000;

interface Keys {
  jwks: { keys: unknown[] };
  at: number;
}

/** Where the service's keys are and the keys last fetched, per kit configuration (so per app env), per isolate. */
const keyCache = new WeakMap<object, { uri?: string; keys?: Keys }>();

function cacheOf(kit: KitContext): { uri?: string; keys?: Keys } {
  let c = keyCache.get(kit.config);
  if (!c) keyCache.set(kit.config, (c = {}));
  return c;
}

/** The configuration document's `jwks_uri` (its issuer must be the configured service). */
async function jwksUri(kit: KitContext): Promise<string> {
  const cfg = kit.config;
  const res = await call(kit.client(), "ssf", "/.well-known/ssf-configuration", { method: "GET" });
  if (res.status !== 200) throw new RpClientError("status", "ssf", `configuration answered ${res.status}`);
  const conf = await readJson(res, "ssf");
  if (conf.issuer !== cfg.providerBaseUrl || typeof conf.jwks_uri !== "string")
    throw new RpClientError("envelope", "ssf", "configuration: another issuer or no jwks_uri");
  return conf.jwks_uri;
}

async function fetchKeys(kit: KitContext, uri: string): Promise<Keys> {
  const base = kit.config.providerBaseUrl;
  if (!uri.startsWith(`${base}/`)) throw new RpClientError("envelope", "ssf", "jwks_uri is not on the service");
  const res = await call(kit.client(), "ssf", uri.slice(base.length), { method: "GET" });
  if (res.status !== 200) throw new RpClientError("status", "ssf", `JWKS answered ${res.status}`);
  const jwks = (await readJson(res, "ssf")) as { keys: unknown[] };
  if (!Array.isArray(jwks.keys)) throw new RpClientError("envelope", "ssf", "JWKS without keys");
  const keys = { jwks, at: Date.now() };
  cacheOf(kit).keys = keys;
  return keys;
}

async function keysFor(kit: KitContext): Promise<{ uri: string; keys: Keys }> {
  const c = cacheOf(kit);
  const uri = c.uri ?? (c.uri = await jwksUri(kit));
  const known = c.keys;
  if (known && Date.now() - known.at < KEYS_MAX_AGE_MS && Date.now() >= known.at) return { uri, keys: known };
  return { uri, keys: await fetchKeys(kit, uri) };
}

type Checked =
  | { ok: true; claims: Record<string, unknown> }
  | { ok: false; err: SetError; description: string }
  | { ok: false; retry: string };

const REFUSALS: Record<Exclude<JwsRefusal, "kid">, [SetError, string]> = {
  malformed: ["invalid_request", "not a valid SET"],
  alg: ["invalid_key", "only ES256 is accepted"],
  signature: ["invalid_key", "the signature does not verify"],
  typ: ["invalid_request", "typ is not secevent+jwt"],
  iss: ["invalid_issuer", "not the configured service"],
  aud: ["invalid_audience", "not for this app"],
};

function refusal(r: JwsRefusal): Checked {
  const [err, description] = r === "kid" ? (["invalid_key", "no published key has this kid"] as const) : REFUSALS[r];
  return { ok: false, err, description };
}

/** Verifies `token` against the published keys, fetching them again once on an unknown `kid`. */
async function verify(kit: KitContext, token: string): Promise<Checked> {
  const cfg = kit.config;
  let found: { uri: string; keys: Keys };
  try {
    found = await keysFor(kit);
  } catch (err) {
    return { ok: false, retry: `keys unavailable: ${err instanceof Error ? err.message : "error"}` };
  }
  const expected = { issuer: cfg.providerBaseUrl, audience: cfg.clientId };
  const first = await verifyEs256Set(token, found.keys.jwks, expected);
  if ("claims" in first) return { ok: true, claims: first.claims };
  if (first.refused !== "kid") return refusal(first.refused);
  // a key rotated in since the keys were fetched: fetch them again (not more than once per cooldown)
  if (Date.now() - found.keys.at < KEYS_COOLDOWN_MS && Date.now() >= found.keys.at)
    return { ok: false, retry: "unknown kid within the keys' cooldown" };
  try {
    found.keys = await fetchKeys(kit, found.uri);
  } catch (e) {
    return { ok: false, retry: `keys unavailable: ${e instanceof Error ? e.message : "error"}` };
  }
  const again = await verifyEs256Set(token, found.keys.jwks, expected);
  return "claims" in again ? { ok: true, claims: again.claims } : refusal(again.refused);
}

/** The plid a SET is about (`sub_id` opaque, or iss_sub of this service), or null. */
function plidOf(claims: Record<string, unknown>, iss: string): string | null {
  const s = claims.sub_id as Record<string, unknown> | undefined;
  if (!s || typeof s !== "object") return null;
  const id = s.format === "opaque" ? s.id : s.format === "iss_sub" && s.iss === iss ? s.sub : undefined;
  return typeof id === "string" && PLID_SHAPE.test(id) ? id : null;
}

/** A temporary failure: the service sends the SET again later. */
function later(): Response {
  return new Response(JSON.stringify({ err: "temporarily_unavailable", description: "try again later" }), {
    status: 503,
    headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store", "Retry-After": "30" },
  });
}

export async function receiveSignal(req: Request, kit: KitContext, rc: RequestContext): Promise<Response> {
  // RP_SIGNALS unset: the app takes no stream here, so the route is absent.
  if (!kit.config.signals) throw E.notFound();
  rc.log.event = "rp.signal";
  let token: string;
  try {
    token = (await readBodyText(req, MAX_BODY_BYTES)).trim();
  } catch {
    return refuse("invalid_request", "the body could not be read");
  }
  const v = await verify(kit, token);
  if (!v.ok) {
    if ("retry" in v) {
      rc.log.cause = `SET not checked: ${v.retry}`;
      return later();
    }
    rc.log.cause = `SET refused: ${v.err}`;
    return refuse(v.err, v.description);
  }
  const c = v.claims;
  if (typeof c.iat !== "number" || Math.abs(Date.now() / 1000 - c.iat) > MAX_SKEW_SECONDS)
    return refuse("invalid_request", "iat missing or not within 10 minutes");
  if (typeof c.jti !== "string" || c.jti.length === 0 || c.jti.length > 256) return refuse("invalid_request", "no jti");
  const events = c.events as Record<string, unknown> | undefined;
  if (!events || typeof events !== "object" || Array.isArray(events) || Object.keys(events).length !== 1)
    return refuse("invalid_request", "not exactly one event");
  const [type] = Object.keys(events) as [string];
  if (!ENDS_PLID.has(type)) {
    rc.log.cause = "SET of a type that ends nothing: acknowledged";
    return accepted();
  }
  const plid = plidOf(c, kit.config.providerBaseUrl);
  if (plid === null) return refuse("invalid_request", "no plid in sub_id");
  if (!(await kit.store.claimJti(`ssf:${c.jti}`, JTI_TTL_SECONDS))) {
    rc.log.cause = "SET already acted on: acknowledged";
    return accepted();
  }
  // the SETs of one change (one txn) end the plid once: the first of them acts, the others are acknowledged
  const txn = typeof c.txn === "string" && c.txn.length <= 256 ? `ssf-txn:${c.txn}:${plid}` : null;
  if (txn !== null && !(await kit.store.claimJti(txn, JTI_TTL_SECONDS))) {
    await kit.store.jtiActedOn(`ssf:${c.jti}`, JTI_TTL_SECONDS);
    rc.log.cause = "SET of a change already acted on: acknowledged";
    return accepted();
  }
  rc.log.cause = await endClaimedPlid(kit, req, rc, txn === null ? [`ssf:${c.jti}`] : [`ssf:${c.jti}`, txn], plid);
  return accepted();
}

/** The app's stream at the service, as the stream API answers it (SSF 1.0 §8.1.1). */
export interface SignalStream {
  stream_id: string;
  delivery: { method: string; endpoint_url?: string };
  events_requested: string[];
  events_delivered: string[];
  [k: string]: unknown;
}

/** An access token of the app for the stream API (client_credentials, scope `ssf`). */
async function streamToken(kit: KitContext): Promise<string> {
  const client = kit.client();
  const res = await call(client, "ssf", "/oauth2/token", {
    method: "POST",
    headers: {
      Authorization: basicAuthorization(client.clientId, client.clientSecret),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials&scope=ssf",
  });
  const body = await readJson(res, "ssf");
  if (res.status !== 200 || typeof body.access_token !== "string")
    throw new RpClientError("status", "ssf", `token endpoint answered ${res.status}`, { status: res.status });
  return body.access_token;
}

async function streamCall(kit: KitContext, token: string, method: string, body?: unknown): Promise<Response> {
  return call(kit.client(), "ssf", "/ssf/stream", {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function listed(kit: KitContext, token: string): Promise<SignalStream | null> {
  const res = await streamCall(kit, token, "GET");
  if (res.status !== 200) throw new RpClientError("status", "ssf", `stream API answered ${res.status}`);
  let list: unknown;
  try {
    list = JSON.parse(await readCapped(res));
  } catch {
    throw new RpClientError("envelope", "ssf", "stream list is not JSON");
  }
  if (!Array.isArray(list)) throw new RpClientError("envelope", "ssf", "stream list is not an array");
  return (list[0] as SignalStream | undefined) ?? null;
}

/**
 * The app's stream: the one it has at the service, or a push stream to {basePath}/ssf created now
 * (`created`). A stream the app has is left as it is.
 */
export async function ensureStream(kit: KitContext): Promise<{ created: boolean; stream: SignalStream }> {
  const cfg = kit.config;
  const token = await streamToken(kit);
  const have = await listed(kit, token);
  if (have) return { created: false, stream: have };
  const res = await streamCall(kit, token, "POST", {
    delivery: { method: PUSH, endpoint_url: `${cfg.publicOrigin}${cfg.basePath}/ssf` },
    events_requested: SIGNAL_EVENTS,
    description: "phone-login-kit",
  });
  if (res.status === 409) {
    // another isolate created it in the meantime
    const now = await listed(kit, token);
    if (now) return { created: false, stream: now };
  }
  const body = await readJson(res, "ssf");
  if (res.status !== 201) {
    const why = typeof body.message === "string" ? `: ${body.message.slice(0, 200)}` : "";
    throw new RpClientError("status", "ssf", `stream API answered ${res.status}${why}`, { status: res.status });
  }
  return { created: true, stream: body as unknown as SignalStream };
}
