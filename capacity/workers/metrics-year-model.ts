// A day of the metrics at national volume, as the year bench generates it (`node
// capacity/metrics-year.mjs`, docs/capacity.md "Metrics at national volume"): each app's sign-ins of
// the day from a Zipf law (s = 1) over the apps, summing to the national volume; spread over the
// hours by a diurnal curve in Korean time (low at night, peaks at lunch and in the evening); and per
// app and hour every series a real app has, each drawn (binomially) in its proportion to the
// sign-ins, so that a small app's rare series are zero in many hours, with its SMS gateways' answer
// times as histograms; all apps' hours add the global series (the carrier check's outcomes, the
// steps' and the carrier's times). Deterministic: a day's seed gives its counts.

import { rng, type Rand } from "./rng";

/** The counts an app's hour has: the audited ones, then the counted ones (not audited). */
const COUNTS = [
  "signin.success",
  "signin.success.interactive",
  "signin.success.automatic",
  "signin.success.auto_login_opt_in",
  "signin.success.passkey",
  "signin.success.fixed_code",
  "passkey.refused",
  "signin.failure",
  "signin.failure.unconfirmed",
  "signin.failure.wrong_code",
  "signin.failure.expired",
  "signin.failure.ip_limited",
  "consent",
  "code.redeemed",
  "code.refused",
  "sms.attempt",
  "sms.naver-sens.delivered",
  "sms.naver-sens.failed",
  "sms.nhn-cloud.delivered",
  "disconnect",
  "event.delivered",
  "event.failed",
  "signin.start",
  "identify.matched",
  "identify.unconfirmed",
  "identify.invalid",
  "verify.ok",
  "verify.wrong",
  "userme.ok",
] as const;

/** Latency bucket bounds in ms (`le_<b>`, and `le_inf` above the last). */
const BOUNDS = ["10", "25", "50", "100", "250", "500", "1000", "2500", "5000", "inf"] as const;

/** Each latency's share of its calls per bucket. */
const SHARES = {
  identify: [0.01, 0.05, 0.2, 0.4, 0.25, 0.06, 0.02, 0.008, 0.0015, 0.0005],
  verify: [0.3, 0.4, 0.2, 0.07, 0.02, 0.007, 0.002, 0.0008, 0.0002, 0],
  consent: [0.2, 0.45, 0.25, 0.07, 0.02, 0.007, 0.002, 0.0008, 0.0002, 0],
  sms: [0, 0, 0.02, 0.15, 0.45, 0.25, 0.1, 0.025, 0.004, 0.001],
  carrier: [0.02, 0.1, 0.35, 0.35, 0.13, 0.03, 0.01, 0.004, 0.0008, 0.0002],
} as const;

const histogram = (what: string) => BOUNDS.map((b) => `latency.${what}.le_${b}`);

/**
 * The series an app's hour has: its counts, and the SMS gateways' answer times, which come with the
 * audited attempt (series.ts), and so are kept per app as well as for all apps.
 */
export const APP_SERIES: readonly string[] = [...COUNTS, ...histogram("sms.naver-sens"), ...histogram("sms.nhn-cloud")];

/** The series only all apps' rows (and the minutes) have: the carrier check, the steps' times (tally.ts). */
const GLOBAL_SERIES = [
  "carrier.ok",
  "carrier.failed",
  "passkey.created",
  ...["step.identify", "step.verify", "step.consent", "carrier"].flatMap(histogram),
];

/** Every series of an all-apps row, by index: an app's, then the global ones. */
export const ALL_SERIES: readonly string[] = [...APP_SERIES, ...GLOBAL_SERIES];

const at = Object.fromEntries(ALL_SERIES.map((s, i) => [s, i])) as Record<string, number>;

/** `calls` spread over the buckets of `latency.<what>` in `c` by `shares`. */
function time(r: Rand, c: Float64Array, what: string, calls: number, shares: readonly number[]): void {
  split(r, calls, shares).forEach((x, b) => (c[at[`latency.${what}.le_${BOUNDS[b]}`]!] = x));
}

