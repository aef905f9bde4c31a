// The guard store's tables (docs/storage.md "Durable Object GuardStore"): for one app (or the
// service's own pages), the counts of codes sent and verified for the app and for every
// network block, ASN, country and number prefix its sign-ins came from, in ten-second buckets, the
// states of those scopes, the slowed scopes' code counts, and the app's SMS sent per Korean day.
// Co-located counters: a send or a verification is one call and one atomic step for all the
// scopes it concerns, so each scope's counts are exact in its object. The sign-ins read the states
// through a per-isolate copy (signin/guard.ts) and write counts after their answer.

import { kstDayStart } from "../../config";
import type { GuardEvent, GuardView, Scope, ScopeStatus, Transition } from "./events";
import { takeSlowCode } from "./slow";
import { AppSpread } from "./spread";
import {
  isSurge,
  judge,
  kindOf,
  judgeOutstanding,
  SURGE_RECENT_MS,
  typedShare,
  typingCurve,
  TYPING_SLOT_MS,
  type GuardRules,
  type GuardState,
  type ScopeKind,
  type StateRow,
  type Sums,
} from "../rules";

export type { GuardRules, GuardState, ScopeKind } from "../rules";
export { kindOf } from "../rules";

/** Counts are kept in buckets of this many milliseconds. */
export const BUCKET_MS = 10_000;
/** Korea's offset from UTC: day numbers are Korean calendar days. */
const KST_MS = 9 * 3_600_000;
/** Count rows per statement: 6 bound values each, within SQLite's 100 a statement. */
const ROWS_PER_STATEMENT = 16;
/** Scopes judged a statement (each a bound value, with the window's two). */
const SCOPES_PER_STATEMENT = 90;
const ZERO: Sums = { sent: 0, verified: 0, csent: 0, cverified: 0 };
/** Batches remembered for a retried call, this long. */
const BATCH_MEMORY_MS = 3_600_000;

export type { GuardEvent, GuardView, Scope, ScopeStatus, Transition } from "./events";

/** The Korean calendar day of `now` (days since the epoch, KST) and when it ends. */
export function kstDay(now: number): { day: number; ends: number } {
  const start = kstDayStart(now);
  return { day: Math.round((start + KST_MS) / 86_400_000), ends: start + 86_400_000 };
}

