// Fuzzing every endpoint of the all-in-one worker (docs/security.md): random and hostile query
// strings, bodies, content types, cookies, Origin and Authorization headers. For every answer:
// - no 5xx outside the catalogue: the only 5xx are the token endpoint's reference answer to an
//   invalid code (500 "Invalid authorization code"), the kit's 502 when the service refuses, and
//   the sign-in page's 503 when an SMS cannot be sent; never the fixed 500 of an unexpected throw;
// - JSON APIs answer errors as JSON {error, message} with nosniff;
// - nothing is reflected unescaped: a marker planted in every value never appears raw in an HTML
//   page, and no header carries it (or a line break).
// FUZZ_RUNS cases per endpoint (2,000 by default; more from the shell: FUZZ_RUNS=20000 npm test).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "../support/env";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN } from "../support/admin";
import { basic, DEMO } from "../support/helpers";
import devWorker from "../../workers/all-in-one/index";
import { Browser } from "../support/signin";

const RUNS = Number((env as unknown as Record<string, string>).FUZZ_RUNS ?? "2000");
/** Planted in values; must never come back raw in HTML or in a header. */
const MARK = "<zq9\"'mark>";
const VARS = { SIGNIN_IP_LIMIT: "1000000" };
const fuzzEnv = { ...env, ...VARS } as typeof env;

type Kind = "json" | "page" | "either";

interface Endpoint {
  method: string;
  path: string;
  kind: Kind;
  names: readonly string[];
}

const ENDPOINTS: readonly Endpoint[] = [
  {
    method: "GET",
    path: "/oauth2/authorize",
    kind: "either",
    names: [
      "client_id",
      "redirect_uri",
      "response_type",
      "state",
      "prompt",
      "isHybrid",
      "lang",
      "code_challenge",
      "code_challenge_method",
    ],
  },
  {
    method: "POST",
    path: "/oauth2/authorize",
    kind: "either",
    names: ["client_id", "redirect_uri", "response_type", "state", "tx", "csrf"],
  },
  {
    method: "POST",
    path: "/oauth2/token",
    kind: "json",
    names: ["grant_type", "code", "client_id", "client_secret", "code_verifier", "redirect_uri", "state"],
  },
  { method: "GET", path: "/account", kind: "page", names: ["lang", "x"] },
  {
    method: "POST",
    path: "/account",
    kind: "page",
    names: ["tx", "csrf", "action", "client_id", "lang", "telcoCd", "name", "phoneNo", "otp"],
  },
  { method: "GET", path: "/v1/user/me", kind: "json", names: ["x"] },
  { method: "POST", path: "/v1/user/disconnect", kind: "json", names: ["plid", "client_id"] },
  { method: "GET", path: "/auth/login", kind: "either", names: ["return_to", "prompt", "isHybrid", "lang"] },
  { method: "GET", path: "/auth/callback", kind: "page", names: ["code", "state", "error", "message"] },
  { method: "GET", path: "/auth/me", kind: "json", names: ["x"] },
  { method: "POST", path: "/auth/logout", kind: "either", names: ["x"] },
  { method: "POST", path: "/auth/disconnect", kind: "either", names: ["x"] },
  { method: "POST", path: "/auth/token", kind: "json", names: ["code", "code_verifier"] },
  // RFC 8935 errors are {"err", "description"}: JSON, checked as such below
  { method: "POST", path: "/auth/events", kind: "either", names: ["x"] },
  { method: "GET", path: "/", kind: "page", names: ["x", "error"] },
  { method: "GET", path: "/dev/outbox", kind: "either", names: ["x"] },
  { method: "GET", path: "/healthz", kind: "json", names: ["x"] },
  { method: "GET", path: "/admin/clients", kind: "json", names: ["limit", "cursor"] },
  { method: "POST", path: "/admin/clients", kind: "json", names: ["name", "redirect_uris", "items", "auto_login"] },
  { method: "PATCH", path: "/admin/clients/:id", kind: "json", names: ["name", "redirect_uris", "items", "status"] },
  { method: "POST", path: "/admin/clients/:id/rotate-secret", kind: "json", names: ["grace_seconds"] },
  { method: "POST", path: "/admin/directory/import", kind: "json", names: ["telcoCd", "phoneNo", "name", "ci"] },
  { method: "DELETE", path: "/admin/directory/:phone", kind: "json", names: ["x"] },
  { method: "GET", path: "/admin/audit", kind: "json", names: ["type", "limit", "before", "client_id"] },
  { method: "GET", path: "/admin/audit/export", kind: "json", names: ["from", "to"] },
];