/** Sign-ins per hour of the day in Korean time (relative): night, morning, lunch, evening. */
const DIURNAL_KST = [
  2, 1.2, 0.7, 0.5, 0.5, 0.8, 1.8, 3.5, 5, 5.5, 5.5, 6, 7, 6, 5, 4.8, 4.8, 5.2, 5.8, 6.5, 7, 6.8, 5.5, 3.8,
];
/** The same by hour of the UTC day (days and hours are UTC steps). */
const DIURNAL_UTC = DIURNAL_KST.map((_, h) => DIURNAL_KST[(h + 9) % 24]!);

/** The share of interactive sign-ins proven by a passkey. */
const PASSKEY_SHARE = 0.25;

/** How much an app's day varies around its share (log-normal σ). */
const DAY_SPREAD = 0.15;

/** What the year bench asks for. */
export interface YearSpec {
  /** The apps' client ids, largest first (Zipf rank 1, 2, …). */
  apps: string[];
  /** Sign-ins a day, all apps together. */
  perDay: number;
  /** The run's now (ms): rows of closed hours only. */
  now: number;
}

/** A day's counts: each app's 24 hours (by series index of APP_SERIES) and all apps' (ALL_SERIES). */
export interface Day {
  apps: Float64Array[][];
  all: Float64Array[];
}

function gauss(r: Rand): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

function poisson(r: Rand, mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = r(); p > limit; p *= r()) k++;
  return k;
}

/** A draw of Binomial(n, p): exact for small n, Poisson or normal approximations above. */
export function binomial(r: Rand, n: number, p: number): number {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  if (n < 40) {
    let k = 0;
    for (let i = 0; i < n; i++) if (r() < p) k++;
    return k;
  }
  const mean = n * p;
  if (mean < 12) return Math.min(n, poisson(r, mean));
  if (n - mean < 12) return Math.max(0, n - poisson(r, n - mean));
  return Math.min(n, Math.max(0, Math.round(mean + Math.sqrt(mean * (1 - p)) * gauss(r))));
}

/** `n` spread over parts in proportion to `weights` (a multinomial draw): sums to `n`. */
export function split(r: Rand, n: number, weights: readonly number[]): number[] {
  let rest = weights.reduce((a, w) => a + w, 0);
  return weights.map((w, i) => {
    const x = i === weights.length - 1 ? n : binomial(r, n, rest > 0 ? w / rest : 0);
    n -= x;
    rest -= w;
    return x;
  });
}

/** Each app's expected sign-ins a day: a Zipf law (s = 1) over `apps` apps summing to `perDay`. */
export function zipfVolumes(apps: number, perDay: number): number[] {
  const w = Array.from({ length: apps }, (_, i) => 1 / (i + 1));
  const h = w.reduce((a, x) => a + x, 0);
  return w.map((x) => (perDay * x) / h);
}

