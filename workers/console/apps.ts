// The console's Apps (docs/console.md "Apps"): the list, registering an app, and an app's page with
// everything the CLI does for a client: redirect URIs, items with purpose and retention, automatic
// login, events URI, daily SMS budget (with the SMS of the day against it), secret rotation (the new
// secret shown once), disable and enable, deletion, and its review test numbers. Each action runs
// the admin API's service (admin/access.ts `perform`): its checks, role and audit.

import { html, raw, type SafeHtml } from "../core/html";
import type { RequestContext } from "../core/router";
import { perform, type Caller } from "../admin/access";
import * as clients from "../admin/clients";
import type { ClientView } from "../admin/clients";
import { addTestNumber, listTestNumbers, removeTestNumber } from "../admin/test-numbers";
import { readMetrics } from "../admin/metrics";
import { provenBySmsCode } from "../provider/store/metrics/index";
import { clearGuardScope, guardScopes } from "../admin/guard";
import { appSmsBudget, kstDayStart, SMS_BUDGET_MAX, SMS_BUDGET_MIN } from "../provider/store/config";
import { chart, fill } from "./charts";
import type { ConsoleEnv, Signed } from "./gate";
import { c } from "./i18n";
import {
  appFormFields,
  consolePage,
  covers,
  eventTypeBoxes,
  hidden,
  href,
  itemBoxes,
  outcomeBox,
  when,
  type Outcome,
  type Viewer,
} from "./layout";
import { inviteOwner, resumeEvents } from "../admin/reviews";
import { readStream } from "../admin/streams";
import { pauseStream, resumeStream } from "./streams";
import { streamSection, streamWord } from "../frame/stream";
import { ownerCount } from "../provider/store/developers";

export type { Outcome } from "./layout";

/** The operator of a page, as the admin services take their caller. */
export const callerOf = (rc: RequestContext, s: Signed): Caller => ({ actor: s.actor, rc });

function appForm(
  v: Viewer,
  action: string,
  a: Partial<ClientView>,
  submit: string,
  editable: boolean,
  defaultBudget: number,
): SafeHtml {
  const L = v.lang;
  const dis = editable ? "" : raw(" disabled");
  return html`<form class="card" method="post" action="${action}">${hidden(v)}
<label>${c(L, "name")}<input type="text" name="name" required maxlength="100" value="${a.name ?? ""}"${dis}></label>
<label>${c(L, "redirectUris")}<textarea name="redirect_uris" required${dis}>${(a.redirect_uris ?? []).join("\n")}</textarea></label>
${itemBoxes(L, c(L, "items"), a.items ?? [], dis)}
<label>${c(L, "purpose")}<input type="text" name="purpose" maxlength="200" value="${a.purpose ?? ""}"${dis}></label>
<label>${c(L, "retention")}<input type="text" name="retention" maxlength="200" value="${a.retention ?? ""}"${dis}></label>
<div class="checks"><label><input type="checkbox" name="auto_login"${a.auto_login ? raw(" checked") : ""}${dis}> ${c(L, "autoLogin")}</label>
<label><input type="checkbox" name="oidc"${a.oidc ? raw(" checked") : ""}${dis}> ${c(L, "oidc")}</label></div>
<label>${c(L, "eventsUri")}<input type="url" name="events_uri" value="${a.events_uri ?? ""}"${dis}></label>
${eventTypeBoxes(c(L, "eventTypes"), a.event_types, dis)}
<label>${c(L, "smsDailyBudget")}<input type="number" name="sms_daily_budget" min="${SMS_BUDGET_MIN}" max="${SMS_BUDGET_MAX}" step="1" inputmode="numeric" value="${a.sms_daily_budget ?? ""}" placeholder="${defaultBudget}" aria-describedby="sms-budget-help"${dis}></label>
<p class="hint" id="sms-budget-help">${c(L, "smsDailyBudgetHelp", { default: defaultBudget.toLocaleString("en-US") })}</p>
${editable ? html`<p><button type="submit">${submit}</button></p>` : ""}
</form>`;
}

