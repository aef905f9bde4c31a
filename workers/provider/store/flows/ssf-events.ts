// Shared Signals events (docs/events.md "Shared Signals"; OpenID SSF 1.0, CAEP 1.0, RISC 1.0): what
// an app with a stream (store/ssf-streams.ts) is sent instead of the service's own events. Each
// outbox event (one-time/tables/ended-plids.ts) becomes one SET per standard event type it maps to,
// each SET one event (SSF 1.0 §4.2.1), signed ES256 with the service's published key (the OIDC
// JWKS, store/signing-keys.ts) when it is sent or polled, so a key rotation never strands a
// waiting SET. The subject is top-level `sub_id` (RFC 9493): the app's plid, `opaque`, or for an
// OpenID Connect app `iss_sub` with the `sub` its id_tokens carry (the same plid). Never a number,
// a name or a `ci`. The SETs of one event share a `txn`; each `jti` derives from the outbox
// event's, so every retry and every poll carries the same `jti`s.

import { signJws } from "../../../core/jws";
import { sha256 } from "../../../core/crypto";
import { signerNow, signingKey } from "../signing-keys";
import { queueForPoll, streamAuthorization, streamsOf, type Stream } from "../ssf-streams";
import type { PendingEvent } from "../one-time/index";
import type { StoreVars } from "../config";

const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
const SSF = "https://schemas.openid.net/secevent/ssf/event-type/";

/** CAEP 1.0 §3.1: a session of the subject ended. */
export const SESSION_REVOKED = `${CAEP}session-revoked`;
/** CAEP 1.0 §3.3: a credential of the subject changed. */
export const CREDENTIAL_CHANGE = `${CAEP}credential-change`;
/** RISC 1.0 §2.2: the subject's account is gone. */
export const ACCOUNT_PURGED = `${RISC}account-purged`;
/** RISC 1.0 §2.6: the subject's identifier now belongs to someone else. */
export const IDENTIFIER_RECYCLED = `${RISC}identifier-recycled`;
/** SSF 1.0 §8.1.4.1: the verification event. */
export const VERIFICATION = `${SSF}verification`;
/** SSF 1.0 §8.1.5: the transmitter changed the stream's status. */
export const STREAM_UPDATED = `${SSF}stream-updated`;

/** The types a stream may ask for (`events_supported`). The verification event is always sent. */
export const SSF_EVENTS_SUPPORTED = [SESSION_REVOKED, CREDENTIAL_CHANGE, ACCOUNT_PURGED, IDENTIFIER_RECYCLED];

/** What each outbox event reason maps to, in the order its SETs are sent. */
const MAPPING: Record<string, string[]> = {
  user_terminated: [SESSION_REVOKED, ACCOUNT_PURGED],
  client_disconnected: [SESSION_REVOKED, ACCOUNT_PURGED],
  subscriber_removed: [SESSION_REVOKED, ACCOUNT_PURGED],
  number_reassigned: [SESSION_REVOKED, ACCOUNT_PURGED, IDENTIFIER_RECYCLED],
  auto_login_ended: [SESSION_REVOKED],
  credential_change: [CREDENTIAL_CHANGE],
  passkey_created_platform: [CREDENTIAL_CHANGE],
  passkey_created_roaming: [CREDENTIAL_CHANGE],
  passkey_deleted_platform: [CREDENTIAL_CHANGE],
  passkey_deleted_roaming: [CREDENTIAL_CHANGE],
};

/** The reasons an app without a stream is told of (today's events, events.ts); the others go to streams only. */
const LEGACY = new Set(["user_terminated", "subscriber_removed", "number_reassigned", "credential_change"]);

/** Whether an outbox event reason is one only a stream app is told of (none goes to an `events_uri`). */
export const streamOnly = (reason: string): boolean => !LEGACY.has(reason);

