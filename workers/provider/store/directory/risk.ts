// The carrier's risk signals on a number (docs/security.md "SIM changes and ports"): when its SIM
// last changed, by whom (`person`, or `carrier` for a carrier's mass USIM replacement, which is no
// risk), and when it was last ported. A person-kind SIM change or a port opens the risk window
// (SIGNIN_RISK_WINDOW_SECONDS): automatic login and passkey enrolment stop, SMS gives way to a
// passkey the person already has, and subscribed apps are told once (a CAEP credential-change).
// Test numbers have no signals: they are exempt.

import type { SubscriberRow } from "./tables/common";

/** What a carrier's answer or an import row says of a number's SIM (epoch ms); an absent field leaves the stored one. */
export interface SimSignal {
  simChangedAt?: number;
  simChangeKind?: SimChangeKind;
  portedAt?: number;
}

export type SimChangeKind = "person" | "carrier";

/** A person's stored signals, as their row holds them. */
export type SimColumns = Pick<SubscriberRow, "sim_changed_at" | "sim_change_kind" | "ported_at">;

/**
 * When the latest risky change was (epoch ms): a SIM change not made by the carrier (a change
 * without a kind counts as the person's) or a port; null when none, and for test numbers.
 */
export function riskFrom(p: SimColumns & Pick<SubscriberRow, "test_otp_hash" | "test_clients">): number | null {
  if (p.test_otp_hash !== null || p.test_clients !== null) return null;
  const sim = p.sim_changed_at !== null && p.sim_change_kind !== "carrier" ? p.sim_changed_at : null;
  const port = p.ported_at;
  if (sim === null) return port;
  return port === null ? sim : Math.max(sim, port);
}

/** The end of the risk window opened at `from` (epoch ms), or null when no window is open at `now`. */
export function riskUntil(from: number | null, windowMs: number, now = Date.now()): number | null {
  if (from === null) return null;
  const until = from + windowMs;
  return now < until && windowMs > 0 ? until : null;
}

/** The columns after `s` is applied: an absent field keeps the stored value. */
export function applySignal(cur: SimColumns, s: SimSignal): SimColumns {
  return {
    sim_changed_at: s.simChangedAt ?? cur.sim_changed_at,
    // a new change time with no kind is the person's; a kind alone qualifies the stored change
    sim_change_kind:
      s.simChangeKind ??
      (s.simChangedAt !== undefined && s.simChangedAt !== cur.sim_changed_at ? null : cur.sim_change_kind),
    ported_at: s.portedAt ?? cur.ported_at,
  };
}

/** Whether a signal carries anything. */
export const hasSignal = (s: SimSignal | undefined): s is SimSignal =>
  s !== undefined && (s.simChangedAt !== undefined || s.portedAt !== undefined || s.simChangeKind !== undefined);

/** An ISO 8601 date and time with its offset: `2026-11-26T09:15:00+09:00`, `2026-11-26T00:15:00.000Z`. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
/** How far in the future a signal's time may be (clocks differ): five minutes. */
const FUTURE_SLACK_MS = 300_000;

/** The signal fields as a carrier's answer or an import row names them. */
export const SIGNAL_FIELDS = ["simChangedAt", "simChangeKind", "portedAt"] as const;
export type SignalField = (typeof SIGNAL_FIELDS)[number];

/**
 * The signals of an answer or a row (absent, null or empty: not given), undefined when it gives
 * none, or the reason they are refused (a fixed phrase): a time that is not ISO 8601 with its
 * offset or lies in the future, a kind other than `person` or `carrier`, a kind without a time.
 */
export function readSignals(raw: Partial<Record<SignalField, unknown>>, now: number): SimSignal | undefined | string {
  const given = (v: unknown) => v !== undefined && v !== null && !(typeof v === "string" && v.trim() === "");
  const time = (name: "simChangedAt" | "portedAt"): number | undefined | string => {
    const v = raw[name];
    if (!given(v)) return undefined;
    const t = typeof v === "string" && ISO_TIME.test(v.trim()) ? Date.parse(v.trim()) : NaN;
    if (!Number.isFinite(t)) return `${name} must be an ISO 8601 time with its offset`;
    if (t > now + FUTURE_SLACK_MS) return `${name} must not be in the future`;
    return t;
  };
  const simChangedAt = time("simChangedAt");
  if (typeof simChangedAt === "string") return simChangedAt;
  const portedAt = time("portedAt");
  if (typeof portedAt === "string") return portedAt;
  const k = raw.simChangeKind;
  const kind = given(k) ? (typeof k === "string" ? k.trim() : k) : undefined;
  if (kind !== undefined && kind !== "person" && kind !== "carrier") return "simChangeKind must be person or carrier";
  if (kind !== undefined && simChangedAt === undefined) return "simChangeKind needs simChangedAt";
  const sim: SimSignal = {
    ...(simChangedAt !== undefined && { simChangedAt }),
    ...(kind !== undefined && { simChangeKind: kind }),
    ...(portedAt !== undefined && { portedAt }),
  };
  return Object.keys(sim).length ? sim : undefined;
}
