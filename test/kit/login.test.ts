// GET /auth/login of the relying-party kit (docs/architecture.md §4.6, §4.7) and its return_to rule.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../workers/core/crypto";
import { safeReturnTo } from "../../packages/kit/src/http";
import { HONG, KIM, mintFor } from "../support/helpers";
import { Browser, kit, ORIGIN, send, setCookies, storeWith, type Kit } from "../support/kit";
import { runInDurableObject } from "cloudflare:test";
import { storeAt } from "../../packages/kit/src/login-store";

/** States written through `k`: KV's `state:` keys, and the ones given to the kit's store (`tracked`). */
async function stateKeys(k: Kit): Promise<string[]> {
  return [...(await k.env.RP_KV.list({ prefix: "state:" })).keys.map((x) => x.name), ...(stored.get(k) ?? [])];
}

const stored = new WeakMap<Kit, string[]>();

/** A kit whose store records the states it is given (`stateKeys`). */
function tracked(): Kit {
  const k = kit();
  const list: string[] = [];
  stored.set(k, list);
  k.env.RP_STORE = storeWith((method, args) => void (method === "putState" && list.push(String(args[0]))));
  return k;
}

describe("GET /auth/login", () => {
  it("302s to the service's authorize with client_id, redirect_uri, a 256-bit state and an S256 challenge (spec §4.1)", async () => {
    const b = new Browser(kit());
    const { res, location, state, challenge } = await b.startLogin();
    expect(location.origin + location.pathname).toBe("http://localhost:8787/oauth2/authorize");
    expect(location.searchParams.get("response_type")).toBe("code");
    expect(location.searchParams.get("client_id")).toBe("demo-client");
    expect(location.searchParams.get("redirect_uri")).toBe("http://localhost:8787/auth/callback");
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 bytes
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get("code_challenge_method")).toBe("S256");
    expect(location.searchParams.has("prompt")).toBe(false);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
  });

  it('keeps the state in the kit\'s store under its hash only, for at most 600 s (docs/rp-kit.md "Storage")', async () => {
    const k = kit();
    const before = Date.now();
    const { state } = await new Browser(k).startLogin();
    const hash = await sha256(state);
    const row = await runInDurableObject(storeAt(k.env.RP_STORE!, hash), (_, ctx) =>
      ctx.storage.sql
        .exec<{ key: string; pending: string; expires: number }>(
          "SELECT key, pending, expires FROM logins WHERE key = ?",
          hash,
        )
        .toArray(),
    );
    expect(row).toHaveLength(1);
    expect(row[0]!.pending.includes(state)).toBe(false);
    expect(row[0]!.expires - before).toBeLessThanOrEqual(601_000);
    expect(row[0]!.expires - before).toBeGreaterThan(590_000);
    expect(await k.env.RP_KV.get(`state:${hash}`)).toBeNull();
  });

  it("without the store, keeps the state in KV under its hash only, for at most 600 s (docs/architecture.md §6)", async () => {
    const k = kit({ RP_STORE: undefined });
    const before = Date.now();
    const { state } = await new Browser(k).startLogin();
    const list = await k.env.RP_KV.list({ prefix: "state:" });
    const names = list.keys.map((x) => x.name);
    const key = `state:${await sha256(state)}`;
    expect(names).toContain(key);
    expect(names.some((n) => n.includes(state))).toBe(false);
    const entry = list.keys.find((x) => x.name === key)!;
    expect(entry.expiration! * 1000 - before).toBeLessThanOrEqual(601_000);
    expect(entry.expiration! * 1000 - before).toBeGreaterThan(590_000);
  });

  it("sets a __Host- binding cookie: HttpOnly, Secure, SameSite=Lax, Path=/, no Domain (docs/architecture.md §4.6)", async () => {
    const { res } = await new Browser(kit()).startLogin();
    const [c] = setCookies(res);
    expect(c!.name).toBe("__Host-rp_state");
    expect(c!.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // the state's lifetime and then a session's: a session made by the login needs it (RP_SESSION_TTL_SECONDS)
    expect(c!.attrs).toEqual(expect.arrayContaining(["Path=/", "HttpOnly", "Secure", "SameSite=Lax", "Max-Age=4200"]));
    expect(c!.attrs.some((a) => /^domain=/i.test(a))).toBe(false);
  });

  it("reuses the browser's binding, so logins started in two tabs both complete", async () => {
    const b = new Browser(kit());
    const first = await b.startLogin("?return_to=%2Fone");
    const binding = b.jar.get("__Host-rp_state");
    const second = await b.startLogin("?return_to=%2Ftwo");
    expect(b.jar.get("__Host-rp_state")).toBe(binding);
    for (const [start, to] of [
      [second, "/two"],
      [first, "/one"],
    ] as const) {
      const { code } = await mintFor(HONG.phone, { codeChallenge: start.challenge! });
      const res = await b.get(`/auth/callback?code=${code}&state=${start.state}`);
      expect(res.status).toBe(303);
      expect(res.headers.get("Location")).toBe(to);
    }
  });

  it("passes prompt, isHybrid=Y and lang through (spec §4.1); refuses malformed ones with 400", async () => {
    const b = new Browser(kit());
    const { location } = await b.startLogin("?prompt=select_account&isHybrid=Y&lang=en");
    expect(location.searchParams.get("prompt")).toBe("select_account");
    expect(location.searchParams.get("isHybrid")).toBe("Y");
    expect(location.searchParams.get("lang")).toBe("en");
    expect((await b.startLogin("?isHybrid=N")).location.searchParams.has("isHybrid")).toBe(false);
    for (const q of ["?prompt=%3Cx%3E", "?isHybrid=yes", "?lang=fr", "?return_to=/a&return_to=/b"]) {
      const res = await b.get(`/auth/login${q}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_request" });
    }
  });

  it("sends no challenge with RP_PKCE=false, and the login still completes", async () => {
    const b = new Browser(kit({ RP_PKCE: "false" }));
    const { res } = await b.login(KIM.phone);
    expect(res.status).toBe(303);
    const start = await b.startLogin();
    expect(start.challenge).toBeUndefined();
  });

  it("first moves a login started on another host name to the public origin (docs/architecture.md §4.7: __Host- cookies are per host)", async () => {
    const k = tracked();
    const before = (await stateKeys(k)).length;
    const res = await send(k, "http://127.0.0.1:8787/auth/login?return_to=%2Fcart&prompt=N");
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe(`${ORIGIN}/auth/login?return_to=%2Fcart&prompt=N`);
    expect(setCookies(res)).toEqual([]);
    expect((await stateKeys(k)).length).toBe(before);
  });

  it("copies at most 2,048 characters of query into that redirect: longer is 414 invalid_request, no Location", async () => {
    const k = kit();
    const at = (n: number) =>
      `http://127.0.0.1:8787/auth/login?return_to=%2F&x=${"a".repeat(n - "?return_to=%2F&x=".length)}`;
    const ok = await send(k, at(2048));
    expect(ok.status).toBe(302);
    expect(new URL(ok.headers.get("Location")!).search.length).toBe(2048);
    const long = await send(k, at(2049));
    expect(long.status).toBe(414);
    expect(long.headers.get("Location")).toBeNull();
    expect(((await long.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("answers 405 to POST and 404 elsewhere (router)", async () => {
    const k = kit();
    expect((await send(k, "/auth/login", { method: "POST", headers: { Origin: ORIGIN } })).status).toBe(405);
  });
});

const ATTACKS = [
  "//evil.example",
  "//evil.example/path",
  "/\\evil.example",
  "\\\\evil.example",
  "/\\/evil.example",
  "https://evil.example",
  "http:evil.example",
  "https:/evil.example",
  "javascript:alert(1)",
  "data:text/html,x",
  "evil.example",
  "./x",
  "../x",
  "/.//evil.example",
  "/./\\evil.example",
  "/\t/evil.example",
  "/\n/evil.example",
  "/x\r\nSet-Cookie: a=b",
  "/x\u0000",
  " /x",
  "/x y",
  "/" + "a".repeat(2048),
];

describe("return_to (docs/architecture.md §4.6: same-origin paths only)", () => {
  it("refuses each known open-redirect form with 400 and stores no state", async () => {
    const k = tracked();
    const before = (await stateKeys(k)).length;
    for (const attack of ATTACKS) {
      const res = await send(k, `/auth/login?${new URLSearchParams({ return_to: attack })}`);
      expect(res.status, attack).toBe(400);
      expect(await res.json()).toEqual({ error: "invalid_request", message: "The value of return_to is not valid." });
      expect(setCookies(res)).toEqual([]);
    }
    expect((await stateKeys(k)).length).toBe(before);
  });

  it("keeps ordinary paths, queries and fragments, normalised", () => {
    expect(safeReturnTo(undefined, ORIGIN)).toBe("/");
    expect(safeReturnTo("", ORIGIN)).toBe("/");
    expect(safeReturnTo("/cart?item=3&x=%2F%2Fy#top", ORIGIN)).toBe("/cart?item=3&x=%2F%2Fy#top");
    expect(safeReturnTo("/a/../b", ORIGIN)).toBe("/b");
    expect(safeReturnTo("/장바구니", ORIGIN)).toBe("/%EC%9E%A5%EB%B0%94%EA%B5%AC%EB%8B%88");
  });

  it("property: whatever the input, an accepted return_to resolves on the same origin and is a single-slash path (fast-check)", () => {
    const prefix = fc.constantFrom(
      "",
      "/",
      "//",
      "/\\",
      "\\",
      "/.",
      "/./",
      "/..",
      "http:",
      "https://",
      "javascript:",
      "/%2F",
      "/%5C",
      "%2F",
      "/\t",
      "/ ",
    );
    const piece = fc.oneof(
      fc.string({ unit: "binary", maxLength: 12 }),
      fc.constantFrom(
        "/",
        "//",
        "\\",
        ".",
        "..",
        ":",
        "@",
        "?",
        "#",
        "%2e",
        "%2f",
        "%5c",
        "evil.example",
        "\u3000",
        "\uff0f",
        "\u2215",
        "\r",
        "\n",
        "\t",
      ),
    );
    fc.assert(
      fc.property(prefix, fc.array(piece, { maxLength: 6 }), (p, parts) => {
        const input = p + parts.join("");
        const out = safeReturnTo(input, ORIGIN);
        if (out === null) return;
        expect(out.startsWith("/")).toBe(true);
        expect(out.startsWith("//")).toBe(false);
        expect(out.startsWith("/\\")).toBe(false);
        expect(/[\x00-\x20\x7f]/.test(out)).toBe(false);
        expect(new URL(out, ORIGIN).origin).toBe(ORIGIN);
        // what a browser does with the Location header: resolve it against the callback's URL
        expect(new URL(out, `${ORIGIN}/auth/callback?code=x`).origin).toBe(ORIGIN);
      }),
      { numRuns: 3000 },
    );
  });

  it("property: through /auth/login and /auth/callback, the final 303 never leaves the origin (fast-check)", async () => {
    const k = kit();
    const b = new Browser(k);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom(...ATTACKS),
          fc.string({ unit: "grapheme-ascii", maxLength: 20 }).map((s) => "/" + s),
          fc.webPath(),
        ),
        async (returnTo) => {
          const res = await b.get(`/auth/login?${new URLSearchParams({ return_to: returnTo })}`);
          if (res.status === 400) return;
          expect(res.status).toBe(302);
          const location = new URL(res.headers.get("Location")!);
          const { code } = await mintFor(HONG.phone, { codeChallenge: location.searchParams.get("code_challenge")! });
          const cb = await b.get(`/auth/callback?code=${code}&state=${location.searchParams.get("state")}`);
          expect(cb.status).toBe(303);
          expect(new URL(cb.headers.get("Location")!, `${ORIGIN}/auth/callback`).origin).toBe(ORIGIN);
        },
      ),
      { numRuns: 30 },
    );
  });
});
