// The SMS-abuse guard's scopes of an app (docs/abuse.md, docs/operations.md "The guard"): those
// suspect or slowed now, with their counts over the window, and an editor's clear, audited with who.

import { E } from "../core/errors";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { getClient } from "../provider/store/clients";
import { guardRules, guardIndex, guardStore, type ScopeStatus } from "../provider/store/guard/index";
import { auditBy } from "./access";
import { adminConfig, type AdminEnv } from "./config";
import { onlyFields, readJsonObject } from "./steps";

/** A scope as the store names it: `app`, or a kind and its value (at most 64 characters). */
const SCOPE = /^(app|(prefix|block|asn|country):[0-9A-Za-z.:/-]{1,64})$/;

/** A scope's state as the API shows it. */
function scopeView(s: ScopeStatus) {
  return {
    scope: s.scope,
    kind: s.scope.split(":", 1)[0],
    state: s.state,
    since: new Date(s.since).toISOString(),
    until: new Date(s.until).toISOString(),
    strikes: s.strikes,
  };
}

async function appOf(env: AdminEnv, rc: RequestContext): Promise<string> {
  const c = await getClient(env, rc.params.id!);
  if (!c) throw E.noSuch("client");
  rc.log.clientId = c.clientId;
  return c.clientId;
}

/** GET /admin/clients/:id/guard: the app's scopes beyond normal now, with their counts over the window. */
export async function guardScopes(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const clientId = await appOf(env, rc);
  // the states and their counts in one call to the app's object, however many scopes an attack made
  const states = await guardStore(env, clientId).statesWithTotals(Date.now(), guardRules(env));
  const scopes = states.map((s) => ({ ...scopeView(s), sent: s.sent, verified: s.verified }));
  return json({ client_id: clientId, scopes });
}

/** POST /admin/clients/:id/guard/clear {"scope"}: ends the scope's state now (an editor's decision). */
export async function clearGuardScope(req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const clientId = await appOf(env, rc);
  const body = await readJsonObject(req, adminConfig(env).maxBodyBytes);
  onlyFields(body, ["scope"]);
  const scope = body.scope;
  if (typeof scope !== "string" || !SCOPE.test(scope))
    throw E.invalidBecause("scope", "must be a scope the guard names, such as block:203.0.113.0/24 or app");
  const t = await guardStore(env, clientId).clear(scope, Date.now());
  if (!t) throw E.noSuch("suspect scope");
  await auditBy(env, rc, "guard.state", clientId, "ok", { kind: t.kind, state: t.state, strikes: t.strikes });
  await guardIndex(env).indexNote(clientId, [t], Date.now());
  return json({ client_id: clientId, scope, cleared: true });
}

/** GET /admin/guard: every app's scopes the guard holds suspect or slowed now, the latest first (at most 200). */
export async function guardAcrossApps(_req: Request, env: AdminEnv): Promise<Response> {
  const scopes = await guardIndex(env).indexList(Date.now(), 200);
  return json({
    scopes: scopes.map((s) => ({ client_id: s.app, ...scopeView(s) })),
  });
}
