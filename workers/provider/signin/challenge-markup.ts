// The SMS-abuse guard's challenge in the identify form (docs/abuse.md "The challenge"): Turnstile's
// widget, the CSP source its script needs, and in words what it needs when scripts are off.

import { cspSourceFor, html, type SafeHtml } from "../../core/html";
import { t, type Lang } from "./i18n";

/** A challenge the identify page shows (Turnstile's widget, docs/abuse.md "The challenge"). */
export interface Challenge {
  siteKey: string;
  scriptUrl: string;
  action: string;
}

/** The CSP source of a widget's script: its origin, or 'self' for a path on this host. */
export function widgetSource(scriptUrl: string): string {
  return scriptUrl.startsWith("/") ? "'self'" : (cspSourceFor(scriptUrl) ?? "'none'");
}

/** The challenge in the identify form: the widget, and in words what it needs when scripts are off. */
export function challengeBox(L: Lang, c: Challenge): SafeHtml {
  return html`<div class="challenge"><p class="notice">${t(L, "challengeNeeded")}</p>
<div class="cf-turnstile" data-sitekey="${c.siteKey}" data-action="${c.action}"></div>
<noscript><p class="alert">${t(L, "challengeNoScript")}</p></noscript>
<script src="${c.scriptUrl}" async defer></script></div>`;
}
