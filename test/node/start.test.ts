// `npm start`: on a fresh state directory it applies the migrations and the dev seed and
// serves; `PORT` moves it off 8787. The other node tests start it on 8787 (the seed's localhost
// redirect URIs name that port), so the override is asserted here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type Server } from "./server";

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
});
