// Signed events to apps (docs/events.md): when a plid ends for a reason other than the client's
// own disconnect, the client's `events_uri` receives an RFC 8417 security event token, pushed per
// RFC 8935. The event is recorded in the one-time-store object of the plid in the same call that
// ends the plid (one-time/tables/ended-plids.ts), and that object's alarm delivers it here
// (`deliverDue`), at least once, retrying with backoff for more than a day. No personal data is
// ever in an event but the plid. An app is sent only the event types it takes (the client's
// `event_types`): checked when the event is recorded (end-plids.ts) and again when it is sent.

import { configOf, requiredVar } from "../../../core/config";
import { signHs256 } from "../../../core/jws";
import { clientOfAnyStatus, clientSecrets, pauseClientEvents, resumeClientEvents, type EventType } from "../clients";
import { noticeOwners } from "../developers";
import { recordDelivery, type DeliveryClass } from "../event-deliveries";
import { randomToken } from "../../../core/crypto";
import { type OneTimeRoom, nextAttemptAt, type PendingEvent } from "../one-time/index";
import { streamOf } from "../ssf-streams";
import type { StoreVars } from "../config";
import { sendOnStream, setsFor, streamOnly, typesOf } from "./ssf-events";

/** An event type's URI in the token's `events` claim. */
const eventTypeUri = (t: EventType) => `urn:phone-login:event:${t}`;
/** The event type URI of a deleted plid. */
export const PLID_DELETED = eventTypeUri("plid-deleted");
/** The event type URI of a test event (the developer console's button). */
export const TEST_EVENT = eventTypeUri("test");
/** CAEP's credential change (OpenID CAEP 1.0 §3.3): a SIM change or a port opened the number's risk window. */
export const CREDENTIAL_CHANGE = "https://schemas.openid.net/secevent/caep/event-type/credential-change";

/** The client's event type an outbox event is of. */
export const typeOfEvent = (e: Pick<PendingEvent, "reason">): EventType =>
  e.reason === "credential_change" ? "credential-change" : "plid-deleted";

/**
 * The type an attempt is listed under (`event_deliveries`): the client's event type, or for an event
 * only streams take, its first standard type's name (`session-revoked`, `credential-change`).
 */
const deliveryTypeOf = (e: Pick<PendingEvent, "reason">): string =>
  streamOnly(e.reason) ? typesOf(e.reason)[0]!.split("/").pop()! : typeOfEvent(e);

/** The token's `events` claim of an outbox event. */
function eventsClaim(e: PendingEvent): Record<string, Record<string, unknown>> {
  if (e.reason === "credential_change")
    return {
      [CREDENTIAL_CHANGE]: {
        plid: e.plid,
        credential_type: "phone-sms",
        change_type: "update",
        event_timestamp: Math.floor((e.eventAt ?? e.createdAt) / 1000),
      },
    };
  return { [PLID_DELETED]: { plid: e.plid, reason: e.reason } };
}

/** An app whose events keep failing this long is paused (docs/events.md "Deliveries and pausing"). */
export const PAUSE_AFTER_MS = 24 * 3600_000;
/** A paused app's events wait this long from their time, then are listed as undelivered. */
export const KEEP_PAUSED_MS = 7 * 86_400_000;
/** How often a paused app's waiting events look again whether it was resumed. */
export const RESUME_CHECK_MS = 5 * 60_000;

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
      events: eventsClaim(e),
    },
    secret,
    "secevent+jwt",
  );
}

export type DeliveryOutcome =
  | "delivered"
  | "refused"
  | "unreachable"
  /** The receiver did not answer within SEND_TIMEOUT_MS. */
  | "timed_out"
  /** The app's events are paused: nothing was tried. */
  | "paused"
  | "no_receiver"
  | "client_gone"
  /** The app no longer takes this type (its `event_types` changed while the event waited): dropped. */
  | "not_subscribed"
  /** The app's Shared Signals stream is disabled (SSF 1.0 §8.1.2): its events are dropped. */
  | "stream_disabled";

type DeliveryEnv = { DB: D1Database; SEAL_KEY: string } & EventVars & StoreVars;

/**
 * One attempt (RFC 8935 §2): POST the token; a 2xx (202) acknowledges. A disabled client is sent
 * its events all the same; one without an `events_uri` for now is tried again later (the operator
 * may set it back); a deleted client has nobody left to tell (`client_gone`), and one that no
 * longer takes the event's type asked not to be told (`not_subscribed`).
 */
