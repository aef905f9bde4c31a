// GET /admin/metrics (docs/operations.md "Metrics"): the roll-ups of the audited steps as series,
// for a viewer. `from` and `to` are ISO 8601 times (as the audit API takes them), `step` 1m (all
// apps only, the last 14 days), 1h (400 days) or 1d (5 years), `client_id` one app's series,
// `series` a comma-separated list of names (else every series with a count). Counts only.

import { E } from "../core/errors";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { type Step, metricsStore, ALL_APPS, DAY_MS, HOUR_MS, KEEP, MINUTE_MS } from "../provider/store/metrics/index";
import { timeParam } from "./audit";
import type { AdminEnv } from "./config";

const STEPS: Record<Step, number> = { "1m": MINUTE_MS, "1h": HOUR_MS, "1d": DAY_MS };
/** Most points a series may have in one answer. */
const MAX_POINTS = 2000;
export interface MetricsAnswer {
  step: Step;
  from: string;
  to: string;
  client_id: string | null;
  /** Each series' non-zero points, `[ISO time of the step's start, count]`, oldest first. */
  series: Record<string, [string, number][]>;
}

/** The series of a query as the API answers them (the console reads the same). */
export async function readMetrics(
  env: AdminEnv,
  q: { step: Step; from: number; to: number; clientId: string | null; series: string[] | null },
): Promise<MetricsAnswer> {
  const rows = (await metricsStore(env).read(q.step, q.from, q.to, q.clientId ?? ALL_APPS, q.series)) as [
    number,
    string,
    number,
  ][];
  const series: Record<string, [string, number][]> = {};
  for (const [t, name, n] of rows) (series[name] ??= []).push([new Date(t).toISOString(), n]);
  return {
    step: q.step,
    from: new Date(q.from).toISOString(),
    to: new Date(q.to).toISOString(),
    client_id: q.clientId,
    series,
  };
}

export async function metrics(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const url = rc.url;
  const stepText = url.searchParams.get("step") ?? "1h";
  if (!(stepText in STEPS)) throw E.invalidBecause("step", "must be 1m, 1h or 1d");
  const step = stepText as Step;
  const size = STEPS[step];
  const now = Date.now();
  const to = timeParam(url.searchParams, "to") ?? now;
  const from = timeParam(url.searchParams, "from") ?? to - 24 * HOUR_MS;
  if (to <= from) throw E.invalidBecause("to", "must be later than from");
  if ((to - from) / size > MAX_POINTS)
    throw E.invalidBecause("from", `gives more than ${MAX_POINTS} steps: choose a larger step or a shorter range`);
  const clientId = url.searchParams.get("client_id") || null;
  if (clientId !== null && !/^[A-Za-z0-9._~-]{1,128}$/.test(clientId))
    throw E.invalidBecause("client_id", "has characters an id never has");
  if (clientId !== null && step === "1m")
    throw E.invalidBecause("step", "an app's series are hourly or daily (1h, 1d)");
  if (step === "1m" && from < now - KEEP.minute) throw E.invalidBecause("from", "per-minute series are kept 14 days");
  const list = url.searchParams.get("series");
  const series = list ? list.split(",") : null;
  if (series && (series.length > 50 || series.some((s) => !/^[a-z0-9_.-]{1,80}$/.test(s))))
    throw E.invalidBecause("series", "must be up to 50 series names (letters, digits, . _ -), comma-separated");
  // whole steps: a step's count is never cut
  const start = from - (from % size);
  return json(await readMetrics(env, { step, from: start, to, clientId, series }));
}

/** GET /admin/alerts: every rule's state (firing or not, since, its last value and text). */
export async function alerts(_req: Request, env: AdminEnv): Promise<Response> {
  const states = (await metricsStore(env).alerts()) as {
    rule: string;
    firing: boolean;
    since: number;
    value: number;
    text: string;
  }[];
  return json({
    alerts: states.map((a) => ({
      rule: a.rule,
      firing: a.firing,
      since: new Date(a.since).toISOString(),
      value: a.value,
      text: a.text,
    })),
  });
}
