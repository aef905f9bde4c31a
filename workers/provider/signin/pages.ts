// The sign-in pages (form contract in docs/signin.md). Plain HTML forms that work with
// JavaScript off, mobile-first (readable at 320 px), labelled, errors announced with role=alert.
// The scripts are enhancements the pages do not depend on: the code page's WebOTP call, the passkey
// parts (passkey/markup.ts). The step form is always a page's first <form>; the language switch's is in the footer.

import { cspNonce, cspSourceFor, escapeHtml, html, htmlResponse, raw } from "../../core/html";
import type { PageOptions, SafeHtml } from "../../core/html";
import { randomToken, utf8 } from "../../core/crypto";
import { itemName, t, type Lang, type MessageKey } from "./i18n";
import { PAGE_CSS } from "./page-style";
import type { Operator } from "./config";
import { type IdentityItem } from "../../core/spec";
import { COUNTDOWN, WEB_OTP } from "./page-scripts";
import { termsBox } from "./terms";
import { challengeBox, widgetSource, type Challenge } from "./challenge-markup";

export type { Challenge } from "./challenge-markup";
import { PASSKEY_PROBE_SCRIPT, PASSKEY_SIGNIN_SCRIPT, PK_FIELD, passkeyForm } from "./passkey/markup";

/** What every page of one transaction needs. */
export interface PageContext {
  lang: Lang;
  hybrid: boolean;
  appName: string;
  /** Hidden fields posted back: the transaction id and CSRF token (absent on stop pages). */
  txId?: string;
  csrf?: string;
  nonce: string;
  /** `form-action` sources besides 'self' (the redirect target). */
  formAction: readonly string[];
  cookies?: readonly string[];
  /**
   * A first-party sign-in's purpose mark (`SigninRecord.purpose`), its page's path without the
   * slash: the pages prove the number for that page (the person's own /account, docs/account.md,
   * or a console) and their forms post there. Absent: an app's sign-in, posting to the
   * authorization endpoint.
   */
  purpose?: string;
  /** A first-party sign-in's words (its purpose's `words`), shown where an app's sign-in names the app. */
  words?: FirstPartyWords;
  /** Who runs the pages, named with its links in every footer (configuration). */
  operator: Operator;
  /** The code page's countdown: the seconds its code has left when the page is sent. */
  seconds?: string;
  /** What the language switch posts back besides tx and csrf: the text page's ticket. */
  langCarry?: Readonly<Record<string, string>>;
}

/**
 * What a first-party page says of itself on its sign-in's pages, in the page's language: given by
 * the page (its purpose), so the sign-in names no page but its own.
 */
export interface FirstPartyWords {
  /** The page's name: the identify page's title, and the stand-in client's name. */
  title(lang: Lang): string;
  /** The identify page's lead. */
  lead(lang: Lang): string;
}

/** Whether the pages offer passkeys: everywhere but a WebView that said it is one (`isHybrid=Y`). */
function passkeys(ctx: PageContext): boolean {
  return !ctx.hybrid;
}

/** Where a page's forms post: the first-party page it proves the number for, else the authorization endpoint. */
export function actionOf(ctx: PageContext): string {
  return ctx.purpose === undefined ? "/oauth2/authorize" : `/${ctx.purpose}`;
}

/** The identify page's title and lead: a first-party page's own, else the app's sign-in. */
function identifyWords(ctx: PageContext): [title: string, lead: string] {
  const L = ctx.lang;
  if (ctx.purpose !== undefined && ctx.words) return [ctx.words.title(L), ctx.words.lead(L)];
  return [t(L, "identifyTitle"), t(L, "identifyLead", { app: ctx.appName })];
}

/** The context of a page outside any sign-in (a stop page with nothing to go on with). */
export function bareContext(operator: Operator, lang: Lang): PageContext {
  return { operator, lang, hybrid: false, appName: "", nonce: cspNonce(), formAction: [] };
}