const statusText = (v: Viewer, s: string) => (s === "active" ? c(v.lang, "statusActive") : c(v.lang, "statusDisabled"));

/** GET /console/apps (and the answer of registering one). */
export async function appsPage(
  req: Request,
  env: ConsoleEnv,
  rc: RequestContext,
  s: Signed,
  o: Outcome = {},
): Promise<Response> {
  const { v } = s;
  const L = v.lang;
  const { clients: apps } = await perform(clients.list, env, callerOf(rc, s), undefined);
  const rows = apps.map(
    (a) =>
      html`<tr><td><a href="${href(v, `/console/apps/${a.client_id}`)}">${a.name}</a></td><td><code>${a.client_id}</code></td><td>${statusText(v, a.status)}</td><td>${a.items.join(", ")}</td></tr>`,
  );
  const body = html`<h1>${c(L, "apps")}</h1><p class="lead">${c(L, "appsLead")}</p>${outcomeBox(v, rc.requestId, o, "secretOnce")}
${
  apps.length
    ? html`<table><caption>${c(L, "apps")}</caption><thead><tr><th scope="col">${c(L, "name")}</th><th scope="col">${c(L, "clientId")}</th><th scope="col">${c(L, "status")}</th><th scope="col">${c(L, "items")}</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p>${c(L, "noApps")}</p>`
}
${
  covers(v.role, "editor")
    ? html`<h2>${c(L, "newApp")}</h2>${appForm(v, "/console/apps", {}, c(L, "create"), true, defaultBudget(env))}`
    : ""
}`;
  return consolePage(v, c(L, "apps"), body, { status: o.status });
}

