// A Hono app with phone-number login: phoneLogin() answers /auth/*, withSession() gives the app's
// own route /account the signed-in person in c.var.session.
import { Hono } from "hono";
import { html } from "hono/html";
import { createPhoneLogin } from "phone-login-kit";
import { phoneLogin, withSession } from "phone-login-kit/hono";

type Bindings = {
  PHONE_LOGIN_PROVIDER_URL: string;
  PHONE_LOGIN_CLIENT_ID: string;
  PHONE_LOGIN_REDIRECT_URI: string;
  PHONE_LOGIN_CLIENT_SECRET: string;
  PHONE_LOGIN_SEAL_KEY: string;
  PHONE_LOGIN_KV: KVNamespace;
};

const login = createPhoneLogin<Bindings>({
  providerUrl: (env) => env.PHONE_LOGIN_PROVIDER_URL,
  clientId: (env) => env.PHONE_LOGIN_CLIENT_ID,
  redirectUri: (env) => env.PHONE_LOGIN_REDIRECT_URI,
});

const app = new Hono<{ Bindings: Bindings }>();

app.use(phoneLogin(login));

app.get("/", (c) =>
  c.html(html`<!doctype html><html lang="ko"><meta charset="utf-8"><title>Example shop</title>
<h1>Example shop (Hono)</h1><p><a id="login" href="/auth/login?return_to=/account">휴대폰번호로 로그인</a></p></html>`),
);

app.get("/account", withSession(login), (c) => {
  const user = c.var.session;
  if (!user) return c.redirect("/auth/login?return_to=/account");
  c.header("Cache-Control", "no-store");
  return c.html(html`<!doctype html><html lang="ko"><meta charset="utf-8"><title>Example shop</title>
<h1 id="hello">${user.name ?? ""}님, 안녕하세요</h1>
<p>plid <code id="plid">${user.plid}</code>, 로그인 ${user.loginAt}</p>
<form method="post" action="/auth/logout"><button>로그아웃</button></form></html>`);
});

export default app;
