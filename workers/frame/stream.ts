// An app's Shared Signals stream on its console page (docs/events.md "Shared Signals"), the same in
// the developer console and the operations console: its status, delivery method and receiver host
// (never the Authorization header), the types it delivers, what waits to be polled, its last
// delivery attempts with the failures counted, and a pause or resume button for who may change it.
// The stream's words are this module's; each console passes its own words for the deliveries,
// which its events page shares.

import { html, type SafeHtml } from "../core/html";
import type { StreamView } from "../provider/store/flows/stream-view";
import type { Lang } from "./i18n";
import { hidden, when, type Viewer } from "./layout";

/** What the consoles' own tables say for the stream's deliveries (their events pages say it too). */
export type DeliveryWord =
  | "classDelivered"
  | "classRefused"
  | "classFailed"
  | "classTimedOut"
  | "deliveryAt"
  | "deliveryType"
  | "deliveryClass"
  | "deliveryAttempt";

/** The stream's own words, the same in both consoles. */
const ko = {
  streamTitle: "Shared Signals 스트림",
  streamNone: "Shared Signals 스트림이 없습니다. 앱이 자기 클라이언트 자격 증명으로 /ssf/stream 에서 만듭니다.",
  streamStatus: "상태",
  streamEnabled: "사용 중",
  streamPaused: "일시 중지",
  streamDisabled: "앱이 끔",
  streamReason: "사유",
  streamMethod: "전달 방식",
  streamPush: "푸시 (RFC 8935)",
  streamPoll: "폴링 (RFC 8936)",
  streamHost: "수신 호스트",
  streamEvents: "전달하는 이벤트",
  streamWaiting: "폴링을 기다리는 SET",
  streamDeliveries: "스트림의 최근 전달 시도 (실패 {n}건)",
  streamNoDeliveries: "스트림으로 전달한 이벤트가 아직 없습니다.",
  streamPause: "스트림 일시 중지",
  streamResume: "스트림 다시 시작",
  streamPausedDone: "스트림을 일시 중지했습니다. 이벤트는 다시 시작할 때까지 최대 7일 보관됩니다.",
  streamResumedDone: "스트림을 다시 시작했습니다. 기다리던 이벤트를 바로 전달합니다.",
};

export type StreamWord = keyof typeof ko;

const en: Record<StreamWord, string> = {
  streamTitle: "Shared Signals stream",
  streamNone: "No Shared Signals stream. The app makes one at /ssf/stream with its own client credentials.",
  streamStatus: "Status",
  streamEnabled: "Enabled",
  streamPaused: "Paused",
  streamDisabled: "Disabled by the app",
  streamReason: "Reason",
  streamMethod: "Delivery",
  streamPush: "Push (RFC 8935)",
  streamPoll: "Poll (RFC 8936)",
  streamHost: "Receiver host",
  streamEvents: "Events delivered",
  streamWaiting: "SETs waiting to be polled",
  streamDeliveries: "The stream's last delivery attempts ({n} failed)",
  streamNoDeliveries: "No event delivered on the stream yet.",
  streamPause: "Pause the stream",
  streamResume: "Resume the stream",
  streamPausedDone: "Stream paused: its events are kept until it is resumed, up to 7 days.",
  streamResumedDone: "Stream resumed: the waiting events are sent at once.",
};

/** A stream text in `lang`, with `{name}` placeholders filled. */
export function streamWord(lang: Lang, key: StreamWord, vars: Record<string, string> = {}): string {
  return (lang === "en" ? en : ko)[key].replace(/\{(\w+)\}/g, (m, k: string) => vars[k] ?? m);
}

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
  dw: (key: DeliveryWord) => string,
): SafeHtml {
  const L = v.lang;
  const w = (key: StreamWord, vars?: Record<string, string>) => streamWord(L, key, vars);
  if (!s) return html`<h2>${w("streamTitle")}</h2><p>${w("streamNone")}</p>`;
  const button = (path: string, label: string) =>
    html`<form class="inline" method="post" action="${base}${path}">${hidden(v)}<button type="submit" class="secondary">${label}</button></form>`;
  const rows = s.deliveries.map(
    (x) =>
      html`<tr><td>${when(x.at, L)}</td><td><code>${x.type}</code></td><td>${dw(CLASS[x.class])}</td><td>${x.attempt}</td></tr>`,
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
    ? html`<table><caption>${w("streamDeliveries", { n: String(s.failures) })}</caption><thead><tr><th scope="col">${dw("deliveryAt")}</th><th scope="col">${dw("deliveryType")}</th><th scope="col">${dw("deliveryClass")}</th><th scope="col">${dw("deliveryAttempt")}</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p>${w("streamNoDeliveries")}</p>`
}`;
}