/** Who started the change (CAEP 1.0 §2 `initiating_entity`) and the operator's words for it. */
const WHY: Record<string, { entity: "user" | "admin" | "system"; admin: string }> = {
  user_terminated: { entity: "user", admin: "The person ended their login with this app" },
  // the app's own call, made for its user (spec §4.4: the app disconnects a user)
  client_disconnected: { entity: "user", admin: "The app disconnected the person" },
  subscriber_removed: { entity: "admin", admin: "The operator removed the subscriber" },
  number_reassigned: { entity: "system", admin: "The phone number now belongs to another person" },
  auto_login_ended: { entity: "user", admin: "The person turned off automatic login with this app" },
  credential_change: { entity: "system", admin: "The carrier reported a SIM change or a number port" },
  passkey_created_platform: { entity: "user", admin: "The person added a passkey" },
  passkey_created_roaming: { entity: "user", admin: "The person added a passkey" },
  passkey_deleted_platform: { entity: "user", admin: "The person removed a passkey" },
  passkey_deleted_roaming: { entity: "user", admin: "The person removed a passkey" },
};

/** A credential-change's credential and change (CAEP 1.0 §3.3 `credential_type`, `change_type`). */
const CHANGE: Record<string, { credential: string; change: "create" | "delete" | "update" }> = {
  credential_change: { credential: "phone-sms", change: "update" },
  passkey_created_platform: { credential: "fido2-platform", change: "create" },
  passkey_created_roaming: { credential: "fido2-roaming", change: "create" },
  passkey_deleted_platform: { credential: "fido2-platform", change: "delete" },
  passkey_deleted_roaming: { credential: "fido2-roaming", change: "delete" },
};

/**
 * Whether a passkey is a roaming authenticator (CAEP `fido2-roaming`) rather than a platform one
 * (`fido2-platform`), from what the WebAuthn library reported at its registration: `device` "key"
 * (a device-bound credential made with `authenticatorAttachment` "cross-platform": a security key
 * or another phone), or transports naming only an external way (usb, nfc, ble, hybrid, never
 * "internal"). A synced passkey or one made on this device is a platform one.
 */
export function isRoaming(device: string, transports: readonly string[]): boolean {
  if (device === "key") return true;
  if (transports.includes("internal")) return false;
  return transports.some((t) => t === "usb" || t === "nfc" || t === "ble" || t === "hybrid");
}

/** The outbox reason of a passkey made or removed. */
export function passkeyReason(
  change: "created" | "deleted",
  device: string,
  transports: readonly string[],
): `passkey_${"created" | "deleted"}_${"platform" | "roaming"}` {
  return `passkey_${change}_${isRoaming(device, transports) ? "roaming" : "platform"}`;
}

/** The standard types an outbox event reason maps to. */
export const typesOf = (reason: string): string[] => MAPPING[reason] ?? [];

/** One SET before signing: its claims (the `jti` among them). */
export interface SetClaims {
  jti: string;
  claims: Record<string, unknown>;
}

/** The subject of an app's plid (RFC 9493): `iss_sub` for an OpenID Connect app, else `opaque`. */
export function subjectOf(plid: string, iss: string, oidc: boolean): Record<string, string> {
  return oidc ? { format: "iss_sub", iss, sub: plid } : { format: "opaque", id: plid };
}

/** The SETs of an outbox event for a stream: only the types it requested (`events_delivered`). */
export async function setsFor(
  e: PendingEvent,
  stream: Pick<Stream, "eventsRequested">,
  iss: string,
  oidc: boolean,
): Promise<SetClaims[]> {
  const all = typesOf(e.reason);
  const why = WHY[e.reason]!;
  const at = Math.floor((e.eventAt ?? e.createdAt) / 1000);
  const out: SetClaims[] = [];
  for (const type of all) {
    if (!stream.eventsRequested.includes(type)) continue;
    const jti = (await sha256(`${e.jti}:${type}`)).slice(0, 32);
    let event: Record<string, unknown> = {};
    if (type === SESSION_REVOKED)
      event = { event_timestamp: at, initiating_entity: why.entity, reason_admin: { en: why.admin } };
    if (type === CREDENTIAL_CHANGE)
      event = {
        credential_type: CHANGE[e.reason]!.credential,
        change_type: CHANGE[e.reason]!.change,
        event_timestamp: at,
        initiating_entity: why.entity,
        reason_admin: { en: why.admin },
      };
    out.push({
      jti,
      claims: {
        iss,
        aud: e.clientId,
        jti,
        sub_id: subjectOf(e.plid, iss, oidc),
        ...(all.length > 1 ? { txn: e.jti } : {}),
        events: { [type]: event },
      },
    });
  }
  return out;
}

