// The guard's judgement of one scope (docs/abuse.md "Scopes and states"), apart from its storage so
// it can be tested on its own: from a scope's settled codes sent and verified over the window, and
// the same for codes sent after a passed challenge, whether the scope becomes suspect or slowed, and
// for how long.

/** What a scope is: the number's prefix, the network block, its ASN, its country, or the app itself. */
export type ScopeKind = "prefix" | "block" | "asn" | "country" | "app";

export const SCOPE_KINDS: readonly ScopeKind[] = ["prefix", "block", "asn", "country", "app"];

/** A scope's kind: the part before its first colon (`block:203.0.113.0/24`, `app`). */
export function kindOf(scope: string): ScopeKind {
  const k = scope.split(":", 1)[0] as ScopeKind;
  if (!SCOPE_KINDS.includes(k)) throw new Error(`not a scope: ${k}`);
  return k;
}

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
  /**
   * A surge: an app whose codes outstanding untyped reach `surgeCodes` (0: never) and `surgeFactor`
   * times what its people typed of late, a settle time's worth, is held suspect until those codes
   * settle (`isSurge`).
   */
  surgeCodes: number;
  surgeFactor: number;
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

/**
 * Network blocks, ASNs and the app itself can be slowed: the strongest state, never closed (a
 * prefix or a country is asked for the challenge only). A slowed ASN or app limits only the
 * blocks that have not shown people typing their codes (`GuardTables.take`).
 */
export function canSlow(kind: ScopeKind): boolean {
  return kind === "block" || kind === "asn" || kind === "app";
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

/** The typing curve's resolution: latencies are counted in slots of this many milliseconds. */
export const TYPING_SLOT_MS = 2_500;
/** Below this many codes typed, an app's own curve is not trusted: the default is used. */
export const TYPING_MIN_SAMPLES = 50;

/**
 * The typing curve: of the codes people type within the settle time, the share typed by `ageMs`
 * after the send. `curve`, when the app has history: the cumulative share at the end of each
 * `TYPING_SLOT_MS` slot, learned from its own codes (`GuardTables`). Else the default: nobody
 * within the first half of the settle time (the message must arrive, be read and typed), then
 * evenly until the settle time.
 */
export function typedShare(ageMs: number, rules: GuardRules, curve: readonly number[] | null = null): number {
  if (ageMs >= rules.settleMs) return 1;
  if (curve && curve.length > 0) {
    const slot = Math.floor(ageMs / TYPING_SLOT_MS);
    return slot <= 0 ? 0 : (curve[Math.min(slot, curve.length) - 1] ?? 1);
  }
  const start = rules.settleMs / 2;
  return ageMs <= start ? 0 : (ageMs - start) / (rules.settleMs - start);
}

/** The cumulative curve of slot counts (`counts[i]`: codes typed in slot i), or null with too few. */
export function typingCurve(counts: readonly number[]): number[] | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total < TYPING_MIN_SAMPLES) return null;
  let run = 0;
  return counts.map((n) => (run += n) / total);
}

/**
 * A scope's judgement before its sends settle (docs/abuse.md "Codes outstanding"): its unsettled
 * sends, each weighted by the share of people who would have typed it by its age, join the settled
 * sums; a scope whose weighted sends already reach its volume with too few typed turns suspect now.
 * Only a scope in no state is judged so (a state's changes wait for settled evidence), and only
 * when sends take at least a bucket to settle (else nothing is outstanding for long).
 */
export function judgeOutstanding(
  kind: ScopeKind,
  settled: Sums,
  outstanding: readonly { ageMs: number; sent: number; verified: number }[],
  cur: StateRow | null,
  now: number,
  rules: GuardRules,
  curve: readonly number[] | null = null,
): StateRow | null {
  if (cur && cur.until > now) return null;
  let sent = settled.sent;
  let verified = settled.verified;
  for (const o of outstanding) {
    sent += o.sent * typedShare(o.ageMs, rules, curve);
    verified += o.verified;
  }
  return judge(kind, { ...settled, sent, verified }, cur, now, rules);
}

/** How far back "of late" reaches for a surge: the codes typed of sends this recent. */
export const SURGE_RECENT_MS = 120_000;

/**
 * Whether an app's codes outstanding make a surge (docs/abuse.md "A surge"): at least
 * `surgeCodes` of them untyped, and `surgeFactor` times the codes its people typed of late, scaled
 * to one settle time. Judged from the send rate alone, so a burst is judged within its first
 * seconds, before any code could have been typed; what its codes then show decides
 * (`GuardTables`): typed, the state ends and the crowd is let be; untyped, the app is suspect as
 * any scope judged so.
 */
export function isSurge(untyped: number, recentTyped: number, rules: GuardRules): boolean {
  if (rules.surgeCodes === 0 || untyped < rules.surgeCodes) return false;
  return untyped >= (rules.surgeFactor * recentTyped * rules.settleMs) / SURGE_RECENT_MS;
}
