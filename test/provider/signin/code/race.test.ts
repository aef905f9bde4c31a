// Races inside one sign-in, driven through HTTP with random interleavings (docs/security.md).
// Invariants, each checked over many randomized concurrent trials:
// - a code proves the number it was sent to: whatever two identify submissions race, a code
//   issued for a login belongs to the number whose one-time code was entered;
// - one atomic transition per step: of racing submissions of one step exactly one wins; the
//   losers change nothing and are shown the page of the state that won;
// - the lock counts and decides with the code check: never more wrong codes checked than the
//   limit, nothing accepted once it is reached;
// - an ended, cancelled or superseded sign-in never comes back: a stale identify submission (one
//   that read the sign-in before it went on) changes nothing and shows where the sign-in is.
// A first page stores nothing (docs/signin.md "The first page"): each number posted from it opens
// its own sign-in, so the one-winner races of identify start from a code page.
import { runInDurableObject } from "cloudflare:test";
import { afterShardCall, insertSubscriber } from "../../../support/shards";
import { env } from "../../../support/env";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../../../workers/core/crypto";
import { storeFor } from "../../../../workers/provider/store/one-time/one-time-store";
import { loadTransaction } from "../../../../workers/provider/signin/transaction";
import { afterRead, DEMO, intercept } from "../../../support/helpers";
import { lastCode } from "../../../support/directory";
import { alertText, Browser, type Page, type Who } from "../../../support/signin";
import { recordConsent } from "../../../support/store";
import { providerConfig } from "../../../../workers/provider/config";

/** Trials per race property: 1,000 by default (RACE_TRIALS overrides, e.g. for a quick run). */
const TRIALS = Number((env as unknown as Record<string, string>).RACE_TRIALS ?? "1000");
/** Generous limits except the one under test: trials must not trip the per-IP or send limits. */
const VARS = { SIGNIN_IP_LIMIT: "1000000", SIGNIN_RESEND_COOLDOWN_SECONDS: "0", SIGNIN_SENDS_PER_WINDOW: "1000" };

let next = 0;

/**
 * New directory entries, consented to the demo app when `consented`: test numbers (fixed codes),
 * or with `sms` real numbers (their codes go to the dev SMS outbox).
 */
