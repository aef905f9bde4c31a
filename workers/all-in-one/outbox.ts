// GET /dev/outbox: the development SMS outbox, and a phone that sends a text to the service's
// receiving number (POST /dev/outbox/text, through the signed inbound webhook as a gateway would).
// Mounted only by the all-in-one dev worker and answering only with DEV_MODE=true, so codes sent to
// numbers added by hand can be read, and a text asked for by the sign-in can be sent.

import { providerConfig, type ProviderEnv } from "../provider/config";
import { E } from "../core/errors";
import { json } from "../core/http";
import { cspNonce, html, htmlResponse, raw } from "../core/html";
import { hmacSha256Hex } from "../core/crypto";
import { readParams } from "../core/http";
import type { RequestContext, Route } from "../core/router";
import { formatKst } from "../provider/dates";
import { readOutbox, textConfig } from "../provider/signin/index";
import { receiveText } from "../provider/inbound/routes";

/** The results the dev phone may report back (the inbound webhook's `result`). */
const RESULTS = new Set([
  "accepted",
  "unknown",
  "used",
  "no_phrase",
  "not_a_number",
  "not_our_number",
  "international",
  "stale",
]);

async function outbox(req: Request, env: ProviderEnv): Promise<Response> {
  if (!providerConfig(env).devMode) throw E.notFound();
  const q = new URL(req.url).searchParams;
  const sent = q.get("sent");
  const text = textConfig(env);
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
}
<h2 id="phone">개발용 휴대폰 <span class="en">/ Dev phone</span></h2>
<p>로그인이 문자를 보내 달라고 하면, 입력한 번호에서 보낸 것처럼 여기서 보냅니다.
<span class="en">When the sign-in asks for a text, send it here as if from the number you entered.</span></p>
${sent !== null && RESULTS.has(sent) ? html`<p role="status" id="phone-result">결과 <span class="en">result</span>: <b>${sent}</b></p>` : ""}
<form method="post" action="/dev/outbox/text">
<p><label>보내는 번호 <span class="en">from</span><br><input name="from" id="phone-from" inputmode="numeric" autocomplete="off" required></label></p>
<p><label>받는 번호 <span class="en">to</span><br><input name="to" id="phone-to" value="${text.number ?? ""}" required></label></p>
<p><label>내용 <span class="en">text</span><br><textarea name="body" id="phone-body" rows="3" cols="40" required>${q.get("body") ?? ""}</textarea></label></p>
<p><label><input type="checkbox" name="abroad" value="Y"> 해외 망에서 보냄 <span class="en">sent from a network abroad</span></label></p>
<p><button type="submit" id="phone-send">보내기 <span class="en">send</span></button></p>
</form></main></body></html>`;
  return htmlResponse(body, { nonce });
}

/**
 * The dev phone's text: signed with the inbound webhook's secret and handed to POST /sms/inbound in
 * this worker, as the operator's gateway would send it; then the outbox page with what it did.
 */
async function phone(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  if (!providerConfig(env).devMode) throw E.notFound();
  const p = await readParams(req, "", 4096);
  const secret = textConfig(env).secrets[0];
  if (!secret) throw E.notFound();
  const body = JSON.stringify({
    from: p.get("from") ?? "",
    to: p.get("to") ?? "",
    body: p.get("body") ?? "",
    receivedAt: new Date().toISOString(),
    domestic: p.get("abroad") !== "Y",
  });
  const ts = Math.floor(Date.now() / 1000);
  const signedReq = new Request(new URL("/sms/inbound", req.url), {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Signature-Timestamp": String(ts),
      "X-Signature": `sha256=${await hmacSha256Hex(secret, `${ts}.${body}`)}`,
    },
    body,
  });
  const res = await receiveText(signedReq, env, rc);
  const answer = (await res.json()) as { result?: string; error?: string };
  const result = answer.result ?? answer.error ?? String(res.status);
  return new Response(null, {
    status: 303,
    headers: { Location: `/dev/outbox?sent=${encodeURIComponent(result)}#phone` },
  });
}

export const devRoutes: Route<ProviderEnv>[] = [
  { method: "GET", path: "/dev/outbox", handler: outbox, page: true },
  { method: "POST", path: "/dev/outbox/text", handler: phone, page: true },
];
