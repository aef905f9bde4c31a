// Hostile and malformed input never yields an unhandled 500 (docs/architecture.md §4.1): every
// answer is either a success or a catalogue error with {error, message}. The only 500 allowed is
// the reference's invalid-code answer at the token endpoint (spec §4.2).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { basic, call, DEMO } from "../support/helpers";

const ENDPOINTS = [
  { method: "GET", path: "/oauth2/authorize" },
  { method: "POST", path: "/oauth2/authorize" },
  { method: "POST", path: "/oauth2/token" },
  { method: "GET", path: "/v1/user/me" },
  { method: "POST", path: "/v1/user/disconnect" },
] as const;

const PARAM_NAMES = [
  "client_id",
  "client_secret",
  "redirect_uri",
  "response_type",
  "state",
  "grant_type",
  "code",
  "code_verifier",
  "plid",
  "prompt",
  "isHybrid",
  "code_challenge",
  "code_challenge_method",
  "x",
];

const headerText = fc.string({ unit: "binary-ascii", maxLength: 200 }).map((s) => s.replace(/[^\x20-\x7e]/g, ""));
const anyText = fc.oneof(
  fc.string({ maxLength: 100 }),
  fc.string({ unit: "binary", maxLength: 100 }),
  fc.constantFrom("%", "%ZZ", "%E0%A4%A", 'a b&c=d/%ZZ한글"<>', "\u0000", "=", "&&&", "+"),
);

// A raw query/body: name=value pairs with arbitrary, partly unescaped text and possible duplicates.
const rawParams = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...PARAM_NAMES), anyText), anyText, fc.boolean()), { maxLength: 8 })
  .map((pairs) =>
    pairs
      .map(([k, v, escape]) => (escape ? `${encodeURIComponent(k)}=${encodeURIComponent(v)}` : `${k}=${v}`))
      .join("&"),
  );

const authorization = fc.oneof(
  fc.constant(undefined),
  headerText,
  headerText.map((s) => `Basic ${s}`),
  headerText.map((s) => `Bearer ${s}`),
  fc.tuple(headerText, headerText).map(([a, b]) => basic(a, b)),
  fc.constant(basic(DEMO.clientId, DEMO.secret)),
);

const contentType = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(
    "application/x-www-form-urlencoded",
    "application/json",
    "text/plain",
    "multipart/form-data; boundary=x",
    "application/x-www-form-urlencoded; charset=EUC-KR",
  ),
  headerText,
);

async function expectHandled(res: Response, path: string): Promise<void> {
  const text = await res.text();
  if (res.status === 200) return;
  expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
  const body = JSON.parse(text) as { error?: unknown; message?: unknown };
  expect(typeof body.error).toBe("string");
  expect(typeof body.message).toBe("string");
  if (res.status >= 500) {
    expect(path).toBe("/oauth2/token");
    expect(body.message).toMatch(/^Invalid authorization code/);
  }
}

describe("malformed input", () => {
  it("property: random queries, bodies, content types and Authorization headers never give an unhandled 500", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        rawParams,
        rawParams,
        authorization,
        contentType,
        async (ep, query, body, auth, ct) => {
          const headers: Record<string, string> = {};
          if (auth !== undefined) headers.Authorization = auth;
          if (ct !== undefined) headers["Content-Type"] = ct;
          let url: string;
          try {
            url = new URL(`${ep.path}?${query}`, "http://localhost:8787").toString();
          } catch {
            return; // not a URL any client could send
          }
          const res = await call(url, { method: ep.method, headers, body: ep.method === "POST" ? body : undefined });
          await expectHandled(res, ep.path);
        },
      ),
      { numRuns: 300 },
    );
  }, 120_000);

  it("bodies over the limit are 413 at every POST endpoint, with or without Content-Length", async () => {
    for (const path of ["/oauth2/authorize", "/oauth2/token", "/v1/user/disconnect"]) {
      const big = "x=" + "a".repeat(65 * 1024);
      const res = await call(path, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: big,
      });
      expect(res.status).toBe(413);
      // a streamed body has no Content-Length: the limit still holds
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode("a".repeat(8 * 1024)));
          c.close();
        },
      });
      const res2 = await call(path, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: stream,
        duplex: "half",
      } as RequestInit);
      expect(res2.status).toBe(413);
      expect(((await res2.json()) as { error: string }).error).toBe("invalid_request");
    }
  });

  it("a body that is not UTF-8 is invalid_request", async () => {
    const res = await call("/oauth2/token", {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Authorization: basic(DEMO.clientId, DEMO.secret),
      },
      body: new Uint8Array([0x63, 0x6f, 0x64, 0x65, 0x3d, 0xff, 0xfe]),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("percent escapes that do not decode are tolerated, not 500", async () => {
    for (const q of ["client_id=%ZZ", "client_id=%", "redirect_uri=%E0%A4%A&client_id=demo-client", "%=%"]) {
      const res = await call(`/oauth2/authorize?${q}`);
      expect(res.status).toBe(400);
    }
  });
});
