// Pages of the relying-party kit (the callback's failure pages, the dev demo): Korean first with
// English, no script, built with core/html.ts. They carry `Referrer-Policy: same-origin`, not
// core's `no-referrer`: with `no-referrer` Chromium posts `Origin: null` from the kit's own forms,
// which the kit's Origin check must refuse (docs/architecture.md §4.7).

import { cspNonce, html, htmlResponse, raw, type SafeHtml } from "../core/html";

const STYLE =
  raw(`body{font-family:"Nanum Gothic","Apple SD Gothic Neo","Malgun Gothic",sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#222;line-height:1.5}
h1{font-size:1.4rem}.en{color:#666;font-size:.9em}a.button,button{display:inline-block;padding:.6rem 1.1rem;border-radius:.4rem;border:1px solid #2a5bd7;background:#2a5bd7;color:#fff;font-size:1rem;text-decoration:none;cursor:pointer}
button.secondary{background:#fff;color:#2a5bd7}button.danger{background:#fff;color:#c0392b;border-color:#c0392b}
table{border-collapse:collapse;margin:1rem 0;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd}th{width:40%;font-weight:normal;color:#555}
form{display:inline-block;margin:.3rem .5rem .3rem 0}`);

/** A complete kit page with core's strict headers, except `Referrer-Policy: same-origin`. */
export function kitPage(title: string, body: SafeHtml, status = 200): Response {
  const nonce = cspNonce();
  return htmlResponse(
    html`<html lang="ko"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title><style nonce="${nonce}">${STYLE}</style></head><body>${body}</body></html>`,
    { status, nonce, headers: { "Referrer-Policy": "same-origin" } },
  );
}

/** Why a callback could not complete (docs/architecture.md §4.7: 400 for the request, 502 for the service). */
export type CallbackFailure = "request" | "state" | "denied" | "upstream";

const FAILURES: Record<CallbackFailure, { status: number; ko: string; en: string }> = {
  request: { status: 400, ko: "로그인 응답이 올바르지 않습니다.", en: "The login response is not valid." },
  state: {
    status: 400,
    ko: "로그인 요청이 만료되었거나 이 브라우저에서 시작되지 않았습니다.",
    en: "The login request has expired, was already used, or was not started in this browser.",
  },
  denied: { status: 400, ko: "로그인이 취소되었습니다.", en: "The login was cancelled." },
  upstream: {
    status: 502,
    ko: "로그인 서비스가 올바르게 응답하지 않았습니다. 잠시 후 다시 시도해 주세요.",
    en: "The login service did not answer as expected. Please try again later.",
  },
};

/** The callback's failure page, with a link to start again. */
export function callbackFailurePage(kind: CallbackFailure): Response {
  const f = FAILURES[kind];
  return kitPage(
    "로그인 실패 / Login failed",
    html`<h1>로그인을 완료할 수 없습니다 <span class="en">/ Login could not be completed</span></h1>
<p>${f.ko}<br><span class="en">${f.en}</span></p>
<p><a class="button" href="/auth/login">다시 로그인 <span lang="en">/ Log in again</span></a> <a href="/">처음으로 / Home</a></p>`,
    f.status,
  );
}
