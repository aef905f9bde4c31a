// The SMS-abuse guard at the sign-in (docs/abuse.md): the request's scopes (the number's prefix, the
// network block, its ASN and country, the app), decided from an isolate's copy of the app's states
// and of the service-wide states of blocks and of the service itself (`~net`) before the carrier
// or the directory is asked, and the codes sent and verified written after the answer to the
// app's guard object, and by block and as the service's to `~net`. A normal sign-in waits for at
// most one round of store calls of the guard: the reads of the two copies, together, when this
// isolate's are older than GUARD_CACHE_SECONDS; none when they are fresh.

import { configOf } from "../../core/config";
import { randomToken } from "../../core/crypto";
import type { RequestContext } from "../../core/router";
import {
  guardIndex,
  guardNet,
  guardStore,
  NET_SCOPE,
  SERVICE_SCOPE,
  type GuardEnv,
  type GuardEvent,
  type GuardStore,
  type GuardView,
  type ScopeStatus,
  type Transition,
  type ScopeKind,
} from "../store/guard/index";
import { audit } from "../store/one-time/index";
import type { ProviderEnv } from "../config";
import { addressBits, guardConfig, inCidr, type GuardConfig } from "./guard-config";

type Env = ProviderEnv & GuardEnv;

/** What a sign-in's record keeps of the guard: the scopes its sends count in, and how it got its code. */
export interface GuardMark {
  scopes: string[];
  /** The code followed a passed challenge. */
  challenged: boolean;
  /** When the code was sent, on the guard's clock. */
  sentAt: number;
}

/** The guard's answer for one identify submission. */
export interface Decision {
  scopes: string[];
  now: number;
  /** The kinds of this sign-in's scopes that are suspect or slowed: a challenge before any code. */
  challenge: ScopeKind[];
  /** Its slowed scopes: a code only within their allowance. */
  slowed: string[];
  /** Those of `slowed` slowed service-wide and not in the app: their allowance is `~net`'s. */
  netSlowed: string[];
  /** The app's daily SMS budget is reached: no code until then. */
  pausedUntil: number | null;
}

/** The guard's clock: now, or in DEV_MODE the simulation's (`X-Dev-Clock`, ms since the epoch). */
export function guardNow(req: Request, cfg: GuardConfig): number {
  if (cfg.devMode) {
    const v = req.headers.get("X-Dev-Clock");
    if (v && /^\d{1,15}$/.test(v)) return Number(v);
  }
  return Date.now();
}

/** The number's prefix: all but its last four digits (010-1234 of 010-1234-5678). */
export function prefixOf(phone: string): string {
  const d = phone.replace(/\D/g, "");
  return `${d.slice(0, 3)}-${d.slice(3, Math.max(3, d.length - 4))}`;
}

/** The request's network block (IPv4 /24, IPv6 /48), ASN and country, and whether it is on the safe list. */
export function requestNetwork(
  req: Request,
  cfg: GuardConfig,
): { block: string | null; asn: string | null; country: string | null; safe: boolean } {
  const dev = (name: string) => (cfg.devMode ? req.headers.get(name) : null);
  const ip = dev("X-Dev-Address") ?? req.headers.get("CF-Connecting-IP") ?? "127.0.0.1";
  const cf = (req as { cf?: { asn?: unknown; country?: unknown } }).cf;
  const asnText = dev("X-Dev-Asn") ?? (cf?.asn != null ? String(cf.asn) : null);
  const countryText = dev("X-Dev-Country") ?? (typeof cf?.country === "string" ? cf.country : null);
  const a = addressBits(ip);
  let block: string | null = null;
  if (a && !a.v6) block = `${ip.split(".").slice(0, 3).join(".")}.0/24`;
  else if (a) {
    const g = (a.bits >> 80n).toString(16).padStart(12, "0");
    block = `${parseInt(g.slice(0, 4), 16).toString(16)}:${parseInt(g.slice(4, 8), 16).toString(16)}:${parseInt(g.slice(8), 16).toString(16)}::/48`;
  }
  return {
    block,
    asn: asnText && /^\d{1,10}$/.test(asnText) ? asnText : null,
    country: countryText && /^[A-Z0-9]{2}$/.test(countryText) ? countryText : null,
    safe: a !== null && cfg.safeBlocks.some((c) => inCidr(c, a)),
  };
}

/**
 * Each isolate's copy of an app's view, per env (tests run envs side by side). Kept through
 * `configOf`, whose cache follows an env derived per request (`withBindings`) to its base.
 */
function cacheOf(env: object): Map<string, { view: GuardView; at: number }> {
  return configOf(env, newViewCache);
}
const newViewCache = () => new Map<string, { view: GuardView; at: number }>();

/**
 * Reports changes of state: to the audit trail by kind and state, never the scope's value (a
 * prefix or a block), and to the list across apps the console shows (`~index`).
 */
