// The metrics' series (docs/operations.md "Metrics"): what an audit event counts for. Every event
// counts once (a `code.redeemed` row: its `count`) in its type's series, and may count in finer ones
// (a failure's reason, an SMS attempt's gateway and result, an automatic sign-in), so that for every
// closed hour a type's series equals the audit trail's count of that type. Counts only: a series
// never names a number, a person or a plid.

/** An audit event as the outbox hands it to the trail (the one-time store's `OutboxRow`). */
export interface OutboxRow {
  at: number;
  type: string;
  client_id: string | null;
  detail: string | null;
}

/** A roll-up point: the minute (ms), the series, the app (null: none), the count. */
export type Point = [minute: number, series: string, client: string | null, n: number];

/** A latency's bucket bounds in ms: `latency.<what>.le_<bound>`, and `le_inf` above the last. */
export const BUCKETS = [10, 25, 50, 100, 250, 500, 1000, 2500, 5000] as const;

/** The bucket series of a latency (`sms.sens` and 180 ms: `latency.sms.sens.le_250`). */
export function bucketOf(what: string, ms: number): string {
  const bound = BUCKETS.find((b) => ms <= b);
  return `latency.${what}.le_${bound ?? "inf"}`;
}

/** What a detail value may add to a series name: a short lowercase word, else "other". */
function word(v: unknown): string {
  return typeof v === "string" && /^[a-z0-9_-]{1,32}$/.test(v) ? v : "other";
}

function detailOf(row: OutboxRow): Record<string, unknown> {
  if (row.detail === null) return {};
  try {
    const d = JSON.parse(row.detail) as unknown;
    return typeof d === "object" && d !== null ? (d as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * A proven sign-in that no SMS preceded (`proofDetail` of provider/signin/purpose.ts): by a passkey
 * (`<type>.passkey`), by a text the person sent (`<type>.text`), or by a fixed code
 * (`<type>.fixed_code`).
 */
function withoutSms(type: string, d: Record<string, unknown>): [string, number][] {
  if (d.method === "passkey") return [[`${type}.passkey`, 1]];
  if (d.method === "text") return [[`${type}.text`, 1]];
  return d.fixedCode === true ? [[`${type}.fixed_code`, 1]] : [];
}

/** The series an event counts in, with how much; the first is its type's. */
export function seriesOf(row: OutboxRow): [series: string, n: number][] {
  const d = detailOf(row);
  switch (row.type) {
    case "code.redeemed": {
      const n = typeof d.count === "number" && Number.isInteger(d.count) && d.count > 0 ? d.count : 1;
      return [["code.redeemed", n]];
    }
    case "signin.success": {
      const out: [string, number][] = [
        ["signin.success", 1],
        [`signin.success.${d.mode === "automatic" ? "automatic" : "interactive"}`, 1],
      ];
      if (d.autoLogin === true) out.push(["signin.success.auto_login_opt_in", 1]);
      if (d.mode !== "automatic") out.push(...withoutSms("signin.success", d));
      return out;
    }
    case "account.signin":
    case "console.signin":
    case "developer.signin":
      return [[row.type, 1], ...withoutSms(row.type, d)];
    case "signin.failure":
      return [
        ["signin.failure", 1],
        [`signin.failure.${word(d.reason)}`, 1],
      ];
    case "sms.attempt": {
      const out: [string, number][] = [
        ["sms.attempt", 1],
        [`sms.${word(d.provider)}.${word(d.result)}`, 1],
      ];
      // the gateway's answer time, for every attempt that reached it
      if (d.result !== "circuit_open" && typeof d.ms === "number")
        out.push([bucketOf(`sms.${word(d.provider)}`, d.ms), 1]);
      return out;
    }
    case "guard.decision":
      // the SMS-abuse guard's decisions, each kind apart (docs/abuse.md "Audit and metrics")
      return [
        ["guard.decision", 1],
        [`guard.decision.${word(d.decision)}`, 1],
      ];
    case "guard.state":
      return [
        ["guard.state", 1],
        [`guard.state.${word(d.kind)}.${word(d.state)}`, 1],
      ];
    default:
      return [[row.type, 1]];
  }
}

/**
 * Apps' interactive sign-ins whose number was proven by a code, not a passkey or a text the person
 * sent (neither passes an identify match first): those that passed an
 * identify match and a typed code (the funnel's last step, the completion alert's numerator).
 * `count` gives a series' sum over the range. Hours rolled up before the passkey series existed
 * count every interactive sign-in, as these figures did then.
 */
export const provenByCode = (count: (series: string) => number): number =>
  count("signin.success.interactive") - count("signin.success.passkey") - count("signin.success.text");

/**
 * Every kind of proven sign-in: the series that counts it, and the type its `.passkey` and
 * `.fixed_code` series are named by (`withoutSms`). Apps' interactive ones, and the service's own
 * pages'.
 */
const PROVEN = [
  ["signin.success.interactive", "signin.success"],
  ["account.signin", "account.signin"],
  ["console.signin", "console.signin"],
  ["developer.signin", "developer.signin"],
] as const;
/** Every series the proven counts read (a per-app read names them). */
export const PROVEN_SERIES: readonly string[] = PROVEN.flatMap(([all, type]) => [
  all,
  `${type}.passkey`,
  `${type}.fixed_code`,
  `${type}.text`,
]);

/**
 * The sign-ins, apps' and the service's own pages', whose code the service sent by SMS (not a
 * passkey, not a text the person sent, not a fixed code): what the code conversion counts per SMS delivered, so that neither
 * lifts it (above 100%, or over codes sent and never typed) and no code sent for /account,
 * /console or /developers lowers it. Hours rolled up before the passkey and fixed-code series
 * existed count every such sign-in.
 */
export const provenBySmsCode = (count: (series: string) => number): number =>
  PROVEN.reduce(
    (sum, [all, type]) =>
      sum + count(all) - count(`${type}.passkey`) - count(`${type}.fixed_code`) - count(`${type}.text`),
    0,
  );

/** The sign-ins proven by a passkey, apps' and /account's: each an SMS not sent (the console's "SMS saved"). */
export const provenByPasskey = (count: (series: string) => number): number =>
  PROVEN.reduce((sum, [, type]) => sum + count(`${type}.passkey`), 0);

const MINUTE_MS = 60_000;

/**
 * A batch of the audit outbox as roll-up points, summed per minute, series and app. Latencies are
 * kept for all apps only: per app they would add some 14 bytes to each of an app's hourly rows
 * (153 MB of a national year) for a figure the console shows per gateway, not per app.
 */
export function pointsOf(rows: readonly OutboxRow[]): Point[] {
  const sums = new Map<string, Point>();
  for (const row of rows) {
    const minute = row.at - (row.at % MINUTE_MS);
    for (const [series, n] of seriesOf(row)) {
      const client = series.startsWith("latency.") ? null : row.client_id;
      const key = `${minute}|${series}|${client ?? ""}`;
      const p = sums.get(key);
      if (p) p[3] += n;
      else sums.set(key, [minute, series, client, n]);
    }
  }
  return [...sums.values()];
}