/** An app's hour with `s` successful sign-ins: its series, in realistic proportions. */
function appHour(r: Rand, s: number): Float64Array {
  const c = new Float64Array(APP_SERIES.length);
  const set = (name: (typeof COUNTS)[number], n: number) => (c[at[name]!] = n);
  const automatic = binomial(r, s, 0.3);
  const interactive = s - automatic;
  // a quarter of interactive sign-ins proven by a passkey (no identify, no SMS); the rest by a code,
  // a few of them fixed ones (review test numbers: no SMS either)
  const passkey = binomial(r, interactive, PASSKEY_SHARE);
  const byCode = interactive - passkey;
  const fixed = binomial(r, byCode, 0.0005);
  const unconfirmed = binomial(r, s, 0.01);
  const wrong = binomial(r, byCode, 0.04);
  const expired = binomial(r, byCode, 0.01);
  const limited = binomial(r, s, 0.0005);
  const consent = binomial(r, interactive, 0.08);
  const disconnect = binomial(r, s, 0.001);
  const sends = byCode - fixed + expired + binomial(r, byCode, 0.05);
  const sensFailed = binomial(r, sends, 0.008);
  const matched = byCode + binomial(r, byCode, 0.12);
  const invalid = binomial(r, s, 0.03);
  set("signin.success", s);
  set("signin.success.interactive", interactive);
  set("signin.success.automatic", automatic);
  set("signin.success.auto_login_opt_in", binomial(r, interactive, 0.15));
  set("signin.success.passkey", passkey);
  set("signin.success.fixed_code", fixed);
  set("passkey.refused", binomial(r, passkey, 0.01));
  set("signin.failure", unconfirmed + wrong + expired + limited);
  set("signin.failure.unconfirmed", unconfirmed);
  set("signin.failure.wrong_code", wrong);
  set("signin.failure.expired", expired);
  set("signin.failure.ip_limited", limited);
  set("consent", consent);
  set("code.redeemed", binomial(r, s, 0.995));
  set("code.refused", binomial(r, s, 0.002));
  set("sms.attempt", sends + sensFailed);
  set("sms.naver-sens.delivered", sends - sensFailed);
  set("sms.naver-sens.failed", sensFailed);
  set("sms.nhn-cloud.delivered", sensFailed);
  set("disconnect", disconnect);
  const failedEvents = binomial(r, consent + disconnect, 0.01);
  set("event.delivered", consent + disconnect - failedEvents);
  set("event.failed", failedEvents);
  set("signin.start", matched + unconfirmed + invalid + automatic + passkey + binomial(r, s, 0.15));
  set("identify.matched", matched);
  set("identify.unconfirmed", unconfirmed);
  set("identify.invalid", invalid);
  set("verify.ok", byCode);
  set("verify.wrong", wrong + expired);
  set("userme.ok", binomial(r, s, 0.7));
  return c;
}

/** All apps' hour: the sum of the apps' hours, with the carrier checks and the steps', carrier's and gateways' times. */
function allHour(r: Rand, apps: readonly Float64Array[]): Float64Array {
  const c = new Float64Array(ALL_SERIES.length);
  for (const a of apps) for (let i = 0; i < a.length; i++) c[i]! += a[i]!;
  const n = (name: string) => c[at[name]!]!;
  const identifies = n("identify.matched") + n("identify.unconfirmed") + n("identify.invalid");
  const failed = binomial(r, identifies, 0.002);
  c[at["carrier.ok"]!] = identifies - failed;
  c[at["carrier.failed"]!] = failed;
  // a passkey made after one in fifty sign-ins by a code
  c[at["passkey.created"]!] = binomial(r, n("verify.ok"), 0.02);
  time(r, c, "step.identify", identifies, SHARES.identify);
  time(r, c, "step.verify", n("verify.ok") + n("verify.wrong"), SHARES.verify);
  time(r, c, "step.consent", n("consent"), SHARES.consent);
  time(r, c, "carrier", identifies, SHARES.carrier);
  // the SMS gateways' answer times: rolled up for all apps only (series.ts pointsOf)
  time(r, c, "sms.naver-sens", n("sms.naver-sens.delivered") + n("sms.naver-sens.failed"), SHARES.sms);
  time(r, c, "sms.nhn-cloud", n("sms.nhn-cloud.delivered"), SHARES.sms);
  return c;
}

/** Day `day`'s counts (days since 1970), all 24 hours. */
export function dayCounts(spec: YearSpec, day: number): Day {
  const r = rng(day * 7919 + 1);
  const apps = zipfVolumes(spec.apps.length, spec.perDay).map((v) => {
    const total = Math.round(v * Math.exp(DAY_SPREAD * gauss(r) - (DAY_SPREAD * DAY_SPREAD) / 2));
    return split(r, total, DIURNAL_UTC).map((s) => appHour(r, s));
  });
  const all = DIURNAL_UTC.map((_, h) =>
    allHour(
      r,
      apps.map((hours) => hours[h]!),
    ),
  );
  return { apps, all };
}

/** An hour's counts spread over its 60 minutes (each series a multinomial draw). */
export function minutesOf(r: Rand, hour: Float64Array): Float64Array[] {
  const minutes = Array.from({ length: 60 }, () => new Float64Array(hour.length));
  const even = new Array<number>(60).fill(1);
  hour.forEach((n, i) => {
    if (n > 0) split(r, n, even).forEach((x, m) => (minutes[m]![i] = x));
  });
  return minutes;
}
