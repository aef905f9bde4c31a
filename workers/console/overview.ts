// The console's overview (docs/console.md "Overview"): the audited steps' roll-ups over a range
// (1 hour, 24 hours, 7 days, 30 days): sign-ins, the success rate, automatic-login share, SMS sent
// and spent in 원 today and this month (a price per gateway, SMS_PRICES_KRW), the failover share,
// the code conversion (sign-ins proven by a code sent by SMS, per SMS delivered), the funnel of apps' sign-ins with
// each step's conversion, the steps' latency p50/p95, the counts of apps and people, and the open
// alerts and notices. The figures refresh every 60 seconds; the roll-ups are at most a flush
// interval (AUDIT_FLUSH_SECONDS, METRICS_FLUSH_SECONDS) behind.

import { ConfigError, intVar } from "../core/config";
import { cspNonce, html, htmlResponse } from "../core/html";
import type { RequestContext } from "../core/router";
import { perform } from "../admin/access";
import { list } from "../admin/clients";
import { summary } from "../admin/directory";
import { readMetrics, type MetricsAnswer } from "../admin/metrics";
import { openNotices } from "../provider/store/notices";
import { checkConfig, configProblems } from "../provider/store/config";
import {
  type AlertState,
  type Step,
  metricsStore,
  provenByCode,
  provenByPasskey,
  provenBySmsCode,
} from "../provider/store/metrics/index";
import { GATEWAYS } from "../provider/signin/index";
import { callerOf } from "./apps";
import { chart, fill } from "./charts";
import type { ConsoleEnv, Signed } from "./gate";
import { c } from "./i18n";
import { consolePage, href, when } from "./layout";
import { msText, quantiles } from "./latency";

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const KST = 9 * HOUR;

export const RANGES: Record<string, { ms: number; step: Step; stepMs: number }> = {
  "1h": { ms: HOUR, step: "1m", stepMs: MIN },
  "24h": { ms: DAY, step: "1h", stepMs: HOUR },
  "7d": { ms: 7 * DAY, step: "1h", stepMs: HOUR },
  "30d": { ms: 30 * DAY, step: "1d", stepMs: DAY },
};

/** SMS_PRICES_KRW: `gateway:원` pairs, comma-separated; a gateway not named costs 20 원 (the outbox 0). */
export function smsPrices(env: { SMS_PRICES_KRW?: string }): (gateway: string) => number {
  const prices = new Map<string, number>([["outbox", 0]]);
  for (const part of (env.SMS_PRICES_KRW ?? "").split(",").filter((p) => p.trim() !== "")) {
    const m = /^\s*([a-z0-9-]+)\s*:\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m) throw new ConfigError("SMS_PRICES_KRW", "must be gateway:price pairs (naver-sens:20,nhn-cloud:18)");
    prices.set(m[1]!, Number(m[2]));
  }
  return (g) => prices.get(g) ?? 20;
}

/** CONSOLE_REFRESH_SECONDS: how often the figures are fetched again. */
const refreshSeconds = (env: { CONSOLE_REFRESH_SECONDS?: string }) =>
  intVar(env, "CONSOLE_REFRESH_SECONDS", 60, 1, 3600);
checkConfig(smsPrices);
checkConfig(refreshSeconds);

/** `read(env)`, or `dflt` when its variable is malformed: the overview still shows, naming the variable. */
function orDefault<T>(read: () => T, dflt: T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ConfigError) return dflt;
    throw err;
  }
}

/** Each gateway's delivered series (SMS_SENDER's names and the dev outbox): what the spend counts. */
const DELIVERED = [...GATEWAYS, "outbox"].map((g) => `sms.${g}.delivered`);

const sum = (a: MetricsAnswer, name: string) => (a.series[name] ?? []).reduce((s, [, n]) => s + n, 0);
const pct = (part: number, whole: number) => (whole === 0 ? null : (100 * part) / whole);

/** Delivered SMS per gateway, and what they cost. */
function spend(a: MetricsAnswer, price: (g: string) => number): { sent: number; won: number } {
  let sent = 0;
  let won = 0;
  for (const [name, points] of Object.entries(a.series)) {
    const m = /^sms\.([a-z0-9_-]+)\.delivered$/.exec(name);
    if (!m) continue;
    const n = points.reduce((s, [, x]) => s + x, 0);
    sent += n;
    won += n * price(m[1]!);
  }
  return { sent, won };
}

/**
 * The overview stays live: every `CONSOLE_REFRESH_SECONDS` (60; the button's data-every), while the tab is visible and the person has not paused
 * it (a button: WCAG 2.2.2), the page is fetched again and its figures (#live) replaced. No reload,
 * so focus and the open details stay where they were.
 */
