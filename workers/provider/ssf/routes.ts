// The Shared Signals transmitter (docs/events.md "Shared Signals"; OpenID SSF 1.0): its
// configuration document (§7), each app's one stream through the stream configuration API (§8.1.1),
// its status (§8.1.2), the verification event (§8.1.4), and polling (RFC 8936). Served by the token
// worker beside the JWKS that verifies the SETs. Every stream route authenticates the app as the
// configuration document advertises: an access token of the app (the token endpoint's
// client_credentials grant, scope `ssf`, good only here) or its own client id and secret (HTTP
// Basic); and reaches only that app's stream: another app's stream id is answered as unknown (404).

import { ApiError, E } from "../../core/errors";
import { json, parseBearer, readBodyText } from "../../core/http";
import { randomToken, sha256 } from "../../core/crypto";
import { isRandomValue } from "../../core/spec";
import type { RequestContext, Route } from "../../core/router";
import { providerConfig, type ProviderEnv } from "../config";
import { authenticateClient, type AuthenticatedClient } from "../client-auth";
import { cachedClientWithSecrets, clientWithSecrets, secretForToken } from "../store/clients";
import { issuer, post } from "../store/flows/events";
import { eventsUriProblem } from "../store/hosts";
import { MAX_SHARDS } from "../store/config";
import { storeAt } from "../store/one-time/index";
import {
  acknowledge,
  createStream,
  deleteStream,
  keepToken,
  setStreamStatus,
  streamOf,
  tokenOwner,
  updateStream,
  waitingSets,
  type Stream,
  type StreamFields,
  type StreamStatus,
} from "../store/ssf-streams";
import { SSF_EVENTS_SUPPORTED, sendOnStream, signSet, verificationSet } from "../store/flows/ssf-events";

const PUSH = "urn:ietf:rfc:8935";
const POLL = "urn:ietf:rfc:8936";
/** The longest a poll without `returnImmediately` waits for a SET. */
const POLL_WAIT_MS = 5_000;
/** The most SETs one poll answers. */
const POLL_MAX = 100;
/** The scope of the stream API's access token (the token endpoint's client_credentials grant). */
export const SSF_SCOPE = "ssf";

/** The configuration document (SSF 1.0 §7.1) of issuer `iss`. */
export function ssfConfiguration(iss: string): Record<string, unknown> {
  return {
    spec_version: "1_0",
    issuer: iss,
    jwks_uri: `${iss}/oauth2/jwks`,
    delivery_methods_supported: [PUSH, POLL],
    configuration_endpoint: `${iss}/ssf/stream`,
    status_endpoint: `${iss}/ssf/status`,
    verification_endpoint: `${iss}/ssf/verify`,
    // an OAuth 2.0 access token of the app (RFC 6749: client_credentials, scope `ssf`, at the token
    // endpoint), or HTTP Basic with the app's own client id and secret (RFC 7617)
    authorization_schemes: [{ spec_urn: "urn:ietf:rfc:6749" }, { spec_urn: "urn:ietf:rfc:7617" }],
    default_subjects: "ALL",
  };
}

function configuration(_req: Request, env: ProviderEnv): Response {
  return json(ssfConfiguration(issuer(env)), 200, {
    "Cache-Control": "public, max-age=300",
    "Access-Control-Allow-Origin": "*",
  });
}

const streamNotFound = () => new ApiError("not_found", "No such stream.", { status: 404, cause: "no such stream" });

/**
 * The token endpoint's answer to an app's client_credentials grant with scope `ssf`: a stream API
 * access token, kept as its SHA-256 only, bound to the app and the secret it authenticated with.
 */
export async function streamToken(env: ProviderEnv, auth: AuthenticatedClient): Promise<Response> {
  const ttl = providerConfig(env).accessTokenTtlSeconds;
  const token = randomToken(32);
  const now = Date.now();
  await keepToken(env, await sha256(token), auth.client.clientId, auth.secretId, now + ttl * 1000, now);
  return json({ access_token: token, token_type: "bearer", expires_in: ttl, scope: SSF_SCOPE });
}

/** The app a stream API token was issued to, while it lives and its secret does; else 401. */
async function tokenApp(env: ProviderEnv, token: string | undefined): Promise<string> {
  if (token === undefined || !isRandomValue(token)) throw E.authFailed("ssf: malformed bearer token");
  const owner = await tokenOwner(env, await sha256(token), Date.now());
  if (!owner) throw E.authFailed("ssf: unknown or expired token");
  const cacheMs = providerConfig(env).clientCacheMs;
  const found =
    cachedClientWithSecrets(owner.clientId, cacheMs) ?? (await clientWithSecrets(env, owner.clientId, cacheMs));
  if (!found || secretForToken(found.secrets, owner.secretId) === null)
    throw E.authFailed("ssf: the token's app or secret is gone");
  return owner.clientId;
}

/** The calling app: its stream API access token (Bearer) or its own client id and secret (Basic). */
async function app(req: Request, env: ProviderEnv, rc: RequestContext): Promise<string> {
  const header = req.headers.get("Authorization");
  const clientId =
    header !== null && /^\s*bearer\b/i.test(header)
      ? await tokenApp(env, parseBearer(header))
      : (await authenticateClient(req, env, providerConfig(env).clientCacheMs)).client.clientId;
  rc.log.clientId = clientId;
  return clientId;
}