const hostile = fc.constantFrom(
  MARK,
  `javascript:alert(1)//${MARK}`,
  `https://evil.example/${MARK}`,
  `//evil.example`,
  `%3Czq9%22mark%3E`,
  "\r\nSet-Cookie: x=1",
  "\u0000",
  "%",
  "%ZZ",
  "a".repeat(3000),
  "../../etc/passwd",
  "' OR 1=1 --",
  '{"a":',
  "demo-client",
  "https://demo.example/callback",
  "code",
  "Y",
);
const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  hostile,
  hostile.map((h) => h + MARK),
);
const headerValue = fc.oneof(
  fc.string({ unit: "binary-ascii", maxLength: 80 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")),
  hostile.map((h) => h.replace(/[^\x20-\x7e]/g, "")),
);

function pairsOf(names: readonly string[]) {
  return fc.array(fc.tuple(fc.oneof(fc.constantFrom(...names), value), value, fc.boolean()), { maxLength: 6 });
}

function encode(pairs: [string, string, boolean][]): string {
  return pairs
    .map(([k, v, raw]) => (raw ? `${k}=${v}` : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`))
    .join("&");
}

const caseOf = (ep: Endpoint) =>
  fc.record({
    query: pairsOf(ep.names),
    body: fc.oneof(
      pairsOf(ep.names).map(encode),
      fc.dictionary(fc.constantFrom(...ep.names), value).map((d) => JSON.stringify(d)),
      value,
    ),
    contentType: fc.option(
      fc.constantFrom(
        "application/x-www-form-urlencoded",
        "application/json",
        "text/plain",
        "multipart/form-data; boundary=x",
        "text/html",
      ),
    ),
    auth: fc.option(
      fc.oneof(
        headerValue,
        headerValue.map((v) => `Bearer ${v}`),
        headerValue.map((v) => `Basic ${v}`),
        fc.constant(basic(DEMO.clientId, DEMO.secret)),
        fc.constant(`Bearer ${ADMIN_TOKEN}`),
      ),
    ),
    cookie: fc.option(
      headerValue.map(
        (v) => `__Host-pl_tx=${v}; __Host-pl_account=${v}; __Host-rp_session=${v}; __Host-rp_binding=${v}`,
      ),
    ),
    origin: fc.option(fc.oneof(fc.constant("http://localhost:8787"), fc.constant("null"), headerValue)),
    accept: fc.option(fc.constantFrom("text/html", "application/json", "*/*")),
    param: value,
    ownClient: fc.boolean(),
  });

function checkAnswer(ep: Endpoint, res: Response, text: string): void {
  const type = res.headers.get("Content-Type") ?? "";
  const label = `${ep.method} ${ep.path} → ${res.status} ${type} ${text.slice(0, 200)}`;
  // no 5xx outside the catalogue
  if (res.status >= 500) {
    const body = JSON.parse(text) as { error: string; message: string };
    const allowed =
      (ep.path === "/oauth2/token" && res.status === 500 && /^Invalid authorization code/.test(body.message)) ||
      (res.status === 502 && body.error === "server_error" && /login service/.test(body.message));
    expect(allowed, label).toBe(true);
  }
  // JSON APIs answer errors as JSON
  if (ep.kind === "json" && res.status >= 400) {
    expect(type, label).toBe("application/json; charset=utf-8");
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(typeof body.error, label).toBe("string");
    expect(typeof body.message, label).toBe("string");
  }
  if (type.startsWith("application/json")) expect(() => JSON.parse(text), label).not.toThrow();
  if (type.startsWith("text/html")) expect(text.includes(MARK) || text.includes("<zq9"), label).toBe(false);
  if (text !== "") expect(res.headers.get("X-Content-Type-Options"), label).toBe("nosniff");
  for (const [name, v] of res.headers) {
    expect(/[\r\n]/.test(v) || v.includes("<zq9"), `${label} header ${name}: ${v}`).toBe(false);
  }
}

describe("the fuzz checks themselves", () => {
  const ep: Endpoint = { method: "GET", path: "/", kind: "json", names: [] };
  const page = (body: string, status = 200, headers: Record<string, string> = {}) =>
    new Response(body, {
      status,
      headers: { "Content-Type": "text/html; charset=utf-8", "X-Content-Type-Options": "nosniff", ...headers },
    });
  it("fail on a raw marker in a page, an uncatalogued 500, a non-JSON API error and a header line break", () => {
    expect(() => checkAnswer(ep, page(`<p>${MARK}</p>`), `<p>${MARK}</p>`)).toThrow();
    const fixed = JSON.stringify({ error: "server_error", message: "A temporary error occurred. Retry later." });
    expect(() => checkAnswer(ep, page(fixed, 500), fixed)).toThrow();
    expect(() => checkAnswer(ep, page("oops", 400), "oops")).toThrow();
    expect(() => checkAnswer(ep, page("", 302, { Location: "/?a=<zq9" }), "")).toThrow();
    expect(() => checkAnswer(ep, page("<p>&lt;zq9</p>"), "<p>&lt;zq9</p>")).not.toThrow();
  });
});

describe(`fuzzing every endpoint (${RUNS} cases each)`, () => {
  let clientId = "";
  beforeAll(async () => {
    const res = await new Browser().fetch("/admin/clients", {
      method: "POST",
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Fuzz", redirect_uris: ["https://fuzz.example/cb"], items: ["gender"] }),
    });
    clientId = ((await res.json()) as { client_id: string }).client_id;
  });

  for (const ep of ENDPOINTS) {
    it(
      `${ep.method} ${ep.path}: no 5xx outside the catalogue, JSON errors on JSON APIs, nothing reflected unescaped`,
      { timeout: 600_000 },
      async () => {
        await fc.assert(
          fc.asyncProperty(caseOf(ep), async (c) => {
            const param = encodeURIComponent(c.param).slice(0, 100) || "x";
            const path = ep.path.replace(":id", c.ownClient ? clientId : param).replace(":phone", param);
            let url: URL;
            try {
              url = new URL(`${path}?${encode(c.query)}`, "http://localhost:8787");
            } catch {
              return; // not a URL a client could send
            }
            const headers: Record<string, string> = { "CF-Connecting-IP": "198.51.100.99" };
            if (c.contentType !== null) headers["Content-Type"] = c.contentType;
            if (c.auth !== null) headers.Authorization = c.auth;
            if (c.origin !== null) headers.Origin = c.origin;
            if (c.accept !== null) headers.Accept = c.accept;
            if (c.cookie !== null) headers.Cookie = c.cookie;
            const init: RequestInit = { method: ep.method, headers, redirect: "manual" };
            if (ep.method !== "GET") init.body = c.body;
            const ctx = createExecutionContext();
            const res = await devWorker.fetch!(new Request(url, init) as never, fuzzEnv, ctx);
            await waitOnExecutionContext(ctx);
            checkAnswer(ep, res, await res.text());
          }),
          { numRuns: RUNS },
        );
      },
    );
  }

  it(
    `sign-in steps with a live transaction: hostile fields in every step (${Math.max(50, Math.floor(RUNS / 10))} cases)`,
    { timeout: 600_000 },
    async () => {
      const names = [
        "telcoCd",
        "name",
        "phoneNo",
        "otp",
        "resend",
        "cancel",
        "agree",
        "autoLogin",
        "lang",
        "tx",
        "csrf",
      ];
      await fc.assert(
        fc.asyncProperty(pairsOf(names), fc.boolean(), async (pairs, keepBinding) => {
          const b = new Browser({ vars: VARS });
          const p1 = await b.authorize({ client_id: DEMO.clientId, redirect_uri: "https://demo.example/callback" });
          const fields = Object.fromEntries(pairs.map(([k, v]) => [k, v]));
          if (!keepBinding) b.cookies.clear();
          const res = await b.fetch("/oauth2/authorize", {
            method: "POST",
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ ...p1.form!.hidden, ...fields }).toString(),
          });
          const text = res.status >= 300 && res.status < 400 ? "" : await res.text();
          checkAnswer({ method: "POST", path: "/oauth2/authorize", kind: "page", names }, res, text);
          expect([200, 302, 400, 403, 413, 429, 503]).toContain(res.status);
        }),
        { numRuns: Math.max(50, Math.floor(RUNS / 10)) },
      );
    },
  );
});
