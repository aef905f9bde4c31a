// The guard's judgement of one scope (docs/abuse.md "Scopes and states"), apart from its storage so
// it can be tested on its own: from a scope's settled codes sent and verified over the window, and
// the same for codes sent after a passed challenge, whether the scope becomes suspect or slowed, and
// for how long.

/** What a scope is: the number's prefix, the network block, its ASN, its country, or the app itself. */
export type ScopeKind = "prefix" | "block" | "asn" | "country" | "app";

export const SCOPE_KINDS: readonly ScopeKind[] = ["prefix", "block", "asn", "country", "app"];

/** A scope's state beyond normal: a challenge before any code; slowed adds a slower rate of codes. */
export type GuardState = "suspect" | "slowed";

/** The guard's thresholds and times (docs/abuse.md "Configuration"), all configuration. */
export interface GuardRules {
  /** Below this share of settled codes verified (0..1), a scope with enough volume turns suspect. */
  minConversion: number;
  /** Settled sends a narrow scope (prefix, block) needs before it is judged; wide ones need `wideFactor` times it. */
  minSends: number;
  wideFactor: number;
  /** Sends are judged over this window... */
  windowMs: number;
  /** ...once this old (verified or not): a person needs time to type a code. */
  settleMs: number;
  /** The first cool-down; each repeat within `strikeMemoryMs` doubles it, up to `maxCooldownMs`. */
  cooldownMs: number;
  maxCooldownMs: number;
  strikeMemoryMs: number;
  /** A slowed scope's codes: at most `slowCodes` per `slowWindowMs`. */
  slowCodes: number;
  slowWindowMs: number;
}

/** A scope's settled sums over the window: all sends, and those sent after a passed challenge. */
export interface Sums {
  sent: number;
  verified: number;
  csent: number;
  cverified: number;
}

/** A scope's state as stored (kept after it ends, for its strikes). */
export interface StateRow {
  state: GuardState;
  since: number;
  until: number;
  strikes: number;
}

/** Only network blocks and ASNs are ever slowed: the strongest state, never closed. */
export function canSlow(kind: ScopeKind): boolean {
  return kind === "block" || kind === "asn";
}

export function minSendsOf(rules: GuardRules, kind: ScopeKind): number {
  return kind === "prefix" || kind === "block" ? rules.minSends : rules.minSends * rules.wideFactor;
}

function low(verified: number, sent: number, rules: GuardRules): boolean {
  return verified < sent * rules.minConversion;
}

/**
 * The scope's next state at `now`, or null when it stays as it is. A normal scope whose settled
 * conversion is below the threshold with enough volume turns suspect for a cool-down (slowed at
 * once when it repeats within the strike memory and may be slowed); a suspect block or ASN whose
 * codes sent after a passed challenge also go unverified (with half the volume) is slowed for the
 * rest of its cool-down. A state ends only when its cool-down does, or an editor clears it.
 */
export function judge(kind: ScopeKind, s: Sums, cur: StateRow | null, now: number, rules: GuardRules): StateRow | null {
  const need = minSendsOf(rules, kind);
  if (cur && cur.until > now) {
    // codes that followed a passed challenge and still go untyped are the strongest evidence: half
    // a narrow scope's volume is enough, whatever the scope's width
    const challengedNeed = Math.max(1, Math.ceil(rules.minSends / 2));
    if (cur.state === "suspect" && canSlow(kind) && s.csent >= challengedNeed && low(s.cverified, s.csent, rules))
      return { ...cur, state: "slowed" };
    return null;
  }
  if (s.sent < need || !low(s.verified, s.sent, rules)) return null;
  const strikes = cur && now - cur.since < rules.strikeMemoryMs ? cur.strikes + 1 : 1;
  const cooldown = Math.min(rules.cooldownMs * 2 ** (strikes - 1), rules.maxCooldownMs);
  return { state: strikes > 1 && canSlow(kind) ? "slowed" : "suspect", since: now, until: now + cooldown, strikes };
}