/** `form-action` sources by redirect URI (registered ones: a few per client), parsed once; at most 256 kept. */
const formActions = new Map<string, readonly string[]>();

export function formActionOf(redirectUri: string): readonly string[] {
  let sources = formActions.get(redirectUri);
  if (sources === undefined) {
    if (formActions.size >= 256) formActions.clear();
    const target = cspSourceFor(redirectUri);
    sources = Object.freeze(target ? [target] : []);
    formActions.set(redirectUri, sources);
  }
  return sources;
}

export interface Alert {
  text: string;
  /** Which field it is about (focus and aria-describedby). */
  field?: "telcoCd" | "name" | "phoneNo" | "otp" | "agree" | "carrierTerms";
}

export interface PageResult {
  status?: number;
  retryAfterSeconds?: number;
}

/**
 * The stylesheet's bytes, encoded once. A page with Korean text is a two-byte string, which the
 * runtime encodes to UTF-8 a character at a time (about 23 instructions each): the stylesheet, over
 * half of every page, is spliced in as bytes instead (`pageResponse`).
 */
const CSS_BYTES = utf8(PAGE_CSS);

/** A page's markup before its stylesheet and after it (`pageResponse` puts them together). */
type Layout = [before: SafeHtml, after: SafeHtml];

function layout(
  ctx: PageContext,
  title: string,
  body: SafeHtml,
  footer = true,
  script: SafeHtml | null = null,
): Layout {
  const other: Lang = ctx.lang === "ko" ? "en" : "ko";
  const carry = Object.entries(ctx.langCarry ?? {}).map(
    ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
  );
  const before = html`<!doctype html>
<html lang="${ctx.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${title} · ${t(ctx.lang, "serviceName")}</title>
<style nonce="${ctx.nonce}">`;
  const after = html`</style>
</head>
<body class="${ctx.hybrid ? "hybrid" : "web"}">
<main>
<p class="brand"><b aria-hidden="true">P</b>${t(ctx.lang, "serviceName")}</p>
${body}
<footer>
<p>${ctx.operator.name ? t(ctx.lang, "footerOperator", { name: ctx.operator.name }) : t(ctx.lang, "footer")}</p>
${
  footer && ctx.txId && ctx.csrf
    ? html`<form method="post" action="${actionOf(ctx)}" class="lang">
<input type="hidden" name="tx" value="${ctx.txId}"><input type="hidden" name="csrf" value="${ctx.csrf}">${carry}
<button type="submit" name="lang" value="${other}" lang="${other}" aria-label="${t(ctx.lang, "language")}: ${t(ctx.lang, "switchTo")}">${t(ctx.lang, "switchTo")}</button>
</form>`
    : ""
}
<nav aria-label="${t(ctx.lang, "footerNav")}">${footerLinks(ctx)}</nav>
</footer>
</main>
${script && html`<script nonce="${ctx.nonce}">${script}</script>`}
</body>
</html>`;
  return [before, after];
}

/** A page with the strict headers (`htmlResponse`), its stylesheet spliced in as bytes (`CSS_BYTES`). */
function pageResponse([before, after]: Layout, opts: PageOptions): Response {
  const head = utf8(before.value);
  const tail = utf8(after.value);
  const bytes = new Uint8Array(head.length + CSS_BYTES.length + tail.length);
  bytes.set(head);
  bytes.set(CSS_BYTES, head.length);
  bytes.set(tail, head.length + CSS_BYTES.length);
  return htmlResponse(bytes, opts);
}

/** What a page shows that changes with every response, filled into its cached markup (`Shell`). */
type HoleName = "nonce" | "txId" | "csrf" | "lead" | "seconds";
type Holes = Record<HoleName, string>;

/**
 * A page as rendered once, as UTF-8 bytes cut where the values of `HoleName` go (its nonce, its
 * transaction id and CSRF token, the code page's lead sentence) and the stylesheet. A step page's
 * markup depends on little else (language, app, operator, the page's state), and encoding a page with
 * Korean text to UTF-8 was the largest part of sending it: a cached page encodes only those values,
 * and its bytes are the page's rendered afresh (test/provider/signin/pages/pages.test.ts).
 */