async function subscribers(n: number, consented: boolean, sms = false): Promise<(Who & { id: number })[]> {
  const rows: (Who & { id: number })[] = [];
  const stmts: D1PreparedStatement[] = [];
  for (let i = 0; i < n; i++) {
    const k = next++;
    const phone = `0108${String(k).padStart(7, "0")}`;
    const code = String(100000 + ((k * 7919) % 900000));
    const id = await insertSubscriber({
      telco: "S",
      phone,
      name: `경합${k}`,
      gender: "M",
      birth: "1991-02-03",
      ci: `CI-race-${k}`,
      ...(sms ? {} : { code }),
    });
    rows.push({ telco: "S", name: `경합${k}`, phone, code: sms ? "" : code, id });
  }
  if (consented) for (const r of rows) await recordConsent(env, DEMO.clientId, r.id, DEMO.items);
  return rows;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The subscribers a describe block makes first (up to 1,000, two object calls each, one after
 * another): on a loaded 2-core CI machine this outgrew vitest's 10 s hook default once.
 */
const SETUP_TIMEOUT_MS = 120_000;

/** The subscriber an issued authorization code stands for (read from its store object). */
async function codeSubscriber(location: string): Promise<number> {
  const code = new URL(location).searchParams.get("code")!;
  const hash = await sha256(code);
  return runInDurableObject(storeFor(env, code, providerConfig(env).oneTimeShards), (_o, state) => {
    const row = state.storage.sql
      .exec<{ grant_json: string }>("SELECT grant_json FROM codes WHERE hash = ?", hash)
      .one();
    return (JSON.parse(row.grant_json) as { subscriberId: number }).subscriberId;
  });
}

function identifyFields(who: Who) {
  return { telcoCd: who.telco, name: who.name, phoneNo: who.phone };
}

describe("identify racing identify in one sign-in (the victim's number and the attacker's own, 0-4 ms apart)", () => {
  let pairs: [Who & { id: number }, Who & { id: number }][];
  let starters: (Who & { id: number })[];
  beforeAll(async () => {
    const all = await subscribers(3 * Math.min(TRIALS, 200), true);
    pairs = [];
    starters = [];
    for (let i = 0; i < all.length; i += 3) {
      pairs.push([all[i]!, all[i + 1]!]);
      starters.push(all[i + 2]!);
    }
  }, SETUP_TIMEOUT_MS);

  it(
    `a code proves the number it was sent to: the attacker's code never completes the victim's sign-in (${TRIALS} trials)`,
    { timeout: 600_000 },
    async () => {
      let trial = 0;
      let takeovers = 0;
      const outcomes = { attackerSignedIn: 0, victimPages: 0 };
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 4 }),
          fc.integer({ min: 0, max: 4 }),
          fc.boolean(),
          async (dv, da, victimFirst) => {
            const starter = starters[trial % pairs.length]!;
            const [victim, attacker] = pairs[trial++ % pairs.length]!;
            const b = new Browser({ vars: VARS, ip: `198.19.${trial >> 8}.${trial & 255}` });
            // the sign-in is at its code page (a stored record): both submissions correct the number
            const p1 = await b.submit(await b.authorize(), identifyFields(starter));
            expect(p1.form?.step).toBe("verify");
            const send = async (who: Who, delay: number) => {
              await sleep(delay);
              return b.submit(p1, identifyFields(who));
            };
            const raced = victimFirst
              ? await Promise.all([send(victim, dv), send(attacker, da)])
              : (await Promise.all([send(attacker, da), send(victim, dv)])).reverse();
            // Both answers are code pages (a submission that lost the race shows the state that won).
            expect(raced.map((p) => p.form?.step)).toEqual(["verify", "verify"]);
            // The state that won: the record the sign-in now continues in.
            const shards = providerConfig(env).oneTimeShards;
            const current = await loadTransaction(env, shards, p1.form!.hidden.tx);
            const winner = current!.tx.subscriber!.id;
            expect([victim.id, attacker.id]).toContain(winner);
            // The attacker enters the code their own phone received, on every code page they hold.
            let logins = 0;
            for (const page of new Map(raced.map((p) => [p.form!.hidden.tx, p])).values()) {
              const done = await b.submit(page, { otp: attacker.code });
              if (done.status !== 302) {
                // a wrong code, or (after the one login) the sign-in has ended
                if (logins === 0) expect(alertText(done.html)).toMatch(/^인증번호가 맞지 않습니다/);
                else expect(done.status).toBe(403);
                continue;
              }
              const signedIn = await codeSubscriber(done.res.headers.get("Location")!);
              if (signedIn === victim.id) takeovers++;
              expect(signedIn).toBe(attacker.id);
              logins++;
            }
            // exactly one login when the attacker's number won, none when the victim's did
            expect(logins).toBe(winner === attacker.id ? 1 : 0);
            if (winner === attacker.id) outcomes.attackerSignedIn++;
            else outcomes.victimPages++;
          },
        ),
        { numRuns: TRIALS },
      );
      expect(takeovers, `takeovers in ${trial} trials`).toBe(0);
      // both orders were seen: the test exercised the race, not one fixed outcome
      expect(outcomes.victimPages).toBeGreaterThan(0);
      expect(outcomes.attackerSignedIn).toBeGreaterThan(0);
    },
  );

  it(
    `from the first page each number opens its own sign-in, and a code proves the number it was sent to (${Math.min(TRIALS, 100)} trials)`,
    { timeout: 600_000 },
    async () => {
      let trial = 0;
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 4 }), async (dv, da) => {
          const [victim, attacker] = pairs[trial++ % pairs.length]!;
          const b = new Browser({ vars: VARS, ip: `198.20.${trial >> 8}.${trial & 255}` });
          const p1 = await b.authorize();
          const [v, a] = await Promise.all([
            sleep(dv).then(() => b.submit(p1, identifyFields(victim))),
            sleep(da).then(() => b.submit(p1, identifyFields(attacker))),
          ]);
          expect([v.form?.step, a.form?.step]).toEqual(["verify", "verify"]);
          expect(v.form!.hidden.tx).not.toBe(a.form!.hidden.tx);
          // the attacker's code on the victim's code page is a wrong code; on their own, their login
          const onVictim = await b.submit(v, { otp: attacker.code });
          expect(onVictim.status).toBe(200);
          expect(alertText(onVictim.html)).toMatch(/^인증번호가 맞지 않습니다/);
          const onOwn = await b.submit(a, { otp: attacker.code });
          expect(onOwn.status).toBe(302);
          expect(await codeSubscriber(onOwn.res.headers.get("Location")!)).toBe(attacker.id);
          // and the victim's sign-in is still the victim's, at its code step
          const vh = await loadTransaction(env, providerConfig(env).oneTimeShards, v.form!.hidden.tx);
          expect(vh?.tx.step).toBe("verify");
          expect(vh?.tx.subscriber?.id).toBe(victim.id);
        }),
        { numRuns: Math.min(TRIALS, 100) },
      );
    },
  );

  it("a double-clicked identify sends one code and both answers show the same code page", async () => {
    const who = { telco: "K", name: "더블", phone: "01076543210", code: "" };
    await insertSubscriber({ telco: "K", phone: who.phone, name: who.name, birth: "1993-03-03", ci: "CI-double" });
    for (let i = 0; i < 20; i++) {
      const b = new Browser({ vars: VARS, ip: `203.0.113.${i}` });
      const p1 = await b.authorize();
      const before = await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox WHERE phone = ?")
        .bind(who.phone)
        .first<{ n: number }>();
      const [x, y] = await Promise.all([
        b.submit(p1, identifyFields(who)),
        sleep(i % 3).then(() => b.submit(p1, identifyFields(who))),
      ]);
      expect([x.status, y.status]).toEqual([200, 200]);
      expect(x.form?.step).toBe("verify");
      expect(y.form?.hidden.tx).toBe(x.form?.hidden.tx);
      const after = await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox WHERE phone = ?")
        .bind(who.phone)
        .first<{ n: number }>();
      expect(after!.n - before!.n).toBe(1);
    }
  });
});

