import { env } from "../../../support/env";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { shardRows } from "../../../support/shards";
import { afterEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { randomToken, sha256 } from "../../../../workers/core/crypto";
import { inShard, plidShard, plidShardsAnyCount, shardOf } from "../../../../workers/provider/store/one-time/keys";
import { storeAt, storeFor, type OneTimeStore } from "../../../../workers/provider/store/one-time/one-time-store";
import { sweepByExpiry } from "../../../../workers/provider/store/one-time/tables/entries";
import {
  redeemResultOf,
  redeemText,
  sweepInOrder,
  type CodeGrant,
  type RedeemFailure,
  type RedeemRequest,
  type RedeemResult,
  type TokenRead,
} from "../../../../workers/provider/store/one-time/tables/codes";
import { revokePlids } from "../../../../workers/provider/store/flows/end-plids";
import { newEvent } from "../../../../workers/provider/store/one-time/tables/ended-plids";
import { bodyText, HONG, intercept, mintFor, redeemArgs } from "../../../support/helpers";
import { asClient, createClient } from "../../../support/admin";
import { auditEvents } from "../../../support/audit";
import { storeForPlid, tokenGrant } from "../../../support/store";

const GRANT: CodeGrant = {
  clientId: "c",
  subscriberId: 1,
  plid: "p",
  redirectUri: "https://x/cb",
  autoLogin: null,
  issuedAt: 0,
  items: ["gender"],
  subscriber: { telco: "S", phone: "01000000000", name: "n", gender: "M", birth: "1990-01-01", foreign: "L", ci: "c" },
};

afterEach(() => vi.useRealTimers());

describe("core/one-time-store", () => {
  it("shardOf spreads random values by their first character and never leaves the shard range", () => {
    const seen = new Set<number>();
    for (let i = 0; i < 500; i++) {
      const s = shardOf(randomToken(8), 16);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThan(16);
      seen.add(s);
    }
    expect(seen.size).toBe(16);
    expect(shardOf("", 16)).toBe(0);
    expect(shardOf("!", 16)).toBe(0);
  });

  it("readToken allows maxReads reads, then none", async () => {
    const code = randomToken();
    const store = storeFor(env, code, 16);
    await store.putCode(await sha256(code), GRANT, null, 60_000);
    const tokenHash = await sha256("t" + code);
    const r = await store.redeemCode(await sha256(code), "c", tokenHash, "s", 60_000, null, null);
    expect(r.ok).toBe(true);
    const read = await store.readToken(tokenHash, 2);
    expect(read && tokenGrant(read as TokenRead)).toMatchObject({ plid: "p", secretId: "s" });
    expect(await store.readToken(tokenHash, 2)).not.toBeNull();
    expect(await store.readToken(tokenHash, 2)).toBeNull();
  });

  it("hit counts within a window and starts over after it", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const store = storeFor(env, await sha256("ip:1.2.3.4"), 16);
    expect((await store.hit("k", 1000)).count).toBe(1);
    expect((await store.hit("k", 1000)).count).toBe(2);
    expect((await store.peek("k")).count).toBe(2);
    vi.setSystemTime(Date.now() + 1001);
    expect((await store.peek("k")).count).toBe(0);
    expect((await store.hit("k", 1000)).count).toBe(1);
    await store.clear("k");
    expect((await store.peek("k")).count).toBe(0);
  });

  it("an entry is readable until its time is up", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const store = storeFor(env, "Akey", 16);
    await store.putEntry("e1", "v", 60_000);
    expect(await store.getEntry("e1")).toBe("v");
    vi.setSystemTime(Date.now() + 60_001);
    expect(await store.getEntry("e1")).toBeNull();
  });

  it("the alarm sweeps expired rows", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const store = storeFor(env, "Bkey", 16);
    await store.putEntry("old", "v", 10);
    await store.putEntry("new", "v", 3_600_000);
    vi.setSystemTime(Date.now() + 1000);
    await runDurableObjectAlarm(store);
    const rows = await (
      await import("cloudflare:test")
    ).runInDurableObject(store, (_o, state) =>
      state.storage.sql
        .exec<{ key: string }>("SELECT key FROM entries")
        .toArray()
        .map((r) => r.key),
    );
    expect(rows).toEqual(["new"]);
  });
});