interface Shell {
  segments: Uint8Array[];
  /** The hole after each segment but the last. */
  holes: (HoleName | "css")[];
}

/** Shells by operator (its footer) and by everything else a page's markup depends on; at most 64 each. */
const shells = new WeakMap<Operator, Map<string, Shell>>();
let shellsOff = false;

/** `f`'s pages rendered afresh, with no shell used or made (the tests' reference for the cached pages). */
export function withoutShells<T>(f: () => T): T {
  shellsOff = true;
  try {
    return f();
  } finally {
    shellsOff = false;
  }
}
let markPrefix = "";
let marker = /$^/;

/** The placeholder of a hole: control characters around a per-isolate random word, so no text holds it. */
function mark(name: HoleName | "css"): string {
  if (!markPrefix) {
    markPrefix = "\u0001" + randomToken(12);
    marker = new RegExp(`${markPrefix}(nonce|txId|csrf|lead|seconds|css)\u0001`);
  }
  return `${markPrefix}${name}\u0001`;
}

/**
 * The response of a step page whose layout `render` makes from `ctx` and the lead's markup, cached
 * under `key`, which must name everything the page shows but `ctx`'s language, look, app, purpose
 * and operator (in the key already) and the holes (filled in, escaped, per response).
 */
function shellPage(
  ctx: PageContext,
  key: string,
  lead: string,
  render: (ctx: PageContext, lead: SafeHtml) => Layout,
  opts: PageOptions,
): Response {
  let byOperator = shells.get(ctx.operator);
  if (!byOperator) shells.set(ctx.operator, (byOperator = new Map()));
  const full = `${ctx.lang}|${ctx.hybrid}|${ctx.purpose ?? ""}|${ctx.appName}|${key}`;
  let shell = byOperator.get(full);
  if (!shell) {
    const [before, after] = render(
      { ...ctx, nonce: mark("nonce"), txId: mark("txId"), csrf: mark("csrf"), seconds: mark("seconds") },
      raw(mark("lead")),
    );
    const cut = (before.value + mark("css") + after.value).split(marker);
    shell = {
      segments: cut.filter((_, i) => i % 2 === 0).map(utf8),
      holes: cut.filter((_, i) => i % 2 === 1) as Shell["holes"],
    };
    if (byOperator.size >= 64) byOperator.clear();
    byOperator.set(full, shell);
  }
  const holes: Holes = { nonce: ctx.nonce, txId: ctx.txId!, csrf: ctx.csrf!, lead, seconds: ctx.seconds ?? "" };
  const bytes: Partial<Record<HoleName | "css", Uint8Array>> = { css: CSS_BYTES };
  let n = 0;
  for (const s of shell.segments) n += s.length;
  for (const h of shell.holes) n += (bytes[h] ??= utf8(escapeHtml(holes[h as HoleName]))).length;
  const out = new Uint8Array(n);
  let at = 0;
  for (let i = 0; i < shell.segments.length; i++) {
    const s = shell.segments[i]!;
    out.set(s, at);
    at += s.length;
    const h = shell.holes[i];
    if (h !== undefined) {
      out.set(bytes[h]!, at);
      at += bytes[h]!.length;
    }
  }
  return htmlResponse(out, opts);
}

function footerLinks(ctx: PageContext): SafeHtml[] {
  const o = ctx.operator;
  const links: SafeHtml[] = [];
  if (o.terms) links.push(html`<a href="${o.terms}">${t(ctx.lang, "terms")}</a>`);
  if (o.privacy) links.push(html`<a href="${o.privacy}"><strong>${t(ctx.lang, "privacy")}</strong></a>`);
  if (o.help) links.push(html`<a href="${o.help}">${t(ctx.lang, "help")}</a>`);
  if (ctx.purpose === undefined)
    links.push(html`<a href="/account?lang=${ctx.lang}">${t(ctx.lang, "accountTitle")}</a>`);
  return links;
}

