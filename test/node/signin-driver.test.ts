// The sign-in driver (./signin-driver.ts) against a server of its own: a step answered with
// wrangler dev's proxy's "restarted mid-request" 503 starts the sign-in over from the authorize URL
// (the POST itself is never sent again), at most twice; any other failing answer is thrown at once.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { signIn } from "./signin-driver";

// the proxy's answer, as wrangler dev writes it (test/node/admin-cli-errors.test.ts reads the same)
const PROXY_503 =
  "Your worker restarted mid-request. Please try sending the request again. Only GET or HEAD requests are retried automatically.";

let server: Server;
let base: string;
/** What the server received, in order: method and path. */
const seen: string[] = [];
/** How each POST is answered, in order, before the good answer (a 302 back to the app). */
let postAnswers: { status: number; body: string }[] = [];

const PAGE = `<form method="post" action="/oauth2/authorize"><input type="hidden" name="tx" value="t1"><input name="phoneNo"></form>`;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.method === "GET") {
      res.writeHead(200, { "Content-Type": "text/html" });
      return void res.end(PAGE);
    }
    const next = postAnswers.shift();
    if (next) {
      res.writeHead(next.status, { "Content-Type": "text/plain" });
      return void res.end(next.body);
    }
    res.writeHead(302, { Location: "https://app.example/cb?code=c1&state=s" });
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  seen.length = 0;
});

const WHO = { telco: "S", name: "김", phone: "01012345678", code: "123456" };

describe("the sign-in driver", () => {
  it("starts over from the authorize URL after the proxy lost a step, saying so, and sends no POST twice in one attempt", async () => {
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    postAnswers = [{ status: 503, body: PROXY_503 }];
    const done = await signIn(`${base}/oauth2/authorize?client_id=x`, WHO);
    expect(done.code).toBe("c1");
    expect(seen).toEqual([
      "GET /oauth2/authorize?client_id=x",
      "POST /oauth2/authorize",
      "GET /oauth2/authorize?client_id=x",
      "POST /oauth2/authorize",
    ]);
    expect(err).toHaveBeenCalledTimes(1);
    expect(String(err.mock.calls[0]![0])).toContain("starting the sign-in over");
    err.mockRestore();
  });

  it("gives up after three attempts", async () => {
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    postAnswers = Array.from({ length: 3 }, () => ({ status: 503, body: PROXY_503 }));
    await expect(signIn(`${base}/oauth2/authorize`, WHO)).rejects.toThrow(/proxy lost/);
    expect(seen.filter((s) => s.startsWith("POST"))).toHaveLength(3);
    err.mockRestore();
    postAnswers = [];
  });

  it("throws any other failing answer at once, a 503 of the worker's own included", async () => {
    for (const answer of [
      { status: 503, body: '{"error":"temporarily_unavailable"}' },
      { status: 500, body: PROXY_503 },
    ]) {
      seen.length = 0;
      postAnswers = [answer];
      await expect(signIn(`${base}/oauth2/authorize`, WHO)).rejects.toThrow(`sign-in page answered ${answer.status}`);
      expect(seen).toEqual(["GET /oauth2/authorize", "POST /oauth2/authorize"]);
    }
  });
});