describe("a stale identify submission: read before its twin moved the sign-in on, landing after it went on", () => {
  const shards = () => providerConfig(env).oneTimeShards;
  const smsTo = async (who: Who) =>
    (await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox WHERE phone = ?")
      .bind(who.phone)
      .first<{ n: number }>())!.n;
  /** Where the sign-in begun at `id` is now: the record it continues in, or null (ended). */
  const whereIs = async (id: string) => {
    const h = await loadTransaction(env, shards(), id);
    return h && { id: h.id, tx: h.tx };
  };
  const OUTCOMES = [
    "still at the code step",
    "completed",
    "cancelled at the code step",
    "consent refused",
    "sent back to the app",
    "moved on to another number",
  ] as const;

  it("a double click held at the directory until its twin's sign-in ended with a code re-opens nothing: no second code for the same state", async () => {
    const [who] = await subscribers(1, true);
    const b = new Browser({ vars: VARS, ip: "198.17.255.1" });
    const p1 = await b.authorize({ state: "once" });
    let first: Page | undefined;
    // the first click goes through (identify, the code, 302 with a code) while the second is held
    const slowDir = afterShardCall(env.DIRECTORY, "holder", async () => {
      const verify = await b.submit(p1, identifyFields(who!));
      first = await b.submit(verify, { otp: who!.code });
    });
    const slow = new Browser({
      vars: { ...VARS, DIRECTORY: slowDir } as unknown as Record<string, string>,
      ip: "198.17.255.1",
    });
    for (const [k, v] of b.cookies) slow.cookies.set(k, v);
    const stale = await slow.submit(p1, identifyFields(who!));
    expect(first!.status).toBe(302);
    expect(new URL(first!.res.headers.get("Location")!).searchParams.get("code")).toBeTruthy();
    // before the fix: the ended sign-in was live again at the code step, and the code completed it again
    expect(stale.status).toBe(403);
    expect(stale.form?.step).toBeUndefined();
    // the page opens no second sign-in for this number: posted once more, it still finds it ended
    const again = await b.submit(p1, identifyFields(who!));
    expect(again.status).toBe(403);
    expect(again.form?.step).toBeUndefined();
  });

  it(
    `an ended, cancelled or superseded sign-in never comes back: the stale submission sends nothing, opens nothing, and shows where the sign-in is (${Math.min(TRIALS, 100)} trials)`,
    { timeout: 600_000 },
    async () => {
      const n = Math.min(TRIALS, 100);
      let trial = 0;
      await fc.assert(
        fc.asyncProperty(
          // where the stale submission was held: at the carrier directory read, or at the number's
          // object, about to open the record that continues the sign-in
          fc.constantFrom("directory", "open"),
          fc.constantFrom(...OUTCOMES),
          fc.boolean(),
          async (stall, outcome, consented) => {
            const t = trial++;
            const [who, other] = (await subscribers(2, false, true)) as [Who & { id: number }, Who & { id: number }];
            if (consented && outcome !== "consent refused") await recordConsent(env, DEMO.clientId, who.id, DEMO.items);
            const ip = `198.17.${t >> 8}.${t & 255}`;
            const b = new Browser({ vars: VARS, ip });
            const p1 = await b.authorize({ state: `stale-${t}` });
            let before: { sms: number; where: Awaited<ReturnType<typeof whereIs>> } | undefined;
            // The twin submission (the same number, a double click) goes first; the person goes on.
            const meanwhile = async () => {
              const v = await b.submit(p1, identifyFields(who));
              expect(v.form?.step).toBe("verify");
              // the sign-in this number opened from the page, which the stale submission continues
              const opened = v.form!.hidden.tx!;
              if (outcome === "completed" || outcome === "consent refused") {
                let p = await b.submit(v, { otp: await lastCode(who.phone) });
                if (p.form?.step === "consent") p = await b.submit(p, { agree: outcome === "completed" ? "Y" : "N" });
                expect(p.status).toBe(302);
                const loc = new URL(p.res.headers.get("Location")!);
                expect(loc.searchParams.has(outcome === "completed" ? "code" : "error")).toBe(true);
              } else if (outcome === "cancelled at the code step") {
                expect((await b.submit(v, { cancel: "Y" })).status).toBe(302);
              } else if (outcome === "sent back to the app") {
                expect((await b.submit(v, { restart: "Y" })).status).toBe(302);
              } else if (outcome === "moved on to another number") {
                expect((await b.submit(v, identifyFields(other))).form?.step).toBe("verify");
              }
              before = { sms: await smsTo(who), where: await whereIs(opened) };
              sinceOpened = opened;
            };
            let sinceOpened = "";
            let slowEnv: Record<string, unknown>;
            if (stall === "directory") {
              slowEnv = { DIRECTORY: afterShardCall(env.DIRECTORY, "holder", meanwhile) };
            } else {
              let held = false;
              const ns = env.ONE_TIME;
              slowEnv = {
                ONE_TIME: intercept(ns, {
                  get: (id: DurableObjectId) => {
                    const stub = ns.get(id);
                    // not intercept(): any property of an RPC method is a remote call (bind included)
                    return new Proxy(stub, {
                      get(t, prop) {
                        if (prop !== "signinOpen") return Reflect.get(t, prop);
                        return async (...a: Parameters<typeof stub.signinOpen>) => {
                          if (!held) {
                            held = true;
                            await meanwhile();
                          }
                          return t.signinOpen(...a);
                        };
                      },
                    });
                  },
                }),
              };
            }
            const slow = new Browser({ vars: { ...VARS, ...slowEnv } as unknown as Record<string, string>, ip });
            for (const [k, v] of b.cookies) slow.cookies.set(k, v);
            const stale = await slow.submit(p1, identifyFields(who));
            expect(before, "the stale submission was held while the sign-in went on").toBeDefined();

            // it changed nothing: no code sent, the sign-in where it was (ended stays ended)
            expect(await smsTo(who), `${stall}, ${outcome}: codes sent by the stale submission`).toBe(before!.sms);
            expect(await whereIs(sinceOpened), `${stall}, ${outcome}: the sign-in after the stale submission`).toEqual(
              before!.where,
            );
            // and it shows where the sign-in is: its page, or that it has ended
            if (before!.where === null) {
              expect(stale.status).toBe(403);
              expect(stale.form?.step).toBeUndefined();
            } else {
              expect(stale.form?.step).toBe(before!.where.tx.step);
              expect(stale.form?.hidden.tx).toBe(before!.where.id);
            }
          },
        ),
        { numRuns: n },
      );
    },
  );
});