export class GuardTables {
  /**
   * Scopes with sends that have not all settled yet: when the next and the last of them settle. Two
   * queues, each in the order of its times, so a pass stops at the first not due: scopes with a
   * first pending send (due when it settles), and scopes judged with later sends pending (due a
   * bucket later).
   */
  private readonly unsettled = new Map<Scope, { first: number; last: number }>();
  private readonly again = new Map<Scope, { first: number; last: number }>();
  /** Each scope's state row (ended ones kept for their strikes), as the table holds them. */
  private readonly stateRows = new Map<Scope, ScopeStatus>();
  /** The last settled bucket each scope was judged at: judged again only once another has settled. */
  private readonly judged = new Map<Scope, number>();
  /** The Korean day's sends as the table holds them, and the budget last given. */
  private today = { day: -1, sent: 0 };
  private budget: number | null = null;
  private prunedAt = 0;
  /** Whether the queues hold every send not yet judged (rebuilt from the counts after a restart). */
  private restored = false;
  /**
   * Each scope's sends and verifications in buckets not yet settled, as this object recorded them
   * (memory: after a restart the settled judgement still comes): the codes outstanding.
   */
  private readonly outstanding = new Map<Scope, Map<number, { sent: number; verified: number }>>();
  /** The app's codes typed within the settle time, by how long after the send (`TYPING_SLOT_MS` slots). */
  private typing: number[] = [];
  private curve: number[] | null = null;
  /** Whether `curve` must be made again from `typing` (at the start, and after codes were typed). */
  private curveStale = true;
  /**
   * The app held suspect by a surge (table `surge`, so a restarted object still decides it): when
   * its codes have settled, to be decided, and its state before the surge.
   */
  private surge: { decideAt: number; until: number; before: StateRow | null } | null = null;
  /** After a surge whose codes were typed: a crowd, not judged as a surge again before this. */
  private crowdUntil = 0;
  /**
   * Whether this is the service-wide object (`~net`, its events name their app): its scope `app`
   * is the service's, judged only by a surge spread over the apps (`AppSpread`).
   */
  private service = false;
  private readonly spread = new AppSpread();
  /** `typedSince`'s figure, and the first bucket it counts from. */
  private recentTyped: { from: number; n: number } | null = null;

  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
  ) {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS counts (
      scope TEXT NOT NULL, bucket INTEGER NOT NULL,
      sent INTEGER NOT NULL DEFAULT 0, verified INTEGER NOT NULL DEFAULT 0,
      csent INTEGER NOT NULL DEFAULT 0, cverified INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (scope, bucket)) WITHOUT ROWID`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS states (
      scope TEXT PRIMARY KEY, state TEXT NOT NULL, since INTEGER NOT NULL, until INTEGER NOT NULL,
      strikes INTEGER NOT NULL) WITHOUT ROWID`);
    // the codes a slowed scope was given, when: its sliding window's allowance (`slow`, counts per
    // fixed window, is not used: dropped where an object has it)
    this.sql.exec("DROP TABLE IF EXISTS slow");
    this.sql.exec(`CREATE TABLE IF NOT EXISTS slow_log (scope TEXT NOT NULL, at INTEGER NOT NULL)`);
    this.sql.exec("CREATE INDEX IF NOT EXISTS slow_log_scope ON slow_log (scope, at)");
    this.sql.exec(`CREATE TABLE IF NOT EXISTS days (day INTEGER PRIMARY KEY, sent INTEGER NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS batches (id TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS typing (slot INTEGER PRIMARY KEY, n INTEGER NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS surge (
      id INTEGER PRIMARY KEY CHECK (id = 1), decide_at INTEGER NOT NULL, until INTEGER NOT NULL, before TEXT)`);
    for (const r of this.sql.exec<{ slot: number; n: number }>("SELECT slot, n FROM typing")) this.typing[r.slot] = r.n;
    for (const r of this.sql.exec<{ decide_at: number; until: number; before: string | null }>(
      "SELECT decide_at, until, before FROM surge",
    ))
      this.surge = {
        decideAt: r.decide_at,
        until: r.until,
        before: r.before ? (JSON.parse(r.before) as StateRow) : null,
      };
    this.crowdUntil =
      this.sql.exec<{ value: number | null }>("SELECT value FROM meta WHERE name = 'crowd_until'").toArray()[0]
        ?.value ?? 0;
    this.service =
      this.sql.exec<{ value: number | null }>("SELECT value FROM meta WHERE name = 'service'").toArray()[0]?.value ===
      1;
    for (const r of this.sql.exec<{ scope: string; state: GuardState; since: number; until: number; strikes: number }>(
      "SELECT scope, state, since, until, strikes FROM states",
    ))
      this.stateRows.set(r.scope, { ...r });
    this.budget =
      this.sql.exec<{ value: number | null }>("SELECT value FROM meta WHERE name = 'budget'").toArray()[0]?.value ??
      null;
  }

  /** The app's scopes beyond normal at `now`, and its day's sends against its budget. */
  view(now: number, rules: GuardRules): { view: GuardView; transitions: Transition[] } {
    // sends that have settled since they were recorded are judged now (no later send may come)
    const transitions: Transition[] = [];
    this.restore(rules);
    this.judgeSettled(now, rules, transitions);
    return { view: this.viewAt(now), transitions };
  }

  /**
   * The queues of sends not yet judged are memory: an object that went idle and was evicted starts
   * without them. They are rebuilt from the stored counts at the first call after a start: every
   * scope with a send in a bucket that had not settled at the last judgement (its time is stored
   * with each), so a send is judged however the traffic is paced (a burst, a pause longer than the
   * object lives, another burst). Judging a scope again is harmless: its sums decide.
   */
  private restore(rules: GuardRules): void {
    if (this.restored) return;
    this.restored = true;
    const last =
      this.sql.exec<{ value: number | null }>("SELECT value FROM meta WHERE name = 'judged_at'").toArray()[0]?.value ??
      0;
    // a bucket's sends settle at (bucket + 1) × BUCKET_MS + settleMs: those after `last` were pending
    const from = Math.floor((last - rules.settleMs) / BUCKET_MS);
    for (const r of this.sql.exec<{ scope: string; lo: number; hi: number }>(
      "SELECT scope, min(bucket) AS lo, max(bucket) AS hi FROM counts WHERE bucket >= ? AND sent > 0 GROUP BY scope ORDER BY lo",
      from,
    )) {
      const first = (r.lo + 1) * BUCKET_MS + rules.settleMs;
      this.unsettled.set(r.scope, { first, last: (r.hi + 1) * BUCKET_MS + rules.settleMs });
    }
  }

  /**
   * Judges the scopes whose pending sends have settled: a send changes a scope's judgement only once
   * it is old enough to count, so each scope is judged then, not at every send. In the order their
   * first pending send was recorded, which is (nearly) the order they settle.
   */
  private judgeSettled(now: number, rules: GuardRules, out: Transition[]): void {
    this.decideSurge(now, rules, out);
    const due: Scope[] = [];
    const later: [Scope, number][] = [];
    for (const queue of [this.unsettled, this.again])
      for (const [scope, settles] of queue) {
        if (settles.first > now) break;
        queue.delete(scope);
        due.push(scope);
        if (settles.last > now) later.push([scope, settles.last]);
      }
    // its later sends settle bucket by bucket: judged again when the next bucket has (or the last)
    const next = (Math.floor((now - rules.settleMs) / BUCKET_MS) + 1) * BUCKET_MS + rules.settleMs;
    for (const [scope, last] of later) this.again.set(scope, { first: Math.min(last, next), last });
    // the sums of the scopes with no state, a statement for many: most scopes never had one
    const plain = due.filter((scope) => !this.stateRows.has(scope));
    const sums = new Map<Scope, Sums>();
    const from = Math.floor((now - rules.windowMs) / BUCKET_MS);
    const to = Math.floor((now - rules.settleMs) / BUCKET_MS);
    for (let i = 0; i < plain.length; i += SCOPES_PER_STATEMENT) {
      const part = plain.slice(i, i + SCOPES_PER_STATEMENT);
      for (const r of this.sql.exec<{
        scope: string;
        sent: number;
        verified: number;
        csent: number;
        cverified: number;
      }>(
        `SELECT scope, sum(sent) AS sent, sum(verified) AS verified, sum(csent) AS csent, sum(cverified) AS cverified
         FROM counts WHERE scope IN (${part.map(() => "?").join(", ")}) AND bucket >= ? AND bucket < ? GROUP BY scope`,
        ...part,
        from,
        to,
      ))
        sums.set(r.scope, { sent: r.sent, verified: r.verified, csent: r.csent, cverified: r.cverified });
    }
    for (const scope of due)
      this.judgeScope(scope, now, rules, out, this.stateRows.has(scope) ? undefined : (sums.get(scope) ?? ZERO));
    // when this judgement was: a restart rebuilds the queues from the sends that settle after it
    if (due.length > 0) this.sql.exec("INSERT OR REPLACE INTO meta (name, value) VALUES ('judged_at', ?)", now);
  }

  /**
   * Judges by their codes outstanding the scopes a batch sent codes in (`judgeOutstanding`): a
   * burst of untyped codes is judged within seconds, not once its first bucket settles. Memory
   * only, and a store read only for a scope whose weighted outstanding sends reach its volume.
   */
  private judgeBursts(
    rows: readonly [Scope, number, number, number, number, number][],
    now: number,
    rules: GuardRules,
    out: Transition[],
  ): void {
    if (rules.settleMs < BUCKET_MS) return;
    if (this.curveStale) {
      const slots = Math.ceil(rules.settleMs / TYPING_SLOT_MS);
      this.curve = typingCurve(Array.from({ length: slots }, (_, i) => this.typing[i] ?? 0));
      this.curveStale = false;
    }
    const settledBelow = Math.floor((now - rules.settleMs) / BUCKET_MS);
    const touched = new Set<Scope>();
    for (const [scope, bucket, sent, verified] of rows) {
      if (bucket < settledBelow) continue;
      let buckets = this.outstanding.get(scope);
      if (!buckets) this.outstanding.set(scope, (buckets = new Map()));
      const b = buckets.get(bucket) ?? { sent: 0, verified: 0 };
      b.sent += sent;
      b.verified += verified;
      buckets.set(bucket, b);
      if (sent > 0) touched.add(scope);
    }
    for (const scope of touched) {
      const buckets = this.outstanding.get(scope)!;
      for (const bucket of buckets.keys()) if (bucket < settledBelow) buckets.delete(bucket);
      const cur = this.stateRows.get(scope) ?? null;
      if (cur && cur.until > now) continue;
      const kind = kindOf(scope);
      if (kind === "app" && this.surging(buckets, now, rules)) {
        // held until a bucket after the decision, so no copy of the view lapses before it
        const until = now + rules.settleMs + 2 * BUCKET_MS;
        this.surge = { decideAt: now + rules.settleMs + BUCKET_MS, until, before: cur };
        this.sql.exec(
          "INSERT OR REPLACE INTO surge (id, decide_at, until, before) VALUES (1, ?, ?, ?)",
          this.surge.decideAt,
          until,
          cur ? JSON.stringify({ state: cur.state, since: cur.since, until: cur.until, strikes: cur.strikes }) : null,
        );
        this.enter(scope, kind, { state: "suspect", since: now, until, strikes: 0 }, out);
        continue;
      }
      // the service's own scope is judged by a spread surge alone
      if (kind === "app" && this.service) continue;
      const list = [...buckets].map(([bucket, c]) => ({ ageMs: now - (bucket + 0.5) * BUCKET_MS, ...c }));
      // nothing to read unless the outstanding sends alone could reach the volume
      const weighted = list.reduce((n, o) => n + o.sent * typedShare(o.ageMs, rules, this.curve), 0);
      const typed = list.reduce((n, o) => n + o.verified, 0);
      if (weighted < 1 || typed >= weighted * rules.minConversion) continue;
      const settled = this.sums(scope, now, rules, cur ? cur.until : 0);
      const next = judgeOutstanding(kind, settled, list, cur, now, rules, this.curve);
      if (next) this.enter(scope, kind, next, out);
    }
    for (const [scope, buckets] of this.outstanding) if (buckets.size === 0) this.outstanding.delete(scope);
  }

  /**
   * Whether the app's codes outstanding make a surge (`isSurge`): read from memory, and the codes
   * its people typed of late from the store only when the untyped ones alone reach the threshold.
   */
  private surging(buckets: Map<number, { sent: number; verified: number }>, now: number, rules: GuardRules): boolean {
    if (rules.surgeCodes === 0 || now < this.crowdUntil) return false;
    let untyped = 0;
    for (const b of buckets.values()) untyped += Math.max(0, b.sent - b.verified);
    if (untyped < rules.surgeCodes) return false;
    // the service's: at a pace (tables/spread.ts), then, the cheap checks passed, spread over the apps
    if (this.service && this.spread.paced(now) < rules.surgeCodes) return false;
    if (!isSurge(untyped, this.typedSince(now), rules)) return false;
    return !this.service || this.spread.spread(Math.floor((now - rules.settleMs) / BUCKET_MS));
  }

  /**
   * The codes of the app (for `~net`, the service) typed of late, of sends since SURGE_RECENT_MS
   * ago by the bucket: read once a bucket, then kept up by the verifications recorded, so a busy
   * object whose untyped codes always pass the threshold reads the store once per bucket, not per
   * call.
   */
  private typedSince(now: number): number {
    const from = Math.floor((now - SURGE_RECENT_MS) / BUCKET_MS);
    if (this.recentTyped?.from !== from)
      this.recentTyped = {
        from,
        n: this.sql
          .exec<{ n: number }>(
            "SELECT coalesce(sum(verified), 0) AS n FROM counts WHERE scope = 'app' AND bucket >= ?",
            from,
          )
          .one().n,
      };
    return this.recentTyped.n;
  }

  /**
   * Decides a surge once its codes have settled: untyped, the app is judged as any scope (suspect,
   * its strikes counted from its state before the surge); typed, its state ends now and the crowd is
   * not judged as a surge again within the window.
   */
  private decideSurge(now: number, rules: GuardRules, out: Transition[]): void {
    const surge = this.surge;
    if (!surge || surge.decideAt > now) return;
    this.surge = null;
    this.sql.exec("DELETE FROM surge");
    const cur = this.stateRows.get("app");
    // still the surge's state (an editor's clear ends it, a later judgement replaces it), decided
    // however late the call that decides it comes
    if (!cur || cur.strikes !== 0 || cur.until !== surge.until) return;
    // the surge's codes: sent up to a settle time and a bucket before it was judged
    const sums = this.sums("app", now, rules, cur.since - rules.settleMs - BUCKET_MS);
    this.judged.set("app", Math.floor((now - rules.settleMs) / BUCKET_MS));
    const judged = judge("app", sums, surge.before, now, rules);
    // the service is never slowed (its one allowance would be every app's people's): suspect at most
    const next = judged && this.service ? { ...judged, state: "suspect" as const } : judged;
    if (next) {
      // codes that followed a passed challenge went untyped meanwhile: it stays slowed
      this.enter("app", "app", cur.state === "slowed" ? { ...next, state: "slowed" } : next, out);
      return;
    }
    this.crowdUntil = now + rules.windowMs;
    this.sql.exec("INSERT OR REPLACE INTO meta (name, value) VALUES ('crowd_until', ?)", this.crowdUntil);
    const ended = { state: cur.state, since: cur.since, until: now, strikes: surge.before?.strikes ?? 0 };
    this.enter("app", "app", ended, []);
    out.push({ kind: "app", state: "cleared", strikes: ended.strikes, scope: "app", since: cur.since, until: now });
  }

  /** Every scope's state that has not ended, for the console. */
  states(now: number): ScopeStatus[] {
    return this.viewAt(now).states;
  }

  private viewAt(now: number): GuardView {
    const states = [...this.stateRows.values()].filter((r) => r.until > now);
    const { day, ends } = kstDay(now);
    const sentToday = this.sentOn(day);
    return { states, sentToday, dayEnds: ends, paused: this.budget !== null && sentToday >= this.budget };
  }

  private sentOn(day: number): number {
    if (this.today.day !== day)
      this.today = {
        day,
        sent: this.sql.exec<{ sent: number }>("SELECT sent FROM days WHERE day = ?", day).toArray()[0]?.sent ?? 0,
      };
    return this.today.sent;
  }

  /**
   * Adds a batch of sends and verifications once (`batch` names it: a retried call adds nothing
   * twice), with the app's daily budget as it is now (null: none), and judges the scopes it
   * touched. Answers the changes of state, for the audit trail, and the view after them.
   */
  record(
    batch: string,
    events: GuardEvent[],
    budget: number | null,
    now: number,
    rules: GuardRules,
  ): { applied: boolean; transitions: Transition[]; view: GuardView } {
    const transitions: Transition[] = [];
    // a scope that is none refuses the batch before anything changes: the loop below also changes
    // this object's memory (the spread, the recent typing, the queues), which a rollback would not undo
    for (const e of events) for (const scope of e.scopes) kindOf(scope);
    this.restore(rules);
    const applied = this.storage.transactionSync(() => {
      const fresh = this.sql.exec("INSERT INTO batches (id, at) VALUES (?, ?) ON CONFLICT DO NOTHING", batch, now);
      if (fresh.rowsWritten === 0) return false;
      if (budget !== this.budget) {
        this.sql.exec("INSERT OR REPLACE INTO meta (name, value) VALUES ('budget', ?)", budget);
        this.budget = budget;
      }
      // the batch's counts summed per scope and bucket, then written a few rows a statement
      const rows = new Map<string, [Scope, number, number, number, number, number]>();
      const days = new Map<number, number>();
      const typed = new Map<number, number>();
      for (const e of events) {
        const bucket = Math.floor(e.sentAt / BUCKET_MS);
        const sent = e.kind === "sent" ? 1 : 0;
        const c = e.challenged ? 1 : 0;
        if (e.app !== undefined) {
          if (!this.service) {
            this.service = true;
            this.sql.exec("INSERT OR REPLACE INTO meta (name, value) VALUES ('service', 1)");
          }
          this.spread.add(e.app, bucket, sent, 1 - sent, e.sentAt);
        }
        if (!sent && this.recentTyped && bucket >= this.recentTyped.from && e.scopes.includes("app"))
          this.recentTyped.n++;
        for (const scope of e.scopes) {
          const key = `${bucket} ${scope}`;
          const r = rows.get(key) ?? [scope, bucket, 0, 0, 0, 0];
          r[2] += sent;
          r[3] += 1 - sent;
          r[4] += sent * c;
          r[5] += (1 - sent) * c;
          rows.set(key, r);
          // judged once the send has settled (a verification only raises a conversion)
          if (sent) {
            const settles = (bucket + 1) * BUCKET_MS + rules.settleMs;
            const u = this.again.get(scope) ?? this.unsettled.get(scope);
            if (!u) this.unsettled.set(scope, { first: settles, last: settles });
            else u.last = Math.max(u.last, settles);
          }
        }
        if (sent) {
          const { day } = kstDay(e.sentAt);
          days.set(day, (days.get(day) ?? 0) + 1);
        } else if (now - e.sentAt < rules.settleMs && now >= e.sentAt) {
          // how long after its send a code was typed: the app's typing curve
          const slot = Math.floor((now - e.sentAt) / TYPING_SLOT_MS);
          typed.set(slot, (typed.get(slot) ?? 0) + 1);
        }
      }
      const all = [...rows.values()];
      for (let i = 0; i < all.length; i += ROWS_PER_STATEMENT) {
        const part = all.slice(i, i + ROWS_PER_STATEMENT);
        this.sql.exec(
          `INSERT INTO counts (scope, bucket, sent, verified, csent, cverified) VALUES ${part.map(() => "(?, ?, ?, ?, ?, ?)").join(", ")}
           ON CONFLICT (scope, bucket) DO UPDATE SET sent = sent + excluded.sent, verified = verified + excluded.verified,
             csent = csent + excluded.csent, cverified = cverified + excluded.cverified`,
          ...part.flat(),
        );
      }
      for (const [day, n] of days) {
        this.sql.exec(
          "INSERT INTO days (day, sent) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET sent = sent + excluded.sent",
          day,
          n,
        );
        if (this.today.day === day) this.today.sent += n;
      }
      for (const [slot, n] of typed) {
        this.sql.exec(
          "INSERT INTO typing (slot, n) VALUES (?, ?) ON CONFLICT (slot) DO UPDATE SET n = n + excluded.n",
          slot,
          n,
        );
        this.typing[slot] = (this.typing[slot] ?? 0) + n;
      }
      if (typed.size > 0) this.curveStale = true;
      this.judgeSettled(now, rules, transitions);
      this.judgeBursts(all, now, rules, transitions);
      return true;
    });
    if (applied) this.prune(now, rules);
    return { applied, transitions, view: this.viewAt(now) };
  }

  /** The settled sums of a scope at `now`: sends old enough to judge, since its last state ended. */
  sums(scope: Scope, now: number, rules: GuardRules, after = 0): Sums {
    const from = Math.max(Math.floor((now - rules.windowMs) / BUCKET_MS), Math.ceil(after / BUCKET_MS));
    const to = Math.floor((now - rules.settleMs) / BUCKET_MS); // buckets wholly settled: below `to`
    const r = this.sql
      .exec<{ sent: number; verified: number; csent: number; cverified: number }>(
        `SELECT coalesce(sum(sent),0) AS sent, coalesce(sum(verified),0) AS verified,
                coalesce(sum(csent),0) AS csent, coalesce(sum(cverified),0) AS cverified
         FROM counts WHERE scope = ? AND bucket >= ? AND bucket < ?`,
        scope,
        from,
        to,
      )
      .one();
    return { sent: r.sent, verified: r.verified, csent: r.csent, cverified: r.cverified };
  }

  /** A scope's counts over the window, settled or not (the console's figures). */
  totals(scope: Scope, now: number, rules: GuardRules): Sums {
    return this.sums(scope, now + rules.settleMs + BUCKET_MS, {
      ...rules,
      windowMs: rules.windowMs + rules.settleMs + BUCKET_MS,
    });
  }

  private judgeScope(scope: Scope, now: number, rules: GuardRules, out: Transition[], given?: Sums): void {
    // judged once per settled bucket: until another bucket settles, the sums cannot have changed
    const settled = Math.floor((now - rules.settleMs) / BUCKET_MS);
    if (this.judged.get(scope) === settled) return;
    this.judged.set(scope, settled);
    const cur = this.stateRows.get(scope) ?? null;
    // the service's own scope is judged by a spread surge alone, and never slowed: its allowance
    // would be every app's people's
    if (this.service && scope === "app") return;
    // a state that ended counts only what was sent after it; an active one judges its challenged sends
    const after = cur && cur.until <= now ? cur.until : cur ? cur.since : 0;
    const kind = kindOf(scope);
    const next = judge(kind, given ?? this.sums(scope, now, rules, after), cur, now, rules);
    if (next) this.enter(scope, kind, next, out);
  }

  /** A scope enters its next state: stored, kept in memory, and reported as a transition. */
  private enter(scope: Scope, kind: ScopeKind, next: StateRow, out: Transition[]): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO states (scope, state, since, until, strikes) VALUES (?, ?, ?, ?, ?)",
      scope,
      next.state,
      next.since,
      next.until,
      next.strikes,
    );
    this.stateRows.set(scope, { scope, ...next });
    out.push({ kind, state: next.state, strikes: next.strikes, scope, since: next.since, until: next.until });
  }

  /** One code for a sign-in in slowed scopes, from their allowances (`takeSlowCode`). */
  take(
    scopes: Scope[],
    block: Scope | null,
    now: number,
    rules: GuardRules,
  ): { ok: true } | { ok: false; until: number } {
    return takeSlowCode(this.sql, this.storage, (b) => this.sums(b, now, rules), scopes, block, now, rules);
  }

  /** Ends a scope's state now (an editor's decision), and its strikes. Null when it had none. */
  clear(scope: Scope, now: number): Transition | null {
    const cur = this.stateRows.get(scope);
    if (!cur || cur.until <= now) return null;
    // an editor's clear is a judgement that the state was wrong: its strikes are forgotten too
    this.sql.exec("UPDATE states SET until = ?, strikes = 0 WHERE scope = ?", now, scope);
    this.sql.exec("DELETE FROM slow_log WHERE scope = ?", scope);
    this.stateRows.set(scope, { ...cur, until: now, strikes: 0 });
    this.judged.delete(scope);
    return { kind: kindOf(scope), state: "cleared", strikes: cur.strikes, scope, since: cur.since, until: now };
  }

  /** Counts older than the window, ended states past their strike memory, old days and batches. */
  private prune(now: number, rules: GuardRules): void {
    if (now - this.prunedAt < 60_000 && now >= this.prunedAt) return;
    this.prunedAt = now;
    this.judged.clear();
    this.sql.exec("DELETE FROM counts WHERE bucket < ?", Math.floor((now - rules.windowMs) / BUCKET_MS));
    this.sql.exec("DELETE FROM states WHERE until < ?", now - rules.strikeMemoryMs);
    for (const [scope, r] of this.stateRows) if (r.until < now - rules.strikeMemoryMs) this.stateRows.delete(scope);
    this.sql.exec("DELETE FROM slow_log WHERE at <= ?", now - rules.slowWindowMs);
    this.sql.exec("DELETE FROM days WHERE day < ?", kstDay(now).day - 7);
    this.sql.exec("DELETE FROM batches WHERE at < ?", now - BATCH_MEMORY_MS);
    const settledBelow = Math.floor((now - rules.settleMs) / BUCKET_MS);
    this.spread.prune(settledBelow, now);
    for (const [scope, buckets] of this.outstanding) {
      for (const bucket of buckets.keys()) if (bucket < settledBelow) buckets.delete(bucket);
      if (buckets.size === 0) this.outstanding.delete(scope);
    }
  }
}