const LIVE_JS = `(function(){
var live=document.getElementById("live"),btn=document.getElementById("live-toggle");
if(!live||!btn)return;
var every=Number(btn.dataset.every)||60;
var on=true;
btn.addEventListener("click",function(){on=!on;btn.setAttribute("aria-pressed",String(on));btn.textContent=on?btn.dataset.on:btn.dataset.off;});
setInterval(function(){
if(!on||document.visibilityState!=="visible")return;
fetch(location.href,{credentials:"same-origin",headers:{"X-Console-Part":"live"}}).then(function(r){return r.ok?r.text():null;}).then(function(t){
if(t===null)return;
var next=new DOMParser().parseFromString(t,"text/html").getElementById("live");
if(next)live.replaceChildren.apply(live,Array.prototype.slice.call(next.childNodes));
}).catch(function(){});
},every*1000);
})();`;

/** GET /console: the overview. */
export async function overviewPage(req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> {
  const { v, params } = s;
  const L = v.lang;
  const rangeKey = params.get("range") ?? "1h";
  const range = RANGES[rangeKey] ?? RANGES["1h"]!;
  const now = Date.now();
  const from = now - range.ms;
  const todayKst = now - ((now + KST) % DAY);
  const monthKst = Date.parse(new Date(now + KST).toISOString().slice(0, 8) + "01T00:00:00+09:00");
  const price = orDefault(() => smsPrices(env as { SMS_PRICES_KRW?: string }), smsPrices({}));
  const every = orDefault(() => refreshSeconds(env as { CONSOLE_REFRESH_SECONDS?: string }), 60);
  // the variables this worker finds malformed or missing (by name only): first on the page
  const problems = configProblems(env);
  const [{ clients }, counts, notices, inRange, month] = await Promise.all([
    perform(list, env, callerOf(rc, s), undefined),
    perform(summary, env, callerOf(rc, s), undefined),
    openNotices(env, 10),
    readMetrics(env, { step: range.step, from: from - (from % range.stepMs), to: now, clientId: null, series: null }),
    // the month only for SMS delivered per gateway (today's and this month's spend): not every series
    readMetrics(env, { step: "1h", from: monthKst, to: now, clientId: null, series: DELIVERED }),
  ]);
  const firing = ((await metricsStore(env).alerts()) as AlertState[]).filter((a) => a.firing);
  const today: MetricsAnswer = {
    ...month,
    series: Object.fromEntries(
      Object.entries(month.series).map(([k, p]) => [k, p.filter(([t]) => Date.parse(t) >= todayKst)]),
    ),
  };
  const ok = sum(inRange, "signin.success");
  const failed = sum(inRange, "signin.failure");
  const attempts = sum(inRange, "sms.attempt");
  const primary = (env.SMS_SENDER ?? "outbox").split(",")[0]!.trim();
  const onPrimary = Object.entries(inRange.series)
    .filter(([k]) => k.startsWith(`sms.${primary}.`))
    .reduce((a, [, p]) => a + p.reduce((x, [, n]) => x + n, 0), 0);
  const delivered = spend(inRange, () => 0).sent;
  // each passkey sign-in is a code not sent (docs/passkeys.md), priced as the primary gateway's
  const saved = provenByPasskey((k) => sum(inRange, k));
  const bySmsCode = provenBySmsCode((k) => sum(inRange, k));
  const kpi = (label: string, value: string) => html`<li>${label}<b>${value}</b></li>`;
  const share = (x: number | null) => (x === null ? "—" : `${x.toFixed(1)}%`);
  const t = spend(today, price);
  const m = spend(month, price);
  const won = (n: number) => `${Math.round(n).toLocaleString("en-US")}${L === "ko" ? "원" : " KRW"}`;
  const successSeries = fill(inRange.series["signin.success"] ?? [], from, now, range.stepMs);
  const failureSeries = new Map(fill(inRange.series["signin.failure"] ?? [], from, now, range.stepMs));
  const rate = successSeries.map(([tt, n]): [number, number] => {
    const f = failureSeries.get(tt) ?? 0;
    return [tt, n + f === 0 ? -1 : (100 * n) / (n + f)];
  });
  // the funnel of apps' sign-ins: each step's count and its share of the step before
  const steps: [string, number][] = [
    [c(L, "funnelStart"), sum(inRange, "signin.start")],
    [c(L, "funnelMatched"), sum(inRange, "identify.matched")],
    [c(L, "funnelProven"), sum(inRange, "verify.ok")],
    [c(L, "funnelSignedIn"), provenByCode((k) => sum(inRange, k))],
  ];
  const funnel = steps.map(
    ([label, n], i) =>
      html`<tr><th scope="row">${label}</th><td>${n.toLocaleString("en-US")}</td><td>${i === 0 ? "—" : share(pct(n, steps[i - 1]![1]))}</td></tr>`,
  );
  const latency = (["identify", "verify", "consent"] as const).map((step) => {
    const q = quantiles(inRange, `step.${step}`);
    return html`<tr><th scope="row">${c(L, `step_${step}`)}</th><td>${(q?.n ?? 0).toLocaleString("en-US")}</td><td>${q ? msText(q.p50) : "—"}</td><td>${q ? msText(q.p95) : "—"}</td></tr>`;
  });
  const ranges = Object.keys(RANGES).map(
    (k) =>
      html`<li><a href="${href(v, "/console", { range: k })}"${k === rangeKey ? html` aria-current="true"` : ""}>${c(L, `range_${k}` as "range_1h")}</a></li>`,
  );
  const config = problems.length
    ? html`<section class="alert" id="config-problems" aria-labelledby="config-problems-title"><h2 id="config-problems-title">${c(L, "configProblems")}</h2><p>${c(L, "configProblemsLead")}</p><ul>${problems.map((name) => html`<li><code>${name}</code></li>`)}</ul></section>`
    : "";
  const live = html`<div id="live">${config}
<nav aria-label="${c(L, "rangeNav")}"><ul class="ranges">${ranges}</ul></nav>
<h2>${c(L, "counts")}</h2>
<ul class="grid">
${kpi(c(L, "kpiSignins"), ok.toLocaleString("en-US"))}
${kpi(c(L, "kpiSuccessRate"), share(pct(ok, ok + failed)))}
${kpi(c(L, "kpiAutoShare"), share(pct(sum(inRange, "signin.success.automatic"), ok)))}
${kpi(c(L, "kpiConversion"), share(pct(bySmsCode, delivered)))}
${kpi(c(L, "kpiFailover"), share(pct(attempts - onPrimary, attempts)))}
${kpi(c(L, "kpiSmsToday"), `${t.sent.toLocaleString("en-US")} · ${won(t.won)}`)}
${kpi(c(L, "kpiSmsMonth"), `${m.sent.toLocaleString("en-US")} · ${won(m.won)}`)}
${kpi(c(L, "kpiSmsSaved"), `${saved.toLocaleString("en-US")} · ${won(saved * price(primary))}`)}
${kpi(c(L, "appsCount"), clients.length.toLocaleString("en-US"))}
${kpi(c(L, "subscribersCount"), counts.subscribers.toLocaleString("en-US"))}
</ul>
<table><caption>${c(L, "funnelTitle")}</caption><thead><tr><th scope="col">${c(L, "funnelStep")}</th><th scope="col">${c(L, "count")}</th><th scope="col">${c(L, "funnelConversion")}</th></tr></thead><tbody>${funnel}</tbody></table>
<table><caption>${c(L, "latencyTitle")}</caption><thead><tr><th scope="col">${c(L, "funnelStep")}</th><th scope="col">${c(L, "timed")}</th><th scope="col">p50</th><th scope="col">p95</th></tr></thead><tbody>${latency}</tbody></table>
<section aria-labelledby="charts"><h2 id="charts">${c(L, "metrics")}</h2>
<div id="metrics-charts">
${chart({ id: "c-signins", title: c(L, "chartSignins"), lang: L, stepMs: range.stepMs }, successSeries)}
${chart({ id: "c-rate", title: c(L, "chartSuccessRate"), lang: L, stepMs: range.stepMs, percent: true }, rate)}
${chart({ id: "c-sms", title: c(L, "chartSms"), lang: L, stepMs: range.stepMs }, fill(inRange.series["sms.attempt"] ?? [], from, now, range.stepMs))}
</div></section>
<h2>${c(L, "openAlerts")}</h2>
${
  firing.length
    ? html`<ul class="alerts">${firing.map((a) => html`<li class="alert" data-rule="${a.rule}">${a.text} <span class="hint">(${c(L, "since")} ${when(new Date(a.since).toISOString(), L)})</span></li>`)}</ul>`
    : html`<p>${c(L, "noAlerts")}</p>`
}
<h2>${c(L, "notices")}</h2>
${notices.length ? html`<ul>${notices.map((n) => html`<li>${n.text}</li>`)}</ul>` : html`<p>${c(L, "noNotices")}</p>`}
</div>`;
  // the live refresh asks for the figures only: a whole page parsed in the page would bring its
  // own <style> under another CSP nonce, which the browser refuses (and reports)
  if (req.headers.get("X-Console-Part") === "live") return htmlResponse(live, { nonce: cspNonce() });
  const body = html`<h1>${c(L, "overview")}</h1><p class="lead">${c(L, "overviewLead")}</p>
<p><button type="button" class="secondary" id="live-toggle" aria-pressed="true" data-every="${String(every)}" data-on="${c(L, "liveOn")}" data-off="${c(L, "liveOff")}">${c(L, "liveOn")}</button></p>
${live}`;
  return consolePage(v, c(L, "overview"), body, { script: LIVE_JS });
}