describe("wrong codes racing the lock (SIGNIN_LOCK_AFTER_FAILURES=3; 6 wrong codes over 2 sign-ins of one number at once)", () => {
  const LIMIT = 3;
  let numbers: (Who & { id: number })[];
  beforeAll(async () => {
    numbers = await subscribers(Math.min(TRIALS, 1000), false);
  }, SETUP_TIMEOUT_MS);

  it(
    `never more wrong codes checked than the limit, and the right code refused once it is reached (${TRIALS} trials)`,
    { timeout: 600_000 },
    async () => {
      let trial = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 6, maxLength: 6 }), async (delays) => {
          const who = numbers[trial++ % numbers.length]!;
          const vars = { ...VARS, SIGNIN_LOCK_AFTER_FAILURES: String(LIMIT) };
          const ip = `198.18.${trial >> 8}.${trial & 255}`;
          const sessions = await Promise.all(
            [0, 1].map(async () => {
              const b = new Browser({ vars, ip });
              return { b, p: await b.submit(await b.authorize(), identifyFields(who)) };
            }),
          );
          const results = await Promise.all(
            delays.map(async (d, i) => {
              await sleep(d);
              const s = sessions[i % 2]!;
              return s.b.submit(s.p, { otp: String((Number(who.code) + 1 + i) % 1_000_000).padStart(6, "0") });
            }),
          );
          const wrong = results.filter(
            (r) => r.status === 200 && /^인증번호가 맞지 않습니다/.test(alertText(r.html) ?? ""),
          );
          const locked = results.filter((r) => r.status === 429 && /잠겼습니다/.test(alertText(r.html) ?? ""));
          expect(wrong).toHaveLength(LIMIT - 1);
          expect(locked).toHaveLength(6 - (LIMIT - 1));
          // what the store checked: the tries used on both sign-ins' codes add up to the limit exactly
          let tries = 0;
          for (const s of sessions) {
            const tx = s.p.form!.hidden.tx!;
            const key = `tx:${await sha256(tx)}`;
            const rec = await storeFor(env, tx, providerConfig(env).oneTimeShards).signinGet(key);
            tries += rec!.challenge!.attempts;
          }
          expect(tries).toBe(LIMIT);
          // the right code, now: refused, on either page
          const right = await sessions[0]!.b.submit(sessions[0]!.p, { otp: who.code });
          expect(right.status).toBe(429);
        }),
        { numRuns: TRIALS },
      );
    },
  );
});
