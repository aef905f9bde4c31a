// The SMS-abuse guard's scopes of an app (docs/abuse.md, docs/operations.md "The guard"): those
// suspect or slowed now, with their counts over the window, and an editor's clear, audited with who.
// A prefix or a block names a few people's numbers or addresses: an editor and above see those
// scopes; a viewer is told how many of each kind and state there are (`withheld`), not which.

import { E } from "../core/errors";
import { getClient } from "../provider/store/clients";
import {
  guardRules,
  guardIndex,
  guardNet,
  guardStore,
  kindOf,
  NET_SCOPE,
  type ScopeStatus,
} from "../provider/store/guard/index";
import { roleCovers } from "../provider/store/operators";
import { auditBy, service, type Caller } from "./access";
import type { AdminEnv } from "./config";

/** A scope as the store names it: `app`, or a kind and its value (at most 64 characters). */
const SCOPE = /^(app|(prefix|block|asn|country):[0-9A-Za-z.:/-]{1,64})$/;

/** A scope's state as the API shows it. */
export interface ScopeView {
  scope: string;
  kind: string;
  state: ScopeStatus["state"];
  since: string;
  until: string;
  strikes: number;
}

function scopeView(s: ScopeStatus): ScopeView {
  return {
    scope: s.scope,
    kind: kindOf(s.scope),
    state: s.state,
    since: new Date(s.since).toISOString(),
    until: new Date(s.until).toISOString(),
    strikes: s.strikes,
  };
}

/** The kinds of scope whose value is near personal data: a number's prefix, an address's block. */
const PERSONAL_KINDS: ReadonlySet<string> = new Set(["prefix", "block"]);

/** How many scopes of a kind and state the caller's role does not show. */
export interface Withheld {
  kind: string;
  state: ScopeStatus["state"];
  count: number;
}

/**
 * `rows` as the caller may see them: all for an editor and above; for a viewer, those of a prefix
 * or a block counted by `group` (kind and state, and the app across apps) instead of listed.
 */
function forRole<T extends { kind: string; state: ScopeStatus["state"] }, G extends object>(
  { actor }: Caller,
  rows: T[],
  group: (r: T) => G,
): { scopes: T[]; withheld: (G & Withheld)[] } {
  if (roleCovers(actor.role, "editor")) return { scopes: rows, withheld: [] };
  const withheld = new Map<string, G & Withheld>();
  for (const r of rows.filter((r) => PERSONAL_KINDS.has(r.kind))) {
    const g = { ...group(r), kind: r.kind, state: r.state };
    const key = JSON.stringify(g);
    const seen = withheld.get(key);
    if (seen) seen.count++;
    else withheld.set(key, { ...g, count: 1 });
  }
  return { scopes: rows.filter((r) => !PERSONAL_KINDS.has(r.kind)), withheld: [...withheld.values()] };
}

async function appOf(env: AdminEnv, { rc }: Caller, id: string): Promise<string> {
  const c = await getClient(env, id);
  if (!c) throw E.noSuch("client");
  rc.log.clientId = c.clientId;
  return c.clientId;
}

/** An app's scope with its counts over the window. */
export type AppScopeView = ScopeView & { sent: number; verified: number };

/** GET /admin/clients/:id/guard: the app's scopes beyond normal now, with their counts over the window. */
export const guardScopes = service<
  { clientId: string },
  { client_id: string; scopes: AppScopeView[]; withheld: Withheld[] }
>("viewer", "GET", async (env, caller, input) => {
  const clientId = await appOf(env, caller, input.clientId);
  // the states and their counts in one call to the app's object, however many scopes an attack made
  const states = await guardStore(env, clientId).statesWithTotals(Date.now(), guardRules(env));
  const scopes = states.map((s) => ({ ...scopeView(s), sent: s.sent, verified: s.verified }));
  return { client_id: clientId, ...forRole(caller, scopes, () => ({})) };
});

/** POST /admin/clients/:id/guard/clear {"scope"}: ends the scope's state now (an editor's decision). */
export const clearGuardScope = service<
  { clientId: string; scope: unknown },
  { client_id: string; scope: string; cleared: true }
>("editor", "POST", async (env, caller, input) => {
  const clientId = await appOf(env, caller, input.clientId);
  const scope = input.scope;
  if (typeof scope !== "string" || !SCOPE.test(scope))
    throw E.invalidBecause("scope", "must be a scope the guard names, such as block:203.0.113.0/24 or app");
  // a block or an ASN judged wrong is cleared in the service-wide history too (`~net`), which the
  // app's sign-ins also read: else the app's people would still be held by it; so is the app
  // itself, held by a surge spread over every app (the service's own `app` there)
  const net = kindOf(scope) === "block" || kindOf(scope) === "asn" || scope === "app";
  const [mine, wide] = await Promise.all([
    guardStore(env, clientId).clear(scope, Date.now()),
    net ? guardNet(env).clear(scope, Date.now()) : null,
  ]);
  const t = mine ?? wide;
  if (!t) throw E.noSuch("suspect scope");
  await auditBy(env, caller, "guard.state", clientId, "ok", { kind: t.kind, state: t.state, strikes: t.strikes });
  if (mine) await guardIndex(env).indexNote(clientId, [mine], Date.now());
  if (wide) await guardIndex(env).indexNote(NET_SCOPE, [wide], Date.now());
  return { client_id: clientId, scope, cleared: true };
});

/** GET /admin/guard: every app's scopes the guard holds suspect or slowed now, the latest first (at most 200). */
export const guardAcrossApps = service<
  void,
  { scopes: (ScopeView & { client_id: string })[]; withheld: (Withheld & { client_id: string })[] }
>("viewer", "GET", async (env, caller) => {
  const scopes = await guardIndex(env).indexList(Date.now(), 200);
  const rows = scopes.map((s) => ({ client_id: s.app, ...scopeView(s) }));
  return forRole(caller, rows, (r) => ({ client_id: r.client_id }));
});