describe("the sweep of codes and tokens", () => {
  // Invariants: a row is deleted only once its time has passed; rows go in the order they were
  // written, and the sweep reads no live row beyond the first (an object holds minutes of codes and
  // tokens, nearly all live); a row that waits behind a live one is refused like any expired one.
  it("deletes what passed in the order it was written, without reading the live rows behind it", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const store = env.ONE_TIME.get(env.ONE_TIME.idFromName(`sweep-${randomToken(8)}`));
    // a code redeemed into a token: both rows live as long as the token
    const issue = async (tokenTtlMs: number) => {
      const code = randomToken();
      const token = randomToken();
      await store.putCode(await sha256(code), GRANT, null, 60_000);
      const args = {
        codeHash: await sha256(code),
        clientId: GRANT.clientId,
        verifierChallenge: null,
        redirectUri: null,
      };
      const tokenHash = await sha256(token);
      expect(await store.redeemCode(...redeemArgs({ ...args, tokenHash, tokenTtlMs, secretId: "s" }))).toEqual({
        ok: true,
      });
      return { code, tokenHash };
    };
    const early = [await issue(1000), await issue(1000), await issue(1000)];
    const live = [];
    for (let i = 0; i < 60; i++) live.push(await issue(3_600_000));
    const late = await issue(1000);
    vi.setSystemTime(Date.now() + 2000);
    const rows = (state: DurableObjectState, table: string) =>
      state.storage.sql
        .exec<{ h: string }>(`SELECT ${table === "tokens" ? "hash" : "token_hash"} AS h FROM ${table} ORDER BY rowid`)
        .toArray()
        .map((r) => r.h);
    const swept = await runInDurableObject(store, (_o: OneTimeStore, state) => ({
      codesRead: sweepInOrder(state.storage.sql, "codes", Date.now()),
      tokensRead: sweepInOrder(state.storage.sql, "tokens", Date.now()),
      codes: rows(state, "codes"),
      tokens: rows(state, "tokens"),
    }));
    const expected = [...live, late].map((x) => x.tokenHash);
    expect(swept.tokens).toEqual(expected);
    expect(swept.codes).toEqual(expected);
    expect(early.some((e) => swept.tokens.includes(e.tokenHash))).toBe(false);
    // a scan reads all 64 rows; the sweep reads the 3 gone and the first live one, and the 3 again
    // (with their index entries) as it deletes them by range
    expect(swept.codesRead).toBeLessThan(20);
    expect(swept.tokensRead).toBeLessThan(20);
    // the row waiting behind the live ones reads nothing
    expect(await store.readToken(late.tokenHash, 1)).toBeNull();
    expect(await store.readToken(live[0]!.tokenHash, 1)).not.toBeNull();
    // once the live ones have passed, the alarm takes everything
    vi.setSystemTime(Date.now() + 3_600_000);
    await runDurableObjectAlarm(store);
    const left = await runInDurableObject(store, (_o, state) => [
      rows(state, "codes").length,
      rows(state, "tokens").length,
    ]);
    expect(left).toEqual([0, 0]);
  });
});

describe("the sweep of entries and counters", () => {
  // Invariant: the sweep deletes exactly the entries and counters whose time has passed, and reads
  // those, not the live ones (an object holds ten minutes of sign-ins under way).
  it("finds what passed by its expiry, reading no live row", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const store = env.ONE_TIME.get(env.ONE_TIME.idFromName(`sweep-entries-${randomToken(8)}`));
    for (let i = 0; i < 3; i++) {
      await store.putEntry(`gone-${i}`, "v", 1000);
      await store.hit(`gone-${i}`, 1000);
    }
    for (let i = 0; i < 50; i++) {
      await store.putEntry(`live-${i}`, "v", 3_600_000);
      await store.hit(`live-${i}`, 3_600_000);
    }
    vi.setSystemTime(Date.now() + 2000);
    const swept = await runInDurableObject(store, (_o: OneTimeStore, state) => ({
      read: sweepByExpiry(state.storage.sql, Date.now()),
      entries: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM entries").one().n,
      counters: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM counters").one().n,
      gone: state.storage.sql
        .exec<{ n: number }>(
          "SELECT (SELECT count(*) FROM entries WHERE key LIKE 'gone-%') + (SELECT count(*) FROM counters WHERE key LIKE 'gone-%') AS n",
        )
        .one().n,
    }));
    expect(swept).toMatchObject({ entries: 50, counters: 50, gone: 0 });
    // a scan reads all 106 rows; the index leads to the 6 gone (and their index entries)
    expect(swept.read).toBeLessThan(30);
    expect(await store.getEntry("live-0")).toBe("v");
  });
});

