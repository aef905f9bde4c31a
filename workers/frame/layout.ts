// The consoles' frame (docs/console.md, docs/developers.md): the sign-in pages' look widened for
// tables, a header with the console's name and menu, who is signed in and the language switch, and
// one <main>; and the parts of a page both consoles draw alike (links, hidden fields, app forms'
// boxes, error boxes, times). Server-rendered, no CDN; the only script is the operations console's
// importer, inline under the page's CSP nonce. Each console gives its own frame (`Frame`).

import { cspNonce, html, htmlResponse, raw, type SafeHtml } from "../core/html";
import type { Params } from "../core/http";
import { IDENTITY_ITEMS, type IdentityItem } from "../core/spec";
import { DEFAULT_EVENT_TYPES, EVENT_TYPES, type EventType } from "../provider/store/clients";
import { itemName } from "../provider/signin/index";
import { f as w, type Lang } from "./i18n";

const CSS = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Apple SD Gothic Neo","Malgun Gothic","Nanum Gothic","NanumGothic","Noto Sans KR",system-ui,sans-serif;font-size:15px;line-height:1.5;color:#191f28;background:#f2f4f6;word-break:keep-all;overflow-wrap:anywhere}
a{color:#1b64da}
.skip{position:absolute;left:-9999px}.skip:focus{left:8px;top:8px;background:#fff;padding:8px;z-index:2}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:8px 20px;padding:12px 24px;background:#fff;border-bottom:1px solid #d1d6db}
.brand{display:flex;align-items:center;gap:8px;margin:0;font-weight:700;color:#1b64da}
.brand b{display:inline-block;width:22px;height:22px;border-radius:6px;background:#1b64da;color:#fff;text-align:center;font-size:13px;line-height:22px}
header nav ul{display:flex;flex-wrap:wrap;gap:4px;margin:0;padding:0;list-style:none}
header nav a{display:block;padding:6px 10px;border-radius:8px;color:#333d4b;text-decoration:none;font-weight:600}
header nav a[aria-current=page]{background:#e8f3ff;color:#1b64da}
.me{display:flex;align-items:center;gap:12px;margin-left:auto;font-size:14px;color:#4e5968}
.me form{margin:0}
main{max-width:1100px;margin:24px auto;padding:24px;background:#fff;border-radius:16px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{margin:0 0 8px;font-size:24px;letter-spacing:-.02em}
h2{margin:28px 0 10px;font-size:18px}
.lead{margin:0 0 20px;color:#4e5968}
table{width:100%;border-collapse:collapse;margin:8px 0 16px;font-size:14px}
caption{text-align:left;font-weight:700;padding:4px 0}
th,td{padding:8px 10px;border-bottom:1px solid #e5e8eb;text-align:left;vertical-align:top}
th{color:#4e5968;font-weight:600;background:#f9fafb}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
form.card{display:grid;gap:12px;max-width:640px;margin:8px 0 16px;padding:16px;border:1px solid #d1d6db;border-radius:12px}
form.inline{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-end;margin:0}
label{display:block;font-size:14px;font-weight:600;color:#333d4b}
input[type=text],input[type=tel],input[type=number],input[type=date],input[type=datetime-local],input[type=url],select,textarea{display:block;width:100%;margin-top:4px;padding:8px 10px;font:inherit;border:1.5px solid #8b95a1;border-radius:8px;background:#fff;color:#191f28}
textarea{min-height:4.5em}
fieldset{margin:0;padding:8px 12px;border:1px solid #d1d6db;border-radius:8px}
legend{font-size:14px;font-weight:600;color:#333d4b}
dl{display:grid;grid-template-columns:minmax(8em,16em) 1fr;gap:6px 16px;margin:8px 0 16px;font-size:14px}
@media (max-width:600px){dl{grid-template-columns:1fr;gap:2px}dd{margin-bottom:8px}}
dt{color:#4e5968;font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
.actions{display:flex;flex-wrap:wrap;gap:6px}
.checks{display:flex;flex-wrap:wrap;gap:4px 16px}
.checks label{display:flex;gap:6px;align-items:center;font-weight:400}
.checks label code{flex:none}
button{min-height:40px;padding:8px 14px;font:inherit;font-weight:700;border-radius:8px;border:0;cursor:pointer;background:#1b64da;color:#fff}
button.secondary{background:#f2f4f6;color:#333d4b}
button.danger{background:#c0262d;color:#fff}
button:focus-visible,a:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid #1b64da;outline-offset:2px}
.alert{margin:0 0 16px;padding:12px 14px;border-radius:10px;background:#fff0f0;color:#a3161d;font-weight:600}
.notice{margin:0 0 16px;padding:12px 14px;border-radius:10px;background:#e8f3ff;color:#0f4fb6}
pre.snippet{margin:8px 0 16px;padding:12px;border-radius:8px;background:#f2f4f6;overflow-x:auto;font-size:13px;line-height:1.5}
.secret{display:block;margin:8px 0;padding:10px;border-radius:8px;background:#191f28;color:#fff;font-size:14px;word-break:break-all}
.hint{margin:4px 0 0;font-size:13px;color:#5f6b7a;font-weight:400}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:12px;margin:0;padding:0;list-style:none}
.grid li{padding:16px;border:1px solid #d1d6db;border-radius:12px}
.grid b{display:block;font-size:28px}
.chart{display:flex;align-items:center;justify-content:center;min-height:180px;border:2px dashed #d1d6db;border-radius:12px;color:#5f6b7a}
progress{width:100%;height:18px}
.rid{font-weight:400;font-size:13px}
.ranges{display:flex;gap:6px;margin:0 0 8px;padding:0;list-style:none}
.ranges a{display:block;padding:4px 10px;border:1px solid #d1d6db;border-radius:8px;text-decoration:none}
.ranges a[aria-current=true]{background:#e8f3ff;border-color:#1b64da;font-weight:700}
figure.metric{margin:0 0 20px;padding:12px;border:1px solid #d1d6db;border-radius:12px}
figure.metric figcaption{font-weight:700;margin:0 0 6px}
.chart-svg{display:block;max-width:100%;height:auto}
footer{max-width:1100px;margin:0 auto 24px;padding:0 24px;font-size:13px;color:#5f6b7a}
`;

/** Who is looking at a page. */
export interface Viewer {
  lang: Lang;
  masked: string;
  csrf: string;
  /** The page's path, for the menu's `aria-current` and the language switch. */
  path: string;
  operator: string;
}

/** A console's frame: its name, its menu (already in the viewer's language), where it signs out. */
export interface Frame {
  name: string;
  menu: { path: string; label: string }[];
  signOut: string;
  /** "Signed in as …" in the viewer's language. */
  who: string;
  /**
   * The pages' referrer policy: `no-referrer` unless given. A console that checks its forms' Origin
   * needs `same-origin` (under `no-referrer` Chromium posts `Origin: null`).
   */
  referrer?: "same-origin";
}

/** A link within the console in the viewer's language. */
export function href(v: { lang: Lang }, path: string, query: Record<string, string> = {}): string {
  const q = new URLSearchParams(query);
  if (v.lang === "en") q.set("lang", "en");
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/**
 * An app form's item boxes (both consoles'), each named as the consent page names it to the
 * person, the API's field beside; read back by `checkedItems`.
 */
export function itemBoxes(L: Lang, legend: string, checked: readonly string[], dis: SafeHtml | string): SafeHtml {
  return html`<fieldset><legend>${legend}</legend><div class="checks">${IDENTITY_ITEMS.map(
    (i) =>
      html`<label><input type="checkbox" name="item_${i}"${checked.includes(i) ? raw(" checked") : ""}${dis}> ${itemName(L, i)} <code>${i}</code></label>`,
  )}</div></fieldset>`;
}

/** An app form's event-type boxes (both consoles'); a new app's form has the default checked. Read back by `checkedEventTypes`. */
export function eventTypeBoxes(
  legend: string,
  checked: readonly string[] | undefined,
  dis: SafeHtml | string,
): SafeHtml {
  return html`<fieldset><legend>${legend}</legend><div class="checks">${EVENT_TYPES.map(
    (t) =>
      html`<label><input type="checkbox" name="event_${t}"${(checked ?? DEFAULT_EVENT_TYPES).includes(t) ? raw(" checked") : ""}${dis}> <code>${t}</code></label>`,
  )}</div></fieldset>`;
}

/** The items an app form's boxes checked (a form name is never sent twice: one box an item). */
export const checkedItems = (p: Params): IdentityItem[] => IDENTITY_ITEMS.filter((i) => p.get(`item_${i}`) === "on");

/** The event types an app form's boxes checked. */
export const checkedEventTypes = (p: Params): EventType[] => EVENT_TYPES.filter((t) => p.get(`event_${t}`) === "on");

const lines = (text: string | undefined) =>
  (text ?? "")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");

/**
 * An app form's fields (both consoles') as the client fields the admin API's reader checks
 * (admin/validate.ts), so a form is refused with the API's own messages: empty optional texts are
 * null (the default); the operator's form adds the daily SMS budget, empty for the default, digits
 * as a number, anything else as typed (refused naming the field).
 */
export function appFormFields(p: Params, withBudget: boolean): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    name: p.get("name") ?? "",
    redirect_uris: lines(p.get("redirect_uris")),
    items: checkedItems(p),
    auto_login: p.get("auto_login") === "on",
    oidc: p.get("oidc") === "on",
    events_uri: p.get("events_uri") ?? null,
    event_types: checkedEventTypes(p),
    purpose: p.get("purpose") ?? null,
    retention: p.get("retention") ?? null,
  };
  if (withBudget) {
    const t = (p.get("sms_daily_budget") ?? "").trim();
    fields.sms_daily_budget = t === "" ? null : /^\d{1,9}$/.test(t) ? Number(t) : t;
  }
  return fields;
}

/** The hidden fields every console form carries: its CSRF token and the language. */
export function hidden(v: Viewer): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${v.csrf}"><input type="hidden" name="lang" value="${v.lang}">`;
}

export interface PageOut {
  status?: number;
  cookies?: string[];
  /** An inline script (the importer), run under the page's nonce. */
  script?: string;
}

/** A console page: the console's frame `f` around `body`. */
export function framePage(v: Viewer, f: Frame, title: string, body: SafeHtml, out: PageOut = {}): Response {
  const nonce = cspNonce();
  const other: Lang = v.lang === "ko" ? "en" : "ko";
  const menu =
    f.menu.length > 0
      ? html`<nav aria-label="${w(v.lang, "mainNav")}"><ul>${f.menu.map(
          (m) =>
            html`<li><a href="${href(v, m.path)}"${m.path === v.path ? raw(' aria-current="page"') : ""}>${m.label}</a></li>`,
        )}</ul></nav>`
      : "";
  const switchHref = other === "en" ? `${v.path}?lang=en` : v.path;
  const page = html`<html lang="${v.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="${f.referrer ?? "no-referrer"}">
<meta name="robots" content="noindex">
<meta name="csrf" content="${v.csrf}">
<title>${title} · ${f.name}</title>
<style nonce="${nonce}">${raw(CSS)}</style>
</head>
<body>
<a class="skip" href="#main">${w(v.lang, "skip")}</a>
<header class="top">
<p class="brand"><b aria-hidden="true">P</b>${f.name}</p>
${menu}
<div class="me">
${f.who ? html`<span>${f.who}</span>` : ""}
<a href="${switchHref}" lang="${other}" hreflang="${other}">${w(v.lang, "switchLang")}</a>
${
  v.csrf
    ? html`<form method="post" action="${f.signOut}">${hidden(v)}<button type="submit" class="secondary">${w(v.lang, "signOut")}</button></form>`
    : ""
}
</div>
</header>
<main id="main">
${body}
</main>
<footer><p>${v.operator}</p></footer>
${out.script ? html`<script nonce="${nonce}">${raw(out.script)}</script>` : ""}
</body>
</html>`;
  return htmlResponse(page, {
    status: out.status,
    nonce,
    script: out.script !== undefined,
    cookies: out.cookies,
    headers: {
      // the importer's script calls the admin API on this origin (and nothing else)
      ...(out.script
        ? {
            "Content-Security-Policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
          }
        : {}),
      ...(f.referrer ? { "Referrer-Policy": f.referrer } : {}),
    },
  });
}

/** An error box: the message and the request id the log line carries (docs/operations.md "Workers Logs"). */
export function errorBox(v: { lang: Lang }, message: string, requestId: string): SafeHtml {
  return html`<div class="alert" role="alert"><p>${w(v.lang, "errorTitle")}: ${message}</p><p class="rid">${w(v.lang, "requestId", { id: requestId })}</p></div>`;
}

/** A Korean-time rendering of an instant (the console's operators work in KST). */
export function when(iso: string | null | undefined, lang: Lang): string {
  if (!iso) return "—";
  const d = new Date(Date.parse(iso) + 9 * 3600_000);
  const s = d.toISOString().slice(0, 16).replace("T", " ");
  return lang === "ko" ? `${s} (KST)` : `${s} KST`;
}

/** What a page shows after an action: a notice, a one-time secret, or the error with its request id. */
export interface Outcome {
  notice?: string;
  secret?: string;
  error?: string;
  status?: number;
}
