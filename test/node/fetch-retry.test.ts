// The node tests' fetch (./fetch-retry.ts): a lost GET to a loopback server is sent again, an
// answer of any status is kept, and nothing else is ever sent twice.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { retryingFetch } from "./fetch-retry";

let server: Server;
let base: string;
/** What the server received, in order: method and path. */
const seen: string[] = [];
/** Paths whose first request is held without an answer (a lost request). */
const holdFirst = new Set(["/lost"]);
/** Paths whose first request has its connection closed with no answer (a failed request). */
const dropFirst = new Set(["/dropped", "/post-dropped"]);
/** Every GET /healthz goes unanswered. */
let healthzLost = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (holdFirst.delete(req.url!)) return; // never answered
    if (dropFirst.delete(req.url!)) return void req.socket.destroy();
    if (req.url === "/always-lost" || (req.url === "/healthz" && healthzLost)) return;
    res.writeHead(req.url === "/error" ? 500 : 200, { "Content-Type": "text/plain" });
    res.end(`answer to ${req.method} ${req.url}`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const f = retryingFetch(fetch, 300, 3);

describe("the node tests' fetch", () => {
  it("sends a GET that got no answer again, and says so", async () => {
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await f(`${base}/lost`);
    expect(await res.text()).toBe("answer to GET /lost");
    expect(seen.filter((s) => s === "GET /lost")).toHaveLength(2);
    expect(err.mock.calls[0]![0]).toMatch(
      /^\(test fetch\) GET http:\/\/127\.0\.0\.1:\d+\/lost lost \(.*\); sending it again$/,
    );
    err.mockRestore();
  });

  it("sends a GET whose connection failed again", async () => {
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await f(`${base}/dropped`);
    expect(await res.text()).toBe("answer to GET /dropped");
    expect(seen.filter((s) => s === "GET /dropped")).toHaveLength(2);
    err.mockRestore();
  });

  it("keeps an answer of any status, sent once", async () => {
    const res = await f(`${base}/error`);
    expect(res.status).toBe(500);
    expect(seen.filter((s) => s === "GET /error")).toHaveLength(1);
  });

  it("gives up after the last attempt with the loss itself", async () => {
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    await expect(f(`${base}/always-lost`)).rejects.toThrow(/timeout|aborted/i);
    expect(seen.filter((s) => s === "GET /always-lost")).toHaveLength(3);
    err.mockRestore();
  });

  it("never sends a POST again, nor a request with a signal of its own", async () => {
    // the same failure a GET is sent again after
    await expect(f(`${base}/post-dropped`, { method: "POST", body: "x" })).rejects.toThrow();
    expect(seen.filter((s) => s === "POST /post-dropped")).toHaveLength(1);
    holdFirst.add("/own-signal");
    await expect(f(`${base}/own-signal`, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect(seen.filter((s) => s === "GET /own-signal")).toHaveLength(1);
  });

  it("renews a proxied server's connection with GET /healthz before a POST after it was idle, and only then", async () => {
    const idle = 200;
    const g = retryingFetch(fetch, 300, 3, (origin) => origin === base, idle);
    const from = seen.length;
    await (await g(`${base}/first`, { method: "POST", body: "x" })).text(); // nothing answered yet
    await (await g(`${base}/soon`, { method: "POST", body: "x" })).text();
    await (await g(`${base}/read`)).text();
    await new Promise((r) => setTimeout(r, idle + 100));
    await (await g(`${base}/later`, { method: "PUT", body: "x" })).text();
    await (await g(`${base}/after-get`)).text();
    expect(seen.slice(from)).toEqual([
      "GET /healthz",
      "POST /first",
      "POST /soon",
      "GET /read",
      "GET /healthz",
      "PUT /later",
      "GET /after-get",
    ]);
    // another server (not proxied), however idle: the POST alone
    const at = seen.length;
    await (await f(`${base}/elsewhere`, { method: "POST", body: "x" })).text();
    expect(seen.slice(at)).toEqual(["POST /elsewhere"]);
  });

  it("sends the POST once even when the renewing GET is lost every time", async () => {
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    healthzLost = true;
    try {
      const g = retryingFetch(fetch, 300, 2, (origin) => origin === base, 200);
      const from = seen.length;
      const res = await g(`${base}/after-lost`, { method: "POST", body: "x" });
      expect(await res.text()).toBe("answer to POST /after-lost");
      expect(seen.slice(from)).toEqual(["GET /healthz", "GET /healthz", "POST /after-lost"]);
    } finally {
      healthzLost = false;
      err.mockRestore();
    }
  });
});
