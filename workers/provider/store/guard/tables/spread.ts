// The service-wide object's (`~net`) codes outstanding by app (docs/abuse.md "A surge over every
// app"): every app's sends and verifications are counted there again under the scope `app`, the
// service's, and tallied here by app, in memory, for the buckets not yet settled. A surge of the
// service's untyped codes is the service's to judge only when it is spread: when no app holds
// more than `SPREAD_MAX_SHARE` of them. A surge on one app is that app's own to judge, in its own
// object, and other apps' people are not held for it.

/** The most of a service-wide surge's untyped codes that one app may hold. */
export const SPREAD_MAX_SHARE = 0.5;

export class AppSpread {
  /** Each app's untyped codes (sent less verified) by bucket, buckets not yet settled only. */
  private readonly apps = new Map<string, Map<number, number>>();

  /** Counts a bucket's sends and verifications of an app. */
  add(app: string, bucket: number, sent: number, verified: number): void {
    let buckets = this.apps.get(app);
    if (!buckets) this.apps.set(app, (buckets = new Map()));
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + sent - verified);
  }

  /** Forgets the buckets below `settledBelow`, settled now. */
  prune(settledBelow: number): void {
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
