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

  /** The last decision about the alarm: each reads the alarm only after the one before set it. */
  private decided: Promise<unknown> = Promise.resolve();

  /**
   * Reads the alarm and sets the one `choose` returns (null: leave it), after every earlier
   * decision: two decisions of one step never both read "none" and the later overwrite the earlier
   * (a sweep's minute overwriting a flush due in a second).
   */
  private decide(choose: (current: number | null) => number | null): Promise<void> {
    const p = this.decided.then(async () => {
      const at = choose(await this.storage.getAlarm());
      if (at !== null) await this.storage.setAlarm(at);
    });
    this.decided = p.catch(() => {});
    return p;
  }

  /** Makes sure an alarm will sweep what a write left. */
  sweepSoon(): void {
    if (this.sweepArmed) return;
    this.sweepArmed = true;
    this.decide((cur) => (cur === null ? Date.now() + SWEEP_MS : null)).catch(() => {
      this.sweepArmed = false;
    });
  }

  /** Makes sure the alarm fires no later than `at`. */
  by(at: number): void {
    this.decide((cur) => (cur === null || cur > at ? at : null)).catch(() => {});
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
    this.decide(() => at).catch(() => {
      this.sweepArmed = false;
    });
  }
}