/**
 * A page in the sign-in pages' look (layout, headers, the language switch when `ctx` has a
 * transaction); `script`, the page's inline script.
 */
export function page(
  ctx: PageContext,
  title: string,
  body: SafeHtml,
  result: PageResult = {},
  script: SafeHtml | null = null,
): Response {
  return pageResponse(layout(ctx, title, body, true, script), pageOptions(ctx, result, script !== null));
}

function pageOptions(ctx: PageContext, result: PageResult, webOtp: boolean): PageOptions {
  const headers: Record<string, string> = {};
  if (result.retryAfterSeconds !== undefined)
    headers["Retry-After"] = String(Math.max(1, Math.ceil(result.retryAfterSeconds)));
  return {
    status: result.status ?? 200,
    nonce: ctx.nonce,
    script: webOtp,
    formAction: ctx.formAction,
    headers,
    cookies: ctx.cookies,
  };
}

/**
 * A step page: from the shell cache (`shellPage`) under `key` when it has one (the page shows
 * nothing but what the key and its context name, and the holes), else rendered (`page`). `body`
 * makes the markup from a context and the lead sentence's text or markup.
 */
function stepPage(
  ctx: PageContext,
  key: string | null,
  title: string,
  lead: string,
  body: (ctx: PageContext, lead: SafeHtml | string) => SafeHtml,
  result: PageResult = {},
  script: SafeHtml | null = null,
): Response {
  if (key === null || shellsOff || !ctx.txId || !ctx.csrf) return page(ctx, title, body(ctx, lead), result, script);
  return shellPage(
    ctx,
    key,
    lead,
    (c, l) => layout(c, title, body(c, l), true, script),
    pageOptions(ctx, result, script !== null),
  );
}

function hidden(ctx: PageContext): SafeHtml {
  return html`<input type="hidden" name="tx" value="${ctx.txId}"><input type="hidden" name="csrf" value="${ctx.csrf}">`;
}

function alertBox(alert: Alert | undefined): SafeHtml | undefined {
  return alert && html`<p id="form-alert" class="alert" role="alert">${alert.text}</p>`;
}

/** Attributes for a field the alert is about: invalid, described by the alert, focused. */
function invalid(alert: Alert | undefined, field: Alert["field"], first: boolean): SafeHtml {
  if (alert?.field === field) return raw(' aria-invalid="true" aria-describedby="form-alert" autofocus');
  return first && !alert?.field ? raw(" autofocus") : raw("");
}

export interface IdentifyValues {
  telcoCd?: string;
  name?: string;
  phoneNo?: string;
  /** The agreements' box as posted (`Y`: ticked). */
  carrierTerms?: string;
}

export function identifyPage(
  ctx: PageContext,
  v: IdentifyValues = {},
  alert?: Alert,
  result?: PageResult,
  challenge?: Challenge,
): Response {
  const [title] = identifyWords(ctx);
  const script = passkeys(ctx) ? PASSKEY_SIGNIN_SCRIPT : null;
  if (challenge) {
    // the widget's origin is a script, frame and connect source of this page only, beside its own
    // nonce'd passkey script
    const res = pageResponse(
      layout(ctx, title, identifyBody(ctx, v, alert, challenge), true, script),
      pageOptions(ctx, result ?? {}, false),
    );
    const w = widgetSource(challenge.scriptUrl);
    const csp = res.headers.get("Content-Security-Policy")!;
    const own = script ? `'nonce-${ctx.nonce}' ` : "";
    res.headers.set("Content-Security-Policy", `${csp}; script-src ${own}${w}; frame-src ${w}; connect-src ${w}`);
    return res;
  }
  // a page with nothing typed and no alert is the same for everyone of one app: cached
  const blank =
    !alert &&
    v.telcoCd === undefined &&
    v.name === undefined &&
    v.phoneNo === undefined &&
    v.carrierTerms === undefined;
  const key = blank ? "identify" : null;
  return stepPage(ctx, key, title, "", (c) => identifyBody(c, v, alert), result, script);
}

