// When a one-time-store object's alarm fires (docs/storage.md "Durable Object OneTimeStore"): about
// a minute after a write while the object holds anything (the sweep), at once for an event to send
// (its next try after that), and within AUDIT_FLUSH_SECONDS of the first audit event waiting. What
// the alarm then does is store/flows/one-time-alarm.ts.
//
// Storage is asked for the alarm once and then known until the alarm runs (which sets the next one
// itself), so a sign-in's several writes do not each read it. Setting an alarm is fire-and-forget:
// storage writes are ordered, and a failure is not the caller's (the next write asks again).

/** How often the sweep runs while the object holds anything. */
export const SWEEP_MS = 60_000;

export class Schedule {
  /** Whether an alarm is known to be set, which sweeps what writes leave. */
  private sweepArmed = false;
  /** Whether the alarm is set for the audit outbox's next flush (cleared when a flush starts). */
  private flushArmed = false;

  constructor(
    private readonly storage: DurableObjectStorage,
    /** AUDIT_FLUSH_SECONDS: how long an audit event may wait for its flush. */
    readonly flushMs: number,
  ) {}

  /** Makes sure an alarm will sweep what a write left. */
  sweepSoon(): void {
    if (this.sweepArmed) return;
    this.sweepArmed = true;
    void this.storage
      .getAlarm()
      .then((at) => {
        if (at === null) return this.storage.setAlarm(Date.now() + SWEEP_MS);
      })
      .catch(() => {
        this.sweepArmed = false;
      });
  }

  /** Makes sure the alarm fires no later than `at`. */
  by(at: number): void {
    void this.storage
      .getAlarm()
      .then((cur) => {
        if (cur === null || cur > at) return this.storage.setAlarm(at);
      })
      .catch(() => {});
  }

  /** Makes sure the alarm fires within the flush interval (one storage call per interval, not per event). */
  flushSoon(): void {
    if (this.flushArmed) return;
    this.flushArmed = true;
    this.by(Date.now() + this.flushMs);
  }

  /** A flush starts: events recorded from here on arm the next one. */
  flushStarted(): void {
    this.flushArmed = false;
  }

  /** The alarm has fired: a write while it runs asks storage again. */
  fired(): void {
    this.sweepArmed = false;
  }

  /** The alarm's last step: the next one at `at` (none: null), and whether audit events wait for it. */
  next(at: number | null, auditWaits: boolean): void {
    this.flushArmed = auditWaits;
    if (at === null) return;
    this.sweepArmed = true;
    void this.storage.setAlarm(at).catch(() => {
      this.sweepArmed = false;
    });
  }
}
