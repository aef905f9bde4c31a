// Duplicated callbacks and token calls (docs/rp-kit.md "Duplicated callbacks"): a double click, a
// prefetch or a retried request must end in exactly one login. Invariants, over randomized
// concurrent trials: the service sees one code exchange per login; every duplicate is answered
// with that login's outcome (the same session), never an error page.
import { describe, expect, it } from "vitest";
import { createPkce } from "../../packages/kit/src/client";
import { HONG, KIM, mintFor } from "../support/helpers";
import { Browser, kit, send, setCookies, STORAGES, type Kit } from "../support/kit";
import { env } from "../support/env";
import { exports } from "cloudflare:workers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TRIALS = 50;

function exchanges(k: Kit): number {
  return k.calls.filter((c) => c === "POST /oauth2/token").length;
}

describe.each(STORAGES)("%s: a duplicated callback (double click, prefetch): exactly one login", (_, storage) => {
  it(`two concurrent callbacks, 0-4 ms apart: both 303 with the same session, one code exchange (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const k = kit(storage);
      const b = new Browser(k);
      const start = await b.startLogin("?return_to=%2Faccount");
      const { code } = await mintFor(trial % 2 ? HONG.phone : KIM.phone, { codeChallenge: start.challenge! });
      const url = `/auth/callback?code=${code}&state=${start.state}`;
      const delay = trial % 5;
      const [x, y] = await Promise.all([b.get(url), sleep(delay).then(() => b.get(url))]);
      for (const r of [x, y]) {
        expect(r.status, `trial ${trial}: ${r.status}`).toBe(303);
        expect(r.headers.get("Location")).toBe("/account");
      }
      const sx = setCookies(x).find((c) => c.name === "__Host-rp_session")?.value;
      const sy = setCookies(y).find((c) => c.name === "__Host-rp_session")?.value;
      expect(sx).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(sy).toBe(sx);
      expect(exchanges(k)).toBe(1);
      expect((await b.get("/auth/me")).status).toBe(200);
    }
  });

  it("a duplicate of a callback the service refused shows the same failure, and no second exchange happens", async () => {
    const k = kit(storage);
    const b = new Browser(k);
    const start = await b.startLogin();
    const url = `/auth/callback?code=${"x".repeat(43)}&state=${start.state}`;
    const [x, y] = await Promise.all([b.get(url), b.get(url)]);
    expect([x.status, y.status]).toEqual([502, 502]);
    expect(exchanges(k)).toBe(1);
  });
});

describe.each(STORAGES)("%s: concurrent /auth/token calls with one code: one session", (_, storage) => {
  it("50 concurrent calls with the same code and verifier: all 200 with one session token; one code exchange", async () => {
    const k = kit({ ...storage, RP_TOKEN_RATE_LIMIT: "1000" });
    const pkce = await createPkce();
    const { code } = await mintFor(HONG.phone, { redirectUri: "demoapp://callback", codeChallenge: pkce.challenge });
    const body = new URLSearchParams({ code, code_verifier: pkce.verifier }).toString();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        sleep(i % 4).then(() =>
          send(k, "/auth/token", {
            method: "POST",
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
            body,
          }),
        ),
      ),
    );
    const bodies = (await Promise.all(results.map((r) => r.json()))) as { session_token?: string; error?: string }[];
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(bodies.map((b) => b.session_token)).size).toBe(1);
    expect(exchanges(k)).toBe(1);
  });

  it("a concurrent call with the same code and another verifier gets invalid_grant and shares nothing", async () => {
    // The first call's exchange is held at the service until the second is answered: the second
    // arrives while the first holds the code's claim (whichever started first, that is the race).
    let reached!: () => void;
    const exchanging = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const k = kit(
      { ...storage, RP_TOKEN_RATE_LIMIT: "1000" },
      {
        fetch: async (input, init) => {
          const req = new Request(input, init);
          if (new URL(req.url).pathname === "/oauth2/token") {
            reached();
            await held;
          }
          return exports.default.fetch(req);
        },
      },
    );
    const pkce = await createPkce();
    const { code } = await mintFor(KIM.phone, { codeChallenge: pkce.challenge });
    const post = (verifier: string) =>
      send(k, "/auth/token", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ code, code_verifier: verifier }).toString(),
      });
    const mine = post(pkce.verifier);
    await exchanging;
    const theirs = await post((await createPkce()).verifier);
    expect(theirs.status).toBe(400);
    expect(((await theirs.json()) as { error: string }).error).toBe("invalid_grant");
    release();
    expect((await mine).status).toBe(200);
    expect(exchanges(k)).toBe(1); // the second never reached the service
  });
});

describe("across isolates (the KV claim)", () => {
  it("two isolates redeeming one key at once run the work once and both get its outcome (20 trials)", async () => {
    // Two module instances of the redemption code: two isolates with their own in-flight maps. The
    // second is the same file under another id (a query), not a reset of the module cache: the
    // project's files share the worker's module instances (vitest.config.ts `isolate: false`).
    const a = await import("../../packages/kit/src/redeem");
    const second = "../../packages/kit/src/redeem.ts?isolate=second";
    const b = (await import(/* @vite-ignore */ second)) as typeof import("../../packages/kit/src/redeem");
    expect(a.redeemOnce).not.toBe(b.redeemOnce);
    for (let trial = 0; trial < 20; trial++) {
      let runs = 0;
      const work = async () => {
        runs++;
        await sleep(5);
        return { kind: "session" } as const;
      };
      const key = `isolates-${trial}-${crypto.randomUUID()}`;
      const kenv = kit({ RP_STORE: undefined }).env;
      const [x, y] = await Promise.all([
        a.redeemOnce(kenv.RP_KV, key, { proofHash: "p" }, 5000, work),
        sleep(trial % 3).then(() => b.redeemOnce(kenv.RP_KV, key, { proofHash: "p" }, 5000, work)),
      ]);
      expect(runs).toBe(1);
      expect([x.outcome, y.outcome]).toEqual([{ kind: "session" }, { kind: "session" }]);
      expect([x.first, y.first].filter(Boolean)).toHaveLength(1);
    }
    expect(env.RP_KV).toBeDefined();
  });
});
