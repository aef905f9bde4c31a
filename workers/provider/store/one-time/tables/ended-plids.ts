// Ended plids and the events that tell apps of them (tables `revoked_plids`, `event_outbox`;
// docs/storage.md "Durable Object OneTimeStore", docs/events.md). A plid ends by a disconnect, the
// person's termination, a number reassigned, a subscriber or a client removed
// (store/flows/end-plids.ts); the apps that take `plid-deleted` events are told by this object's
// alarm (store/flows/events.ts), at least once, retried with backoff for more than a day.
//
// Invariants:
// - an ended plid's codes redeem nothing and its tokens read nothing, whenever issued (codes.ts
//   reads `revoked_plids` in the statements that redeem and read); an ended plid is never given
//   again, so a code minted as it ended is refused too;
// - an end is kept longer than any code and token of it can live (`retainMs`), and forgotten only
//   once no link holds its plid any more (the alarm's `forgetEndedPlids`);
// - an end's events are written in the same synchronous call as the end, one per (plid, reason):
//   a retried end records no second event;
// - an event leaves the outbox when delivered or when nobody is left to tell; an undelivered one
//   stays listed for the operator KEEP_UNDELIVERED_MS after its last try.

import { randomToken, sha256 } from "../../../../core/crypto";
import type { Schedule } from "../schedule";

/** Why a plid ended (the `reason` of the event). A client's own disconnect sends no `plid-deleted` event. */
export type EndReason = "user_terminated" | "number_reassigned" | "subscriber_removed";

/**
 * What only an app with a Shared Signals stream is told (flows/ssf-events.ts; an app without one
 * gets no event of these): its own disconnect of a plid, the person turning off automatic login
 * with it, and a passkey of the person made or removed (platform or roaming).
 */
export type StreamReason =
  | "client_disconnected"
  | "auto_login_ended"
  | "passkey_created_platform"
  | "passkey_created_roaming"
  | "passkey_deleted_platform"
  | "passkey_deleted_roaming";

/**
 * What an event says: a plid's end (`plid-deleted`), `credential_change`: a SIM change or a port
 * opened the number's risk window (a CAEP credential-change; the plid lives on), or a change only
 * stream apps are told of.
 */
export type EventReason = EndReason | "credential_change" | StreamReason;

/** One event waiting in an object's outbox. */
export interface PendingEvent {
  jti: string;
  clientId: string;
  plid: string;
  reason: EventReason;
  /** Epoch ms: the event's time (the token's `iat` is its send time). */
  createdAt: number;
  /** A credential change: when the change was (its `event_timestamp`), epoch ms. */
  eventAt?: number;
}

/** A new event for a plid that ended now (or, `client_disconnected`, ends now by its app's call). */
export function newEvent(clientId: string, plid: string, reason: EndReason | "client_disconnected"): PendingEvent {
  return { jti: randomToken(16), clientId, plid, reason, createdAt: Date.now() };
}

/**
 * The event of a change at `at` a stream app is told of (automatic login ended, a passkey made or
 * removed): its `jti` derives from the three, so recording it twice gives the app the same event.
 */
export async function stampedEvent(
  clientId: string,
  plid: string,
  reason: StreamReason,
  at: number,
): Promise<PendingEvent> {
  const jti = await sha256(`${reason}:${plid}:${at}`);
  return { jti, clientId, plid, reason, createdAt: Date.now(), eventAt: at };
}

/**
 * The credential-change event of the change at `at` for a plid: its `jti` derives from both, so a
 * job that records it twice (run again after a crash) gives the app the same event to drop.
 */
export async function changeEvent(clientId: string, plid: string, at: number): Promise<PendingEvent> {
  const jti = await sha256(`credential_change:${plid}:${at}`);
  return { jti, clientId, plid, reason: "credential_change", createdAt: Date.now(), eventAt: at };
}

/** Retries: soon at first, then spaced out, for at least `RETRY_FOR_MS`; then listed as undelivered. */
const BACKOFF_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000];
export const RETRY_FOR_MS = 26 * 3600_000;
/** How long an undelivered event stays listed for the operator after the retries end. */
export const KEEP_UNDELIVERED_MS = 7 * 86400_000;

/**
 * When to try again after `attempts` failed tries, or null when the retries are over: the last
 * try is made at `createdAt + RETRY_FOR_MS` (never cut short by a long step of the backoff).
 */
export function nextAttemptAt(attempts: number, createdAt: number, now: number): number | null {
  const end = createdAt + RETRY_FOR_MS;
  if (now >= end) return null;
  return Math.min(now + BACKOFF_MS[Math.min(attempts - 1, BACKOFF_MS.length - 1)]!, end);
}

/** An event due for a try, with the tries it had. */
export type DueEvent = PendingEvent & { attempts: number };

/** An event not yet delivered, as the operator sees it (never the plid). */
export interface UndeliveredEvent {
  jti: string;
  clientId: string;
  reason: string;
  attempts: number;
  nextAt: number | null;
  createdAt: number;
  lastOutcome: string | null;
}

export class EndedPlids {
  constructor(
    private readonly sql: SqlStorage,
    private readonly schedule: Schedule,
  ) {}

