// The /account dashboard (docs/account.md): the apps a proven number logs in to, each with its two
// forms. Plain HTML in the sign-in pages' look (workers/provider/signin/pages.ts), no JavaScript.
// The form contract is stable: `<form method="post" action="/account">` with hidden `csrf`,
// `client_id` and `lang`, and a submit button `name="action"` valued `end_auto_login` or `terminate`.

import { formatKst } from "../dates";
import { cspNonce, html, type SafeHtml } from "../../core/html";
import {
  itemName,
  t,
  type Lang,
  page,
  type PageContext,
  type Operator,
  pt,
  CREATE_SCRIPT,
  enrolForm,
} from "../signin/index";
import type { Connection } from "../store/flows/connections";
import type { PasskeysView } from "./passkeys";

export interface DashboardView {
  operator: Operator;
  lang: Lang;
  masked: string;
  csrf: string;
  connections: readonly Connection[];
  passkeys: PasskeysView;
  /** A confirmation line (role=status) or an error (role=alert) after an action. */
  notice?: string;
  alert?: string;
  cookies?: readonly string[];
  status?: number;
}

function hiddenFields(v: Pick<DashboardView, "csrf" | "lang">, clientId?: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${v.csrf}"><input type="hidden" name="lang" value="${v.lang}">${
    clientId !== undefined ? html`<input type="hidden" name="client_id" value="${clientId}">` : ""
  }`;
}

function connectionCard(v: DashboardView, c: Connection, i: number): SafeHtml {
  const L = v.lang;
  const items = c.items.length > 0 ? c.items.map((it) => itemName(L, it)).join(", ") : t(L, "accountNoItems");
  const auto =
    c.autoLoginUntil !== null
      ? t(L, "accountAutoLoginOn", { until: formatKst(c.autoLoginUntil, L) })
      : t(L, "accountAutoLoginOff");
  return html`<section class="app" aria-labelledby="app-${i}">
<h2 id="app-${i}">${c.appName}</h2>
<dl>
<div><dt>${t(L, "accountItems")}</dt><dd>${items}</dd></div>
<div><dt>${t(L, "accountConnectedAt")}</dt><dd>${formatKst(c.connectedAt, L)}</dd></div>
<div><dt>${t(L, "accountLastLogin")}</dt><dd>${c.lastLoginAt !== null ? formatKst(c.lastLoginAt, L) : t(L, "accountNever")}</dd></div>
</dl>
<p class="auto">${auto}</p>
<form method="post" action="/account" class="app-actions">
${hiddenFields(v, c.clientId)}
${c.autoLoginUntil !== null ? html`<button type="submit" class="secondary" name="action" value="end_auto_login">${t(L, "accountEndAutoLogin")}</button>` : ""}
<button type="submit" class="secondary" name="action" value="terminate" aria-describedby="terminate-hint">${t(L, "accountTerminate")}</button>
</form>
</section>`;
}

/** The person's passkeys: each with its kind and dates, and its remove (or, pending, cancel) button. */
function passkeySection(v: DashboardView): SafeHtml {
  const L = v.lang;
  const now = Date.now();
  const kind = (d: string) => pt(L, d === "synced" ? "kindSynced" : d === "key" ? "kindKey" : "kindDevice");
  const rows = v.passkeys.rows.map((k, i) => {
    const pending = k.usableAt > now;
    return html`<li class="app" aria-labelledby="pk-${i}"><h3 id="pk-${i}">${k.name}</h3>
<dl>
<div><dt>${pt(L, "listKind")}</dt><dd>${kind(k.device)}</dd></div>
<div><dt>${pt(L, "listCreated")}</dt><dd>${formatKst(k.createdAt, L)}</dd></div>
<div><dt>${pt(L, "listLastUsed")}</dt><dd>${k.lastUsedAt !== null ? formatKst(k.lastUsedAt, L) : pt(L, "listNever")}</dd></div>
</dl>
${pending ? html`<p class="auto">${pt(L, "listPending", { until: formatKst(k.usableAt, L) })}</p>` : ""}
<form method="post" action="/account" class="app-actions">${hiddenFields(v)}<input type="hidden" name="credential_id" value="${k.credentialId}">
<button type="submit" class="secondary" name="action" value="passkey_remove">${pt(L, pending ? "cancelPending" : "remove")} <span class="hint">(${k.name})</span></button></form></li>`;
  });
  const e = v.passkeys.enrol;
  return html`<section class="passkeys" aria-labelledby="passkeys-title">
<h2 id="passkeys-title">${pt(L, "listTitle")}</h2>
${rows.length > 0 ? html`<ul class="passkey-list">${rows}</ul>` : html`<p class="notice">${pt(L, "listNone")}</p>`}
${e ? html`<p class="hint">${e.hint}</p>${enrolForm(L, "/account", e.token, e.options, hiddenFields(v), "")}` : ""}
</section>`;
}

/** The context of an /account page (the sign-in pages' look, the account's purpose). */
function accountContext(v: Pick<DashboardView, "operator" | "lang" | "cookies">): PageContext {
  return {
    operator: v.operator,
    purpose: "account",
    lang: v.lang,
    hybrid: false,
    appName: "",
    nonce: cspNonce(),
    formAction: [],
    cookies: v.cookies,
  };
}

/**
 * The second step of ending a login (no JavaScript): what ending it does, the form that ends it
 * (`action=terminate` with `confirm=Y`), and the way back that changes nothing.
 */
export function confirmTerminatePage(v: Omit<DashboardView, "connections" | "passkeys">, c: Connection): Response {
  const L = v.lang;
  const ctx = accountContext(v);
  const title = t(L, "accountConfirmTerminate", { app: c.appName });
  const body = html`<h1>${title}</h1>
<p class="lead">${t(L, "accountTerminateHint")}</p>
<form method="post" action="/account" class="app-actions">
${hiddenFields(v, c.clientId)}<input type="hidden" name="confirm" value="Y">
<button type="submit" class="primary" name="action" value="terminate">${t(L, "accountTerminate")}</button>
</form>
<p><a href="/account?lang=${L}">${t(L, "accountKeep")}</a></p>`;
  return page(ctx, title, body);
}

export function dashboardPage(v: DashboardView): Response {
  const L = v.lang;
  const other: Lang = L === "ko" ? "en" : "ko";
  const ctx = accountContext(v);
  const body = html`<h1>${t(L, "accountTitle")}</h1>
<p class="lead">${t(L, "accountLead", { phone: v.masked })}</p>
${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ""}
${v.alert ? html`<p class="alert" role="alert">${v.alert}</p>` : ""}
${
  v.connections.length > 0
    ? html`${v.connections.map((c, i) => connectionCard(v, c, i))}<p class="hint" id="terminate-hint">${t(L, "accountTerminateHint")}</p>`
    : html`<p class="notice">${t(L, "accountNone")}</p>`
}
${passkeySection(v)}
<div class="actions">
<form method="post" action="/account">${hiddenFields(v)}<button type="submit" class="link" name="action" value="sign_out">${t(L, "accountSignOut")}</button></form>
<a class="switch" href="/account?lang=${other}" lang="${other}">${t(L, "switchTo")}</a>
</div>`;
  return page(ctx, t(L, "accountTitle"), body, { status: v.status }, v.passkeys.enrol ? CREATE_SCRIPT : null);
}
