// A slowed scope's allowance (docs/abuse.md "Slowed"): the codes each slowed scope was given, when
// (table `slow_log`, GuardTables'), over a sliding window.

import { kindOf, type GuardRules, type Sums } from "../rules";

/**
 * One code for a sign-in in slowed scopes: taken from each scope's allowance over the sliding
 * window (at most `slowCodes` in any `slowWindowMs`), or refused with when every full one has a
 * code again. All or nothing, in one step. `sums`: a scope's settled sums in this object.
 */
export function takeSlowCode(
  sql: SqlStorage,
  storage: DurableObjectStorage,
  sums: (scope: string) => Sums,
  scopes: string[],
  block: string | null,
  now: number,
  rules: GuardRules,
): { ok: true } | { ok: false; until: number } {
  return storage.transactionSync(() => {
    // A slowed ASN or app slows the blocks that have not shown people typing their codes: a
    // block whose settled codes are typed (at the threshold) is asked for the challenge only
    // (carrier NAT: the people behind the established blocks are not the attack's); a block
    // never seen here takes from the wide scope's allowance, as one whose codes go untyped, so
    // a bot's fresh blocks share its few codes (the text, where offered, comes first).
    const s = block !== null && !scopes.includes(block) ? sums(block) : null;
    const clean = s !== null && s.sent > 0 && s.verified >= s.sent * rules.minConversion;
    // a sliding window: a scope has a code again once the oldest of its last `slowCodes` codes is
    // a window old, so no moment (a clock boundary) gives a burst twice the allowance
    const since = now - rules.slowWindowMs;
    const rows = scopes
      .filter((scope) => !(clean && (kindOf(scope) === "asn" || kindOf(scope) === "app")))
      .map((scope) => {
        const ats = sql
          .exec<{ at: number }>(
            "SELECT at FROM slow_log WHERE scope = ? AND at > ? ORDER BY at DESC LIMIT ?",
            scope,
            since,
            rules.slowCodes,
          )
          .toArray();
        // full: its allowance renews when the oldest of those leaves the window
        return { scope, renews: ats.length >= rules.slowCodes ? ats[ats.length - 1]!.at + rules.slowWindowMs : null };
      });
    const full = rows.flatMap((r) => (r.renews === null ? [] : [r.renews]));
    if (full.length > 0) return { ok: false as const, until: Math.max(...full) };
    for (const r of rows) sql.exec("INSERT INTO slow_log (scope, at) VALUES (?, ?)", r.scope, now);
    return { ok: true as const };
  });
}
