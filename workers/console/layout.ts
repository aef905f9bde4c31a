// The operations console's frame (docs/console.md): the menu (the pages the operator's role may
// open), who is signed in with their role, and the console's pages drawn in the consoles' frame
// (workers/frame/layout.ts), whose parts its pages use from here.

import { html, type SafeHtml } from "../core/html";
import type { Role } from "../provider/store/operators";
import {
  errorBox,
  framePage,
  type Frame,
  type Outcome,
  type PageOut,
  type Viewer as FrameViewer,
} from "../frame/layout";
import { c, type ConsoleKey, type Lang } from "./i18n";

export {
  appFormFields,
  checkedEventTypes,
  checkedItems,
  errorBox,
  eventTypeBoxes,
  hidden,
  href,
  itemBoxes,
  when,
  type Outcome,
  type PageOut,
} from "../frame/layout";

/** The menu: each page with its least role (the same as its route's). */
export const MENU: { path: string; key: ConsoleKey; role: Role }[] = [
  { path: "/console", key: "overview", role: "viewer" },
  { path: "/console/apps", key: "apps", role: "viewer" },
  { path: "/console/sms", key: "sms", role: "viewer" },
  { path: "/console/reviews", key: "reviews", role: "viewer" },
  { path: "/console/directory", key: "directory", role: "viewer" },
  { path: "/console/audit", key: "audit", role: "viewer" },
  { path: "/console/operators", key: "operators", role: "admin" },
  { path: "/console/tokens", key: "tokens", role: "admin" },
];

const ROLE_KEY: Record<Role, ConsoleKey> = { viewer: "roleViewer", editor: "roleEditor", admin: "roleAdmin" };
const ORDER: Role[] = ["viewer", "editor", "admin"];

export const roleName = (lang: Lang, role: Role) => c(lang, ROLE_KEY[role]);
export const covers = (have: Role, need: Role) => ORDER.indexOf(have) >= ORDER.indexOf(need);

/** Who is looking at a console page. */
export interface Viewer extends FrameViewer {
  /** Null for a person without a role (the no-access page). */
  role: Role | null;
}

/** The operations console's frame: the menu of the pages the operator's role may open. */
function operationsFrame(v: Viewer): Frame {
  return {
    name: c(v.lang, "console"),
    menu: v.role
      ? MENU.filter((m) => covers(v.role!, m.role)).map((m) => ({ path: m.path, label: c(v.lang, m.key) }))
      : [],
    signOut: "/console/sign-out",
    who: v.masked ? c(v.lang, "signedInAs", { masked: v.masked, role: v.role ? roleName(v.lang, v.role) : "—" }) : "",
    // its forms' and the importer's Origin is checked (admin/access.ts fromThisSite): a no-referrer
    // page makes Chromium post `Origin: null`
    referrer: "same-origin",
  };
}

/** A console page: the operations console's frame around `body`. */
export function consolePage(v: Viewer, title: string, body: SafeHtml, out: PageOut = {}): Response {
  return framePage(v, operationsFrame(v), title, body, out);
}

/** The box of an action's outcome; `secretLabel` says what the one-time secret is. */
export function outcomeBox(v: { lang: Lang }, requestId: string, o: Outcome, secretLabel: ConsoleKey): SafeHtml {
  return html`${o.error ? errorBox(v, o.error, requestId) : ""}${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ""}${
    o.secret
      ? html`<div class="notice" role="status"><p>${c(v.lang, secretLabel)}</p><code class="secret" data-secret>${o.secret}</code></div>`
      : ""
  }`;
}