function identifyBody(ctx: PageContext, v: IdentifyValues, alert: Alert | undefined, challenge?: Challenge): SafeHtml {
  const L = ctx.lang;
  // Step 1's initial focus: the field an alert is about, else the carrier choice.
  const focusCarrier = alert?.field === "telcoCd" || alert?.field === undefined;
  const radio = (c: string, i: number) =>
    html`<input type="radio" id="telco-${c}" name="telcoCd" value="${c}" required${v.telcoCd === c ? raw(" checked") : ""}${
      i === 0 && alert?.field === "telcoCd" ? raw(' aria-describedby="form-alert"') : ""
    }${i === 0 && focusCarrier ? raw(" autofocus") : ""}><label for="telco-${c}">${t(L, `carrier${c}` as MessageKey)}</label>`;
  // 알뜰폰 (MVNO) lines choose their host network: MS, MK, ML are read as S, K, L.
  const carriers = html`<div class="carriers">${(["S", "K", "L"] as const).map((c, i) => radio(c, i))}</div>
<div class="carriers mvno">${(["MS", "MK", "ML"] as const).map((c) => radio(c, 1))}</div>
<p class="hint">${t(L, "carrierMvnoHint")}</p>`;
  const [title, lead] = identifyWords(ctx);
  return html`<h1>${title}</h1>
<p class="lead">${lead}</p>
<form class="step" method="post" action="${actionOf(ctx)}" data-step="identify">
${hidden(ctx)}
${alertBox(alert)}
<fieldset><legend>${t(L, "carrier")}</legend>${carriers}</fieldset>
<div><label class="field" for="name">${t(L, "name")}</label>
<input type="text" id="name" name="name" value="${v.name ?? ""}" autocomplete="${passkeys(ctx) ? "name webauthn" : "name"}" maxlength="50" required${invalid(alert, "name", false)}></div>
<div><label class="field" for="phoneNo">${t(L, "phoneNo")}</label>
<input type="tel" id="phoneNo" name="phoneNo" value="${v.phoneNo ?? ""}" inputmode="numeric" autocomplete="tel-national" maxlength="20" placeholder="${t(L, "phonePlaceholder")}" required${invalid(alert, "phoneNo", false)}></div>
${termsBox(L, ctx.operator.agreements, v.carrierTerms === "Y", alert?.field === "carrierTerms")}
${challenge && challengeBox(L, challenge)}
<div class="actions">
<button type="submit" class="primary">${t(L, "sendCode")}</button>
<button type="submit" class="secondary" name="cancel" value="Y" formnovalidate>${t(L, "cancel")}</button>
</div>
</form>
${passkeys(ctx) && passkeyForm(L, actionOf(ctx), hidden(ctx))}`;
}

/** The automatic-login box (the code page's, and the consent page's after a passkey). */
function autoLoginBox(L: Lang, days: number, app: string, checked: boolean): SafeHtml {
  return html`<div class="check"><input type="checkbox" id="autoLogin" name="autoLogin" value="Y" aria-describedby="autoLogin-hint"${checked ? raw(" checked") : ""}>
<label for="autoLogin">${t(L, "autoLogin", { days, app })}<span class="hint" id="autoLogin-hint"> ${t(L, "autoLoginHint")}</span></label></div>`;
}

/** Whether an app's code and consent pages carry the passkey probe (the end may offer one). */
function probes(ctx: PageContext): boolean {
  return passkeys(ctx) && ctx.purpose === undefined;
}

export interface VerifyInfo {
  masked: string;
  test: boolean;
  minutes: number;
  /** "enter": a code to type; "newCode": none usable (used up, expired, not sent yet): getting one is
   * the primary action; "locked": nothing can be done here until the lock lifts. */
  state: "enter" | "newCode" | "locked";
  /** When the code stops working, as a clock time (state "enter"). */
  until?: string;
  /** The opt-in box, when eligible; `checked` keeps the person's choice across a re-render. */
  autoLogin: { days: number; checked: boolean } | null;
  notice?: string;
}

