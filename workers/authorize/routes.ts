// GET|POST /oauth2/authorize (spec §4.1; reference-notes: POST is answered exactly like GET).

import type { Env } from "../core/config";
import type { RequestContext, Route } from "../core/router";
import { validateAuthorizeRequest } from "./validate";

async function authorize(req: Request, env: Env, rc: RequestContext): Promise<Response> {
  const ar = await validateAuthorizeRequest(req, env, rc);
  // Placeholder until the sign-in pages land: the validation above is final.
  const html = `<!doctype html><html lang="ko"><meta charset="utf-8"><title>휴대폰번호 로그인</title><h1>휴대폰번호 로그인</h1><p>${escapeHtml(ar.client.name)}</p>`;
  return new Response(html, {
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
    },
  });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export const routes: Route<Env>[] = [
  { method: "GET", path: "/oauth2/authorize", handler: authorize },
  { method: "POST", path: "/oauth2/authorize", handler: authorize },
];
