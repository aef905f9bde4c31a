// The guard's thresholds and times (docs/abuse.md "Configuration"), parsed once per env: read by
// the sign-in (which judges and counts) and by the admin API and console (which show the counts).

import { configOf, intVar } from "../../../core/config";
import type { GuardRules } from "./rules";

export interface GuardRuleVars {
  GUARD_MIN_CONVERSION_PERCENT?: string;
  GUARD_MIN_SENDS?: string;
  GUARD_WIDE_FACTOR?: string;
  GUARD_WINDOW_SECONDS?: string;
  GUARD_SETTLE_SECONDS?: string;
  GUARD_COOLDOWN_SECONDS?: string;
  GUARD_MAX_COOLDOWN_SECONDS?: string;
  GUARD_SLOW_CODES?: string;
  GUARD_SLOW_WINDOW_SECONDS?: string;
  GUARD_SURGE_CODES?: string;
  GUARD_SURGE_FACTOR?: string;
}

function parse(env: GuardRuleVars): GuardRules {
  const s = (name: keyof GuardRuleVars, dflt: number, min: number, max: number) =>
    intVar(env, name, dflt, min, max) * 1000;
  return {
    minConversion: intVar(env, "GUARD_MIN_CONVERSION_PERCENT", 30, 1, 99) / 100,
    minSends: intVar(env, "GUARD_MIN_SENDS", 5, 1, 10_000),
    wideFactor: intVar(env, "GUARD_WIDE_FACTOR", 4, 1, 1000),
    windowMs: s("GUARD_WINDOW_SECONDS", 3600, 60, 7 * 86400),
    settleMs: s("GUARD_SETTLE_SECONDS", 30, 0, 3600),
    cooldownMs: s("GUARD_COOLDOWN_SECONDS", 12 * 3600, 1, 30 * 86400),
    maxCooldownMs: s("GUARD_MAX_COOLDOWN_SECONDS", 7 * 86400, 1, 90 * 86400),
    strikeMemoryMs: 7 * 86_400_000,
    slowCodes: intVar(env, "GUARD_SLOW_CODES", 2, 1, 100_000),
    slowWindowMs: s("GUARD_SLOW_WINDOW_SECONDS", 600, 1, 86400),
    surgeCodes: intVar(env, "GUARD_SURGE_CODES", 40, 0, 1_000_000),
    surgeFactor: intVar(env, "GUARD_SURGE_FACTOR", 10, 1, 10_000),
  };
}

export function guardRules(env: GuardRuleVars): GuardRules {
  return configOf(env, parse);
}
