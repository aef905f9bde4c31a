// The optional Workers Analytics Engine sink (docs/operations.md "Metrics": for Grafana and the
// SQL API). Each batch the metrics store adds is written as data points, one per series and app
// (summed over the batch's minutes, each point timed by its first minute), since an invocation may
// write at most 250: past that, the batch is written per series for all apps. The console reads the
// embedded roll-ups, never the dataset.
//
// A data point: `blob1` the series, `blob2` the app's client id ("" for none), `double1` the count,
// `double2` the minute it counts from (ms since 1970), `index1` the app (or "all"; Analytics
// Engine takes at most 96 bytes there), so a query per app samples consistently.

import type { Point } from "./series";

/** Most data points one invocation may write. */
export const MAX_POINTS = 250;

export function writeDataPoints(
  dataset: Pick<AnalyticsEngineDataset, "writeDataPoint">,
  points: readonly Point[],
): void {
  const bySeriesApp = new Map<string, [series: string, client: string, n: number, minute: number]>();
  for (const [minute, series, client, n] of points) {
    const key = `${series}|${client ?? ""}`;
    const p = bySeriesApp.get(key);
    if (p) {
      p[2] += n;
      p[3] = Math.min(p[3], minute);
    } else bySeriesApp.set(key, [series, client ?? "", n, minute]);
  }
  let rows = [...bySeriesApp.values()];
  if (rows.length > MAX_POINTS) {
    // too many apps in one batch: the batch per series for all apps (some 150 series exist)
    const global = new Map<string, [string, string, number, number]>();
    for (const [series, , n, minute] of rows) {
      const g = global.get(series);
      if (g) {
        g[2] += n;
        g[3] = Math.min(g[3], minute);
      } else global.set(series, [series, "", n, minute]);
    }
    rows = [...global.values()].slice(0, MAX_POINTS);
  }
  for (const [series, client, n, minute] of rows)
    dataset.writeDataPoint({ blobs: [series, client], doubles: [n, minute], indexes: [indexOf(client)] });
}

/** An index is at most 96 bytes: a longer client id (never one the service makes) samples as "long". */
function indexOf(client: string): string {
  if (client === "") return "all";
  return new TextEncoder().encode(client).byteLength <= 96 ? client : "long";
}