export function verifyPage(ctx: PageContext, info: VerifyInfo, alert?: Alert, result?: PageResult): Response {
  const L = ctx.lang;
  const lead =
    info.state === "enter" && info.until
      ? t(L, "verifyLead", { phone: info.masked, minutes: info.minutes, until: info.until })
      : t(L, "verifyLeadNoCode", { phone: info.masked });
  // the number, the code's time and its validity are all in the lead: the rest is the page's state
  const a = info.autoLogin;
  const key =
    alert || info.notice !== undefined
      ? null
      : `verify|${info.state}|${info.test}|${a ? `${a.days}:${a.checked}` : "-"}`;
  // A code sent by SMS can be offered by the phone (WebOTP); a test number's fixed code is not. A
  // test number is never offered a passkey: no probe either. A code to type counts down.
  const enter = info.state === "enter";
  const webOtp = enter && !info.test;
  const probe = probes(ctx) && !info.test;
  const script =
    enter || probe
      ? raw(`${enter ? COUNTDOWN.value : ""}${webOtp ? WEB_OTP.value : ""}${probe ? PASSKEY_PROBE_SCRIPT.value : ""}`)
      : null;
  return stepPage(ctx, key, t(L, "verifyTitle"), lead, (c, l) => verifyBody(c, info, l, alert, probe), result, script);
}

function verifyBody(
  ctx: PageContext,
  info: VerifyInfo,
  lead: SafeHtml | string,
  alert: Alert | undefined,
  probe: boolean,
): SafeHtml {
  const L = ctx.lang;
  const entry =
    info.state === "enter"
      ? html`<p id="countdown" class="hint" role="timer" data-seconds="${ctx.seconds ?? ""}" aria-live="off" data-left="${t(L, "countdownLeft")}" data-minutes="${t(L, "countdownMinutes", { n: "{n}" })}" data-over="${t(L, "errOtpExpired")}" hidden></p>
<p id="countdown-say" class="sr" aria-live="polite"></p>
<div><label class="field" for="otp">${t(L, "otp")}</label>
<input type="text" class="otp" id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" minlength="6" maxlength="6" required${invalid(alert, "otp", true)}>
${info.test && html`<p class="hint">${t(L, "verifyTestNumber")}</p>`}</div>
${info.autoLogin && autoLoginBox(L, info.autoLogin.days, ctx.appName, info.autoLogin.checked)}`
      : "";
  const actions =
    info.state === "enter"
      ? html`<button type="submit" class="primary">${t(L, "confirm")}</button>
<button type="submit" class="link" name="resend" value="Y" formnovalidate>${t(L, "resend")}</button>`
      : info.state === "newCode"
        ? html`<button type="submit" class="primary" name="resend" value="Y" formnovalidate${alert ? "" : raw(" autofocus")}>${t(L, "resend")}</button>`
        : "";
  return html`<h1>${t(L, "verifyTitle")}</h1>
<p class="lead">${lead}</p>
<form class="step" method="post" action="${actionOf(ctx)}" data-step="verify">
${hidden(ctx)}${probe && PK_FIELD}
${alertBox(alert)}
${info.notice && html`<p class="notice" role="status">${info.notice}</p>`}
${entry}
<div class="actions">
${actions}
<button type="submit" class="secondary" name="cancel" value="Y" formnovalidate>${t(L, "cancel")}</button>
</div>
</form>`;
}

/** What the consent page states for the provision (개인정보 보호법 §17 ②): the app's registered texts. */
export interface ConsentTerms {
  /** The app's client id, posted back so the answer is taken in one store call (docs/signin.md). */
  app: string;
  items: readonly IdentityItem[];
  purpose: string | null;
  retention: string | null;
  /** The version of these terms with the app's name (`termsVersion`), posted back with the answer. */
  version: string;
}

