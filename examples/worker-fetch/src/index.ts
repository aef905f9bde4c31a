// A plain fetch Worker with phone-number login: the kit answers /auth/*, and the app's own route
// /account reads the signed-in person with getSession.
import { createPhoneLogin, type PhoneLoginStore } from "phone-login-kit";

// The kit's Durable Object store, bound as PHONE_LOGIN_STORE in wrangler.toml.
export { PhoneLoginStore } from "phone-login-kit";

interface Env {
  PHONE_LOGIN_PROVIDER_URL: string;
  PHONE_LOGIN_CLIENT_ID: string;
  PHONE_LOGIN_REDIRECT_URI: string;
  PHONE_LOGIN_CLIENT_SECRET: string;
  PHONE_LOGIN_SEAL_KEY: string;
  PHONE_LOGIN_KV: KVNamespace;
  PHONE_LOGIN_STORE: DurableObjectNamespace<PhoneLoginStore>;
}

const login = createPhoneLogin<Env>({
  providerUrl: (env) => env.PHONE_LOGIN_PROVIDER_URL,
  clientId: (env) => env.PHONE_LOGIN_CLIENT_ID,
  redirectUri: (env) => env.PHONE_LOGIN_REDIRECT_URI,
  // clientSecret, sealKey, kv and store default to env.PHONE_LOGIN_CLIENT_SECRET, _SEAL_KEY, _KV and _STORE
  onLogin: (user, { via }) => console.log(JSON.stringify({ event: "login", via, plid: user.plid })),
});

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function page(body: string, status = 200): Response {
  return new Response(
    `<!doctype html><html lang="ko"><meta charset="utf-8"><title>Example shop</title><body>${body}</body></html>`,
    {
      status,
      headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" },
    },
  );
}

export default {
  async fetch(request, env, ctx): Promise<Response> {
    if (login.handles(request)) return login.fetch(request, env, ctx);
    const { pathname } = new URL(request.url);
    if (pathname === "/account") {
      const user = await login.getSession(request, env);
      if (!user) return Response.redirect(new URL("/auth/login?return_to=/account", request.url).href, 302);
      return page(
        `<h1 id="hello">${escape(user.name ?? "")}님, 안녕하세요</h1>` +
          `<p>plid <code id="plid">${escape(user.plid)}</code>, 로그인 ${escape(user.loginAt)}</p>` +
          `<form method="post" action="/auth/logout"><button>로그아웃</button></form>`,
      );
    }
    if (pathname === "/")
      return page(
        `<h1>Example shop</h1><p><a id="login" href="/auth/login?return_to=/account">휴대폰번호로 로그인</a></p>`,
      );
    return page("<h1>Not found</h1>", 404);
  },
} satisfies ExportedHandler<Env>;
