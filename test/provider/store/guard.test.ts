// The guard store's judgement and counts (docs/abuse.md "Scopes and states"): properties of `judge`
// over random sums and states, and the store's counts equal to the events of the batches it was
// given, each batch once however often it is retried, in random order.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "../../support/env";
import {
  canSlow,
  isSurge,
  judge,
  judgeOutstanding,
  minSendsOf,
  SCOPE_KINDS,
  typedShare,
  typingCurve,
  TYPING_MIN_SAMPLES,
  type GuardRules,
  type StateRow,
} from "../../../workers/provider/store/guard/rules";
import { guardStore } from "../../../workers/provider/store/guard/reach";
import { guardRules } from "../../../workers/provider/store/guard/config";
import type { GuardEvent, GuardStore } from "../../../workers/provider/store/guard/guard-store";

const RULES: GuardRules = {
  minConversion: 0.3,
  minSends: 5,
  wideFactor: 4,
  windowMs: 3_600_000,
  settleMs: 40_000,
  cooldownMs: 43_200_000,
  maxCooldownMs: 7 * 86_400_000,
  strikeMemoryMs: 7 * 86_400_000,
  slowCodes: 2,
  slowWindowMs: 600_000,
  // the surge (below) apart: these properties are about the judgement of settled and outstanding sums
  surgeCodes: 0,
  surgeFactor: 10,
};

const kind = fc.constantFrom(...SCOPE_KINDS);
const sums = fc
  .record({ sent: fc.nat(500), csent: fc.nat(100) })
  .chain(({ sent, csent }) =>
    fc.record({ sent: fc.constant(sent), verified: fc.nat(sent), csent: fc.constant(csent), cverified: fc.nat(csent) }),
  );
const NOW = 1_800_000_000_000;
const state = fc.option(
  fc.record({
    state: fc.constantFrom("suspect" as const, "slowed" as const),
    since: fc.integer({ min: NOW - 10 * 86_400_000, max: NOW }),
    until: fc.integer({ min: NOW - 86_400_000, max: NOW + 86_400_000 }),
    strikes: fc.integer({ min: 1, max: 6 }),
  }),
  { nil: null },
);

describe("judge", () => {
  it("turns a scope suspect exactly when its settled conversion is below the threshold with enough volume", () => {
    fc.assert(
      fc.property(kind, sums, (k, s) => {
        const next = judge(k, s, null, NOW, RULES);
        const expected = s.sent >= minSendsOf(RULES, k) && s.verified < s.sent * 0.3;
        expect(next !== null).toBe(expected);
        if (next) expect(next).toEqual({ state: "suspect", since: NOW, until: NOW + RULES.cooldownMs, strikes: 1 });
      }),
    );
  });

  it("never ends or lightens an active state; only a block, an ASN or the app is ever slowed; a repeat doubles the cool-down up to its cap", () => {
    fc.assert(
      fc.property(kind, sums, state, (k, s, cur) => {
        const next = judge(k, s, cur as StateRow | null, NOW, RULES);
        if (cur && cur.until > NOW) {
          if (next) expect(next).toEqual({ ...cur, state: "slowed" });
        }
        if (next?.state === "slowed") expect(canSlow(k)).toBe(true);
        if (next?.state === "slowed") expect(["block", "asn", "app"]).toContain(k);
        if (next && !(cur && cur.until > NOW)) {
          const strikes = cur && NOW - cur.since < RULES.strikeMemoryMs ? cur.strikes + 1 : 1;
          expect(next.strikes).toBe(strikes);
          expect(next.until - NOW).toBe(Math.min(RULES.cooldownMs * 2 ** (strikes - 1), RULES.maxCooldownMs));
        }
      }),
    );
  });
});

