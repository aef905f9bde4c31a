// Signed events to apps (docs/events.md): when a plid ends for a reason other than the client's
// own disconnect, the client's `events_uri` receives an RFC 8417 security event token, pushed per
// RFC 8935. The event is recorded in the one-time store object of the plid in the same call that
// ends the plid (OneTimeStore.revokePlids), and that object's alarm delivers it, at least once,
// retrying with backoff for more than a day. No personal data is ever in an event but the plid.
// An app is sent only the event types it takes (the client's `event_types`): checked when the event
// is recorded (links.ts endRows) and again when it is sent.

import { configOf, requiredVar } from "../../../core/config";
import { randomToken } from "../../../core/crypto";
import { signHs256 } from "../../../core/jws";
import { clientOfAnyStatus, clientSecrets, type EventType } from "../clients";

/** Why a plid ended (the `reason` of the event). A client's own disconnect sends no event. */
export type EndReason = "user_terminated" | "number_reassigned" | "subscriber_removed";

/** An event type's URI in the token's `events` claim. */
const eventTypeUri = (t: EventType) => `urn:phone-login:event:${t}`;
/** The event type URI of a deleted plid. */
export const PLID_DELETED = eventTypeUri("plid-deleted");

/** One event waiting in a store object's outbox: a `plid-deleted` (the only type so far). */
export interface PendingEvent {
  jti: string;
  clientId: string;
  plid: string;
  reason: EndReason;
  /** Epoch seconds: the event's time (the token's `iat` is its send time). */
  createdAt: number;
}

/** A new event for a plid that ended now. */
export function newEvent(clientId: string, plid: string, reason: EndReason): PendingEvent {
  return { jti: randomToken(16), clientId, plid, reason, createdAt: Date.now() };
}

/** Retries: soon at first, then spaced out, for at least `RETRY_FOR_MS`; then listed as undelivered. */
const BACKOFF_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000];
export const RETRY_FOR_MS = 26 * 3600_000;
/** How long an undelivered event stays listed for the operator after the retries end. */
export const KEEP_UNDELIVERED_MS = 7 * 86400_000;
/** A receiver answers within this or the attempt counts as failed. */
const SEND_TIMEOUT_MS = 5_000;

/**
 * When to try again after `attempts` failed tries, or null when the retries are over: the last
 * try is made at `createdAt + RETRY_FOR_MS` (never cut short by a long step of the backoff).
 */
export function nextAttemptAt(attempts: number, createdAt: number, now: number): number | null {
  const end = createdAt + RETRY_FOR_MS;
  if (now >= end) return null;
  return Math.min(now + BACKOFF_MS[Math.min(attempts - 1, BACKOFF_MS.length - 1)]!, end);
}

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
