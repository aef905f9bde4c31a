// `npm start`: on a fresh state directory it applies the migrations and the dev seed and
// serves; `PORT` moves it off 8787. The other node tests start it on 8787 (the seed's localhost
// redirect URIs name that port), so the override is asserted here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type Server } from "./server";
import { CookieJar, signIn } from "./signin-driver";

const PORT = 8797;
let server: Server;

beforeAll(async () => {
  server = await startServer({ port: PORT });
});
afterAll(async () => {
  await server?.stop();
});

describe("npm start", () => {
  it(`PORT=${PORT} serves there: /healthz 200, the seed's client is known, unknown paths are 404 not_found`, async () => {
    expect(server.base).toBe(`http://localhost:${PORT}`);
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
    const q = new URLSearchParams({
      response_type: "code",
      client_id: "demo-client",
      redirect_uri: "https://demo.example/callback",
      state: "s",
    });
    const page = await fetch(`${server.base}/oauth2/authorize?${q}`, { headers: { "Accept-Language": "en" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Log in to Demo Shop with your mobile number.");
    const missing = await fetch(`${server.base}/nothing-here`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "not_found", message: "The requested API address is invalid." });
    expect(server.output()).toContain(`localhost:${PORT}`);
  });

  it(`PORT=${PORT} moves everything: the demo's login goes to this port's service and back, and logs in`, async () => {
    const jar = new CookieJar();
    const login = await fetch(`${server.base}/auth/login`, { redirect: "manual" });
    jar.take(login);
    expect(login.status).toBe(302);
    const authorize = new URL(login.headers.get("Location")!);
    expect(authorize.origin).toBe(`http://localhost:${PORT}`);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`http://localhost:${PORT}/auth/callback`);
    const done = await signIn(
      authorize.href,
      { telco: "S", name: "홍길동", phone: "01012345678", code: "123456" },
      { jar },
    );
    expect(done.location.origin).toBe(`http://localhost:${PORT}`);
    expect(done.location.pathname).toBe("/auth/callback");
    const callback = await fetch(done.location, { redirect: "manual", headers: { Cookie: jar.header() } });
    jar.take(callback);
    expect(callback.status).toBe(303);
    const home = await fetch(`${server.base}/`, { headers: { Cookie: jar.header() } });
    expect(await home.text()).toContain("홍길동님, 환영합니다");
  });
});
