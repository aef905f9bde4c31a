// The sign-in state machine of the one-time store (workers/provider/store/one-time/signin-store.ts), driven in the
// real Durable Object. A model-based property: random sequences of code entries and resends on
// several sign-ins of one number from several networks must give exactly the answers of a small
// model of the rules (docs/signin.md "Limits"), a gated entry (docs/signin.md "Gated steps") with a
// wrong binding, or on a code made before `txBound`, changing nothing; and the compare-and-set
// steps have one winner.
import { env } from "../../../support/env";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { storeFor } from "../../../../workers/provider/store/one-time/one-time-store";
import { testFailuresKey } from "../../../../workers/provider/store/one-time/keys";
import { type NumberLimits, type SigninRecord } from "../../../../workers/provider/store/one-time/signin-store";

const LIMITS: NumberLimits = {
  otpMaxAttempts: 3,
  lockAfterFailures: 4,
  numberLockAfterFailures: 6,
  testNumberMaxFailures: 100,
  lockMs: 3_600_000,
  failureMemoryMs: 86_400_000,
  resendCooldownMs: 0,
  sendsPerWindow: 1000,
  sendWindowMs: 3_600_000,
};
const RECORDS = 3;
const NETWORKS = 3;

let run = 0;

function record(phoneKey: string, hash: string, txBound = false): SigninRecord {
  const now = Date.now();
  return {
    v: 0,
    clientId: "c",
    redirectUri: "https://app.example/cb",
    state: "s",
    prompt: undefined,
    isHybrid: false,
    lang: "ko",
    langGiven: false,
    codeChallenge: null,
    csrfHash: "x",
    browserHash: "y",
    createdAt: now,
    expiresAt: now + 600_000,
    step: "verify",
    subscriber: { id: 1, telco: "S", phoneKey, masked: "010-****-0000", testOtpHash: null },
    challenge: { hash, attempts: 0, expiresAt: now + 180_000, ...(txBound ? { txBound: true as const } : {}) },
  };
}

/** The record's own binding (`record` above), or one that is not. */
const GATES = {
  own: { csrfHash: "x", browserHash: "y" },
  csrf: { csrfHash: "X", browserHash: "y" },
  browser: { csrfHash: "x", browserHash: "Y" },
} as const;

interface Model {
  netFail: number[];
  allFail: number;
  netLock: boolean[];
  numLock: boolean;
  recs: { step: "verify" | "consent"; attempts: number; hash: string; txBound: boolean }[];
}

type Cmd =
  | { kind: "verify"; rec: number; net: number; right: boolean; gate: keyof typeof GATES | null }
  | { kind: "resend"; rec: number; net: number };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("verify" as const),
      rec: fc.nat(RECORDS - 1),
      net: fc.nat(NETWORKS - 1),
      right: fc.boolean(),
      gate: fc.constantFrom(null, null, "own", "own", "csrf", "browser"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("resend" as const), rec: fc.nat(RECORDS - 1), net: fc.nat(NETWORKS - 1) }),
  },
);

