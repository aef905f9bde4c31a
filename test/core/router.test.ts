// The router's contract (workers/core/router.ts), on a table of its own: which step answers, what an
// unmatched request gets, path parameters, HTTPS, the request id and the error renderer.

import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { E } from "../../workers/core/errors";
import { json } from "../../workers/core/http";
import { createWorker, hostOf, pathAndQuery, type RequestContext } from "../../workers/core/router";

const seen: string[] = [];
let lastContext: RequestContext | undefined;

const worker = createWorker<{ DEV_MODE?: string }>("test", [
  { method: "ALL", path: "/gated/*", handler: () => void seen.push("gate") },
  { method: "GET", path: "/gated/item/:id", handler: (_req, _env, rc) => json({ id: rc.params.id }) },
  { method: "GET", path: "/gated/item/:id", handler: () => json({ second: true }) },
  { method: "POST", path: "/gated/item/:id", handler: () => json({ posted: true }) },
  { method: "GET", path: "/plain", handler: () => json({ plain: true }) },
  { method: "GET", path: "/.dotted/a-b~c_d", handler: () => json({ dotted: true }) },
  { method: "GET", path: "/spend", handler: () => json({ spent: true }), effects: true },
  { method: "GET", path: "/page", handler: () => new Response("page"), page: true },
  { method: "GET", path: "/nothing", handler: () => undefined },
  {
    method: "GET",
    path: "/context",
    handler: (_req, _env, rc) => {
      lastContext = rc;
      return json({ worker: rc.worker, path: rc.url.pathname, query: rc.url.searchParams.get("q") });
    },
  },
  { method: "GET", path: "/throws/api", handler: () => Promise.reject(E.invalid("x", "bad x")) },
  { method: "GET", path: "/throws/other", handler: () => Promise.reject(new Error("secret detail")) },
]);

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
const env = { DEV_MODE: "true", LOG_REQUESTS: "false" };
const call = (path: string, init: RequestInit = {}, base = "https://login.example") =>
  worker.fetch!(new Request(base + path, init) as never, env, ctx) as Promise<Response>;