function reportTransitions(env: Env, owner: Owner, ts: Transition[], now: number): Promise<unknown> {
  if (ts.length === 0) return Promise.resolve();
  return Promise.all([
    ...ts.map((t) =>
      audit(env, "guard.state", owner.clientId || null, "ok", { kind: t.kind, state: t.state, strikes: t.strikes }),
    ),
    guardIndex(env).indexNote(owner.name, ts, now),
  ]);
}

/**
 * A guard object the sign-ins read and count in: an app's (`clientId`; "" the service's own pages),
 * or the service-wide history of blocks and of the service itself (`~net`, no app). `name`: its key in the isolate's
 * copies and batches, and in the list across apps.
 */
interface Owner {
  name: string;
  clientId: string;
  stub: (env: Env) => DurableObjectStub<GuardStore>;
}
const appOwner = (clientId: string): Owner => ({
  name: clientId || SERVICE_SCOPE,
  clientId,
  stub: (env) => guardStore(env, clientId),
});
const NET: Owner = { name: NET_SCOPE, clientId: "", stub: guardNet };

/**
 * The kinds of scope whose history is service-wide (`~net`): network blocks alone. An ASN is not:
 * three ASNs carry nearly all Korean mobile traffic, so an ASN held suspect service-wide would ask
 * every person of every app for more while one app is attacked (docs/abuse.md "Service-wide
 * history"); an ASN stays judged per app.
 */
const NET_KINDS: readonly ScopeKind[] = ["block"];
const netScope = (scope: string) => NET_KINDS.some((k) => scope.startsWith(`${k}:`));

async function viewOf(env: Env, rc: RequestContext, owner: Owner, now: number, cfg: GuardConfig) {
  const cache = cacheOf(env);
  const c = cache.get(owner.name);
  if (c && now >= c.at && now - c.at < cfg.cacheMs) return c.view;
  const { view, transitions } = await owner.stub(env).view(now, cfg.rules);
  rc.waitUntil(reportTransitions(env, owner, transitions, now));
  if (cache.size >= 1024) cache.clear();
  cache.set(owner.name, { view, at: now });
  return view;
}

/**
 * The states that hold at `now` for a sign-in to `clientId`: the app's own, and the service-wide
 * states of blocks and the service's (the stronger where both have one). The two copies are read together,
 * each only when this isolate's is stale. `net`: the scopes whose state is `~net`'s alone.
 */
async function statesOf(
  env: Env,
  rc: RequestContext,
  clientId: string,
  now: number,
  cfg: GuardConfig,
): Promise<{ active: Map<string, ScopeStatus>; net: Set<string>; view: GuardView }> {
  const [view, netView] = await Promise.all([
    viewOf(env, rc, appOwner(clientId), now, cfg),
    viewOf(env, rc, NET, now, cfg),
  ]);
  const active = new Map<string, ScopeStatus>();
  for (const s of view.states) if (s.until > now) active.set(s.scope, s);
  const net = new Set<string>();
  for (const s of netView.states) {
    // `~net`'s own `app` is the service's: held by a surge spread over the apps, it holds every app
    if (s.until <= now || !(netScope(s.scope) || s.scope === "app")) continue;
    const mine = active.get(s.scope);
    if (mine && (mine.state === "slowed" || s.state === "suspect")) continue;
    active.set(s.scope, s);
    net.add(s.scope);
  }
  return { active, net, view };
}

/**
 * The guard's decision for an identify submission of `phone` to `clientId`, from the request alone
 * (nothing about the number is looked up); null when the guard is off.
 */
export async function guardDecision(
  env: Env,
  rc: RequestContext,
  req: Request,
  clientId: string,
  phone: string,
): Promise<Decision | null> {
  const cfg = guardConfig(env);
  if (!cfg.on) return null;
  const now = guardNow(req, cfg);
  const net = requestNetwork(req, cfg);
  // a safe block's sends count for the app and the prefix only, and it is never challenged or slowed
  const scopes = ["app", `prefix:${prefixOf(phone)}`];
  if (!net.safe) {
    if (net.block) scopes.push(`block:${net.block}`);
    if (net.asn) scopes.push(`asn:${net.asn}`);
    if (net.country) scopes.push(`country:${net.country}`);
  }
  const { active, net: netOwned, view } = await statesOf(env, rc, clientId, now, cfg);
  const hits = net.safe ? [] : scopes.filter((s) => active.has(s));
  const slowed = hits.filter((s) => active.get(s)!.state === "slowed");
  return {
    scopes,
    now,
    challenge: [...new Set(hits.map((s) => s.split(":", 1)[0] as ScopeKind))],
    slowed,
    netSlowed: slowed.filter((s) => netOwned.has(s)),
    pausedUntil: clientId && view.paused && now < view.dayEnds ? view.dayEnds : null,
  };
}