  /** Ends plids for `retainMs`, and records their `events` in the same step (the alarm sends them). */
  end(plids: readonly string[], retainMs: number, events: readonly PendingEvent[]): void {
    const now = Date.now();
    for (const plid of plids) {
      this.sql.exec(
        `INSERT INTO revoked_plids (plid, at, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (plid) DO UPDATE SET at = excluded.at, expires_at = excluded.expires_at`,
        plid,
        now,
        now + retainMs,
      );
    }
    for (const e of events) {
      // one event per (plid, reason, change): a retried end or job records no second one
      const dup = this.sql
        .exec<{ n: number }>(
          "SELECT count(*) AS n FROM event_outbox WHERE (plid = ? AND reason = ? AND coalesce(event_at, 0) = ?) OR jti = ?",
          e.plid,
          e.reason,
          e.eventAt ?? 0,
          e.jti,
        )
        .one().n;
      if (dup > 0) continue;
      this.sql.exec(
        "INSERT INTO event_outbox (jti, client_id, plid, reason, created_at, next_at, event_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        e.jti,
        e.clientId,
        e.plid,
        e.reason,
        e.createdAt,
        now,
        e.eventAt ?? null,
      );
    }
    // Events: the alarm now (it sweeps and reschedules itself). Not both: each reads the alarm
    // before either sets it, and the sweep's later time would win on an object without one.
    if (events.length) this.schedule.by(now);
    else this.schedule.sweepSoon();
  }

  /** Whether the plid has ended. */
  isEnded(plid: string): boolean {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM revoked_plids WHERE plid = ?", plid).one().n > 0;
  }

  /** Ends whose retention is over at `now`, at most 500 (an alarm's batch). */
  expired(now: number): string[] {
    return this.sql
      .exec<{ plid: string }>("SELECT plid FROM revoked_plids WHERE expires_at <= ? LIMIT 500", now)
      .toArray()
      .map((r) => r.plid);
  }

  /** Forgets these ends. */
  forget(plids: readonly string[]): void {
    this.sql.exec("DELETE FROM revoked_plids WHERE plid IN (SELECT value FROM json_each(?))", JSON.stringify(plids));
  }

  /** The events not yet delivered, oldest first. */
  undelivered(): UndeliveredEvent[] {
    return this.sql
      .exec<{
        jti: string;
        client_id: string;
        reason: string;
        attempts: number;
        next_at: number | null;
        created_at: number;
        last_outcome: string | null;
      }>(
        "SELECT jti, client_id, reason, attempts, next_at, created_at, last_outcome FROM event_outbox ORDER BY created_at",
      )
      .toArray()
      .map((r) => ({
        jti: r.jti,
        clientId: r.client_id,
        reason: r.reason,
        attempts: r.attempts,
        nextAt: r.next_at,
        createdAt: r.created_at,
        lastOutcome: r.last_outcome,
      }));
  }

  /** The events due at `now`, soonest first, at most 50 (an alarm's batch). */
  due(now: number): DueEvent[] {
    return this.sql
      .exec<{
        jti: string;
        client_id: string;
        plid: string;
        reason: EventReason;
        created_at: number;
        attempts: number;
        event_at: number | null;
      }>(
        "SELECT jti, client_id, plid, reason, created_at, attempts, event_at FROM event_outbox WHERE next_at IS NOT NULL AND next_at <= ? ORDER BY next_at LIMIT 50",
        now,
      )
      .toArray()
      .map((r) => ({
        jti: r.jti,
        clientId: r.client_id,
        plid: r.plid,
        reason: r.reason,
        createdAt: r.created_at,
        attempts: r.attempts,
        ...(r.event_at !== null ? { eventAt: r.event_at } : {}),
      }));
  }

  /** An event is done with (delivered, or nobody left to tell). */
  done(jti: string): void {
    this.sql.exec("DELETE FROM event_outbox WHERE jti = ?", jti);
  }

  /** An event's try failed: its tries, its next (null: none, kept listed) and the outcome. */
  failed(jti: string, attempts: number, next: number | null, outcome: string): void {
    this.sql.exec(
      "UPDATE event_outbox SET attempts = ?, next_at = ?, last_outcome = ? WHERE jti = ?",
      attempts,
      next,
      outcome,
      jti,
    );
  }

  /** The app's events held while it was paused are due now (its stream enabled again); how many. */
  wake(clientId: string): number {
    const now = Date.now();
    const n = this.sql.exec(
      "UPDATE event_outbox SET next_at = ? WHERE client_id = ? AND last_outcome = 'paused' AND next_at > ?",
      now,
      clientId,
      now,
    ).rowsWritten;
    if (n > 0) this.schedule.by(now);
    return n;
  }

  /** When the next event is due, or null. */
  nextDue(): number | null {
    return this.sql.exec<{ t: number | null }>("SELECT min(next_at) AS t FROM event_outbox").one().t;
  }

  /** Drops the undelivered events whose listing is over. */
  dropUndelivered(now: number): void {
    this.sql.exec(
      "DELETE FROM event_outbox WHERE next_at IS NULL AND created_at <= ?",
      now - RETRY_FOR_MS - KEEP_UNDELIVERED_MS,
    );
  }
}
