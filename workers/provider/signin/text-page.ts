// The page that asks for a text (docs/signin.md "A text the person sends"): the phrase, the number
// it goes to, an `sms:` link with the body filled in (a phone's messages app opens with both), and
// "I sent it", which is all a browser without JavaScript needs. With JavaScript the page asks every
// two seconds whether the text arrived and goes on by itself. Its texts, Korean and English.

import { html, raw } from "../../core/html";
import { formatKstTime } from "../dates";
import { actionOf, page, type Alert, type PageContext, type PageResult } from "./pages";
import { t, type Lang } from "./i18n";

type Vars = Record<string, string | number>;
type Entry = string | ((v: Vars) => string);

const ko = {
  title: "문자 한 통으로 본인 확인",
  lead: "지금은 인증번호를 보내는 대신, 입력한 번호의 휴대폰에서 아래 문구를 문자로 보내 주세요. 문자가 도착하면 로그인이 이어집니다.",
  to: "받는 번호",
  phrase: "보낼 문구",
  open: "문자 앱에서 보내기",
  devPhone: "개발용 휴대폰에서 보내기",
  sent: "문자를 보냈어요",
  cancel: "취소",
  hint: (v: Vars) => `문구를 그대로 ${v.until}까지 보내 주세요. 문자 요금은 이용 중인 요금제에 따릅니다.`,
  relay: (v: Vars) =>
    `다른 사람이 이 문구를 보내 달라고 하면 보내지 마세요. 보내면 그 사람이 ${v.app}에 여러분의 이름으로 로그인합니다.`,
  waiting: "문자를 기다리고 있습니다…",
  notYet: "아직 문자가 도착하지 않았습니다. 입력한 번호의 휴대폰에서 문구를 그대로 보냈는지 확인해 주세요.",
  gone: "문자를 보낼 시간이 지났습니다. 번호를 다시 입력해 주세요.",
};

const en: Record<keyof typeof ko, Entry> = {
  title: "Confirm with one text message",
  lead: "Instead of a code sent to you, send the phrase below as a text from the phone of the number you entered. Once it arrives, signing in goes on.",
  to: "To",
  phrase: "Message",
  open: "Send from your messages app",
  devPhone: "Send from the dev phone",
  sent: "I sent the text",
  cancel: "Cancel",
  hint: (v) => `Send the phrase unchanged by ${v.until}. Your plan's rate for a text applies.`,
  relay: (v) => `If someone asks you to send this phrase, do not: it would sign them in to ${v.app} as you.`,
  waiting: "Waiting for your text…",
  notYet:
    "Your text has not arrived yet. Check that you sent the phrase unchanged from the phone of the number you entered.",
  gone: "The time to send the text has passed. Enter your number again.",
};

export type TextText = keyof typeof ko;
const catalogue: Record<Lang, Record<TextText, Entry>> = { ko, en };

/** The text of `key` in `lang`, with `vars` filled in. */
export function tt(lang: Lang, key: TextText, vars: Vars = {}): string {
  const entry = catalogue[lang][key];
  return typeof entry === "function" ? entry(vars) : entry;
}

/** The phrase of a sign-in: the service's name, the app's, 로그인 and the digits (Korean in every language). */
export function phraseOf(app: string, digits: string): string {
  return `[${t("ko", "serviceName")}] ${app} 로그인 ${digits}`;
}

/** A receiving number as people write it: 1588-0000, 02-1234-5678, 010-1234-5678. */
export function dialled(number: string): string {
  if (number.length === 8) return `${number.slice(0, 4)}-${number.slice(4)}`;
  if (number.startsWith("02")) return `02-${number.slice(2, -4)}-${number.slice(-4)}`;
  return `${number.slice(0, 3)}-${number.slice(3, -4)}-${number.slice(-4)}`;
}

export interface TextOffer {
  phrase: string;
  /** The receiving number, digits only. */
  number: string;
  /** The signed ticket the page posts back (`text`). */
  ticket: string;
  /** When the phrase stops working. */
  until: number;
  notice?: string;
  /** DEV_MODE: the dev phone (/dev/outbox) with the phrase filled in, where a newcomer sends the text. */
  devPhone?: boolean;
}

/**
 * Polls while the phrase lives: a POST of the form's fields with `poll=Y` answers whether the text
 * arrived; then the form is submitted with "I sent it", as a person without JavaScript does.
 */
const POLL = raw(`(function(){
var f=document.getElementById("text-form");if(!f||!window.fetch)return;
var b=f.querySelector("button[name=sent]"),s=document.getElementById("text-wait"),end=Number(f.getAttribute("data-until"));
if(s)s.textContent=s.getAttribute("data-waiting");
function tick(){if(Date.now()>end)return;
var d=new URLSearchParams(new FormData(f));d.set("poll","Y");
fetch(f.action,{method:"POST",body:d,credentials:"same-origin"}).then(function(r){return r.ok?r.json():null}).then(function(j){
if(j&&j.arrived){if(f.requestSubmit)f.requestSubmit(b);else b.click();return}
setTimeout(tick,2000)},function(){setTimeout(tick,4000)})}
setTimeout(tick,2000);
})();`);

export function textPage(ctx: PageContext, o: TextOffer, alert?: Alert, result: PageResult = {}): Response {
  const L = ctx.lang;
  const sms = `sms:${o.number}?body=${encodeURIComponent(o.phrase)}`;
  const body = html`<h1>${tt(L, "title")}</h1>
<p class="lead">${tt(L, "lead")}</p>
${alert && html`<p id="form-alert" class="alert" role="alert">${alert.text}</p>`}
${o.notice && html`<p class="notice" role="status">${o.notice}</p>`}
<dl class="text-send">
<dt>${tt(L, "to")}</dt><dd><b id="text-to">${dialled(o.number)}</b></dd>
<dt>${tt(L, "phrase")}</dt><dd><b id="text-phrase" lang="ko">${o.phrase}</b></dd>
</dl>
<p><a class="button" id="text-open" href="${sms}">${tt(L, "open")}</a></p>
${o.devPhone && html`<p><a id="text-dev-phone" href="/dev/outbox?body=${encodeURIComponent(o.phrase)}#phone" target="_blank">${tt(L, "devPhone")}</a></p>`}
<p class="hint">${tt(L, "hint", { until: formatKstTime(o.until, L) })}</p>
<p class="hint">${tt(L, "relay", { app: ctx.appName || t(L, "serviceName") })}</p>
<form id="text-form" class="step" method="post" action="${actionOf(ctx)}" data-step="text" data-until="${String(o.until)}">
<input type="hidden" name="tx" value="${ctx.txId ?? ""}"><input type="hidden" name="csrf" value="${ctx.csrf ?? ""}"><input type="hidden" name="text" value="${o.ticket}">
<p id="text-wait" class="hint" role="status" aria-live="polite" data-waiting="${tt(L, "waiting")}"></p>
<div class="actions">
<button type="submit" class="secondary" name="sent" value="Y">${tt(L, "sent")}</button>
<button type="submit" class="link" name="cancel" value="Y" formnovalidate>${tt(L, "cancel")}</button>
</div>
</form>`;
  // the language switch shows this page again, with its ticket (text.ts `textInLanguage`)
  const res = page({ ...ctx, langCarry: { text: o.ticket } }, tt(L, "title"), body, result, POLL);
  // the poll is a request to this page's own origin
  const csp = res.headers.get("Content-Security-Policy");
  if (csp) res.headers.set("Content-Security-Policy", `${csp}; connect-src 'self'`);
  return res;
}
