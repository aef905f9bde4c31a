// GET /dev/outbox: the development SMS outbox. Mounted only by the all-in-one dev worker
// and answering only with DEV_MODE=true, so codes sent to numbers added by hand can be read.

import { providerConfig, type ProviderEnv } from "../provider/config";
import { E } from "../core/errors";
import { json } from "../core/http";
import { cspNonce, html, htmlResponse, raw } from "../core/html";
import type { Route } from "../core/router";
import { formatKst } from "../provider/dates";
import { readOutbox } from "../provider/signin/index";

async function outbox(req: Request, env: ProviderEnv): Promise<Response> {
  if (!providerConfig(env).devMode) throw E.notFound();
  const rows = await readOutbox(env, 50);
  if ((req.headers.get("Accept") ?? "").includes("application/json")) {
    return json({ messages: rows.map((r) => ({ at: new Date(r.at).toISOString(), to: r.phone, text: r.body })) });
  }
  const nonce = cspNonce();
  const body = html`<html lang="ko"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>개발용 문자함 / Dev SMS outbox</title>
<style nonce="${nonce}">${raw(
    "*,*::before,*::after{box-sizing:border-box}body{margin:0;font-family:-apple-system,BlinkMacSystemFont,'Apple SD Gothic Neo','Malgun Gothic','Nanum Gothic',sans-serif;color:#191f28;line-height:1.5;word-break:keep-all;overflow-wrap:anywhere}main{max-width:48rem;margin:0 auto;padding:16px}h1{font-size:1.4rem}.en{color:#4e5968;font-size:.9em}table{border-collapse:collapse;width:100%;table-layout:fixed}td,th{border-bottom:1px solid #d1d6db;padding:8px 6px;text-align:left;vertical-align:top}th{font-size:13px;color:#4e5968}th:nth-child(1){width:28%}th:nth-child(2){width:30%}",
  )}</style></head>
<body><main><h1>개발용 문자함 <span class="en">/ Dev SMS outbox</span></h1>
<p>개발 모드(DEV_MODE)에서만 보이는, 최근 1시간 동안 보낸 문자입니다 (최신 순, 한국 시각).
<span class="en">DEV_MODE only: messages the <code>outbox</code> sender kept for an hour, newest first, in Korean time.</span></p>
${
  rows.length === 0
    ? html`<p>보낸 문자가 없습니다. <span class="en">No messages were sent.</span></p>`
    : html`<table><thead><tr><th>시각 <span class="en">time</span></th><th>받는 번호 <span class="en">to</span></th><th>내용 <span class="en">text</span></th></tr></thead><tbody>${rows.map(
        (r) => html`<tr><td>${formatKst(r.at, "ko")}</td><td>${r.phone}</td><td>${r.body}</td></tr>`,
      )}</tbody></table>`
}</main></body></html>`;
  return htmlResponse(body, { nonce });
}

export const devRoutes: Route<ProviderEnv>[] = [{ method: "GET", path: "/dev/outbox", handler: outbox, page: true }];
