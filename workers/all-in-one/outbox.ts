// GET /dev/outbox: the development SMS outbox. Mounted only by the all-in-one dev worker
// and answering only with DEV_MODE=true, so codes sent to numbers added by hand can be read.

import { providerConfig, type ProviderEnv } from "../provider/config";
import { E } from "../core/errors";
import { json } from "../core/http";
import { cspNonce, html, htmlResponse, raw } from "../core/html";
import type { Route } from "../core/router";
import { readOutbox } from "../provider/authorize/sms";

async function outbox(req: Request, env: ProviderEnv): Promise<Response> {
  if (!providerConfig(env).devMode) throw E.notFound();
  const rows = await readOutbox(env, 50);
  if ((req.headers.get("Accept") ?? "").includes("application/json")) {
    return json({ messages: rows.map((r) => ({ at: new Date(r.at).toISOString(), to: r.phone, text: r.body })) });
  }
  const nonce = cspNonce();
  const body = html`<html lang="ko"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dev SMS outbox</title>
<style nonce="${nonce}">${raw(
    "body{font-family:system-ui,'Nanum Gothic',sans-serif;margin:24px;color:#191f28}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e5e8eb;padding:8px;text-align:left;vertical-align:top}th{font-size:13px;color:#6b7684}",
  )}</style></head>
<body><h1>Dev SMS outbox</h1><p>DEV_MODE only: the last messages the <code>outbox</code> sender kept (one hour, newest first).</p>
${
  rows.length === 0
    ? html`<p>No messages were sent.</p>`
    : html`<table><thead><tr><th>time</th><th>to</th><th>text</th></tr></thead><tbody>${rows.map(
        (r) => html`<tr><td>${new Date(r.at).toISOString()}</td><td>${r.phone}</td><td>${r.body}</td></tr>`,
      )}</tbody></table>`
}</body></html>`;
  return htmlResponse(body, { nonce });
}

export const devRoutes: Route<ProviderEnv>[] = [{ method: "GET", path: "/dev/outbox", handler: outbox, page: true }];