describe("core/one-time-store audit outbox", () => {
  it("redemptions are audited through the outbox; a flush with nothing to move does not block later flushes", async () => {
    const code = randomToken();
    const store = storeFor(env, code, 16);
    // A client id of this test's own: another test's redemptions may reach R2 (their flush)
    // while this one runs.
    const clientId = `c-${randomToken(8)}`;
    await store.flushAudit(); // whatever earlier tests left in this shard (their timer may not have fired)
    expect(await store.flushAudit()).toBe(0);
    await store.putCode(await sha256(code), { ...GRANT, clientId }, null, 60_000);
    const req = {
      codeHash: await sha256(code),
      clientId,
      verifierChallenge: null,
      redirectUri: null,
      tokenHash: await sha256("t"),
      tokenTtlMs: 60_000,
      secretId: "s",
    };
    expect((await store.redeemCode(...redeemArgs(req))).ok).toBe(true);
    expect((await store.redeemCode(...redeemArgs(req))).ok).toBe(false);
    const moved = await store.flushAudit();
    // the flush alarm may have moved them first; either way both are in R2 exactly once
    expect(moved).toBeLessThanOrEqual(2);
    const rows = (await auditEvents({ clientId }))
      .map(({ type, outcome, detail }) => ({ type, outcome, detail }))
      .sort((a, b) => (a.type < b.type ? 1 : -1));
    expect(rows).toEqual([
      { type: "code.refused", outcome: "refused", detail: '{"reason":"reused"}' },
      { type: "code.redeemed", outcome: "ok", detail: expect.stringMatching(/^\{"count":1,"until":\d+\}$/) },
    ]);
    expect(await store.flushAudit()).toBe(0);
  });

  it("good redemptions reach R2 as one code.redeemed event per client and flush, each counted once, also after the sweep deleted every token", async () => {
    const store = env.ONE_TIME.get(env.ONE_TIME.idFromName(`audit-count-${randomToken(6)}`));
    const [x, y] = [`x-${randomToken(6)}`, `y-${randomToken(6)}`];
    const redeem = async (clientId: string) => {
      const code = randomToken();
      await store.putCode(await sha256(code), { ...GRANT, clientId }, null, 60_000);
      const args = redeemArgs({
        codeHash: await sha256(code),
        clientId,
        verifierChallenge: null,
        redirectUri: null,
        tokenHash: await sha256(`t-${code}`),
        tokenTtlMs: 60_000,
        secretId: "s",
      });
      expect(await store.redeemCode(...args)).toEqual({ ok: true });
    };
    const counted = async () => {
      await store.flushAudit();
      const rows = (await auditEvents({ type: "code.redeemed" })).filter((r) => [x, y].includes(r.client_id!));
      return rows.map((r) => [r.client_id, (JSON.parse(r.detail!) as { count: number }).count]);
    };
    await redeem(x);
    await redeem(x);
    expect(await counted()).toEqual([[x, 2]]);
    await redeem(y);
    await redeem(x);
    expect((await counted()).slice(1).sort()).toEqual([
      [x, 1],
      [y, 1],
    ]);
    expect(await counted()).toHaveLength(3); // nothing new, nothing counted twice
    // every token expires and the sweep deletes them all: the next token's rowid starts low again
    await runInDurableObject(store, (_o, state) => {
      state.storage.sql.exec("UPDATE tokens SET expires_at = 0");
    });
    await runDurableObjectAlarm(store);
    await redeem(y);
    expect((await counted()).slice(3)).toEqual([[y, 1]]);
  });

  it("every good redemption is counted exactly once, whatever flushes and sweeps interleave with it", async () => {
    // Invariant: the code.redeemed counts in R2 add up, per client, to the redemptions made, when
    // redemptions, flushes (one may be waiting for R2 while others redeem) and sweeps that delete
    // every token (expired by then) run concurrently, batch after batch.
    const batch = fc.record({
      redeems: fc.array(fc.constantFrom(0, 1), { maxLength: 6 }),
      flushes: fc.integer({ min: 0, max: 2 }),
      sweep: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 4 }), async (batches) => {
        const name = `audit-interleave-${randomToken(8)}`;
        const store = env.ONE_TIME.get(env.ONE_TIME.idFromName(name));
        const clients = [`x-${randomToken(6)}`, `y-${randomToken(6)}`];
        const made = [0, 0];
        // a code put beforehand, so that its redemption lands while the batch's flushes are under way
        const prepared = async (c: number) => {
          const code = randomToken();
          await store.putCode(await sha256(code), { ...GRANT, clientId: clients[c]! }, null, 60_000);
          return redeemArgs({
            codeHash: await sha256(code),
            clientId: clients[c]!,
            verifierChallenge: null,
            redirectUri: null,
            tokenHash: await sha256(`t-${code}`),
            tokenTtlMs: 60_000,
            secretId: "s",
          });
        };
        const redeem = async (c: number, args: Awaited<ReturnType<typeof prepared>>) => {
          expect(await store.redeemCode(...args)).toEqual({ ok: true });
          made[c]! += 1;
        };
        const sweep = async () => {
          await runInDurableObject(store, (_o, state) => {
            state.storage.sql.exec("UPDATE tokens SET expires_at = 0");
          });
          await runDurableObjectAlarm(store);
        };
        for (const b of batches) {
          const args = await Promise.all(b.redeems.map(prepared));
          await Promise.all([
            ...Array.from({ length: b.flushes }, () => store.flushAudit()),
            ...(b.sweep ? [sweep()] : []),
            ...b.redeems.map((c, i) => redeem(c, args[i]!)),
          ]);
        }
        await store.flushAudit();
        const rows = await auditEvents({ type: "code.redeemed", object: name });
        const counted = clients.map((c) =>
          rows
            .filter((r) => r.client_id === c)
            .reduce((n, r) => n + (JSON.parse(r.detail!) as { count: number }).count, 0),
        );
        expect(counted).toEqual(made);
      }),
      { numRuns: 50 },
    );
  });
});

