// Latency quantiles from the metrics' histograms (docs/operations.md "Metrics"): the series
// `latency.<what>.le_<ms>` count each time in the first bucket that holds it; p50 and p95 are the
// upper bound of the bucket where the running count reaches the quantile (`Infinity`: above the
// last bound).

import type { MetricsAnswer } from "../admin/metrics";

export interface Quantiles {
  /** Times counted. */
  n: number;
  p50: number;
  p95: number;
}

/** The quantiles of `latency.<what>` over the answer's range; null when nothing was timed. */
export function quantiles(a: MetricsAnswer, what: string): Quantiles | null {
  const prefix = `latency.${what}.le_`;
  const buckets: [bound: number, n: number][] = [];
  for (const [name, points] of Object.entries(a.series)) {
    if (!name.startsWith(prefix)) continue;
    const bound = name.slice(prefix.length);
    buckets.push([bound === "inf" ? Infinity : Number(bound), points.reduce((s, [, n]) => s + n, 0)]);
  }
  buckets.sort((x, y) => x[0] - y[0]);
  const n = buckets.reduce((s, [, k]) => s + k, 0);
  if (n === 0) return null;
  const at = (q: number) => {
    let seen = 0;
    for (const [bound, k] of buckets) if ((seen += k) >= q * n) return bound;
    return Infinity;
  };
  return { n, p50: at(0.5), p95: at(0.95) };
}

/** A bucket bound as the console shows it: `≤ 250 ms`, `> 5,000 ms`. */
export function msText(bound: number, last = 5000): string {
  return bound === Infinity ? `> ${last.toLocaleString("en-US")} ms` : `≤ ${bound.toLocaleString("en-US")} ms`;
}
