// The kit's Durable Object store (packages/kit/src/login-store.ts; docs/rp-kit.md "Storage"), through
// its RPC methods as the kit calls them. Invariants over randomized concurrent and interleaved calls:
// - a state is claimed by exactly one callback, and only by one holding its binding, while fresh;
//   a refused callback changes nothing (the state's own browser can still claim it);
// - after the claim, the same browser's callbacks are duplicates that see the claimer's outcome,
//   anyone else's are refused; an error callback's `forget` leaves nothing to follow;
// - a redemption without state (a code) has one first claimer; the same proof follows, another is refused;
// - an end of a plid never misses a login that began before it: the login's own call reads the end,
//   or the end lists the login's session.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { randomToken, sha256 } from "../../workers/core/crypto";
import { storeAt, type ClaimResult } from "../../packages/kit/src/login-store";
import { env } from "../support/env";

const ns = env.RP_STORE as NonNullable<typeof env.RP_STORE>;
const RUNS = 40;

async function freshKey(): Promise<string> {
  return sha256(randomToken(32));
}

describe("a login's state: one claim, by its own browser, while fresh", () => {
  it("concurrent callbacks with the state's binding, another one or none: exactly one first, only with the binding", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("mine", "theirs", "none"), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        async (callers, expired) => {
          const key = await freshKey();
          const mine = await sha256(randomToken(32));
          const theirs = await sha256(randomToken(32));
          const created = Date.now() - 5_000;
          const stub = storeAt(ns, key);
          const pending = JSON.stringify({ bindingHash: mine, returnTo: "/cart", created });
          await stub.putState(key, pending, Date.now() + 600_000);
          // expired: the kit asks for states made in the last second only
          const createdAfter = expired ? Date.now() - 1_000 : Date.now() - 600_000;
          const got: ClaimResult[] = await Promise.all(
            callers.map((c) =>
              stub.claimState(
                key,
                c === "mine" ? mine : c === "theirs" ? theirs : null,
                createdAfter,
                Date.now() + 60_000,
              ),
            ),
          );
          const firsts = got.filter((g) => g.kind === "first");
          const withBinding = callers.filter((c) => c === "mine").length;
          if (expired) {
            expect(firsts).toHaveLength(0);
            for (const g of got) expect(g.kind).toBe("refused");
            // refused: the state is untouched, its browser claims it within a fresh window
            expect((await stub.claimState(key, mine, created - 1, Date.now() + 60_000)).kind).toBe("first");
            return;
          }
          expect(firsts).toHaveLength(withBinding > 0 ? 1 : 0);
          if (firsts[0]?.kind === "first") expect(firsts[0].pending).toBe(pending);
          got.forEach((g, i) => {
            if (callers[i] !== "mine") expect(g.kind).toBe("refused");
            else if (g.kind !== "first") expect(g).toEqual({ kind: "duplicate", returnTo: "/cart", outcome: null });
          });
          if (withBinding === 0) {
            expect((await stub.claimState(key, mine, createdAfter, Date.now() + 60_000)).kind).toBe("first");
          }
          // the claimer's outcome reaches every later duplicate of the same browser, and nobody else
          await stub.settle(key, '{"kind":"session"}');
          expect(await stub.claimState(key, mine, createdAfter, Date.now() + 60_000)).toEqual({
            kind: "duplicate",
            returnTo: "/cart",
            outcome: '{"kind":"session"}',
          });
          expect(await stub.claimState(key, theirs, createdAfter, Date.now() + 60_000)).toEqual({
            kind: "refused",
            reason: "unknown",
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("an error callback's claim, forgotten, leaves nothing: a later callback finds no state", async () => {
    const key = await freshKey();
    const mine = await sha256(randomToken(32));
    const stub = storeAt(ns, key);
    await stub.putState(
      key,
      JSON.stringify({ bindingHash: mine, returnTo: "/", created: Date.now() }),
      Date.now() + 600_000,
    );
    expect((await stub.claimState(key, mine, 0, Date.now() + 60_000)).kind).toBe("first");
    await stub.forget(key);
    expect(await stub.claimState(key, mine, 0, Date.now() + 60_000)).toEqual({ kind: "refused", reason: "unknown" });
    expect(await stub.outcome(key)).toBeUndefined();
  });

  it("a state past its row's expiry is unknown, claimed or not", async () => {
    const key = await freshKey();
    const mine = await sha256(randomToken(32));
    const stub = storeAt(ns, key);
    await stub.putState(key, JSON.stringify({ bindingHash: mine, returnTo: "/", created: Date.now() }), Date.now() - 1);
    expect(await stub.claimState(key, mine, 0, Date.now() + 60_000)).toEqual({ kind: "refused", reason: "unknown" });
  });
});

describe("a redemption without state (a native app's code)", () => {
  it("concurrent claims with two proofs: one first; its proof follows, the other is refused", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), async (proofs) => {
        const key = await freshKey();
        const stub = storeAt(ns, key);
        const [a, b] = [await sha256("a"), await sha256("b")];
        const got = await Promise.all(proofs.map((p) => stub.claim(key, p ? a : b, Date.now() + 60_000)));
        const first = got.findIndex((g) => g.kind === "first");
        expect(got.filter((g) => g.kind === "first")).toHaveLength(1);
        got.forEach((g, i) => {
          if (i === first) return;
          expect(g.kind).toBe(proofs[i] === proofs[first] ? "duplicate" : "refused");
        });
      }),
      { numRuns: RUNS },
    );
  });
});

