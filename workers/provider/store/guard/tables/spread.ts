// The service-wide object's (`~net`) codes outstanding by app (docs/abuse.md "A surge over every
// app"): every app's sends and verifications are counted there again under the scope `app`, the
// service's, and tallied here by app, in memory, for the buckets not yet settled, with the pace of
// the sends. A surge of the service's untyped codes is the service's to judge only when it comes
// at a pace (`SPREAD_PACE_MS`) and is spread: when no app holds more than `SPREAD_MAX_SHARE` of
// them. A surge on one app is that app's own to judge, in its own object, and other apps' people
// are not held for it.

/** The most of a service-wide surge's untyped codes that one app may hold. */
export const SPREAD_MAX_SHARE = 0.5;
/**
 * A service-wide surge is a pace, too: its `surgeCodes` were all sent within this long. People
 * whose codes are not typed yet come at the service's own pace, which a service with no typing of
 * late (a fresh one, a quiet night) cannot tell from a bot's by their count alone.
 */
export const SPREAD_PACE_MS = 10_000;

export class AppSpread {
  /** Each app's untyped codes (sent less verified) by bucket, buckets not yet settled only. */
  private readonly apps = new Map<string, Map<number, number>>();
  /** The codes sent by second (ms since the epoch ÷ 1000), the last `SPREAD_PACE_MS` only. */
  private readonly seconds = new Map<number, number>();

  /** Counts a bucket's sends and verifications of an app; a send at `sentAt`. */
  add(app: string, bucket: number, sent: number, verified: number, sentAt: number): void {
    let buckets = this.apps.get(app);
    if (!buckets) this.apps.set(app, (buckets = new Map()));
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + sent - verified);
    if (sent > 0) {
      const second = Math.floor(sentAt / 1000);
      this.seconds.set(second, (this.seconds.get(second) ?? 0) + sent);
    }
  }

  /** The codes sent within `SPREAD_PACE_MS` before `now`. */
  paced(now: number): number {
    const from = Math.floor((now - SPREAD_PACE_MS) / 1000);
    let n = 0;
    for (const [second, count] of this.seconds) {
      if (second < from) this.seconds.delete(second);
      else n += count;
    }
    return n;
  }

  /** Forgets the buckets below `settledBelow`, settled now, and the sends before the pace's reach. */
  prune(settledBelow: number, now: number): void {
    this.paced(now);
    for (const [app, buckets] of this.apps) {
      for (const bucket of buckets.keys()) if (bucket < settledBelow) buckets.delete(bucket);
      if (buckets.size === 0) this.apps.delete(app);
    }
  }

  /** Whether the untyped codes of buckets from `settledBelow` are spread: no app holds more than its share. */
  spread(settledBelow: number): boolean {
    let total = 0;
    let most = 0;
    for (const buckets of this.apps.values()) {
      let mine = 0;
      for (const [bucket, n] of buckets) if (bucket >= settledBelow) mine += n;
      mine = Math.max(0, mine);
      total += mine;
      most = Math.max(most, mine);
    }
    return total > 0 && most <= total * SPREAD_MAX_SHARE;
  }
}
