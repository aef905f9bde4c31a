// An app's Shared Signals stream as the consoles show it (docs/events.md "Shared Signals"): its
// status, its delivery (the method and, for push, the receiver's host alone: never the path, the
// query or the Authorization header), the types delivered, what waits to be polled, and its last
// delivery attempts from the app's list (`event_deliveries`, store/event-deliveries.ts). Pausing
// and resuming it: ./stream-pause.ts.

import { deliveriesOf, type Delivery } from "../event-deliveries";
import { streamOf, waitingCount, type StreamStatus } from "../ssf-streams";
import { SSF_EVENTS_SUPPORTED } from "./ssf-events";

/** Attempts listed with the stream: the app's last ones since the stream was made. */
export const STREAM_DELIVERIES_SHOWN = 10;

export interface StreamView {
  stream_id: string;
  status: StreamStatus;
  reason: string | null;
  /** `push` (RFC 8935) or `poll` (RFC 8936). */
  method: "push" | "poll";
  /** Push: the receiver's host; poll: null. */
  endpoint_host: string | null;
  /** The types sent (requested and supported), as full URIs. */
  events_delivered: string[];
  /** Poll: SETs waiting to be polled; push: null. */
  waiting: number | null;
  created_at: string;
  updated_at: string;
  /** The last attempts since the stream was made, newest first. */
  deliveries: (Omit<Delivery, "at"> & { at: string })[];
  /** Of those, the ones not delivered. */
  failures: number;
}

const hostOf = (url: string | null): string | null => {
  try {
    return url ? new URL(url).host : null;
  } catch {
    return null;
  }
};

/** The app's stream as the consoles show it, or null when it has none. */
export async function streamView(env: { DB: D1Database }, clientId: string): Promise<StreamView | null> {
  const s = await streamOf(env, clientId);
  if (!s) return null;
  const [waiting, all] = await Promise.all([
    s.method === "poll" ? waitingCount(env, clientId) : Promise.resolve(null),
    deliveriesOf(env, clientId),
  ]);
  const recent = all.filter((d) => d.at >= s.createdAt).slice(0, STREAM_DELIVERIES_SHOWN);
  return {
    stream_id: s.streamId,
    status: s.status,
    reason: s.reason,
    method: s.method,
    endpoint_host: s.method === "push" ? hostOf(s.endpointUrl) : null,
    events_delivered: s.eventsRequested.filter((t) => SSF_EVENTS_SUPPORTED.includes(t)),
    waiting,
    created_at: new Date(s.createdAt).toISOString(),
    updated_at: new Date(s.updatedAt).toISOString(),
    deliveries: recent.map((d) => ({ ...d, at: new Date(d.at).toISOString() })),
    failures: recent.filter((d) => d.class !== "delivered").length,
  };
}