describe("core/router createWorker", () => {
  it("runs a gate that answers nothing, then the first matching route that answers", async () => {
    seen.length = 0;
    const res = await call("/gated/item/a%20b");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: "a b" }); // decoded, and the second GET route never ran
    expect(seen).toEqual(["gate"]);
    expect(await (await call("/gated/item/x", { method: "POST" })).json()).toEqual({ posted: true });
  });

  it("answers 404 for an unknown path, a trailing slash or an undecodable path parameter", async () => {
    for (const path of ["/nowhere", "/plain/", "/gated/item/%E0%A4%A", "/gated/item/x/"]) {
      const res = await call(path);
      expect(res.status, path).toBe(404);
      expect(await res.json(), path).toEqual({ error: "not_found", message: "The requested API address is invalid." });
    }
  });

  it("answers 405 with Allow for a known path and another method; HEAD only where GET has no effects", async () => {
    const put = await call("/gated/item/x", { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("Allow")).toBe("GET, POST"); // the methods routed; HEAD follows GET unlisted
    expect((await call("/plain", { method: "HEAD" })).status).toBe(200);
    const head = await call("/spend", { method: "HEAD" });
    expect(head.status).toBe(405);
    expect(head.headers.get("Allow")).toBe("GET");
  });

  it("a template of plain segments matches exactly its own text: no other spelling, prefix or extension", async () => {
    const parts = ["/", ".", "dotted", "a", "-", "b", "~", "c", "_", "d", "%2E", "x", "//"];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...parts), { maxLength: 9 }), async (segs) => {
        const path = "/" + segs.join("");
        const res = await call(path);
        expect(res.status, path).toBe(path === "/.dotted/a-b~c_d" ? 200 : 404);
      }),
      {
        numRuns: 300,
        examples: [[[".dotted/a-b~c_d"]], [[".dotted/a-b~c_d/"]], [["xdotted/a-b~c_d"]], [[".dotted/a-b~c_dx"]]],
      },
    );
    expect(await (await call("/.dotted/a-b~c_d")).json()).toEqual({ dotted: true });
  });

  it("a route of this method that answers nothing, and no other: 404, not 405 naming the method sent", async () => {
    expect((await call("/nothing")).status).toBe(404);
  });

  it("gives the handler the context: the URL, its path and query, the worker's name, the caller's request id echoed on the answer", async () => {
    const res = await call("/context?q=1", { headers: { "X-Request-Id": "abc-123" } });
    expect(await res.json()).toEqual({ worker: "test", path: "/context", query: "1" });
    expect(res.headers.get("X-Request-Id")).toBe("abc-123");
    expect(lastContext?.requestId).toBe("abc-123");
    expect([lastContext?.path, lastContext?.search]).toEqual(["/context", "?q=1"]);
    expect((await call("/nowhere", { headers: { "X-Request-Id": "e-1" } })).headers.get("X-Request-Id")).toBe("e-1"); // on errors too
    // none sent, or one not acceptable: no X-Request-Id (deployed, Cloudflare's cf-ray names every
    // answer); the log line names the request by cf-ray, else by a new id
    const fresh = await call("/context", { headers: { "X-Request-Id": "not acceptable!" } });
    expect(fresh.headers.get("X-Request-Id")).toBeNull();
    expect(lastContext?.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await call("/nowhere")).headers.get("X-Request-Id")).toBeNull();
    await call("/context", { headers: { "cf-ray": "8f1e2d3c4b5a6978-ICN" } });
    expect(lastContext?.requestId).toBe("8f1e2d3c4b5a6978-ICN");
  });

  it("the path and query it matches on are the URL's own (pathname, search), whatever the URL", () => {
    fc.assert(
      fc.property(
        fc.webUrl({ validSchemes: ["https", "http"], withQueryParameters: true, withFragments: true }),
        fc.constantFrom("", "?", "#", "?a=%2F&b=?c", "#x?y", "?q#f", "//x/", "/%2e%2E/a?"),
        (raw, tail) => {
          const url = new URL(raw + tail);
          // what workerd hands a worker: a serialized URL
          expect(pathAndQuery(url.href)).toEqual([url.pathname, url.search]);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("the host the HTTPS check reads is the URL's own hostname, userinfo, port and IPv6 included", () => {
    const hosts = fc.oneof(
      fc.domain(),
      fc.ipV4(),
      fc.ipV6().map((a) => `[${a}]`),
      fc.constantFrom("localhost", "127.0.0.1", "[::1]", "localhost.example", "127.0.0.1.nip.io"),
    );
    fc.assert(
      fc.property(
        fc.constantFrom("http", "https"),
        fc.option(fc.constantFrom("u", "u:p", "a@b:c", "localhost:1"), { nil: undefined }),
        hosts,
        fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
        fc.constantFrom("", "/", "/x?y=@z:1", "?q=//@h:1", "#f@g:2", "/a/b#c"),
        (scheme, user, host, port, tail) => {
          const url = new URL(
            `${scheme}://${user === undefined ? "" : encodeURIComponent(user).replace(/%3A/, ":") + "@"}${host}${port === undefined ? "" : `:${port}`}${tail}`,
          );
          expect(hostOf(url.href)).toBe(url.hostname);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("concurrent requests keep their own context: each answer carries its own parameter and request id", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `req-${i}`);
    const answers = await Promise.all(
      ids.map((id, i) => call(`/gated/item/n${i}`, { headers: { "X-Request-Id": id } })),
    );
    expect(await Promise.all(answers.map((r) => r.json()))).toEqual(ids.map((_, i) => ({ id: `n${i}` })));
    expect(answers.map((r) => r.headers.get("X-Request-Id"))).toEqual(ids);
  });

  it("renders a thrown catalogue error as it is, anything else as a fixed server_error", async () => {
    const api = await call("/throws/api");
    expect(api.status).toBe(400);
    expect(await api.json()).toEqual({ error: "invalid_request", message: "The value of x is not valid." });
    const other = await call("/throws/other");
    expect(other.status).toBe(500);
    const text = await other.text();
    expect(JSON.parse(text).error).toBe("server_error");
    expect(text).not.toContain("secret detail");
  });

  it("refuses plain http to a public host before the handler; a page is redirected to https", async () => {
    seen.length = 0;
    const api = await call("/gated/item/x", {}, "http://login.example");
    expect(api.status).toBe(400);
    expect(seen).toEqual([]); // the gate did not run either
    const page = await call("/page?a=1", {}, "http://login.example");
    expect(page.status).toBe(308);
    expect(page.headers.get("Location")).toBe("https://login.example/page?a=1");
    expect((await call("/plain", {}, "http://localhost:8787")).status).toBe(200); // loopback in DEV_MODE
  });
});