export async function deliver(env: DeliveryEnv, e: PendingEvent, now: number): Promise<DeliveryOutcome> {
  const client = await clientOfAnyStatus(env, e.clientId, 0);
  if (!client) return "client_gone";
  // an app with a Shared Signals stream is sent the standard SETs instead (ssf-events.ts)
  const stream = await streamOf(env, e.clientId);
  if (stream) {
    if (stream.status === "disabled") return "stream_disabled";
    const sets = await setsFor(e, stream, issuer(env), client.oidc);
    if (sets.length === 0) return "not_subscribed";
    if (client.eventsPausedAt !== null || stream.status === "paused") return "paused";
    return sendOnStream(env, stream, sets, post, now);
  }
  // what only streams are told of (the app's own disconnect, automatic login ended, passkeys) goes
  // to no events_uri: an app whose stream was deleted while the event waited drops it
  if (streamOnly(e.reason) || !client.eventTypes.includes(typeOfEvent(e))) return "not_subscribed";
  if (client.eventsPausedAt !== null) return "paused";
  if (!client.eventsUri) return "no_receiver";
  const secrets = await clientSecrets(env, e.clientId, 0);
  if (!secrets) return "client_gone";
  const secret = secrets.current.secret;
  return post(client.eventsUri, await eventToken(e, issuer(env), secret, now));
}

/** One POST of a token to a receiver (RFC 8935 §2), with a stream's Authorization header: a 2xx acknowledges. */
export async function post(
  uri: string,
  body: string,
  extra: Record<string, string> = {},
): Promise<"delivered" | "refused" | "unreachable" | "timed_out"> {
  try {
    const res = await fetch(uri, {
      method: "POST",
      headers: { "Content-Type": "application/secevent+jwt", Accept: "application/json", ...extra },
      body,
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      redirect: "manual",
    });
    await res.body?.cancel();
    return res.status >= 200 && res.status < 300 ? "delivered" : "refused";
  } catch (err) {
    return (err as Error)?.name === "TimeoutError" ? "timed_out" : "unreachable";
  }
}

/** An attempt's status class in the app's delivery list (never a timing). */
function classOf(o: DeliveryOutcome): DeliveryClass | null {
  if (o === "delivered" || o === "refused" || o === "timed_out") return o;
  if (o === "unreachable" || o === "no_receiver") return "failed";
  return null;
}

/**
 * A test event (the developer console's button), sent now and once, not through the outbox: its
 * status class. The token is the events' own, of type `urn:phone-login:event:test`, empty.
 */
export async function sendTestEvent(
  env: DeliveryEnv,
  clientId: string,
  uri: string,
  secret: string,
  now: number,
): Promise<DeliveryClass> {
  const token = await signHs256(
    {
      iss: issuer(env),
      aud: clientId,
      iat: Math.floor(now / 1000),
      jti: randomToken(16),
      events: { [TEST_EVENT]: {} },
    },
    secret,
    "secevent+jwt",
  );
  return classOf(await post(uri, token))!;
}

/** Resumes an app's paused events: its waiting events go at their next look (RESUME_CHECK_MS). */
export function resumeAppEvents(env: { DB: D1Database }, clientId: string): Promise<boolean> {
  return resumeClientEvents(env, clientId);
}

/**
 * Sends every due event of a one-time-store object once (its alarm); each outcome is recorded and
 * audited in the object; returns when the next one is due. A deleted client has nobody left to
 * tell, and an app that no longer takes the type asked not to be told: both drop the event.
 */
export async function deliverDue(env: Partial<DeliveryEnv>, room: OneTimeRoom): Promise<number | null> {
  if (!env.DB) return null;
  const denv = env as DeliveryEnv;
  for (const e of room.ended.due(Date.now())) {
    const outcome = await deliver(denv, e, Date.now()).catch(() => "unreachable" as const);
    const now = Date.now();
    if (outcome === "paused") {
      // nothing tried: the event waits for the app to be resumed, up to KEEP_PAUSED_MS from its time
      const expired = now - e.createdAt >= KEEP_PAUSED_MS;
      room.ended.failed(e.jti, e.attempts, expired ? null : now + RESUME_CHECK_MS, outcome);
      if (expired)
        room.audit.later("event.abandoned", e.clientId, "refused", { reason: e.reason, outcome, attempts: e.attempts });
      continue;
    }
    const attempts = e.attempts + 1;
    const dropped = outcome === "client_gone" || outcome === "not_subscribed" || outcome === "stream_disabled";
    const done = outcome === "delivered" || dropped;
    // a delivery failing for 24 hours pauses the app's events: this one and the others wait
    const pause = !done && now - e.createdAt >= PAUSE_AFTER_MS;
    const next = done ? null : pause ? now + RESUME_CHECK_MS : nextAttemptAt(attempts, e.createdAt, now);
    if (done) room.ended.done(e.jti);
    else room.ended.failed(e.jti, attempts, next, outcome);
    const cls = classOf(outcome);
    if (cls)
      await recordDelivery(denv, e.clientId, { at: now, type: deliveryTypeOf(e), class: cls, attempt: attempts });
    if (pause && (await pauseClientEvents(denv, e.clientId, now))) {
      room.audit.later("event.paused", e.clientId, "refused", { outcome, attempts });
      await noticeOwners(denv, e.clientId, "events_paused", "service", null);
    }
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