/** POST /console/apps: registers an app; its page shows the secret once. */
export async function createApp(req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> {
  try {
    const made = await perform(clients.create, env, callerOf(rc, s), appFormFields(s.params, true));
    rc.params.id = made.client_id;
    return appPage(req, env, rc, s, { secret: made.client_secret, notice: c(s.v.lang, "saved") });
  } catch (err) {
    return appsPage(req, env, rc, s, failed(err));
  }
}

/** An admin handler's refusal as the page shows it (a 5xx goes on to the worker's error answer). */
export function failed(err: unknown): Outcome {
  const e = err as { status?: number; message?: string };
  if (typeof e.status !== "number" || e.status >= 500 || e.status === 403) throw err;
  return { error: e.message ?? "", status: e.status };
}

/** GET /console/apps/:id (and the answer of every action on it). */
export async function appPage(
  req: Request,
  env: ConsoleEnv,
  rc: RequestContext,
  s: Signed,
  o: Outcome = {},
): Promise<Response> {
  const { v } = s;
  const L = v.lang;
  const a = await perform(clients.read, env, callerOf(rc, s), { clientId: rc.params.id! });
  const base = `/console/apps/${a.client_id}`;
  const editor = covers(v.role, "editor");
  const admin = covers(v.role, "admin");
  const numbers = (await perform(listTestNumbers, env, callerOf(rc, s), { after: "" })).test_numbers.filter((t) =>
    t.clients.includes(a.client_id),
  );
  const button = (path: string, label: string, cls = "secondary", extra: SafeHtml | string = "") =>
    html`<form class="inline" method="post" action="${base}${path}">${hidden(v)}${extra}<button type="submit" class="${cls}">${label}</button></form>`;
  const numberRows = numbers.map(
    (t) =>
      html`<tr><td class="mono">${t.phoneNo}</td><td>${t.name}</td><td>${when(t.expires_at, L)}</td><td>${t.wrong_codes}${t.suspended ? html` (${c(L, "suspended")})` : ""}</td><td>${
        editor ? button(`/test-numbers/${t.phoneNo}/remove`, c(L, "remove")) : ""
      }</td></tr>`,
  );
  const in30 = new Date(Date.now() + 30 * 86_400_000 + 9 * 3600_000).toISOString().slice(0, 10);
  const body = html`<p><a href="${href(v, "/console/apps")}">← ${c(L, "apps")}</a></p>
<h1>${a.name}</h1>
<p class="lead">${c(L, "clientId")}: <code>${a.client_id}</code> · ${c(L, "status")}: <strong>${statusText(v, a.status)}</strong></p>
${outcomeBox(v, rc.requestId, o, "secretOnce")}
${await appStats(env, v, a)}
${await ownerSection(env, v, a, editor, base)}
<h2>${c(L, "settings")}</h2>
${appForm(v, base, a, c(L, "save"), editor, defaultBudget(env))}
${editor ? (a.status === "active" ? button("/disable", c(L, "disable")) : button("/enable", c(L, "enable"))) : ""}
${
  admin
    ? html`<h2>${c(L, "dangerZone")}</h2>
<p class="hint">${c(L, "rotateHelp")}</p>${button("/rotate-secret", c(L, "rotate"))}
<p class="hint">${c(L, "deleteHelp")}</p>
${button("/delete", c(L, "deleteApp"), "danger", html`<label>${c(L, "confirmDelete")}<input type="text" name="confirm" required autocomplete="off"></label>`)}`
    : ""
}
${streamSection(v, base, (await perform(readStream, env, callerOf(rc, s), { clientId: a.client_id })).stream, editor, (k) => c(L, k))}
${await guardSection(env, callerOf(rc, s), v, a.client_id, editor, button)}
<h2>${c(L, "testNumbers")}</h2><p class="hint">${c(L, "testNumbersLead")}</p>
${
  numbers.length
    ? html`<table><caption>${c(L, "testNumbers")}</caption><thead><tr><th scope="col">${c(L, "phone")}</th><th scope="col">${c(L, "name")}</th><th scope="col">${c(L, "expires")}</th><th scope="col">${c(L, "wrongCodes")}</th><th scope="col"><span class="skip">${c(L, "remove")}</span></th></tr></thead><tbody>${numberRows}</tbody></table>`
    : html`<p>${c(L, "noTestNumbers")}</p>`
}
${
  editor
    ? html`<form class="card" method="post" action="${base}/test-numbers">${hidden(v)}
<label>${c(L, "carrier")}<select name="telcoCd"><option value="S">SKT</option><option value="K">KT</option><option value="L">LG U+</option></select></label>
<label>${c(L, "phone")}<input type="tel" name="phoneNo" required pattern="01[016789][0-9]{7,8}" inputmode="numeric" autocomplete="off"></label>
<label>${c(L, "name")}<input type="text" name="name" required maxlength="50" autocomplete="off"></label>
<label>${c(L, "gender")}<select name="gender"><option value="F">${c(L, "genderF")}</option><option value="M">${c(L, "genderM")}</option></select></label>
<label>${c(L, "birth")}<input type="date" name="birth" required value="1990-01-01"></label>
<label>${c(L, "fixedCode")}<input type="text" name="code" required pattern="[0-9]{6}" inputmode="numeric" autocomplete="off"></label>
<label>${c(L, "expires")}<input type="date" name="expires" required value="${in30}"></label>
<p><button type="submit">${c(L, "add")}</button></p></form>`
    : ""
}`;
  return consolePage(v, a.name, body, { status: o.status });
}

/** The app's suspect and slowed scopes (docs/abuse.md), each with a clear button for an editor. */
async function guardSection(
  env: ConsoleEnv,
  caller: Caller,
  v: Viewer,
  clientId: string,
  editor: boolean,
  button: (path: string, label: string, cls?: string, extra?: SafeHtml | string) => SafeHtml,
): Promise<SafeHtml> {
  const L = v.lang;
  const { scopes, withheld } = await perform(guardScopes, env, caller, { clientId });
  const rows = scopes.map(
    (g) =>
      html`<tr><td class="mono">${g.scope}</td><td>${c(L, g.state === "slowed" ? "guardSlowed" : "guardSuspect")}</td><td>${when(g.until, L)}</td><td>${g.sent} / ${g.verified}</td><td>${
        editor
          ? button(
              "/guard/clear",
              c(L, "guardClear"),
              "secondary",
              html`<input type="hidden" name="scope" value="${g.scope}">`,
            )
          : ""
      }</td></tr>`,
  );
  // a viewer's: the prefixes and blocks counted, not named (admin/guard.ts)
  const counted = withheld.map(
    (w) =>
      html`<tr><td>${c(L, "guardWithheld", { kind: w.kind, n: String(w.count) })}</td><td>${c(L, w.state === "slowed" ? "guardSlowed" : "guardSuspect")}</td><td>—</td><td>—</td><td></td></tr>`,
  );
  return html`<h2>${c(L, "guardTitle")}</h2><p class="hint">${c(L, "guardLead")}</p>
${
  scopes.length || withheld.length
    ? html`<table><caption>${c(L, "guardTitle")}</caption><thead><tr><th scope="col">${c(L, "guardScope")}</th><th scope="col">${c(L, "guardState")}</th><th scope="col">${c(L, "guardUntil")}</th><th scope="col">${c(L, "guardCounts")}</th><th scope="col"><span class="skip">${c(L, "guardClear")}</span></th></tr></thead><tbody>${rows}${counted}</tbody></table>`
    : html`<p>${c(L, "guardNone")}</p>`
}`;
}

/** SMS_APP_DAILY_BUDGET as this worker reads it: what an app without a budget of its own takes. */
const defaultBudget = (env: ConsoleEnv) => appSmsBudget({ smsDailyBudget: null }, env);

/** A gateway's delivered series: one SMS sent. */
const DELIVERED = /^sms\.[a-z0-9_-]+\.delivered$/;

/**
 * An app's statistics over the last 30 days, from its daily roll-ups (counts only), and its SMS
 * since midnight KST (hourly roll-ups) against its daily budget, with its busiest day's SMS to size it.
 */
async function appStats(env: ConsoleEnv, v: Viewer, a: ClientView): Promise<SafeHtml> {
  const L = v.lang;
  const clientId = a.client_id;
  const now = Date.now();
  const from = now - 30 * DAY;
  const [m, today] = await Promise.all([
    readMetrics(env, { step: "1d", from: from - (from % DAY), to: now, clientId, series: null }),
    readMetrics(env, { step: "1h", from: kstDayStart(now), to: now, clientId, series: null }),
  ]);
  const total = (name: string) => (m.series[name] ?? []).reduce((a, [, n]) => a + n, 0);
  const smsOf = (points: [string, number][]) => points.reduce((s, [, n]) => s + n, 0);
  const sentToday = Object.entries(today.series)
    .filter(([k]) => DELIVERED.test(k))
    .reduce((s, [, p]) => s + smsOf(p), 0);
  const perDay = new Map<string, number>();
  for (const [k, points] of Object.entries(m.series))
    if (DELIVERED.test(k)) for (const [t, n] of points) perDay.set(t, (perDay.get(t) ?? 0) + n);
  const busiest = Math.max(0, ...perDay.values());
  const delivered = [...perDay.values()].reduce((a, n) => a + n, 0);
  const budget = appSmsBudget({ smsDailyBudget: a.sms_daily_budget }, env);
  const reasons = Object.keys(m.series)
    .filter((k) => k.startsWith("signin.failure."))
    .map((k) => [k.slice("signin.failure.".length), total(k)] as const)
    .sort((a, b) => b[1] - a[1]);
  return html`<h2>${c(L, "appStats")}</h2>
<ul class="grid">
<li>${c(L, "kpiSignins")}<b>${total("signin.success").toLocaleString("en-US")}</b></li>
<li>${c(L, "statConsents")}<b>${total("consent").toLocaleString("en-US")}</b></li>
<li>${c(L, "statDisconnects")}<b>${total("disconnect").toLocaleString("en-US")}</b></li>
<li>${c(L, "kpiSmsBudgetToday")}<b>${sentToday.toLocaleString("en-US")} / ${budget.toLocaleString("en-US")} (${((100 * sentToday) / budget).toFixed(1)}%)</b></li>
<li>${c(L, "kpiSmsBusiestDay")}<b>${busiest.toLocaleString("en-US")}</b></li>
<li>${c(L, "kpiGuardAsked")}<b>${total("guard.decision.challenge_asked").toLocaleString("en-US")} / ${total("guard.decision.challenge_passed").toLocaleString("en-US")}</b></li>
<li>${c(L, "kpiGuardHeld")}<b>${(total("guard.decision.slowed") + total("guard.decision.paused")).toLocaleString("en-US")}</b></li>
<li>${c(L, "kpiUntypedCodes")}<b>${untypedCodes(total, delivered).toLocaleString("en-US")} / ${delivered.toLocaleString("en-US")}</b></li>
</ul>
${byRoute(L, total)}
${chart({ id: "c-app-signins", title: c(L, "chartAppSignins"), lang: L, stepMs: DAY }, fill(m.series["signin.success"] ?? [], from, now, DAY))}
${
  reasons.length
    ? html`<table><caption>${c(L, "statFailures")}</caption><thead><tr><th scope="col">${c(L, "statFailures")}</th><th scope="col">${c(L, "count")}</th></tr></thead><tbody>${reasons.map(
        ([r, n]) => html`<tr><td><code>${r}</code></td><td>${n.toLocaleString("en-US")}</td></tr>`,
      )}</tbody></table>`
    : html`<p>${c(L, "noFailures")}</p>`
}`;
}

const DAY = 86_400_000;

/**
 * An app's sign-ins by how the number was proven (docs/console.md "Apps"): a code sent by SMS, a
 * text the person sent, a passkey, automatic login, a review test number's fixed code.
 */
function byRoute(L: Viewer["lang"], total: (series: string) => number): SafeHtml {
  const rows: [string, number][] = [
    ["routeSmsCode", provenBySmsCode(total)],
    ["routeText", total("signin.success.text")],
    ["routePasskey", total("signin.success.passkey")],
    ["routeAutomatic", total("signin.success.automatic")],
    ["routeFixedCode", total("signin.success.fixed_code")],
  ];
  return html`<table><caption>${c(L, "routeTitle")}</caption><thead><tr><th scope="col">${c(L, "routeColumn")}</th><th scope="col">${c(L, "count")}</th></tr></thead><tbody>${rows.map(
    ([k, n]) => html`<tr><td>${c(L, k as "routeText")}</td><td>${n.toLocaleString("en-US")}</td></tr>`,
  )}</tbody></table>`;
}

/**
 * Codes the app's sign-ins were sent by SMS and never typed: SMS delivered less the right entries
 * of a sent code (`verify.ok` less the review test numbers' fixed codes, which no SMS carried). A
 * code sent again counts as two sends, one typed.
 */
const untypedCodes = (total: (series: string) => number, delivered: number): number =>
  Math.max(0, delivered - Math.max(0, total("verify.ok") - total("signin.success.fixed_code")));

/** Who manages the app in the developer console; for an app with no owner, an editor invites one. */
async function ownerSection(env: ConsoleEnv, v: Viewer, a: ClientView, editor: boolean, base: string) {
  const L = v.lang;
  const owners = await ownerCount(env, a.client_id);
  if (owners > 0) return html`<h2>${c(L, "ownerTitle")}</h2><p>${owners} · /developers</p>`;
  const paused = a.events_paused_since
    ? html`<div class="alert" role="alert"><p>${c(L, "eventsPaused", { at: when(a.events_paused_since, L) })}</p></div>${
        editor
          ? html`<form class="inline" method="post" action="${base}/events/resume">${hidden(v)}<button type="submit">${c(L, "eventsResume")}</button></form>`
          : ""
      }`
    : "";
  return html`<h2>${c(L, "ownerTitle")}</h2>${paused}<p>${c(L, "ownerNone")}</p>${
    editor
      ? html`<form class="inline" method="post" action="${base}/owner">${hidden(v)}<label>${c(L, "phone")}<input type="tel" name="phone" required inputmode="numeric" autocomplete="off"></label><button type="submit" class="secondary">${c(L, "ownerInvite")}</button></form>`
      : ""
  }`;
}

type Action =
  | "resume_events"
  | "pause_stream"
  | "resume_stream"
  | "invite_owner"
  | "update"
  | "rotate"
  | "disable"
  | "enable"
  | "delete"
  | "add_test"
  | "remove_test"
  | "clear_scope";

/** POST /console/apps/:id[/…]: one action on an app, then its page (or the list once deleted). */
export function appAction(action: Action) {
  return async (req: Request, env: ConsoleEnv, rc: RequestContext, s: Signed): Promise<Response> => {
    const L = s.v.lang;
    const clientId = rc.params.id!;
    const by = callerOf(rc, s);
    try {
      switch (action) {
        case "update":
          await perform(clients.update, env, by, { clientId, fields: appFormFields(s.params, true) });
          return appPage(req, env, rc, s, { notice: c(L, "saved") });
        case "rotate": {
          const r = await perform(clients.rotate, env, by, { clientId });
          return appPage(req, env, rc, s, { secret: r.client_secret });
        }
        case "disable":
        case "enable":
          await perform(action === "disable" ? clients.disable : clients.enable, env, by, { clientId });
          return appPage(req, env, rc, s, { notice: c(L, "saved") });
        case "delete":
          if (s.params.get("confirm") !== clientId)
            return appPage(req, env, rc, s, { error: c(L, "confirmDelete"), status: 400 });
          await perform(clients.remove, env, by, { clientId });
          return appsPage(req, env, rc, s, { notice: c(L, "saved") });
        case "add_test": {
          const p = s.params;
          const ci = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(64))));
          const expires = p.get("expires");
          await perform(addTestNumber, env, by, {
            telcoCd: p.get("telcoCd") ?? "",
            phoneNo: p.get("phoneNo") ?? "",
            name: p.get("name") ?? "",
            gender: p.get("gender") ?? "",
            birth: p.get("birth") ?? "",
            foreign: "L",
            ci,
            code: p.get("code") ?? "",
            clients: [clientId],
            // the end of the chosen day in Korea
            expiresAt: expires && /^\d{4}-\d{2}-\d{2}$/.test(expires) ? `${expires}T23:59:59+09:00` : "",
          });
          return appPage(req, env, rc, s, { notice: c(L, "saved") });
        }
        case "resume_events":
          await perform(resumeEvents, env, by, { clientId });
          return appPage(req, env, rc, s, { notice: c(L, "saved") });
        case "pause_stream":
        case "resume_stream":
          await perform(action === "pause_stream" ? pauseStream : resumeStream, env, by, { clientId });
          return appPage(req, env, rc, s, {
            notice: streamWord(L, action === "pause_stream" ? "streamPausedDone" : "streamResumedDone"),
          });
        case "invite_owner": {
          const r = await perform(inviteOwner, env, by, { clientId, phone: s.params.get("phone") ?? "" });
          return appPage(req, env, rc, s, { notice: c(L, "ownerInvited", { masked: r.masked }) });
        }
        case "clear_scope":
          await perform(clearGuardScope, env, by, { clientId, scope: s.params.get("scope") ?? "" });
          return appPage(req, env, rc, s, { notice: c(L, "saved") });
        case "remove_test":
          await perform(removeTestNumber, env, by, { phone: rc.params.phone! });
          return appPage(req, env, rc, s, { notice: c(L, "saved") });
      }
    } catch (err) {
      return appPage(req, env, rc, s, failed(err));
    }
  };
}