async function body(req: Request, env: ProviderEnv): Promise<Record<string, unknown>> {
  const text = await readBodyText(req, providerConfig(env).maxBodyBytes);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw E.invalid("body", "not JSON");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw E.invalid("body", "not a JSON object");
  return v as Record<string, unknown>;
}

/** The calling app's stream named `streamId` (never another app's), or 404. */
async function ownStream(env: ProviderEnv, clientId: string, streamId: unknown): Promise<Stream> {
  if (typeof streamId !== "string" || streamId === "") throw E.missing("stream_id");
  const s = await streamOf(env, clientId);
  if (!s || s.streamId !== streamId) throw streamNotFound();
  return s;
}

/** A stream as the configuration API answers it (SSF 1.0 §8.1.1); never its Authorization header. */
function view(s: Stream, iss: string): Record<string, unknown> {
  return {
    stream_id: s.streamId,
    iss,
    aud: s.clientId,
    delivery:
      s.method === "push"
        ? { method: PUSH, endpoint_url: s.endpointUrl }
        : { method: POLL, endpoint_url: `${iss}/ssf/poll/${s.streamId}` },
    events_supported: SSF_EVENTS_SUPPORTED,
    events_requested: s.eventsRequested,
    events_delivered: s.eventsRequested.filter((t) => SSF_EVENTS_SUPPORTED.includes(t)),
    ...(s.description !== null ? { description: s.description } : {}),
  };
}

/** A stream's fields from a create or update body, over `base` (PATCH) or alone (POST, PUT). */
function fieldsOf(b: Record<string, unknown>, devMode: boolean, base?: Stream): StreamFields {
  const d = b.delivery === undefined && base ? undefined : b.delivery;
  let method = base?.method ?? "push";
  let endpointUrl = base?.endpointUrl ?? null;
  let authorization: string | null | undefined;
  if (d !== undefined) {
    if (typeof d !== "object" || d === null || Array.isArray(d)) throw E.invalid("delivery");
    const dd = d as Record<string, unknown>;
    if (dd.method === PUSH) method = "push";
    else if (dd.method === POLL) method = "poll";
    else throw E.invalidBecause("delivery.method", `one of ${PUSH}, ${POLL}`);
    if (method === "push") {
      if (typeof dd.endpoint_url !== "string") throw E.missing("delivery.endpoint_url");
      const problem = eventsUriProblem(dd.endpoint_url, devMode);
      if (problem) throw E.invalidBecause("delivery.endpoint_url", problem);
      endpointUrl = dd.endpoint_url;
      const a = dd.authorization_header;
      if (a !== undefined && (typeof a !== "string" || !/^[\x20-\x7e]{1,1024}$/.test(a)))
        throw E.invalidBecause("delivery.authorization_header", "printable ASCII, at most 1024 characters");
      authorization = (a as string | undefined) ?? null;
    } else {
      endpointUrl = null;
      authorization = null;
    }
  } else if (!base) throw E.missing("delivery");
  let eventsRequested = base?.eventsRequested ?? [];
  if (b.events_requested !== undefined || !base) {
    const e = b.events_requested ?? [];
    if (!Array.isArray(e) || e.length > 20 || !e.every((t) => typeof t === "string" && t.length <= 200))
      throw E.invalidBecause("events_requested", "an array of at most 20 event type URIs");
    eventsRequested = [...new Set(e as string[])];
  }
  let description = base?.description ?? null;
  if (b.description !== undefined) {
    if (b.description !== null && (typeof b.description !== "string" || b.description.length > 200))
      throw E.invalidBecause("description", "a string of at most 200 characters");
    description = b.description as string | null;
  }
  return {
    method,
    endpointUrl,
    ...(authorization !== undefined ? { authorization } : {}),
    eventsRequested,
    description,
  };
}

async function create(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const clientId = await app(req, env, rc);
  const f = fieldsOf(await body(req, env), providerConfig(env).devMode);
  const streamId = randomToken(16);
  if (!(await createStream(env, clientId, streamId, f, Date.now())))
    throw new ApiError("invalid_request", "The app has a stream already.", { status: 409, cause: "stream exists" });
  return json(view((await streamOf(env, clientId))!, issuer(env)), 201);
}

async function read(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const clientId = await app(req, env, rc);
  const id = rc.url.searchParams.get("stream_id");
  if (id === null) {
    const s = await streamOf(env, clientId);
    return json(s ? [view(s, issuer(env))] : []);
  }
  return json(view(await ownStream(env, clientId, id), issuer(env)));
}

