// The guard store (docs/storage.md "Durable Object GuardStore"): one object per app (and one for the
// service's own pages), holding the counts of codes sent and verified for the app and for every
// network block, ASN, country and number prefix its sign-ins came from, the states of those scopes,
// the slowed scopes' code counts, and the app's SMS sent per Korean day (tables/scopes.ts).
// Co-located counters: a send or a verification is one call and one atomic step for all the scopes
// it concerns, so each scope's counts are exact in its object. The sign-ins read the states through
// a per-isolate copy (signin/guard.ts) and write counts after their answer.

import { DurableObject } from "cloudflare:workers";
import type { GuardRules, Sums } from "./rules";
import { GuardIndex, type AppScope } from "./tables/index";
import {
  GuardTables,
  type GuardEvent,
  type GuardView,
  type Scope,
  type ScopeStatus,
  type Transition,
} from "./tables/scopes";

export type { GuardRules, GuardState, ScopeKind, Sums } from "./rules";
export { BUCKET_MS, kindOf, kstDay } from "./tables/scopes";
export type { GuardEvent, GuardView, Scope, ScopeStatus, Transition } from "./tables/scopes";
export type { AppScope } from "./tables/index";

export class GuardStore extends DurableObject {
  private readonly tables: GuardTables;

  private index: GuardIndex | undefined;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    this.tables = new GuardTables(ctx.storage.sql, ctx.storage);
  }

  /** The list across apps (the `~index` object only). */
  private indexTables(): GuardIndex {
    return (this.index ??= new GuardIndex(this.ctx.storage.sql));
  }

  /** `~index`: an app's changes of state, as its object reported them. */
  indexNote(app: string, changes: Transition[], now: number): void {
    this.indexTables().note(app, changes, now);
  }

  /** `~index`: every app's scopes beyond normal now, the latest first. */
  indexList(now: number, limit: number): AppScope[] {
    return this.indexTables().list(now, limit);
  }

  /** The app's scopes beyond normal at `now` (settled sends judged first), and its day's sends. */
  view(now: number, rules: GuardRules): { view: GuardView; transitions: Transition[] } {
    return this.tables.view(now, rules);
  }

  /** Adds a batch of sends and verifications once, judging the scopes it touched. */
  record(batch: string, events: GuardEvent[], budget: number | null, now: number, rules: GuardRules) {
    return this.tables.record(batch, events, budget, now, rules);
  }

  /** One code for a sign-in in slowed scopes (from `block`), or when they all have one again. */
  take(
    scopes: Scope[],
    block: Scope | null,
    now: number,
    rules: GuardRules,
  ): { ok: true } | { ok: false; until: number } {
    return this.tables.take(scopes, block, now, rules);
  }

  /** Ends a scope's state now (an editor's decision). */
  clear(scope: Scope, now: number): Transition | null {
    return this.tables.clear(scope, now);
  }

  /** A scope's codes sent and verified over the window, settled or not. */
  totals(scope: Scope, now: number, rules: GuardRules): Sums {
    return this.tables.totals(scope, now, rules);
  }

  /** Every scope's state that has not ended, each with its counts over the window: one call. */
  statesWithTotals(now: number, rules: GuardRules): (ScopeStatus & Sums)[] {
    return this.tables.states(now).map((s) => ({ ...s, ...this.tables.totals(s.scope, now, rules) }));
  }

  /** Every scope's state that has not ended. */
  states(now: number): ScopeStatus[] {
    return this.tables.states(now);
  }
}