export function consentPage(
  ctx: PageContext,
  terms: ConsentTerms,
  alert?: Alert,
  result?: PageResult,
  notice?: string,
  autoLoginDays?: number,
): Response {
  const key =
    alert || notice !== undefined
      ? null
      : `consent|${JSON.stringify([terms.app, terms.version, terms.items, terms.purpose, terms.retention, autoLoginDays ?? 0])}`;
  const script = probes(ctx) ? PASSKEY_PROBE_SCRIPT : null;
  return stepPage(
    ctx,
    key,
    t(ctx.lang, "consentTitle"),
    "",
    (c) => consentBody(c, terms, alert, notice, autoLoginDays),
    result,
    script,
  );
}

function consentBody(
  ctx: PageContext,
  terms: ConsentTerms,
  alert: Alert | undefined,
  notice?: string,
  autoLoginDays?: number,
): SafeHtml {
  const L = ctx.lang;
  const items = terms.items;
  const list =
    items.length > 0
      ? html`<ul>${items.map((i) => html`<li>${itemName(L, i)}</li>`)}<li>${t(L, "consentIdentifier")}</li></ul>`
      : html`<p>${t(L, "consentNone")}</p>`;
  return html`<h1>${t(L, "consentTitle")}</h1>
<p class="lead">${t(L, "consentLead", { app: ctx.appName })}</p>
<form class="step" method="post" action="${actionOf(ctx)}" data-step="consent">
${hidden(ctx)}${probes(ctx) && PK_FIELD}<input type="hidden" name="terms" value="${terms.version}"><input type="hidden" name="app" value="${terms.app}">
${alertBox(alert)}
${notice && html`<p class="notice" role="status" id="risk">${notice}</p>`}
<dl class="consent">
<div><dt>${t(L, "consentRecipient")}</dt><dd>${ctx.appName}</dd></div>
<div><dt>${t(L, "consentPurpose")}</dt><dd>${terms.purpose ?? t(L, "purposeDefault")}</dd></div>
<div><dt>${t(L, "consentItems")}</dt><dd>${list}</dd></div>
<div><dt>${t(L, "consentRetention")}</dt><dd>${terms.retention ?? t(L, "retentionDefault")}</dd></div>
</dl>
<p class="refuse">${t(L, "consentRefuse")}</p>
${autoLoginDays !== undefined && autoLoginBox(L, autoLoginDays, ctx.appName, false)}
<div class="actions">
<button type="submit" class="primary" name="agree" value="Y"${alert ? raw(" autofocus") : ""}>${t(L, "agree")}</button>
<button type="submit" class="secondary" name="agree" value="N">${t(L, "disagree")}</button>
</div>
</form>`;
}

/**
 * How a stop page lets the person go on: back to the app (a POST that answers the app with
 * `login_required`, docs/signin.md "Stop pages"), or a link (the /account page starts again).
 */
export type Restart = { returnTx: string } | { href: string };

/** A page that ends the flow (403): expired, unknown, forbidden; with the way on when one is known. */
export function stopPage(ctx: PageContext, title: string, text: string, restart?: Restart, status = 403): Response {
  const L = ctx.lang;
  const action =
    restart === undefined
      ? ""
      : "href" in restart
        ? html`<p><a class="button" href="${restart.href}">${t(L, "startAgain")}</a></p>`
        : html`<form method="post" action="/oauth2/authorize"><input type="hidden" name="tx" value="${restart.returnTx}">
<button type="submit" class="primary" name="restart" value="Y" autofocus>${t(L, "backToApp")}</button></form>`;
  const body = html`<div class="stop" role="alert"><h1>${title}</h1><p>${text}</p></div>
${action}`;
  return pageResponse(layout({ ...ctx, txId: undefined, csrf: undefined }, title, body), {
    status,
    nonce: ctx.nonce,
    formAction: ctx.formAction,
    cookies: ctx.cookies,
  });
}