function update(replace: boolean) {
  return async (req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> => {
    const clientId = await app(req, env, rc);
    const b = await body(req, env);
    const s = await ownStream(env, clientId, b.stream_id);
    const f = fieldsOf(b, providerConfig(env).devMode, replace ? undefined : s);
    if (!(await updateStream(env, clientId, s.streamId, f, Date.now()))) throw streamNotFound();
    return json(view((await streamOf(env, clientId))!, issuer(env)));
  };
}

async function remove(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const clientId = await app(req, env, rc);
  const s = await ownStream(env, clientId, rc.url.searchParams.get("stream_id") ?? undefined);
  if (!(await deleteStream(env, clientId, s.streamId))) throw streamNotFound();
  return new Response(null, { status: 204 });
}

const statusView = (s: Pick<Stream, "streamId" | "status" | "reason">) => ({
  stream_id: s.streamId,
  status: s.status,
  ...(s.reason !== null ? { reason: s.reason } : {}),
});

async function readStatus(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const clientId = await app(req, env, rc);
  return json(statusView(await ownStream(env, clientId, rc.url.searchParams.get("stream_id") ?? undefined)));
}

async function writeStatus(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const clientId = await app(req, env, rc);
  const b = await body(req, env);
  const s = await ownStream(env, clientId, b.stream_id);
  const status = b.status;
  if (status !== "enabled" && status !== "paused" && status !== "disabled")
    throw E.invalidBecause("status", "one of enabled, paused, disabled");
  if (b.reason !== undefined && (typeof b.reason !== "string" || b.reason.length > 200))
    throw E.invalidBecause("reason", "a string of at most 200 characters");
  const reason = (b.reason as string | undefined) ?? null;
  if (!(await setStreamStatus(env, clientId, s.streamId, status as StreamStatus, reason, Date.now())))
    throw streamNotFound();
  // enabled again: what the pause held goes now, not at its next look minutes later (in every object
  // any ONE_TIME_SHARDS setting may have recorded it in)
  if (s.status === "paused" && status === "enabled")
    await Promise.all(Array.from({ length: MAX_SHARDS }, (_, i) => storeAt(env, i).wakeEvents(clientId)));
  return json(statusView({ streamId: s.streamId, status: status as StreamStatus, reason }));
}

async function verify(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const clientId = await app(req, env, rc);
  const b = await body(req, env);
  const s = await ownStream(env, clientId, b.stream_id);
  if (b.state !== undefined && (typeof b.state !== "string" || b.state.length > 200))
    throw E.invalidBecause("state", "a string of at most 200 characters");
  if (s.status !== "enabled") throw E.invalidBecause("stream_id", "the stream is not enabled");
  const set = verificationSet(s, issuer(env), randomToken(16), b.state as string | undefined);
  const outcome = await sendOnStream(env, s, [set], post, Date.now());
  rc.log.cause = `verification ${outcome}`;
  return new Response(null, { status: 204 });
}

function jtiList(v: unknown, item: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.length > 1000 || !v.every((j) => typeof j === "string"))
    throw E.invalidBecause(item, "an array of jti strings");
  return v as string[];
}

/** RFC 8936 §2.4: acknowledges what the app names, then answers what waits (signed now). */
async function poll(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const clientId = await app(req, env, rc);
  const s = await ownStream(env, clientId, rc.params.stream_id);
  const b = await body(req, env);
  const ack = jtiList(b.ack, "ack");
  const errs = b.setErrs;
  if (errs !== undefined && (typeof errs !== "object" || errs === null || Array.isArray(errs)))
    throw E.invalidBecause("setErrs", "an object of jti to error");
  const max = b.maxEvents ?? POLL_MAX;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 0)
    throw E.invalidBecause("maxEvents", "an integer ≥ 0");
  const immediately = b.returnImmediately ?? false;
  if (typeof immediately !== "boolean") throw E.invalidBecause("returnImmediately", "true or false");
  // a SET the receiver reports an error for is not sent again (RFC 8936 §2.4.3)
  await acknowledge(env, clientId, [...ack, ...Object.keys((errs as Record<string, unknown> | undefined) ?? {})]);
  const n = Math.min(max, POLL_MAX);
  let waiting = await waitingSets(env, clientId, n);
  const until = Date.now() + POLL_WAIT_MS;
  while (n > 0 && !immediately && waiting.sets.length === 0 && s.status === "enabled" && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 500));
    waiting = await waitingSets(env, clientId, n);
  }
  const now = Date.now();
  const sets: Record<string, string> = {};
  for (const w of waiting.sets) sets[w.jti] = await signSet(env, w.claims, now);
  return json({ sets, moreAvailable: waiting.more });
}

export const routes: Route<ProviderEnv>[] = [
  { method: "GET", path: "/.well-known/ssf-configuration", handler: configuration },
  { method: "POST", path: "/ssf/stream", handler: create },
  { method: "GET", path: "/ssf/stream", handler: read },
  { method: "PATCH", path: "/ssf/stream", handler: update(false) },
  { method: "PUT", path: "/ssf/stream", handler: update(true) },
  { method: "DELETE", path: "/ssf/stream", handler: remove },
  { method: "GET", path: "/ssf/status", handler: readStatus },
  { method: "POST", path: "/ssf/status", handler: writeStatus },
  { method: "POST", path: "/ssf/verify", handler: verify },
  { method: "POST", path: "/ssf/poll/:stream_id", handler: poll },
];
