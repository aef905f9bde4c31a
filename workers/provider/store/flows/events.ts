// Signed events to apps (docs/events.md): when a plid ends for a reason other than the client's
// own disconnect, the client's `events_uri` receives an RFC 8417 security event token, pushed per
// RFC 8935. The event is recorded in the one-time-store object of the plid in the same call that
// ends the plid (one-time/tables/ended-plids.ts), and that object's alarm delivers it here
// (`deliverDue`), at least once, retrying with backoff for more than a day. No personal data is
// ever in an event but the plid. An app is sent only the event types it takes (the client's
// `event_types`): checked when the event is recorded (end-plids.ts) and again when it is sent.

import { configOf, requiredVar } from "../../../core/config";
import { signHs256 } from "../../../core/jws";
import { clientOfAnyStatus, clientSecrets, type EventType } from "../clients";
import type { OneTimeRoom } from "../one-time/one-time-store";
import { nextAttemptAt, type PendingEvent } from "../one-time/tables/ended-plids";

/** An event type's URI in the token's `events` claim. */
const eventTypeUri = (t: EventType) => `urn:phone-login:event:${t}`;
/** The event type URI of a deleted plid. */
export const PLID_DELETED = eventTypeUri("plid-deleted");

/** A receiver answers within this or the attempt counts as failed. */
const SEND_TIMEOUT_MS = 5_000;

/** The variables event delivery reads. */
export interface EventVars {
  /** The service's public base URL, the events' `iss` (no trailing slash). */
  PUBLIC_BASE_URL?: string;
  DEV_MODE?: string;
}

function parseIssuer(env: EventVars): string {
  return requiredVar(env, "PUBLIC_BASE_URL").replace(/\/+$/, "");
}

/** The `iss` of every event: PUBLIC_BASE_URL (the dev worker: http://localhost:8787). */
export function issuer(env: EventVars): string {
  return configOf(env, parseIssuer);
}

/** The signed event (RFC 8417): HS256 under the client's current secret, `typ` secevent+jwt. */
export async function eventToken(e: PendingEvent, iss: string, secret: string, now: number): Promise<string> {
  return signHs256(
    {
      iss,
      aud: e.clientId,
      iat: Math.floor(now / 1000),
      jti: e.jti,
      events: { [PLID_DELETED]: { plid: e.plid, reason: e.reason } },
    },
    secret,
    "secevent+jwt",
  );
}

export type DeliveryOutcome =
  | "delivered"
  | "refused"
  | "unreachable"
  | "no_receiver"
  | "client_gone"
  /** The app no longer takes this type (its `event_types` changed while the event waited): dropped. */
  | "not_subscribed";

type DeliveryEnv = { DB: D1Database; SEAL_KEY: string } & EventVars;

/**
 * One attempt (RFC 8935 §2): POST the token; a 2xx (202) acknowledges. A disabled client is sent
 * its events all the same; one without an `events_uri` for now is tried again later (the operator
 * may set it back); a deleted client has nobody left to tell (`client_gone`), and one that no
 * longer takes the event's type asked not to be told (`not_subscribed`).
 */
export async function deliver(env: DeliveryEnv, e: PendingEvent, now: number): Promise<DeliveryOutcome> {
  const client = await clientOfAnyStatus(env, e.clientId, 0);
  if (!client) return "client_gone";
  if (!client.eventTypes.includes("plid-deleted")) return "not_subscribed";
  if (!client.eventsUri) return "no_receiver";
  const secrets = await clientSecrets(env, e.clientId, 0);
  if (!secrets) return "client_gone";
  const secret = secrets.current.secret;
  const body = await eventToken(e, issuer(env), secret, now);
  try {
    const res = await fetch(client.eventsUri, {
      method: "POST",
      headers: { "Content-Type": "application/secevent+jwt", Accept: "application/json" },
      body,
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      redirect: "manual",
    });
    await res.body?.cancel();
    return res.status >= 200 && res.status < 300 ? "delivered" : "refused";
  } catch {
    return "unreachable";
  }
}

/**
 * Sends every due event of a one-time-store object once (its alarm); each outcome is recorded and
 * audited in the object; returns when the next one is due. A deleted client has nobody left to
 * tell, and an app that no longer takes the type asked not to be told: both drop the event.
 */
export async function deliverDue(env: Partial<DeliveryEnv>, room: OneTimeRoom): Promise<number | null> {
  if (!env.DB) return null;
  for (const e of room.ended.due(Date.now())) {
    const outcome = await deliver(env as DeliveryEnv, e, Date.now()).catch(() => "unreachable" as const);
    const attempts = e.attempts + 1;
    const dropped = outcome === "client_gone" || outcome === "not_subscribed";
    const done = outcome === "delivered" || dropped;
    const next = done ? null : nextAttemptAt(attempts, e.createdAt, Date.now());
    if (done) room.ended.done(e.jti);
    else room.ended.failed(e.jti, attempts, next, outcome);
    const type =
      outcome === "delivered"
        ? "event.delivered"
        : dropped
          ? "event.dropped"
          : next === null
            ? "event.abandoned"
            : "event.failed";
    room.audit.later(type, e.clientId, outcome === "delivered" ? "ok" : "refused", {
      reason: e.reason,
      outcome,
      attempts,
    });
  }
  return room.ended.nextDue();
}