/**
 * Whether an app's first page shows the challenge already: the request's network or the app is
 * suspect or slowed (the number's prefix is known only once it is typed; the identify step decides
 * again with it). A cached read, as the identify step's.
 */
export async function challengeFirst(env: Env, rc: RequestContext, req: Request, clientId: string): Promise<boolean> {
  const cfg = guardConfig(env);
  if (!cfg.on) return false;
  const now = guardNow(req, cfg);
  const net = requestNetwork(req, cfg);
  if (net.safe) return false;
  const scopes = ["app"];
  if (net.block) scopes.push(`block:${net.block}`);
  if (net.asn) scopes.push(`asn:${net.asn}`);
  if (net.country) scopes.push(`country:${net.country}`);
  const { active } = await statesOf(env, rc, clientId, now, cfg);
  return scopes.some((s) => active.has(s));
}

/**
 * One code for a sign-in in slowed scopes, from their allowance: of the app's object for the
 * scopes slowed in the app, of `~net` for those slowed service-wide only (store calls it waits for,
 * together). Null when taken, else when every full allowance has a code again.
 */
export async function takeSlowed(env: Env, clientId: string, d: Decision): Promise<number | null> {
  const block = d.scopes.find((s) => s.startsWith("block:")) ?? null;
  const rules = guardConfig(env).rules;
  const mine = d.slowed.filter((s) => !d.netSlowed.includes(s));
  const rs = await Promise.all([
    mine.length > 0 ? guardStore(env, clientId).take(mine, block, d.now, rules) : null,
    d.netSlowed.length > 0 ? guardNet(env).take(d.netSlowed, block, d.now, rules) : null,
  ]);
  const refused = rs.flatMap((r) => (r && !r.ok ? [r.until] : []));
  return refused.length > 0 ? Math.max(...refused) : null;
}

/** Each isolate's counts not yet sent, per env and app: sent together (one call) by the first one's flush. */
interface Pending {
  events: GuardEvent[];
  budget: number | null;
  now: number;
  flush: Promise<void>;
}
const newPendings = () => new Map<string, Pending>();

/**
 * Counts a code sent or verified in its sign-in's scopes, after the answer; the app's daily budget
 * goes with it (null: none). It is counted again in `~net`, the service-wide history: by its block, and
 * under `app` as the service's, with its app named (a surge spread over the apps).
 * The counts of an isolate's sign-ins within GUARD_FLUSH_MS of each other go to each object in one
 * call (each request waits for those calls after its answer, as for its own); the isolate's copy of
 * each object's view is replaced by the call's answer.
 */
export function guardCount(
  env: Env,
  rc: RequestContext,
  req: Request,
  clientId: string,
  kind: GuardEvent["kind"],
  mark: GuardMark,
  budget: number | null,
): void {
  const cfg = guardConfig(env);
  if (!cfg.on) return;
  const now = guardNow(req, cfg);
  const event: GuardEvent = {
    kind,
    scopes: mark.scopes,
    sentAt: kind === "sent" ? now : mark.sentAt,
    challenged: mark.challenged,
  };
  const owner = appOwner(clientId);
  enqueue(env, rc, cfg, owner, event, budget, now);
  // service-wide: by block, and as the service's own (`app`), with its app named for the spread
  const net = [...mark.scopes.filter(netScope), "app"];
  enqueue(env, rc, cfg, NET, { ...event, scopes: net, app: owner.name }, null, now);
}

/** Adds an event to the isolate's batch for `owner`, starting the batch (and its flush) if none is open. */
function enqueue(
  env: Env,
  rc: RequestContext,
  cfg: GuardConfig,
  owner: Owner,
  event: GuardEvent,
  budget: number | null,
  now: number,
): void {
  const byOwner = configOf(env, newPendings);
  let p = byOwner.get(owner.name);
  if (!p) {
    const batch: Pending = { events: [], budget, now, flush: Promise.resolve() };
    batch.flush = (async () => {
      await new Promise((r) => setTimeout(r, cfg.flushMs));
      byOwner.delete(owner.name);
      try {
        const r = await owner.stub(env).record(randomToken(12), batch.events, batch.budget, batch.now, cfg.rules);
        await reportTransitions(env, owner, r.transitions, batch.now);
        cacheOf(env).set(owner.name, { view: r.view, at: batch.now });
      } catch (err) {
        // counts lost are counts lost: the sign-ins they followed are done
        console.log(JSON.stringify({ worker: "guard", cause: err instanceof Error ? err.message : String(err) }));
      }
    })();
    byOwner.set(owner.name, (p = batch));
  }
  p.events.push(event);
  p.budget = budget;
  p.now = Math.max(p.now, now);
  rc.waitUntil(p.flush);
}
