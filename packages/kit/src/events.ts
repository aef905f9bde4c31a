// POST /auth/events: signed events from the login service (RFC 8417 security event tokens pushed
// per RFC 8935; docs/events.md). An event that a plid was deleted (the person terminated the
// login, the number passed to someone else, the subscriber was removed) ends every session of
// that plid here and forgets its sealed identity. A token is verified before anything changes:
// HS256 only, keyed by RP_CLIENT_SECRET; `aud` this app's client id; `iss` the configured
// service; `iat` within 10 minutes; then its `jti` is claimed (the login store's `claimJti`: with
// the kit's Durable Object store one call, so of concurrent copies of an event exactly one is acted on). Refusals are RFC
// 8935 §2.3 errors. A verified token of an event type the kit does not handle is acknowledged (202)
// and changes nothing: refusing it would only make the service retry it for a day.

import { E } from "./core/errors.js";
import { verifyHs256 } from "./core/jws.js";
import { notifyLogout } from "./hooks.js";
import { readBodyText } from "./core/http.js";
import type { RequestContext } from "./core/router.js";
import type { KitContext } from "./context.js";

/** The event type of a deleted plid (the service's contract, docs/events.md). */
const PLID_DELETED = "urn:phone-login:event:plid-deleted";
/** How far an event's `iat` may be from now. */
export const MAX_SKEW_SECONDS = 600;
/** How long a jti is remembered: longer than its token is accepted. */
export const JTI_TTL_SECONDS = 2 * MAX_SKEW_SECONDS;
export const MAX_BODY_BYTES = 16 * 1024;

export type SetError = "invalid_request" | "invalid_key" | "invalid_issuer" | "invalid_audience";

/** RFC 8935 §2.3: `{"err", "description"}`, 400. */
export function refuse(err: SetError, description: string): Response {
  return new Response(JSON.stringify({ err, description }), {
    status: 400,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

/** The checks of one token; a refusal, or the plid it is about (null: no event the kit handles). */
async function check(
  kit: KitContext,
  token: string,
): Promise<{ plid: string | null; jti: string } | { err: SetError; description: string }> {
  const cfg = kit.config;
  const v = await verifyHs256(token.trim(), kit.client().clientSecret);
  if ("refused" in v) {
    if (v.refused === "malformed") return { err: "invalid_request", description: "not a compact JWS" };
    return {
      err: "invalid_key",
      description: v.refused === "alg" ? "only HS256 is accepted" : "the signature does not verify",
    };
  }
  const c = v.claims;
  if (c.iss !== cfg.providerBaseUrl) return { err: "invalid_issuer", description: "not the configured service" };
  const aud = Array.isArray(c.aud) ? c.aud : [c.aud];
  if (!aud.includes(cfg.clientId)) return { err: "invalid_audience", description: "not for this app" };
  if (typeof c.iat !== "number" || Math.abs(Date.now() / 1000 - c.iat) > MAX_SKEW_SECONDS) {
    return { err: "invalid_request", description: "iat missing or not within 10 minutes" };
  }
  if (typeof c.jti !== "string" || c.jti.length === 0 || c.jti.length > 256)
    return { err: "invalid_request", description: "no jti" };
  const events = c.events as Record<string, { plid?: unknown } | undefined> | undefined;
  if (!events || typeof events !== "object" || Array.isArray(events) || Object.keys(events).length === 0)
    return { err: "invalid_request", description: "no events" };
  if (!Object.hasOwn(events, PLID_DELETED)) return { plid: null, jti: c.jti };
  const plid = events[PLID_DELETED]?.plid;
  if (typeof plid !== "string" || plid.length === 0 || plid.length > 128) {
    return { err: "invalid_request", description: "a plid-deleted event without a plid" };
  }
  return { plid, jti: c.jti };
}

export async function receiveEvent(req: Request, kit: KitContext, rc: RequestContext): Promise<Response> {
  // RP_EVENTS=false: the app takes no events here (no events_uri registered), so the route is absent.
  if (!kit.config.events) throw E.notFound();
  rc.log.event = "rp.event";
  let token: string;
  try {
    token = await readBodyText(req, MAX_BODY_BYTES);
  } catch {
    return refuse("invalid_request", "the body could not be read");
  }
  const r = await check(kit, token);
  if ("err" in r) {
    rc.log.cause = `event refused: ${r.err}`;
    return refuse(r.err, r.description);
  }
  if (r.plid === null) {
    rc.log.cause = "event of a type not handled: acknowledged";
    return accepted();
  }
  if (!(await kit.store.claimJti(r.jti, JTI_TTL_SECONDS))) {
    rc.log.cause = "event refused: invalid_request";
    return refuse("invalid_request", "jti already seen");
  }
  rc.log.cause = await endClaimedPlid(kit, req, rc, [r.jti], r.plid);
  return accepted();
}

/** RFC 8935 §2.2: the event was received (and acted on, or needs nothing). */
export function accepted(): Response {
  return new Response(null, { status: 202, headers: { "Cache-Control": "no-store" } });
}

/**
 * Ends every session of `plid` and forgets its identity, once the event's `claims` (jtis claimed
 * with claimJti) are held; then marks them acted on and calls the app's onLogout (reason
 * `deleted`). Its failure gives the claims up and throws (500): the service's retry of the same
 * event is accepted, not refused as a replay. Returns the log line's cause.
 */
export async function endClaimedPlid(
  kit: KitContext,
  req: Request,
  rc: RequestContext,
  claims: readonly string[],
  plid: string,
): Promise<string | undefined> {
  try {
    await kit.store.endPlid(plid);
  } catch (err) {
    // a claim that cannot be given up either ends with its TTL; the service retries past that
    for (const c of claims) await kit.store.releaseJti(c).catch(() => {});
    throw err;
  }
  for (const c of claims) await kit.store.jtiActedOn(c, JTI_TTL_SECONDS);
  return notifyLogout(kit.hooks, req, rc, plid, "deleted");
}
