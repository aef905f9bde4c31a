// The guard's list across apps (docs/abuse.md "Audit and metrics"): in one object, `~index`, every
// app's scopes beyond normal as their objects last reported them, so the console can show an
// operator where the guard holds back codes without asking every app's object.

import type { GuardState, ScopeStatus } from "./scopes";

/** A scope beyond normal, of an app. */
export interface AppScope extends ScopeStatus {
  app: string;
}

export class GuardIndex {
  constructor(private readonly sql: SqlStorage) {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS app_states (
      app TEXT NOT NULL, scope TEXT NOT NULL, state TEXT NOT NULL, since INTEGER NOT NULL,
      until INTEGER NOT NULL, strikes INTEGER NOT NULL, PRIMARY KEY (app, scope)) WITHOUT ROWID`);
  }

  /** An app's changes of state: a scope beyond normal until `until` (a cleared one ends now). */
  note(
    app: string,
    changes: { scope: string; state: GuardState | "cleared"; since: number; until: number; strikes: number }[],
    now: number,
  ): void {
    for (const c of changes) {
      if (c.state === "cleared" || c.until <= now)
        this.sql.exec("DELETE FROM app_states WHERE app = ? AND scope = ?", app, c.scope);
      else
        this.sql.exec(
          "INSERT OR REPLACE INTO app_states (app, scope, state, since, until, strikes) VALUES (?, ?, ?, ?, ?, ?)",
          app,
          c.scope,
          c.state,
          c.since,
          c.until,
          c.strikes,
        );
    }
    this.sql.exec("DELETE FROM app_states WHERE until <= ?", now);
  }

  /** The scopes beyond normal at `now`, the latest first, at most `limit`. */
  list(now: number, limit: number): AppScope[] {
    return this.sql
      .exec<{ app: string; scope: string; state: GuardState; since: number; until: number; strikes: number }>(
        "SELECT app, scope, state, since, until, strikes FROM app_states WHERE until > ? ORDER BY since DESC LIMIT ?",
        now,
        limit,
      )
      .toArray()
      .map((r) => ({ ...r }));
  }
}