describe("a plid's end never misses a login that began before it", () => {
  it("logins (start, then the index call) and ends interleaved in any order", async () => {
    type Op = { kind: "login"; i: number } | { kind: "end"; j: number };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        fc.infiniteStream(fc.nat()),
        async (logins, ends, picks) => {
          const plid = await freshKey();
          const stub = storeAt(ns, plid);
          // each login has begun (its startedAt) before any step here; the order of the calls is drawn
          const ops: Op[] = [
            ...Array.from({ length: logins }, (_, i) => ({ kind: "login" as const, i })),
            ...Array.from({ length: ends }, (_, j) => ({ kind: "end" as const, j })),
          ];
          const it = picks[Symbol.iterator]();
          for (let k = ops.length - 1; k > 0; k--) {
            const r = it.next().value % (k + 1);
            [ops[k], ops[r]] = [ops[r]!, ops[k]!];
          }
          const started = Date.now() - 1;
          const sessions = Array.from({ length: logins }, () => randomToken(16));
          const endedSeen = new Array<number | null>(logins).fill(null);
          const listed = new Set<string>();
          for (const op of ops) {
            if (op.kind === "login")
              endedSeen[op.i] = await stub.indexSession(plid, sessions[op.i]!, Date.now() + 60_000, started);
            else for (const s of await stub.endPlid(plid, Date.now(), Date.now() + 3_600_000, 500)) listed.add(s);
          }
          // every end came after every login's start: each login either read an end or was listed by one
          sessions.forEach((s, i) => expect(endedSeen[i] !== null || listed.has(s), `login ${i}`).toBe(true));
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe("expired rows", () => {
  it("the alarm deletes the expired rows of every table and comes back only while rows are left", async () => {
    const stub = ns.get(ns.idFromName(`sweep-${randomToken(8)}`));
    const now = Date.now();
    await stub.putState("old", "{}", now - 1);
    await stub.indexSession("p", "old-session", now - 1, now);
    await stub.endPlid("p", now, now - 1, 10);
    await stub.putState("live", "{}", now + 600_000);
    const count = () =>
      runInDurableObject(stub, (_, ctx) =>
        ["logins", "plid_sessions", "plid_ends"].map(
          (t) => ctx.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t}`).one().n,
        ),
      );
    expect(await count()).toEqual([2, 1, 1]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await count()).toEqual([1, 0, 0]);
    // a live row is left: the alarm is set again
    expect(await runInDurableObject(stub, (_, ctx) => ctx.storage.getAlarm())).not.toBeNull();
    await stub.forget("live");
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, (_, ctx) => ctx.storage.getAlarm())).toBeNull();
  });
});