describe("core/one-time-store redemption: one conditional statement, or the path that names the reason", () => {
  // through the answer the token route receives: one string (redeemCodeText), read back
  const redeem = async (code: string, over: Partial<RedeemRequest> = {}, shards = 16) => {
    const tokenHash = await sha256(`t-${code}-${randomToken(6)}`);
    const text = await storeFor(env, code, shards).redeemCodeText(
      ...redeemArgs({
        codeHash: await sha256(code),
        clientId: "c",
        verifierChallenge: null,
        redirectUri: null,
        tokenHash,
        tokenTtlMs: 60_000,
        secretId: "s1",
        ...over,
      }),
    );
    return { r: redeemResultOf(text), tokenHash };
  };

  it("the answer as one string reads back as the answer it stands for, whatever the answer", () => {
    // every reason: the type checker refuses this object when a reason is added and not listed here
    const reasons = Object.keys({
      unknown: 0,
      expired: 0,
      reused: 0,
      foreign_client: 0,
      redirect_mismatch: 0,
      pkce_missing: 0,
      pkce_mismatch: 0,
      pkce_unexpected: 0,
      revoked: 0,
    } satisfies Record<RedeemFailure, 0>) as RedeemFailure[];
    const answers = fc.oneof(
      fc.constant<RedeemResult>({ ok: true }),
      fc.dictionary(fc.string(), fc.jsonValue()).map((c): RedeemResult => ({ ok: true, idClaims: JSON.stringify(c) })),
      fc.constantFrom(...reasons).map((reason): RedeemResult => ({ ok: false, reason })),
    );
    fc.assert(
      fc.property(answers, (a) => {
        expect(redeemResultOf(redeemText(a))).toEqual(a);
      }),
    );
  });

  it("both paths store the same token: the code's grant with the exchanging secret, readable once per read allowed", async () => {
    for (const redirectUri of [null, "https://x/cb"]) {
      const code = randomToken();
      const store = storeFor(env, code, 16);
      await store.putCode(await sha256(code), { ...GRANT, plid: `p-${code}` }, null, 60_000);
      const { r, tokenHash } = await redeem(code, { redirectUri });
      expect(r).toEqual({ ok: true });
      const read = await store.readToken(tokenHash, 1);
      expect(read && tokenGrant(read as TokenRead)).toEqual({ ...GRANT, plid: `p-${code}`, secretId: "s1" });
      expect(await store.readToken(tokenHash, 1)).toBeNull();
      expect((await redeem(code, { redirectUri })).r).toEqual({ ok: false, reason: "reused" });
      expect(await store.readToken(tokenHash, 5)).toBeNull(); // the replay revoked it
    }
  });

  it("every refusal keeps its reason, and a refused presenter burns no good code", async () => {
    const code = randomToken();
    await storeFor(env, code, 16).putCode(await sha256(code), GRANT, "challenge-1", 60_000);
    expect((await redeem(code, { clientId: "other" })).r).toEqual({ ok: false, reason: "foreign_client" });
    expect((await redeem(code)).r).toEqual({ ok: false, reason: "pkce_missing" });
    expect((await redeem(code, { verifierChallenge: "challenge-2" })).r).toEqual({
      ok: false,
      reason: "pkce_mismatch",
    });
    expect((await redeem(code, { verifierChallenge: "challenge-1", redirectUri: "https://y/cb" })).r).toEqual({
      ok: false,
      reason: "redirect_mismatch",
    });
    expect((await redeem(code, { verifierChallenge: "challenge-1" })).r).toEqual({ ok: true });
    const plain = randomToken();
    await storeFor(env, plain, 16).putCode(await sha256(plain), GRANT, null, 60_000);
    expect((await redeem(plain, { verifierChallenge: "x" })).r).toEqual({ ok: false, reason: "pkce_unexpected" });
    expect((await redeem(randomToken())).r).toEqual({ ok: false, reason: "unknown" });
  });

  it("an expired code and a code of an ended plid are refused as such, on either path", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const expired = randomToken();
    await storeFor(env, expired, 16).putCode(await sha256(expired), GRANT, null, 1000);
    vi.setSystemTime(Date.now() + 1001);
    expect((await redeem(expired)).r).toEqual({ ok: false, reason: "expired" });
    for (const redirectUri of [null, "https://x/cb"]) {
      const code = randomToken();
      const store = storeFor(env, code, 16);
      const plid = `ended-${code}`;
      await store.putCode(await sha256(code), { ...GRANT, plid, issuedAt: Date.now() }, null, 60_000);
      await store.revokePlids([plid], 600_000);
      expect((await redeem(code, { redirectUri })).r).toEqual({ ok: false, reason: "revoked" });
    }
  });

  it("an ended plid never comes back: whatever the code's issue time (a sign-in that read the link just before the end, a skewed clock), after the end no code of it redeems and no token of it reads", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -10_000, max: 10_000 }), // the code's issue time against the object's clock at the end
        fc.boolean(), // redeemed before the end (its token must then read nothing) or after (refused)
        fc.constantFrom<string | null>(null, "https://x/cb"), // either redemption path
        async (skewMs, redeemedBefore, redirectUri) => {
          const code = randomToken();
          const store = storeFor(env, code, 16);
          const plid = `ended-${code}`;
          const grant = { ...GRANT, plid, issuedAt: Date.now() + skewMs };
          await store.putCode(await sha256(code), grant, null, 60_000);
          if (redeemedBefore) {
            const { r, tokenHash } = await redeem(code, { redirectUri });
            expect(r).toEqual({ ok: true });
            await store.revokePlids([plid], 600_000);
            expect(await store.readToken(tokenHash, 5)).toBeNull();
          } else {
            await store.revokePlids([plid], 600_000);
            expect((await redeem(code, { redirectUri })).r).toEqual({ ok: false, reason: "revoked" });
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("an ended plid ends whatever ONE_TIME_SHARDS the minting worker and the ending worker each had (a setting that differs between workers, or changed since)", async () => {
    const counts = [1, 2, 4, 8, 16, 32, 64];
    await fc.assert(
      fc.asyncProperty(
        fc.uuid({ version: 4 }),
        fc.constantFrom(...counts), // the minting worker's setting
        fc.constantFrom(...counts), // the ending worker's
        fc.boolean(), // redeemed before the end (its token must then read nothing) or after (refused)
        async (uuid, mintShards, endShards, redeemedBefore) => {
          const plid = `${randomToken(8)}-${uuid}`; // fresh each run; its shard is the uuid's last byte
          const code = inShard(randomToken(), plidShard(plid, mintShards), mintShards);
          const store = storeFor(env, code, mintShards);
          await store.putCode(await sha256(code), { ...GRANT, plid, issuedAt: Date.now() }, null, 60_000);
          const before = redeemedBefore ? await redeem(code, {}, mintShards) : null;
          if (before) expect(before.r).toEqual({ ok: true });
          await revokePlids(env, [plid], endShards, 600_000);
          if (before) expect(await store.readToken(before.tokenHash, 5)).toBeNull();
          else expect((await redeem(code, {}, mintShards)).r).toEqual({ ok: false, reason: "revoked" });
        },
      ),
      { numRuns: 30 },
    );
  });

  it("an app is told of an end only once every object has it: one object failing records no event", async () => {
    const plid = `${crypto.randomUUID().slice(0, -2)}1f`; // home shard 15 (of 16); 31 under 32 shards
    const failing = env.ONE_TIME.idFromName("shard-31").toString();
    const started: Promise<unknown>[] = []; // every call made, to count only once all have settled
    const ns = intercept(env.ONE_TIME, {
      get: (id: DurableObjectId) => {
        const stub = env.ONE_TIME.get(id);
        const unavailable = id.toString() === failing;
        return intercept(stub, {
          revokePlids: (...args: Parameters<typeof stub.revokePlids>) => {
            const p = unavailable ? Promise.reject(new Error("object unavailable")) : stub.revokePlids(...args);
            started.push(p.catch(() => {}));
            return p;
          },
        });
      },
    });
    await expect(
      revokePlids({ ONE_TIME: ns }, [plid], 16, 600_000, [newEvent("demo-client", plid, "user_terminated")]),
    ).rejects.toThrow("object unavailable");
    await Promise.all(started);
    const events = await runInDurableObject(
      storeAt(env, 15),
      (_o, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM event_outbox WHERE plid = ?", plid).one().n,
    );
    expect(events).toBe(0);
    // the whole end retried once the object is back: the ends and the one event
    await revokePlids(env, [plid], 16, 600_000, [newEvent("demo-client", plid, "user_terminated")]);
    const after = await runInDurableObject(
      storeAt(env, 15),
      (_o, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM event_outbox WHERE plid = ?", plid).one().n,
    );
    expect(after).toBe(1);
  });

  it("an event recorded in an object without an alarm is sent at once, not at the next sweep", async () => {
    const plid = `${crypto.randomUUID().slice(0, -2)}2f`; // 47 under 64 shards
    // this plid's events only: an earlier test's event may be delivered meanwhile by its own object
    const sent: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      const payload = (await bodyText(req)).split(".")[1] ?? "";
      if (atob(payload.replace(/-/g, "+").replace(/_/g, "/")).includes(plid)) sent.push(req.url);
      return new Response(null, { status: 202 });
    });
    const stub = storeAt(env, 47);
    await runInDurableObject(stub, (_o, st) => st.storage.deleteAlarm()); // an object without an alarm
    expect(await runInDurableObject(stub, (_o, st) => st.storage.getAlarm())).toBeNull();
    try {
      await stub.revokePlids([plid], 600_000, [newEvent("demo-client", plid, "user_terminated")]);
      await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 3000, interval: 20 });
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("an end whose link deletion never happened (a D1 error after the revocation) removes the leftover link before the end is forgotten: the plid never comes back", async () => {
    const c = await createClient({ auto_login: true });
    const { plid } = await mintFor(HONG.phone, { client: asClient(c) });
    const stub = storeForPlid(env, plid, 16);
    await stub.revokePlids([plid], 600_000); // the end reached the store; the link's deletion did not
    const link = async () => (await shardRows("SELECT plid FROM links WHERE plid = ?", plid))[0] ?? null;
    expect(await link()).not.toBeNull();
    await runInDurableObject(stub, (_o, st) => {
      st.storage.sql.exec("UPDATE revoked_plids SET expires_at = ? WHERE plid = ?", Date.now() - 1, plid);
    });
    await runDurableObjectAlarm(stub);
    expect(await link()).toBeNull();
    const kept = await runInDurableObject(
      stub,
      (_o, st) =>
        st.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM revoked_plids WHERE plid = ?", plid).one().n,
    );
    expect(kept).toBe(0);
  });

  it("a bulk end (more plids than one call carries) ends every plid, in every object each maps to", async () => {
    const plids = Array.from({ length: 450 }, () => crypto.randomUUID());
    await revokePlids(env, plids, 16, 600_000);
    for (const shard of [0, 1, 3, 7, 15, 31, 63]) {
      const expected = new Set(plids.filter((p) => plidShardsAnyCount(p).has(shard)));
      const stored = await runInDurableObject(storeAt(env, shard), (_o, state) => {
        const rows = state.storage.sql
          .exec<{ plid: string }>("SELECT plid FROM revoked_plids")
          .toArray()
          .map((r) => r.plid);
        return new Set(rows);
      });
      for (const p of expected) expect(stored.has(p)).toBe(true);
    }
    expect(plids.every((p) => plidShardsAnyCount(p).has(0))).toBe(true);
  });

  it("a code stored before the plid columns existed redeems, and its plid's end still ends its token", async () => {
    const code = randomToken();
    const store = storeFor(env, code, 16);
    const plid = `legacy-${code}`;
    const codeHash = await sha256(code);
    await runInDurableObject(store, (_o, state) => {
      state.storage.sql.exec(
        "INSERT INTO codes (hash, client_id, grant_json, challenge, expires_at, purge_at) VALUES (?, ?, ?, NULL, ?, ?)",
        codeHash,
        "c",
        JSON.stringify({ ...GRANT, plid, issuedAt: Date.now() }),
        Date.now() + 60_000,
        Date.now() + 60_000,
      );
    });
    const { r, tokenHash } = await redeem(code);
    expect(r).toEqual({ ok: true });
    await store.revokePlids([plid], 600_000);
    expect(await store.readToken(tokenHash, 5)).toBeNull();
  });
});

describe("an OpenID Connect code keeps the claims its sign-in fixed for the id_token", () => {
  // OpenID Connect Core §5.1 forms, as the service gives them (docs/oidc.md "The id_token")
  const AUTH_TIME_MS = 1_763_900_000_000;
  const oidcGrant = (plid: string, over: Partial<CodeGrant> = {}): CodeGrant => ({
    ...GRANT,
    plid,
    items: ["name", "phoneNo", "gender", "birthdate"],
    subscriber: { ...GRANT.subscriber, phone: "01012345678", name: "홍길동", gender: "F", birth: "1990-03-07" },
    oidc: { authTime: AUTH_TIME_MS, amr: ["sms"], nonce: "n-0S6_WzA2Mj" },
    ...over,
  });
  const expected = (plid: string) => ({
    name: "홍길동",
    phone_number: "+821012345678",
    phone_number_verified: true,
    gender: "female",
    birthdate: "1990-03-07",
    auth_time: 1_763_900_000,
    amr: ["sms"],
    nonce: "n-0S6_WzA2Mj",
    sub: plid,
    aud: "c",
  });
  const redeem = async (code: string, over: Partial<RedeemRequest> = {}) =>
    storeFor(env, code, 16).redeemCode(
      ...redeemArgs({
        codeHash: await sha256(code),
        clientId: "c",
        verifierChallenge: null,
        redirectUri: null,
        tokenHash: await sha256(`t-${code}`),
        tokenTtlMs: 60_000,
        secretId: "s1",
        withIdClaims: true,
        ...over,
      }),
    );
  const claimsOf = (r: { ok: boolean; idClaims?: string }) =>
    r.idClaims === undefined ? undefined : (JSON.parse(r.idClaims) as unknown);

  it("a redemption that asks for them gets them, on either path; one that does not, or a code of a request without openid, gets none", async () => {
    for (const redirectUri of [null, "https://x/cb"]) {
      const code = randomToken();
      const plid = `p-${code}`;
      await storeFor(env, code, 16).putCode(await sha256(code), oidcGrant(plid), null, 60_000);
      const r = await redeem(code, { redirectUri });
      expect(r.ok).toBe(true);
      expect(claimsOf(r)).toEqual(expected(plid));
      // kept as ASCII: the name crosses SQLite and the RPC as a one-byte string
      expect(r.ok && /^[\x20-\x7e]*$/.test(r.idClaims ?? "")).toBe(true);

      const notAsked = randomToken();
      await storeFor(env, notAsked, 16).putCode(await sha256(notAsked), oidcGrant(`p-${notAsked}`), null, 60_000);
      expect(await redeem(notAsked, { redirectUri, withIdClaims: false })).toEqual({ ok: true });

      const plain = randomToken();
      await storeFor(env, plain, 16).putCode(await sha256(plain), { ...GRANT, plid: `p-${plain}` }, null, 60_000);
      expect(await redeem(plain, { redirectUri })).toEqual({ ok: true });
    }
  });

  it("an automatic login's code keeps no identity claims (spec §2.1), only when and how the number was proven", async () => {
    const code = randomToken();
    const plid = `p-${code}`;
    const grant = oidcGrant(plid, {
      autoLogin: { deviceHash: "d", automatic: true },
      oidc: { authTime: AUTH_TIME_MS, amr: ["auto"] },
    });
    await storeFor(env, code, 16).putCode(await sha256(code), grant, null, 60_000);
    expect(claimsOf(await redeem(code))).toEqual({ auth_time: 1_763_900_000, amr: ["auto"], sub: plid, aud: "c" });
  });

  it("a code kept before the id_claims column gets the claims its grant gives, the same as a new code's; one without openid, none", async () => {
    for (const redirectUri of [null, "https://x/cb"])
      for (const oidc of [true, false]) {
        const code = randomToken();
        const plid = `legacy-${code}`;
        const grant = oidc ? oidcGrant(plid) : { ...GRANT, plid };
        await runInDurableObject(storeFor(env, code, 16), async (_o, state) => {
          state.storage.sql.exec(
            "INSERT INTO codes (hash, client_id, grant_json, challenge, expires_at, purge_at, plid) VALUES (?, ?, ?, NULL, ?, ?, ?)",
            await sha256(code),
            "c",
            JSON.stringify(grant),
            Date.now() + 60_000,
            Date.now() + 60_000,
            plid,
          );
        });
        const r = await redeem(code, { redirectUri });
        expect(r.ok).toBe(true);
        expect(claimsOf(r)).toEqual(oidc ? expected(plid) : undefined);
      }
  });
});

describe("the store's sweep alarm, asked of storage once until it runs", () => {
  it("writes set it, the alarm sweeps what expired and sets itself again while anything is left, and a write after an empty sweep sets it again", async () => {
    const stub = env.ONE_TIME.get(env.ONE_TIME.newUniqueId()); // an object of its own: nothing else left in it
    const alarmAt = () => runInDurableObject(stub, (_o, state: DurableObjectState) => state.storage.getAlarm());
    const entries = () =>
      runInDurableObject(stub, (_o, state: DurableObjectState) =>
        state.storage.sql
          .exec<{ key: string }>("SELECT key FROM entries ORDER BY key")
          .toArray()
          .map((r) => r.key),
      );
    await runInDurableObject(stub, (o: OneTimeStore) => {
      o.putEntry("short", "1", 1);
      o.putEntry("long", "1", 3_600_000);
    });
    await vi.waitFor(async () => expect(await alarmAt()).not.toBeNull());
    await new Promise((r) => setTimeout(r, 5));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await entries()).toEqual(["long"]); // swept what expired, kept the rest
    expect(await alarmAt()).not.toBeNull(); // and set itself again for it
    await runInDurableObject(stub, (o: OneTimeStore) => o.takeEntry("long"));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await alarmAt()).toBeNull(); // nothing left: no alarm
    await runInDurableObject(stub, (o: OneTimeStore) => o.putEntry("again", "1", 60_000));
    await vi.waitFor(async () => expect(await alarmAt()).not.toBeNull()); // a write after it asks again
  });
});
