// An app's Shared Signals stream on its console page (docs/events.md "Shared Signals"), the same in
// the developer console and the operations console: its status, delivery method and receiver host
// (never the Authorization header), the types it delivers, what waits to be polled, its last
// delivery attempts with the failures counted, and a pause or resume button for who may change it.
// Each console passes its own words (the same keys in both tables, Korean and English).

import { html, type SafeHtml } from "../core/html";
import type { StreamView } from "../provider/store/flows/stream-view";
import { hidden, when, type Viewer } from "./layout";

export type StreamWord =
  | "streamTitle"
  | "streamNone"
  | "streamStatus"
  | "streamEnabled"
  | "streamPaused"
  | "streamDisabled"
  | "streamReason"
  | "streamMethod"
  | "streamPush"
  | "streamPoll"
  | "streamHost"
  | "streamEvents"
  | "streamWaiting"
  | "streamDeliveries"
  | "streamNoDeliveries"
  | "streamPause"
  | "streamResume"
  | "classDelivered"
  | "classRefused"
  | "classFailed"
  | "classTimedOut"
  | "deliveryAt"
  | "deliveryType"
  | "deliveryClass"
  | "deliveryAttempt";

const STATUS = { enabled: "streamEnabled", paused: "streamPaused", disabled: "streamDisabled" } as const;
const CLASS = {
  delivered: "classDelivered",
  refused: "classRefused",
  failed: "classFailed",
  timed_out: "classTimedOut",
} as const;

/** The stream section of an app's page; `base` the app page's path, `canChange` shows pause or resume. */
export function streamSection(
  v: Viewer,
  base: string,
  s: StreamView | null,
  canChange: boolean,
  w: (key: StreamWord, vars?: Record<string, string>) => string,
): SafeHtml {
  const L = v.lang;
  if (!s) return html`<h2>${w("streamTitle")}</h2><p>${w("streamNone")}</p>`;
  const button = (path: string, label: string) =>
    html`<form class="inline" method="post" action="${base}${path}">${hidden(v)}<button type="submit" class="secondary">${label}</button></form>`;
  const rows = s.deliveries.map(
    (x) =>
      html`<tr><td>${when(x.at, L)}</td><td><code>${x.type}</code></td><td>${w(CLASS[x.class])}</td><td>${x.attempt}</td></tr>`,
  );
  return html`<h2>${w("streamTitle")}</h2>
<dl><dt>${w("streamStatus")}</dt><dd id="stream-status">${w(STATUS[s.status])}</dd>${
    s.reason ? html`<dt>${w("streamReason")}</dt><dd>${s.reason}</dd>` : ""
  }<dt>${w("streamMethod")}</dt><dd>${w(s.method === "push" ? "streamPush" : "streamPoll")}</dd>${
    s.endpoint_host ? html`<dt>${w("streamHost")}</dt><dd class="mono">${s.endpoint_host}</dd>` : ""
  }${s.waiting !== null ? html`<dt>${w("streamWaiting")}</dt><dd>${s.waiting}</dd>` : ""}<dt>${w("streamEvents")}</dt><dd>${s.events_delivered.map((t) => html`<code>${t.split("/").pop()!}</code> `)}</dd></dl>
${canChange && s.status === "enabled" ? button("/stream/pause", w("streamPause")) : ""}${canChange && s.status === "paused" ? button("/stream/resume", w("streamResume")) : ""}
${
  rows.length
    ? html`<table><caption>${w("streamDeliveries", { n: String(s.failures) })}</caption><thead><tr><th scope="col">${w("deliveryAt")}</th><th scope="col">${w("deliveryType")}</th><th scope="col">${w("deliveryClass")}</th><th scope="col">${w("deliveryAttempt")}</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p>${w("streamNoDeliveries")}</p>`
}`;
}