describe("sign-in store: the number's lock is decided with the code check", () => {
  it(
    "random sequences of right and wrong codes and resends over 3 sign-ins and 3 networks answer exactly as the rules say",
    { timeout: 300_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 40 }), async (cmds) => {
          const r = run++;
          const phoneKey = `P${r}`;
          const stub = storeFor(env, `A${r}`, 16);
          const key = (i: number) => `tx:run${r}:${i}`;
          const m: Model = {
            netFail: Array(NETWORKS).fill(0),
            allFail: 0,
            netLock: Array(NETWORKS).fill(false),
            numLock: false,
            recs: [],
          };
          for (let i = 0; i < RECORDS; i++) {
            const txBound = i % 2 === 0; // the others as made before `txBound`, until a resend
            await stub.signinCreate(key(i), record(phoneKey, `h${i}.0`, txBound));
            m.recs.push({ step: "verify", attempts: 0, hash: `h${i}.0`, txBound });
          }
          let resends = 0;
          for (const c of cmds) {
            const rec = m.recs[c.rec]!;
            const locked = m.numLock || m.netLock[c.net]!;
            if (c.kind === "resend") {
              const hash = `h${c.rec}.${++resends}`;
              const got = await stub.signinResend({
                key: key(c.rec),
                phoneKey,
                netKey: `n${c.net}`,
                hash,
                otpTtlMs: 180_000,
                send: true,
                limits: LIMITS,
              });
              const want = rec.step !== "verify" ? "conflict" : locked ? "refused" : "ok";
              expect(got.result).toBe(want);
              if (want === "ok") Object.assign(rec, { attempts: 0, hash, txBound: true });
              continue;
            }
            const presented = c.right ? rec.hash : `wrong-${rec.hash}`;
            const got =
              c.gate === null
                ? await stub.signinVerify({
                    key: key(c.rec),
                    phoneKey,
                    netKey: `n${c.net}`,
                    presented,
                    limits: LIMITS,
                    next: "consent",
                    autoLoginOptIn: false,
                  })
                : await stub.signinVerifyGated({
                    key: key(c.rec),
                    gate: GATES[c.gate],
                    netKey: `n${c.net}`,
                    presented,
                    limits: LIMITS,
                    autoLoginOptIn: false,
                  });
            if (c.gate !== null && (c.gate !== "own" || rec.step !== "verify" || !rec.txBound)) {
              // unsettled: nothing counted, nothing changed, nothing of the record returned
              expect(got).toEqual({ result: "unsettled" });
            } else if (rec.step !== "verify") {
              expect(got.result).toBe("conflict");
            } else if (locked) {
              expect(got.result).toBe("refused");
            } else if (rec.attempts >= LIMITS.otpMaxAttempts) {
              expect(got.result).toBe("exhausted");
            } else if (c.right) {
              expect(got.result).toBe("ok");
              rec.step = "consent";
              m.netFail[c.net] = 0;
              m.allFail = 0;
            } else {
              rec.attempts++;
              m.netFail[c.net]!++;
              m.allFail++;
              let lockedNow = false;
              if (m.allFail >= LIMITS.numberLockAfterFailures) [m.numLock, m.allFail, lockedNow] = [true, 0, true];
              if (m.netFail[c.net]! >= LIMITS.lockAfterFailures)
                [m.netLock[c.net], m.netFail[c.net], lockedNow] = [true, 0, true];
              expect(got).toMatchObject({ result: "wrong", left: LIMITS.otpMaxAttempts - rec.attempts });
              expect(got.result === "wrong" && got.refusal !== null).toBe(lockedNow);
            }
          }
        }),
        { numRuns: 500 },
      );
    },
  );
});

describe("sign-in store: a review test number locks networks, never itself, and is suspended at its cap", () => {
  const CAP = 7;
  const limits: NumberLimits = { ...LIMITS, testNumberMaxFailures: CAP };
  it(
    "random sequences of right and wrong fixed codes and resends over 3 sign-ins and 3 networks: per-network locks, no number-wide lock, the cap exact and crossed once, resends keep tries",
    { timeout: 300_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 60 }), async (cmds) => {
          const r = run++;
          const phoneKey = `R${r}`;
          const stub = storeFor(env, `A${r}`, 16);
          const key = (i: number) => `tx:review${r}:${i}`;
          const netFail: number[] = Array(NETWORKS).fill(0);
          const netLock: boolean[] = Array(NETWORKS).fill(false);
          let total = 0;
          let crossings = 0;
          const recs: { step: "verify" | "consent"; attempts: number }[] = [];
          for (let i = 0; i < RECORDS; i++) {
            const base = record(phoneKey, `fixed${i}`, true);
            const review = { ...base, subscriber: { ...base.subscriber!, testOtpHash: "T", review: true as const } };
            await stub.signinCreate(key(i), review);
            recs.push({ step: "verify", attempts: 0 });
          }
          for (const c of cmds) {
            const rec = recs[c.rec]!;
            const suspended = total >= CAP;
            if (c.kind === "resend") {
              const got = await stub.signinResend({
                key: key(c.rec),
                phoneKey,
                netKey: `n${c.net}`,
                hash: `fixed${c.rec}`,
                otpTtlMs: 180_000,
                send: false,
                limits,
              });
              const want =
                rec.step !== "verify" ? "conflict" : suspended ? "suspended" : netLock[c.net] ? "refused" : "ok";
              expect(got.result).toBe(want);
              if (got.result === "ok") expect(got.record.challenge!.attempts).toBe(rec.attempts);
              continue;
            }
            const presented = c.right ? `fixed${c.rec}` : "wrong";
            // a review record always goes the full way: the gated call leaves it unsettled
            if (c.gate !== null) {
              const got = await stub.signinVerifyGated({
                key: key(c.rec),
                gate: GATES[c.gate],
                netKey: `n${c.net}`,
                presented,
                limits,
                autoLoginOptIn: false,
              });
              expect(got).toEqual({ result: "unsettled" });
              continue;
            }
            const got = await stub.signinVerify({
              key: key(c.rec),
              phoneKey,
              netKey: `n${c.net}`,
              presented,
              limits,
              next: "consent",
              autoLoginOptIn: false,
            });
            if (rec.step !== "verify") expect(got.result).toBe("conflict");
            else if (suspended) expect(got).toMatchObject({ result: "suspended", crossed: false });
            else if (netLock[c.net]) expect(got.result).toBe("refused");
            else if (rec.attempts >= LIMITS.otpMaxAttempts) expect(got.result).toBe("exhausted");
            else if (c.right) {
              expect(got.result).toBe("ok");
              rec.step = "consent";
              netFail[c.net] = 0;
            } else {
              rec.attempts++;
              netFail[c.net]!++;
              total++;
              let lockedNow = false;
              if (netFail[c.net]! >= LIMITS.lockAfterFailures)
                [netLock[c.net], netFail[c.net], lockedNow] = [true, 0, true];
              if (total >= CAP) {
                expect(got).toMatchObject({ result: "suspended", crossed: total === CAP });
                if (got.result === "suspended" && got.crossed) crossings++;
              } else {
                expect(got).toMatchObject({ result: "wrong", left: LIMITS.otpMaxAttempts - rec.attempts });
                expect(got.result === "wrong" && got.refusal !== null).toBe(lockedNow);
              }
            }
          }
          expect(crossings).toBe(total >= CAP ? 1 : 0);
          const peek = await stub.peek(testFailuresKey(phoneKey, "T"));
          expect(peek.count).toBe(total);
        }),
        { numRuns: 300 },
      );
    },
  );
});

