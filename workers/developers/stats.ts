// An app's statistics for its team (docs/developers.md "Statistics"): sign-ins, new consents,
// disconnects and failures per Korean calendar day over the last 30 days, with the failures'
// reasons, read from the metrics store's per-app hourly roll-ups (docs/operations.md "Metrics")
// and summed into days from midnight KST. Counts only: never a number, a person or a plid. Answered
// as a page, as CSV and as JSON, to the app's team only (404 for anyone else, as every app route).

import { E } from "../core/errors";
import { html } from "../core/html";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { readMetrics } from "../admin/metrics";
import { href } from "../frame/layout";
import { kstDayStart } from "../provider/store/config";
import { teamApp, type DevEnv, type DevSigned, consolePage } from "./gate";
import { d } from "./i18n";

const HOUR = 3_600_000;
const DAY = 86_400_000;
const KST_OFFSET = 9 * HOUR;
/** The days shown: today (Korean time, so far) and the 29 before it. */
export const STATS_DAYS = 30;
const FAILURE = "signin.failure";

export interface DayCounts {
  /** The Korean calendar day, YYYY-MM-DD. */
  day: string;
  signins: number;
  consents: number;
  disconnects: number;
  failures: number;
}

export interface AppStats {
  client_id: string;
  /** The first and the last day of the range (Korean calendar days, YYYY-MM-DD). */
  from: string;
  to: string;
  /** Every day of the range, oldest first, days without a count as zeros. */
  days: DayCounts[];
  /** Each failure's reason over the range, most first. */
  failure_reasons: Record<string, number>;
}

/** The Korean calendar day that starts (midnight KST) at `start`, as YYYY-MM-DD. */
const dayOf = (start: number) => new Date(start + KST_OFFSET).toISOString().slice(0, 10);

/** Which column a roll-up series counts in (the others are not shown here). */
const COLUMN: Record<string, keyof Omit<DayCounts, "day">> = {
  "signin.success": "signins",
  consent: "consents",
  disconnect: "disconnects",
  [FAILURE]: "failures",
};

/** An app's counts of the last STATS_DAYS Korean days, from its hourly roll-ups (an hour lies in one KST day). */
export async function appStats(env: DevEnv, clientId: string, now = Date.now()): Promise<AppStats> {
  const first = kstDayStart(now) - (STATS_DAYS - 1) * DAY;
  const m = await readMetrics(env, { step: "1h", from: first, to: now, clientId, series: null });
  const days: DayCounts[] = Array.from({ length: STATS_DAYS }, (_, i) => ({
    day: dayOf(first + i * DAY),
    signins: 0,
    consents: 0,
    disconnects: 0,
    failures: 0,
  }));
  const reasons = new Map<string, number>();
  for (const [name, points] of Object.entries(m.series)) {
    const column = COLUMN[name];
    const reason = name.startsWith(`${FAILURE}.`) ? name.slice(FAILURE.length + 1) : null;
    if (!column && reason === null) continue;
    for (const [t, n] of points) {
      const i = Math.floor((Date.parse(t) - first) / DAY);
      if (i < 0 || i >= STATS_DAYS) continue;
      if (column) days[i]![column] += n;
      if (reason !== null) reasons.set(reason, (reasons.get(reason) ?? 0) + n);
    }
  }
  const sorted = [...reasons].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return {
    client_id: clientId,
    from: days[0]!.day,
    to: days[STATS_DAYS - 1]!.day,
    days,
    failure_reasons: Object.fromEntries(sorted),
  };
}

/** A CSV cell: quoted when it holds a comma, a quote or a line break; never read as a formula. */
export function csvCell(v: string | number): string {
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The days as CSV: a header row, then a row a day, oldest first (CRLF, as RFC 4180). */
export function statsCsv(st: AppStats): string {
  const rows = [
    ["day", "signins", "consents", "disconnects", "failures"],
    ...st.days.map((r) => [r.day, r.signins, r.consents, r.disconnects, r.failures]),
  ];
  return rows.map((r) => r.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

const num = (n: number) => n.toLocaleString("en-US");

/** GET /developers/apps/:id/stats: the totals, the table of days and the failures' reasons. */
export async function statsPage(_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned): Promise<Response> {
  const { v } = s;
  const L = v.lang;
  const { app } = await teamApp(env, rc, s);
  const st = await appStats(env, app.clientId);
  const base = `/developers/apps/${app.clientId}`;
  const total = (k: keyof Omit<DayCounts, "day">) => st.days.reduce((a, r) => a + r[k], 0);
  const reasons = Object.entries(st.failure_reasons);
  const rows = [...st.days]
    .reverse()
    .map(
      (r) =>
        html`<tr><td class="mono">${r.day}</td><td>${num(r.signins)}</td><td>${num(r.consents)}</td><td>${num(r.disconnects)}</td><td>${num(r.failures)}</td></tr>`,
    );
  const title = `${app.name} · ${d(L, "stats")}`;
  const body = html`<h1>${title}</h1>
<p class="lead">${d(L, "statsLead", { from: st.from, to: st.to, days: String(STATS_DAYS) })}</p>
<p><a href="${href(v, base)}">${d(L, "backToApp")}</a> · <a href="${href(v, `${base}/stats.csv`)}" download>${d(L, "statsCsv")}</a></p>
<ul class="grid">
<li>${d(L, "statSignins")}<b>${num(total("signins"))}</b></li>
<li>${d(L, "statConsents")}<b>${num(total("consents"))}</b></li>
<li>${d(L, "statDisconnects")}<b>${num(total("disconnects"))}</b></li>
<li>${d(L, "statFailures")}<b>${num(total("failures"))}</b></li>
</ul>
<h2>${d(L, "statFailureReasons")}</h2>
${
  reasons.length
    ? html`<table><caption>${d(L, "statFailureReasons")}</caption><thead><tr><th scope="col">${d(L, "statReason")}</th><th scope="col">${d(L, "statCount")}</th></tr></thead><tbody>${reasons.map(
        ([r, n]) => html`<tr><td><code>${r}</code></td><td>${num(n)}</td></tr>`,
      )}</tbody></table>`
    : html`<p>${d(L, "statNoFailures")}</p>`
}
<h2>${d(L, "statPerDay")}</h2>
<table><caption>${d(L, "statPerDay")}</caption><thead><tr><th scope="col">${d(L, "statDay")}</th><th scope="col">${d(L, "statSignins")}</th><th scope="col">${d(L, "statConsents")}</th><th scope="col">${d(L, "statDisconnects")}</th><th scope="col">${d(L, "statFailures")}</th></tr></thead><tbody>${rows}</tbody></table>`;
  return consolePage(v, title, body);
}

/** GET /developers/apps/:id/stats.csv: the days as a CSV download, `<client_id>-stats.csv`. */
export async function statsCsvFile(_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned): Promise<Response> {
  const { app } = await teamApp(env, rc, s);
  return new Response(statsCsv(await appStats(env, app.clientId)), {
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="${app.clientId}-stats.csv"`,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

/** GET /developers/api/apps/:id/stats: the same as JSON. */
export async function statsApi(_req: Request, env: DevEnv, rc: RequestContext, s: DevSigned): Promise<Response> {
  const { app } = await teamApp(env, rc, s);
  return json(await appStats(env, app.clientId));
}
