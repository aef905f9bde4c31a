// The console's SMS and carrier page (docs/console.md "SMS and carrier"): over 24 hours, each SMS
// gateway's attempts, delivered, failures by class, the share it was skipped for an open circuit
// and its answer time p50 · p95, with a chart of attempts; and the carrier check's count,
// availability and time. From the roll-ups of the audited `sms.attempt` and `carrier.unavailable`
// events and the counted `carrier.*` and latency series (counts only).

import { html, type SafeHtml } from "../core/html";
import type { RequestContext } from "../core/router";
import { readMetrics } from "../admin/metrics";
import { perform, type Caller } from "../admin/access";
import { guardAcrossApps } from "../admin/guard";
import { callerOf } from "./apps";
import { chart, fill } from "./charts";
import type { ConsoleEnv, Signed } from "./gate";
import { c } from "./i18n";
import { consolePage, href, when, type Viewer } from "./layout";
import { msText, quantiles } from "./latency";

const HOUR = 3_600_000;

/** GET /console/sms (viewer). */
export async function smsPage(_req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> {
  const { v } = s;
  const L = v.lang;
  const now = Date.now();
  const from = now - 24 * HOUR;
  const m = await readMetrics(env, { step: "1h", from: from - (from % HOUR), to: now, clientId: null, series: null });
  const total = (name: string) => (m.series[name] ?? []).reduce((a, [, n]) => a + n, 0);
  const byGateway = new Map<string, Map<string, number>>();
  for (const name of Object.keys(m.series)) {
    const match = /^sms\.([a-z0-9_-]+)\.([a-z_]+)$/.exec(name);
    if (!match) continue;
    const results = byGateway.get(match[1]!) ?? new Map<string, number>();
    results.set(match[2]!, total(name));
    byGateway.set(match[1]!, results);
  }
  const pct = (part: number, whole: number) => (whole === 0 ? "—" : `${((100 * part) / whole).toFixed(1)}%`);
  const rows = [...byGateway].map(([gateway, results]) => {
    const attempts = [...results.values()].reduce((a, n) => a + n, 0);
    const delivered = results.get("delivered") ?? 0;
    const skipped = results.get("circuit_open") ?? 0;
    const failures = [...results]
      .filter(([r]) => r !== "delivered" && r !== "circuit_open")
      .map(([r, n]) => `${r} ${n.toLocaleString("en-US")}`)
      .join(", ");
    const q = quantiles(m, `sms.${gateway}`);
    return html`<tr><th scope="row"><code>${gateway}</code></th><td>${attempts.toLocaleString("en-US")}</td><td>${delivered.toLocaleString("en-US")}</td><td>${failures || "—"}</td><td>${pct(skipped, attempts)}</td><td>${q ? `${msText(q.p50)} · ${msText(q.p95)}` : "—"}</td></tr>`;
  });
  const checks = total("carrier.ok") + total("carrier.failed");
  const carrierQ = quantiles(m, "carrier");
  const body = html`<h1>${c(L, "smsTitle")}</h1><p class="lead">${c(L, "smsLead")}</p>
${
  rows.length
    ? html`<table><caption>${c(L, "smsGateways")}</caption><thead><tr><th scope="col">${c(L, "smsGateway")}</th><th scope="col">${c(L, "smsAttempts")}</th><th scope="col">${c(L, "smsDelivered")}</th><th scope="col">${c(L, "smsFailures")}</th><th scope="col">${c(L, "smsSkipped")}</th><th scope="col">${c(L, "smsLatency")}</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p>${c(L, "smsNone")}</p>`
}
${chart({ id: "c-sms-24h", title: c(L, "chartSms"), lang: L, stepMs: HOUR }, fill(m.series["sms.attempt"] ?? [], from, now, HOUR))}
<h2>${c(L, "carrierTitle")}</h2>
<ul class="grid">
<li>${c(L, "carrierChecks")}<b>${checks.toLocaleString("en-US")}</b></li>
<li>${c(L, "carrierAvailability")}<b>${pct(total("carrier.ok"), checks)}</b></li>
<li>${c(L, "carrierLatency")}<b>${carrierQ ? `${msText(carrierQ.p50)} · ${msText(carrierQ.p95)}` : "—"}</b></li>
</ul>
<p>${c(L, "carrierUnavailable", { n: total("carrier.unavailable").toLocaleString("en-US") })}</p>
${await guardAcross(env, callerOf(rc, s), v)}`;
  return consolePage(v, c(L, "smsTitle"), body);
}

/** The guard's suspect and slowed scopes across apps (docs/abuse.md), each linking to its app's page. */
async function guardAcross(env: ConsoleEnv, caller: Caller, v: Viewer): Promise<SafeHtml> {
  const L = v.lang;
  const { scopes, withheld } = await perform(guardAcrossApps, env, caller, undefined);
  const rows = scopes.map(
    (g) =>
      html`<tr><td>${appCell(v, g.client_id)}</td><td class="mono">${g.scope}</td><td>${c(L, g.state === "slowed" ? "guardSlowed" : "guardSuspect")}</td><td>${when(g.until, L)}</td></tr>`,
  );
  // a viewer's: the prefixes and blocks counted by app, not named (admin/guard.ts)
  const counted = withheld.map(
    (w) =>
      html`<tr><td>${appCell(v, w.client_id)}</td><td>${c(L, "guardWithheld", { kind: w.kind, n: String(w.count) })}</td><td>${c(L, w.state === "slowed" ? "guardSlowed" : "guardSuspect")}</td><td>—</td></tr>`,
  );
  return html`<h2>${c(L, "guardTitle")}</h2><p class="hint">${c(L, "guardAcrossLead")}</p>
${
  scopes.length || withheld.length
    ? html`<table><caption>${c(L, "guardTitle")}</caption><thead><tr><th scope="col">${c(L, "clientId")}</th><th scope="col">${c(L, "guardScope")}</th><th scope="col">${c(L, "guardState")}</th><th scope="col">${c(L, "guardUntil")}</th></tr></thead><tbody>${rows}${counted}</tbody></table>`
    : html`<p>${c(L, "guardNone")}</p>`
}`;
}

/**
 * An app's client id, linked to its page; the guard's own objects (`~service`, the service's pages;
 * `~net`, the service-wide block history) have no app page, and are named only.
 */
const appCell = (v: Viewer, clientId: string) =>
  clientId.startsWith("~")
    ? html`<code>${clientId}</code>`
    : html`<a href="${href(v, `/console/apps/${clientId}`)}"><code>${clientId}</code></a>`;