describe("sign-in store: a right code clears the failures its network and number have", () => {
  it("a network's failures outlive another network's right code, and its own right code clears them", async () => {
    const phoneKey = "P-clear";
    const stub = storeFor(env, "A-clear", 16);
    for (const i of [0, 1, 2]) await stub.signinCreate(`tx:clear:${i}`, record(phoneKey, `h${i}`));
    const enter = (i: number, net: string, right: boolean) =>
      stub.signinVerify({
        key: `tx:clear:${i}`,
        phoneKey,
        netKey: net,
        presented: right ? `h${i}` : "wrong",
        limits: LIMITS,
        next: "consent",
        autoLoginOptIn: false,
      });
    expect((await enter(0, "A", false)).result).toBe("wrong"); // A: 1 failure, the number: 1
    expect((await enter(1, "B", true)).result).toBe("ok"); // clears the number's and B's, not A's
    expect((await enter(0, "A", true)).result).toBe("ok"); // the number has none; A's 1 is cleared now
    // three more from A: 3 of A's 4 (a count not cleared would make them 4, and lock A out)
    for (let n = 0; n < 3; n++) {
      const got = await enter(2, "A", false);
      expect(got).toMatchObject({ result: "wrong", refusal: null });
    }
  });
});

describe("sign-in store: compare-and-set steps", () => {
  it("20 concurrent supersedes of one version: exactly one moves the record", async () => {
    const stub = storeFor(env, "Bcas", 16);
    await stub.signinCreate("tx:cas", {
      ...record("Pcas", "h"),
      step: "identify",
      challenge: undefined,
      subscriber: undefined,
    });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stub.signinSupersede("tx:cas", 0, `to-${i}`)),
    );
    expect(results.filter((r) => r.moved)).toHaveLength(1);
    const winner = results.find((r) => r.moved)!.record!.movedTo;
    expect(results.every((r) => r.record?.movedTo === winner)).toBe(true);
  });

  it("open finds a record it already opened for the same number (a repeated submission) and takes no second send", async () => {
    const stub = storeFor(env, "Bopen", 16);
    const limits = { ...LIMITS, sendsPerWindow: 1 };
    const rec = record("Popen", "h");
    expect(await stub.signinOpen({ key: "tx:open", record: rec, netKey: "n", send: true, limits })).toEqual({
      result: "opened",
    });
    expect(await stub.signinOpen({ key: "tx:open", record: rec, netKey: "n", send: true, limits })).toEqual({
      result: "exists",
    });
    // abandoning gives the send back: another sign-in of the number may send at once
    await stub.signinAbandon("tx:open", "Popen", true, limits);
    expect(await stub.signinGet("tx:open")).toBeNull();
    expect((await stub.signinOpen({ key: "tx:open2", record: rec, netKey: "n", send: true, limits })).result).toBe(
      "opened",
    );
    expect(await stub.signinOpen({ key: "tx:open3", record: rec, netKey: "n", send: true, limits })).toMatchObject({
      result: "refused",
      refusal: { limit: "sends" },
    });
  });

  it("open writes only where nothing was: where a sign-in ended, moved on, or once it expired, it is stale and takes nothing", async () => {
    const stub = storeFor(env, "Bstale", 16);
    const limits = { ...LIMITS, sendsPerWindow: 2 };
    const rec = record("Pstale", "h");
    const open = (key: string, r = rec) => stub.signinOpen({ key, record: r, netKey: "n", send: true, limits });
    // ended by the right code (nothing after it), by a consent or cancel, and moved on to another number
    expect((await open("tx:s1")).result).toBe("opened");
    const verify = { key: "tx:s1", phoneKey: "Pstale", netKey: "n", presented: "h", limits } as const;
    expect((await stub.signinVerify({ ...verify, next: "done", autoLoginOptIn: false })).result).toBe("ok");
    await stub.signinCreate("tx:s2", { ...rec, step: "consent", challenge: null });
    expect((await stub.signinFinish("tx:s2", ["consent"])).ended).toBe(true);
    await stub.signinCreate("tx:s3", rec);
    expect((await stub.signinSupersede("tx:s3", 0, "elsewhere")).moved).toBe(true);
    for (const key of ["tx:s1", "tx:s2", "tx:s3"]) expect(await open(key)).toEqual({ result: "stale" });
    expect(await stub.signinGet("tx:s1")).toBeNull();
    expect(await stub.signinGet("tx:s2")).toBeNull();
    expect((await stub.signinGet("tx:s3"))?.step).toBe("moved");
    expect(await open("tx:s4", { ...rec, expiresAt: Date.now() - 1 })).toEqual({ result: "stale" });
    expect(await stub.signinGet("tx:s4")).toBeNull();
    // the stale opens took no send: the number's second send of the window is still there
    expect((await open("tx:s5")).result).toBe("opened");
    expect((await open("tx:s6")).result).toBe("refused");
  });

  it("20 concurrent consents of one sign-in: exactly one ends it", async () => {
    const stub = storeFor(env, "Bend", 16);
    await stub.signinCreate("tx:end", { ...record("Pend", "h"), step: "consent", challenge: null });
    const results = await Promise.all(Array.from({ length: 20 }, () => stub.signinFinish("tx:end", ["consent"])));
    expect(results.filter((r) => r.ended)).toHaveLength(1);
  });

  it("20 concurrent gated right codes of one sign-in: exactly one is taken, the rest leave it unsettled", async () => {
    const stub = storeFor(env, "Bgv", 16);
    await stub.signinCreate("tx:gv", record("Pgv", "h", true));
    const entry = { key: "tx:gv", gate: GATES.own, netKey: "n", presented: "h", limits: LIMITS, autoLoginOptIn: false };
    const results = await Promise.all(Array.from({ length: 20 }, () => stub.signinVerifyGated(entry)));
    expect(results.filter((r) => r.result === "ok")).toHaveLength(1);
    expect(results.filter((r) => r.result === "unsettled")).toHaveLength(19);
    expect((await stub.signinGet("tx:gv"))?.step).toBe("consent");
  });

  it("20 concurrent gated agreements, a third with another binding or app: exactly one with the record's ends it", async () => {
    const stub = storeFor(env, "Bgf", 16);
    await stub.signinCreate("tx:gf", { ...record("Pgf", "h"), step: "consent", challenge: null });
    const tries = Array.from({ length: 20 }, (_, i) =>
      i % 3 === 0
        ? stub.signinFinishGated("tx:gf", i % 2 ? GATES.browser : GATES.own, i % 2 ? "c" : "other-app")
        : stub.signinFinishGated("tx:gf", GATES.own, "c"),
    );
    const results = await Promise.all(tries);
    expect(results.filter((r) => "ended" in r)).toHaveLength(1);
    expect(results.filter((r) => "result" in r && r.result === "unsettled")).toHaveLength(19);
    expect(await stub.signinGet("tx:gf")).toBeNull(); // ended
  });

  it("a gated step leaves an /account sign-in, an expired one and one at another step unsettled", async () => {
    const stub = storeFor(env, "Bgu", 16);
    const entry = (key: string) => ({
      key,
      gate: GATES.own,
      netKey: "n",
      presented: "h",
      limits: LIMITS,
      autoLoginOptIn: false,
    });
    await stub.signinCreate("tx:acc", { ...record("Pa", "h", true), purpose: "account" });
    await stub.signinCreate("tx:old", { ...record("Pb", "h", true), expiresAt: Date.now() - 1 });
    await stub.signinCreate("tx:id", { ...record("Pc", "h", true), step: "identify" });
    for (const k of ["tx:acc", "tx:old", "tx:id"]) {
      expect(await stub.signinVerifyGated(entry(k))).toEqual({ result: "unsettled" });
      expect(await stub.signinFinishGated(k, GATES.own, "c")).toEqual({ result: "unsettled" });
    }
    expect((await stub.signinGet("tx:acc"))?.challenge?.attempts).toBe(0);
  });
});