type KeyEnv = StoreVars & { DB: D1Database; SEAL_KEY: string };

/** A SET signed now (RFC 8417 §2.3, SSF 1.0 §4.1): ES256 under the published key, `typ` secevent+jwt. */
export async function signSet(env: KeyEnv, claims: Record<string, unknown>, now = Date.now()): Promise<string> {
  const { kid, key } = signerNow(env, now) ?? (await signingKey(env, now));
  return signJws({ ...claims, iat: Math.floor(now / 1000) }, key, { alg: "ES256", kid, typ: "secevent+jwt" });
}

/** The verification event of a stream (SSF 1.0 §8.1.4.1): its subject the stream. */
export function verificationSet(stream: Stream, iss: string, jti: string, state: string | undefined): SetClaims {
  return {
    jti,
    claims: {
      iss,
      aud: stream.clientId,
      jti,
      sub_id: { format: "opaque", id: stream.streamId },
      events: { [VERIFICATION]: state === undefined ? {} : { state } },
    },
  };
}

/** The stream-updated event of a stream (SSF 1.0 §8.1.5): its new status and why; its subject the stream. */
export function streamUpdatedSet(
  stream: Stream,
  iss: string,
  jti: string,
  status: Stream["status"],
  reason: string | null,
): SetClaims {
  return {
    jti,
    claims: {
      iss,
      aud: stream.clientId,
      jti,
      sub_id: { format: "opaque", id: stream.streamId },
      events: { [STREAM_UPDATED]: reason === null ? { status } : { status, reason } },
    },
  };
}

/** One push (RFC 8935 §2) of a signed SET; a 2xx acknowledges. */
export type Poster = (
  uri: string,
  body: string,
  headers: Record<string, string>,
) => Promise<"delivered" | "refused" | "unreachable" | "timed_out">;

/**
 * Sends SETs on a stream now: push posts each (all must be acknowledged; a retry sends them all
 * again with the same `jti`s, which a receiver drops), poll queues them for the app to poll.
 */
export async function sendOnStream(
  env: KeyEnv,
  stream: Stream,
  sets: readonly SetClaims[],
  post: Poster,
  now: number,
): Promise<"delivered" | "refused" | "unreachable" | "timed_out" | "no_receiver"> {
  if (stream.method === "poll") {
    await queueForPoll(env, stream.clientId, sets, now);
    return "delivered";
  }
  if (!stream.endpointUrl) return "no_receiver";
  const auth = stream.hasAuthorization ? await streamAuthorization(env, stream.clientId) : null;
  for (const s of sets) {
    const outcome = await post(
      stream.endpointUrl,
      await signSet(env, s.claims, now),
      auth ? { Authorization: auth } : {},
    );
    if (outcome !== "delivered") return outcome;
  }
  return "delivered";
}

/** The apps among `ids` whose stream takes one of the standard types of `reason` (and is not disabled). */
export async function streamApps(
  env: { DB: D1Database },
  ids: readonly string[],
  reason: string,
): Promise<{ withStream: Set<string>; told: Set<string> }> {
  const streams = await streamsOf(env, ids);
  const types = typesOf(reason);
  const told = new Set<string>();
  for (const [id, s] of streams)
    if (s.status !== "disabled" && types.some((t) => s.eventsRequested.includes(t))) told.add(id);
  return { withStream: new Set(streams.keys()), told };
}

/**
 * The apps to record an event for: those whose stream takes it, and those without a stream that
 * take today's event (`legacy`, from `clientsTold`): an app with a stream gets the standard ones only.
 */
export async function appsTold(
  env: { DB: D1Database },
  ids: readonly string[],
  reason: string,
  legacy: Set<string>,
): Promise<Set<string>> {
  const { withStream, told } = await streamApps(env, ids, reason);
  for (const id of legacy) if (!withStream.has(id)) told.add(id);
  return told;
}
