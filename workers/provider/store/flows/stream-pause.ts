// A console pausing or resuming an app's Shared Signals stream (docs/events.md "Shared Signals"):
// through `setStreamStatus`, the store function of the app's own `POST /ssf/status` (SSF 1.0
// §8.1.2.2), so a paused stream holds its events in the outbox as that one does, and, as the
// transmitter changed the status, with a stream-updated event to the app (SSF 1.0 §8.1.5). The
// console's caller audits the change with who made it.

import { randomToken } from "../../../core/crypto";
import { recordDelivery } from "../event-deliveries";
import { setStreamStatus, streamOf, type Stream, type StreamStatus } from "../ssf-streams";
import type { StoreVars } from "../config";
import { issuer, post, type EventVars } from "./events";
import { sendOnStream, streamUpdatedSet } from "./ssf-events";

type SendEnv = { DB: D1Database; SEAL_KEY: string } & StoreVars & EventVars;

/**
 * Tells the app its stream's status changed (SSF 1.0 §8.1.5 stream-updated), sent now on the stream
 * (pushed, or queued to be polled) and listed among its deliveries as `stream-updated`.
 */
async function tellUpdated(env: SendEnv, s: Stream, status: StreamStatus, reason: string | null): Promise<void> {
  const now = Date.now();
  const set = streamUpdatedSet(s, issuer(env), randomToken(16), status, reason);
  const outcome = await sendOnStream(env, s, [set], post, now).catch(() => "unreachable" as const);
  const cls = outcome === "delivered" || outcome === "refused" || outcome === "timed_out" ? outcome : "failed";
  await recordDelivery(env, s.clientId, { at: now, type: "stream-updated", class: cls, attempt: 1 });
}

/**
 * Pauses (`paused`) or resumes (`enabled`) the app's stream from a console, with `reason` for the
 * app to read in `GET /ssf/status`: the status it had, or null when the app has no stream. A
 * disabled stream is the app's own choice and stays so (`"disabled"` answered, nothing changed);
 * pausing a paused stream or resuming an enabled one changes nothing either. The transmitter
 * changes the status, so the app is sent a stream-updated event (SSF 1.0 §8.1.5): before the
 * stream stops, and once it is enabled again.
 */
export async function setStreamFromConsole(
  env: SendEnv,
  clientId: string,
  to: "paused" | "enabled",
  reason: string | null,
  now = Date.now(),
): Promise<StreamStatus | null> {
  const s = await streamOf(env, clientId);
  if (!s) return null;
  if (s.status === "disabled" || s.status === to) return s.status;
  const why = to === "paused" ? reason : null;
  if (to === "paused") await tellUpdated(env, s, to, why);
  if (!(await setStreamStatus(env, clientId, s.streamId, to, why, now))) return null;
  if (to === "enabled") await tellUpdated(env, s, to, why);
  return s.status;
}