describe("the store's counts", () => {
  it("equal the events of the batches given, each batch counted once however often it is retried", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            kind: fc.constantFrom("sent" as const, "verified" as const),
            scope: fc.constantFrom("app", "block:10.0.0.0/24", "asn:64500", "prefix:010-1234"),
            at: fc.integer({ min: 0, max: 600_000 }),
            challenged: fc.boolean(),
            repeats: fc.integer({ min: 1, max: 3 }),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        async (events) => {
          const stub = guardStore(env as never, `property-${run++}`);
          const calls = events.flatMap((e, i) => {
            const ev: GuardEvent = {
              kind: e.kind,
              scopes: e.scope === "app" ? ["app"] : [e.scope, "app"],
              sentAt: NOW + e.at,
              challenged: e.challenged,
            };
            return Array.from({ length: e.repeats }, () => ({ batch: `b${i}`, ev }));
          });
          // retries interleaved: the calls in a shuffled order, all at once
          calls.sort(() => Math.random() - 0.5);
          const rules = { ...RULES, minSends: 100_000 };
          await Promise.all(calls.map((c) => stub.record(c.batch, [c.ev], null, NOW + 700_000, rules)));
          for (const scope of ["app", "block:10.0.0.0/24", "asn:64500", "prefix:010-1234"]) {
            const mine = events.filter((e) => e.scope === scope || scope === "app");
            const n = (k: string, c?: boolean) =>
              mine.filter((e) => e.kind === k && (c === undefined || e.challenged === c)).length;
            const t = await stub.totals(scope, NOW + 700_000, rules);
            expect(t).toEqual({
              sent: n("sent"),
              verified: n("verified"),
              csent: n("sent", true),
              cverified: n("verified", true),
            });
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe("every send is judged, however the traffic is paced", () => {
  // The queue of sends waiting to settle is the object's memory; an object that goes idle is
  // evicted. Whatever the bursts, pauses and evictions, a scope is judged on every send once it has
  // settled: the states after the run equal those of the same calls to an object never evicted.
  it("bursts of untyped codes with pauses, the object evicted at random between calls, end in the same states as without evictions", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            pause: fc.integer({ min: 0, max: 120_000 }),
            codes: fc.integer({ min: 1, max: 6 }),
            typed: fc.integer({ min: 0, max: 6 }),
            block: fc.constantFrom("block:10.1.1.0/24", "block:10.1.2.0/24"),
            evict: fc.boolean(),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (bursts) => {
          const id = run++;
          const rules = { ...RULES, minSends: 3, settleMs: 30_000 };
          // the same calls to two objects: first one left alone, then one evicted where a burst says so
          // (every object is evicted: the first has done its calls; a stub of an evicted object is broken)
          const seen = { evicted: [] as string[], steady: [] as string[] };
          let t = NOW;
          for (const name of ["steady", "evicted"] as const) {
            const at = () => guardStore(env as never, `paced-${name}-${id}`);
            t = NOW;
            for (const [i, b] of bursts.entries()) {
              t += b.pause;
              // the burst's first request reads the view (the isolates' copies are old), then its counts
              const v = await at().view(t, rules);
              seen[name].push(...v.transitions.map((x) => `${x.scope} ${x.state}`));
              const events: GuardEvent[] = Array.from({ length: b.codes }, (_, k) => ({
                kind: "sent",
                scopes: [b.block],
                sentAt: t + k,
                challenged: false,
              }));
              for (let k = 0; k < Math.min(b.typed, b.codes); k++)
                events.push({ kind: "verified", scopes: [b.block], sentAt: t + k, challenged: false });
              const r = await at().record(`b${i}`, events, null, t + 100, rules);
              seen[name].push(...r.transitions.map((x) => `${x.scope} ${x.state}`));
              if (name === "evicted" && b.evict) await abortAllDurableObjects();
            }
            // long after the last burst: every send has settled
            seen[name].push(...(await at().view(t + 200_000, rules)).transitions.map((x) => `${x.scope} ${x.state}`));
          }
          const evicted = () => guardStore(env as never, `paced-evicted-${id}`);
          // the same transitions (a restarted object queues its scopes again, in another order)
          expect([...seen.evicted].sort()).toEqual([...seen.steady].sort());
          // and the states are exactly the judgement of the sums: a block with enough untyped codes is suspect
          const states = await evicted().states(t + 200_000);
          for (const block of ["block:10.1.1.0/24", "block:10.1.2.0/24"]) {
            const sent = bursts.filter((b) => b.block === block).reduce((n, b) => n + b.codes, 0);
            const typed = bursts.filter((b) => b.block === block).reduce((n, b) => n + Math.min(b.typed, b.codes), 0);
            // a single window: all sends are within an hour (8 × 120 s), so the totals decide
            if (sent >= 3 && typed < sent * RULES.minConversion)
              expect(
                states.map((s) => s.scope),
                JSON.stringify(bursts),
              ).toContain(block);
          }
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe("a slowed scope's allowance", () => {
  it("gives exactly GUARD_SLOW_CODES codes a window to 20 concurrent asks, and renews a window after them", async () => {
    const stub = guardStore(env as never, "allowance-race");
    const rules = { ...RULES, slowCodes: 3, slowWindowMs: 600_000 };
    const at = NOW - (NOW % 600_000) + 1_000;
    const asks = await Promise.all(Array.from({ length: 20 }, () => stub.take(["asn:64500"], null, at, rules)));
    expect(asks.filter((r) => r.ok)).toHaveLength(3);
    for (const r of asks) if (!r.ok) expect(r.until).toBe(at + 600_000);
    expect((await stub.take(["asn:64500"], null, at + 599_000, rules)).ok).toBe(false);
    expect((await stub.take(["asn:64500"], null, at + 600_000, rules)).ok).toBe(true);
  });
});

describe("the defaults", () => {
  it("a suspect scope's first cool-down is 12 hours (the issue's default)", () => {
    expect(guardRules({}).cooldownMs).toBe(12 * 60 * 60 * 1000);
  });
  it("a surge is 40 codes outstanding untyped and 10 times a settle time's typing of late; 0 turns it off", () => {
    expect(guardRules({})).toMatchObject({ surgeCodes: 40, surgeFactor: 10 });
    expect(guardRules({ GUARD_SURGE_CODES: "0" }).surgeCodes).toBe(0);
  });
});

describe("a surge (an app's codes outstanding against its typing of late)", () => {
  const SURGE = { ...RULES, settleMs: 30_000, surgeCodes: 40, surgeFactor: 10 };

  it("is exactly: at least surgeCodes untyped, and surgeFactor times the recent typing scaled to a settle time; never with surgeCodes 0", () => {
    fc.assert(
      fc.property(fc.nat(5_000), fc.nat(5_000), fc.integer({ min: 0, max: 100 }), (untyped, typed, codes) => {
        const rules = { ...SURGE, surgeCodes: codes };
        const expected = codes > 0 && untyped >= codes && untyped * 120_000 >= 10 * typed * 30_000;
        expect(isSurge(untyped, typed, rules)).toBe(expected);
      }),
    );
  });

  /**
   * Codes sent to an app at `perSecond` from `from` for `seconds`, each typed `typeAfterMs` later
   * when `typed(i)` says so, one batch a quarter second as the isolates flush; the app's state after
   * each batch, and the transitions.
   */
  async function drive(
    name: string,
    o: {
      from: number;
      seconds: number;
      perSecond: number;
      typed: (i: number) => boolean;
      typeAfterMs: number;
      /** The app of code i, counted so in the service-wide object (`~net`), whose `app` is the service's. */
      app?: (i: number) => string;
    },
  ) {
    const stub = guardStore(env as never, name);
    const appOf = (i: number) => (o.app ? { app: o.app(i) } : {});
    let carry = 0;
    const sends: number[] = [];
    const log: { at: number; sent: number; state: string | null; strikes: number | null }[] = [];
    const transitions: string[] = [];
    let batch = 0;
    for (let at = o.from; at < o.from + o.seconds * 1000; at += 250) {
      const events: GuardEvent[] = [];
      const v = await stub.view(at, SURGE);
      transitions.push(...v.transitions.map((x) => `${(x.since - o.from) / 1000}s ${x.state} ${x.strikes}`));
      const state = v.view.states.find((x) => x.scope === "app");
      // a sign-in the app's state holds gets no code (the text, or the challenge)
      if (!state)
        for (carry += o.perSecond / 4; carry >= 1; carry--) {
          events.push({ kind: "sent", scopes: ["app"], sentAt: at, challenged: false, ...appOf(sends.length) });
          sends.push(at);
        }
      // the codes typed by now
      for (const [i, sent] of sends.entries())
        if (o.typed(i) && sent + o.typeAfterMs > at - 250 && sent + o.typeAfterMs <= at)
          events.push({ kind: "verified", scopes: ["app"], sentAt: sent, challenged: false, ...appOf(i) });
      const r = await stub.record(`${o.from} ${batch++}`, events, null, at, SURGE);
      transitions.push(...r.transitions.map((x) => `${(x.since - o.from) / 1000}s ${x.state} ${x.strikes}`));
      const app = r.view.states.find((x) => x.scope === "app");
      log.push({ at, sent: sends.length, state: app?.state ?? null, strikes: app?.strikes ?? null });
    }
    return { sends, log, transitions };
  }

  it("a bot's 8 codes a second that nobody types: held within its first 50 codes, then suspect with a strike once they settle", async () => {
    const r = await drive("surge-bot", { from: NOW, seconds: 120, perSecond: 8, typed: () => false, typeAfterMs: 0 });
    const first = r.log.find((l) => l.state !== null)!;
    expect(first.sent).toBeGreaterThanOrEqual(40);
    expect(first.sent).toBeLessThan(50);
    expect(first).toMatchObject({ state: "suspect", strikes: 0 });
    // held from then on: no code more, and once its codes settled (40 s), suspect with a strike
    expect(r.sends.length).toBe(first.sent);
    expect(r.log.at(-1)).toMatchObject({ state: "suspect", strikes: 1 });
    expect(r.transitions.map((t) => t.split(" ").slice(1).join(" "))).toEqual(["suspect 0", "suspect 1"]);
  });

  it("a crowd that types its codes 12 s after they come, 8 a second: held until the surge's codes settle, then let be for the window", async () => {
    const r = await drive("surge-crowd", {
      from: NOW,
      seconds: 240,
      perSecond: 8,
      typed: (i) => i % 10 !== 0,
      typeAfterMs: 12_000,
    });
    const held = r.log.filter((l) => l.state !== null);
    expect(held.length).toBeGreaterThan(0);
    // held at most a settle time and two buckets (50 s), once
    expect(held.at(-1)!.at - held[0]!.at).toBeLessThanOrEqual(50_000);
    expect(r.transitions.map((t) => t.split(" ").slice(1).join(" "))).toEqual(["suspect 0", "cleared 0"]);
    expect(r.log.at(-1)!.state).toBeNull();
    // and the crowd's codes went on: 8 a second for the rest of the 4 minutes
    expect(r.sends.length).toBeGreaterThan(8 * 180);
  });

  it("a surge whose codes are typed at any share: suspect with a strike exactly when the share is below the conversion threshold", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 10 }), fc.boolean(), async (tenths, evict) => {
        const id = run++;
        const r = await drive(`surge-share-${id}`, {
          from: NOW,
          seconds: 10,
          perSecond: 8,
          typed: (i) => i % 10 < tenths,
          typeAfterMs: 12_000,
        });
        const stub = () => guardStore(env as never, `surge-share-${id}`);
        const held = r.log.find((l) => l.state !== null);
        expect(held, "the surge is judged within 10 s").toBeDefined();
        // evicted at random: the surge is the object's storage, so it is decided all the same
        if (evict) await abortAllDurableObjects();
        // the codes typed after the 10 s: recorded as they come
        for (const [i, sent] of r.sends.entries())
          if (i % 10 < tenths && sent + 12_000 > NOW + 10_000)
            await stub().record(
              `late${i}`,
              [{ kind: "verified", scopes: ["app"], sentAt: sent, challenged: false }],
              null,
              sent + 12_000,
              SURGE,
            );
        const later = (await stub().view(NOW + 60_000, SURGE)).view.states.find((x) => x.scope === "app");
        const typed = r.sends.filter((_, i) => i % 10 < tenths).length;
        const low = typed < r.sends.length * SURGE.minConversion;
        expect(later ? `${later.state} ${later.strikes}` : null, `${typed} of ${r.sends.length} typed`).toBe(
          low ? "suspect 1" : null,
        );
      }),
      { numRuns: 22 },
    );
  });

  // The service-wide object (`~net`) counts every app's codes again under its own `app`, each
  // naming its app: a surge there is the service's only when it is spread over the apps.
  it("over every app (`~net`): 8 untyped codes a second spread over 20 apps are held within the first 50, then suspect with a strike", async () => {
    const r = await drive("net-spread", {
      from: NOW,
      seconds: 120,
      perSecond: 8,
      typed: () => false,
      typeAfterMs: 0,
      app: (i) => `app-${i % 20}`,
    });
    const first = r.log.find((l) => l.state !== null)!;
    expect(first.sent).toBeGreaterThanOrEqual(40);
    expect(first.sent).toBeLessThan(50);
    expect(r.sends.length).toBe(first.sent);
    expect(r.transitions.map((t) => t.split(" ").slice(1).join(" "))).toEqual(["suspect 0", "suspect 1"]);
  });

  it("over every app (`~net`): a second surge within the strikes' memory leaves the service suspect, never slowed (an app is slowed)", async () => {
    // slowed would give every app's people the service's one allowance of GUARD_SLOW_CODES codes
    const later = NOW + RULES.cooldownMs + 3_600_000;
    // a minute each: held in its first seconds, decided untyped 40 s later
    const bot = { seconds: 60, perSecond: 8, typed: () => false, typeAfterMs: 0 };
    await drive("net-twice", { ...bot, from: NOW, app: (i) => `app-${i % 20}` });
    const again = await drive("net-twice", { ...bot, from: later, app: (i) => `app-${i % 20}` });
    expect(again.transitions.map((t) => t.split(" ").slice(1).join(" "))).toEqual(["suspect 0", "suspect 2"]);
    await drive("app-twice", { ...bot, from: NOW });
    const app = await drive("app-twice", { ...bot, from: later });
    expect(app.transitions.map((t) => t.split(" ").slice(1).join(" "))).toEqual(["suspect 0", "slowed 2"]);
  }, 90_000);

  it("over every app (`~net`): one app's burst, with the others' people typing beside it, is that app's to judge, never the service's", async () => {
    // 7 a second on one app nobody types, 1 a second over 19 others, typed 12 s later
    const r = await drive("net-one-app", {
      from: NOW,
      seconds: 240,
      perSecond: 8,
      typed: (i) => i % 8 === 7,
      typeAfterMs: 12_000,
      app: (i) => (i % 8 === 7 ? `app-${1 + (i % 19)}` : "app-0"),
    });
    expect(r.transitions).toEqual([]);
    expect(r.sends.length).toBe(8 * 240);
  });

  it("over every app (`~net`): people at 3 codes a second over 20 apps, with no typing of late yet (a fresh service), are never held", async () => {
    // 180 codes in a minute, each typed 45 s after it came: over 40 untyped from the 14th second on,
    // but never 40 within 10 s
    const r = await drive("net-people", {
      from: NOW,
      seconds: 60,
      perSecond: 3,
      typed: () => true,
      typeAfterMs: 45_000,
      app: (i) => `app-${i % 20}`,
    });
    expect(r.transitions).toEqual([]);
    expect(r.sends.length).toBe(180);
  });

  it("over every app (`~net`): its `app` is never judged by its conversion, which every app's own object judges, evicted or not", async () => {
    // one untyped code every 2 s spread over 20 apps for 10 minutes: below a surge at any moment,
    // and far below the conversion threshold, with 300 codes
    const trickle = { from: NOW, seconds: 600, perSecond: 0.5, typed: () => false, typeAfterMs: 0 };
    const slow = async (name: string, app?: (i: number) => string) => {
      const stub = guardStore(env as never, name);
      let n = 0;
      for (let at = NOW; at < NOW + trickle.seconds * 1000; at += 2000, n++) {
        const a = app ? { app: app(n) } : {};
        await stub.record(`t${n}`, [{ kind: "sent", scopes: ["app"], sentAt: at, challenged: false, ...a }], null, at, {
          ...SURGE,
        });
      }
      // evicted before it is asked again: it still knows it is the service's (meta `service`)
      await abortAllDurableObjects();
      return (await guardStore(env as never, name).view(NOW + trickle.seconds * 1000 + 60_000, SURGE)).view.states.map(
        (x) => x.scope,
      );
    };
    expect(await slow("net-trickle", (i) => `app-${i % 20}`)).toEqual([]);
    expect(await slow("app-trickle")).toEqual(["app"]);
  });

  it("a batch with a scope that is none is refused whole: nothing of it counts, in the store or in the object's memory", async () => {
    // 20 codes typed of late make a surge 2.5 × 20 = 50 untyped codes (30 s settle, 120 s of late)
    const stub = guardStore(env as never, "surge-refused-batch");
    const sent = (n: number): GuardEvent[] =>
      Array.from({ length: n }, () => ({ kind: "sent", scopes: ["app"], sentAt: NOW, challenged: false }));
    const typed = (n: number): GuardEvent[] =>
      Array.from({ length: n }, () => ({ kind: "verified", scopes: ["app"], sentAt: NOW - 20_000, challenged: false }));
    await stub.record("typed", typed(20), null, NOW, SURGE);
    expect((await stub.record("first", sent(45), null, NOW, SURGE)).view.states).toEqual([]);
    // 200 typed codes and one event of a scope no kind names: refused, the batch's id not taken
    const bad: GuardEvent = { kind: "sent", scopes: ["nowhere:1"], sentAt: NOW, challenged: false };
    // (inside the object: the test pool reports an error thrown across its RPC as unhandled)
    await runInDurableObject(stub, (o: GuardStore) =>
      expect(() => o.record("bad", [...typed(200), bad], null, NOW, SURGE)).toThrow("not a scope: nowhere"),
    );
    expect(await stub.totals("app", NOW + 60_000, SURGE)).toEqual({ sent: 45, verified: 20, csent: 0, cverified: 0 });
    // 10 more untyped make 55: the surge, as if the refused batch had never come
    const after = await stub.record("second", sent(10), null, NOW + 1_000, SURGE);
    expect(after.view.states.map((x) => [x.scope, x.state])).toEqual([["app", "suspect"]]);
    expect((await stub.record("bad", typed(1), null, NOW + 1_000, SURGE)).applied).toBe(true);
  });
});

describe("codes outstanding (judgeOutstanding, the typing curve)", () => {
  const outstanding = fc.array(
    fc
      .record({ ageMs: fc.integer({ min: 0, max: RULES.settleMs - 1 }), sent: fc.nat(200) })
      .chain((o) => fc.record({ ageMs: fc.constant(o.ageMs), sent: fc.constant(o.sent), verified: fc.nat(o.sent) })),
    { maxLength: 5 },
  );
  const curve = fc.option(
    fc.array(fc.nat(100), { minLength: 16, maxLength: 16 }).map((counts) => typingCurve(counts)),
    { nil: null },
  );

  it("people who typed what the curve says they would have by now are never judged", () => {
    fc.assert(
      fc.property(kind, sums, outstanding, curve, (k, settled, out, c) => {
        // the settled sends typed at the threshold, each outstanding bucket typed as the curve says
        const s = { ...settled, verified: Math.max(settled.verified, Math.ceil(settled.sent * RULES.minConversion)) };
        const typed = out.map((o) => ({ ...o, verified: Math.ceil(o.sent * typedShare(o.ageMs, RULES, c)) }));
        expect(judgeOutstanding(k, s, typed, null, NOW, RULES, c)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it("outstanding sends old enough to have settled count whole: the same judgement as the settled one", () => {
    fc.assert(
      fc.property(kind, sums, fc.nat(300), fc.nat(300), (k, settled, sent, v) => {
        const verified = Math.min(v, sent);
        const merged = { ...settled, sent: settled.sent + sent, verified: settled.verified + verified };
        const one = [{ ageMs: RULES.settleMs, sent, verified }];
        expect(judgeOutstanding(k, settled, one, null, NOW, RULES)).toEqual(judge(k, merged, null, NOW, RULES));
      }),
      { numRuns: 300 },
    );
  });

  it("the default curve: nobody types in the first half of the settle time; an app's own curve once it has enough codes typed", () => {
    expect(typedShare(0, RULES)).toBe(0);
    expect(typedShare(RULES.settleMs / 2, RULES)).toBe(0);
    expect(typedShare((RULES.settleMs * 3) / 4, RULES)).toBeCloseTo(0.5);
    expect(typedShare(RULES.settleMs, RULES)).toBe(1);
    expect(
      typingCurve(
        Array(16)
          .fill(0)
          .map((_, i) => (i === 0 ? TYPING_MIN_SAMPLES - 1 : 0)),
      ),
    ).toBeNull();
    // an app whose people type within 5 s: by 5 s all of them
    const fast = typingCurve([0, TYPING_MIN_SAMPLES, ...Array(14).fill(0)])!;
    expect(typedShare(2_000, RULES, fast)).toBe(0);
    expect(typedShare(5_000, RULES, fast)).toBe(1);
  });
});
