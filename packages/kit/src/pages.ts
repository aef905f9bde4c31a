// Pages of the relying-party kit (the callback's failure pages, the dev demo): Korean first with
// English, no script, built with core/html.ts. They carry `Referrer-Policy: same-origin`, not
// core's `no-referrer`: with `no-referrer` Chromium posts `Origin: null` from the kit's own forms,
// which the kit's Origin check must refuse (docs/architecture.md §4.7).

import { cspNonce, html, htmlResponse, raw, type SafeHtml } from "./core/html.js";

const STYLE = raw(`*,*::before,*::after{box-sizing:border-box}
body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Apple SD Gothic Neo","Malgun Gothic","Nanum Gothic","NanumGothic","Noto Sans KR",sans-serif;color:#191f28;background:#f2f4f6;line-height:1.5;word-break:keep-all;overflow-wrap:anywhere}
main{max-width:34rem;margin:1.5rem auto;padding:1.5rem 1.25rem;background:#fff;border-radius:16px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:1.4rem;line-height:1.35;margin:0 0 .5rem}.en{color:#4e5968;font-size:.9em}
a.button,button{display:inline-block;min-height:44px;padding:.6rem 1.1rem;border-radius:10px;border:1.5px solid #1b64da;background:#1b64da;color:#fff;font:inherit;font-weight:700;text-decoration:none;cursor:pointer}
button.secondary,a.secondary{background:#fff;color:#1b64da}button.danger,a.danger{background:#fff;color:#b42318;border-color:#b42318}
a{color:#1b64da}a:focus-visible,button:focus-visible{outline:3px solid #1b64da;outline-offset:2px}
table{border-collapse:collapse;margin:1rem 0;width:100%}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #d1d6db;vertical-align:top}th{width:40%;font-weight:normal;color:#4e5968}
form{display:inline-block;margin:.3rem .5rem .3rem 0}
.flash{padding:.75rem 1rem;border-radius:10px;background:#e8f3ff;color:#1b4fa8;font-weight:600}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin-top:1rem}.actions form{margin:0}`);

/** A complete kit page with core's strict headers, except `Referrer-Policy: same-origin`. */
export function kitPage(title: string, body: SafeHtml, status = 200): Response {
  const nonce = cspNonce();
  return htmlResponse(
    html`<html lang="ko"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title><style nonce="${nonce}">${STYLE}</style></head><body><main>${body}</main></body></html>`,
    { status, nonce, headers: { "Referrer-Policy": "same-origin" } },
  );
}

/** Why a callback could not complete (docs/architecture.md §4.7: 400 for the request, 502 for the service). */
export type CallbackFailure = "request" | "state" | "denied" | "unfinished" | "upstream";

const FAILURES: Record<CallbackFailure, { status: number; ko: string; en: string }> = {
  request: { status: 400, ko: "로그인 응답이 올바르지 않습니다.", en: "The login response is not valid." },
  state: {
    status: 400,
    ko: "로그인 요청이 만료되었거나 이 브라우저에서 시작되지 않았습니다.",
    en: "The login request has expired, was already used, or was not started in this browser.",
  },
  denied: {
    status: 400,
    ko: "로그인을 취소해 앱에 아무 정보도 제공되지 않았습니다.",
    en: "You cancelled the login: nothing was shared with the app.",
  },
  unfinished: {
    status: 400,
    ko: "로그인을 마치지 못했습니다. 다시 시도해 주세요.",
    en: "The login could not be finished. Please try again.",
  },
  upstream: {
    status: 502,
    ko: "로그인 서비스가 올바르게 응답하지 않았습니다. 잠시 후 다시 시도해 주세요.",
    en: "The login service did not answer as expected. Please try again later.",
  },
};

/** The callback's failure page, with a link to start again (`basePath`: where the kit is mounted). */
export function callbackFailurePage(kind: CallbackFailure, basePath: string): Response {
  const f = FAILURES[kind];
  return kitPage(
    "로그인 실패 / Login failed",
    html`<h1>로그인을 완료할 수 없습니다 <span class="en">/ Login could not be completed</span></h1>
<p>${f.ko}<br><span class="en">${f.en}</span></p>
<p class="actions"><a class="button" href="${basePath}/login">다시 시도 <span lang="en">/ Try again</span></a> <a href="/">처음으로 <span lang="en">/ Home</span></a></p>`,
    f.status,
  );
}
