// The guard store's events, views and changes of state, as its callers see them (the tables are
// scopes.ts's).

import type { GuardState, ScopeKind } from "../rules";

/** A scope inside an app's object: its kind and value, e.g. `block:203.0.113.0/24`, or `app`. */
export type Scope = string;

/** Codes sent, or verified (credited to the bucket of the send they answer), for some scopes. */
export interface GuardEvent {
  kind: "sent" | "verified";
  scopes: Scope[];
  /** When the code was sent (the bucket it counts in). */
  sentAt: number;
  /** Sent after a passed challenge. */
  challenged: boolean;
  /** The app it was for, on the events counted again service-wide (`~net`) only. */
  app?: string;
}

export interface ScopeStatus {
  scope: Scope;
  state: GuardState;
  since: number;
  until: number;
  strikes: number;
}

/** What the sign-ins cache of an app: its scopes beyond normal, and whether its SMS are paused. */
export interface GuardView {
  states: ScopeStatus[];
  /** Today's SMS sent (Korean day) and when that day ends. */
  sentToday: number;
  dayEnds: number;
  /** The daily budget reached: no code is sent until `dayEnds`. */
  paused: boolean;
}

/** A scope's change of state, for the audit trail (which records its kind and state only). */
export interface Transition {
  kind: ScopeKind;
  state: GuardState | "cleared";
  strikes: number;
  /** The scope itself and when its state ends (for the list across apps; never audited). */
  scope: Scope;
  since: number;
  until: number;
}
