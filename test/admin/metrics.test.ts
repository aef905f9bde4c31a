// Metrics (docs/operations.md "Metrics"): the audited steps are rolled up where the one-time store
// flushes its audit outbox. Invariant: for every closed hour, each type's series equals the audit
// trail's count of that type (a `code.redeemed` row counts its `count`), whatever flushes fail and
// are retried; a batch applied twice counts once. GET /admin/metrics answers a viewer and refuses
// no token.
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { env } from "../support/env";
import { admin } from "../support/admin";
import { auditEvents, flushAudit } from "../support/audit";
import { DEMO, HONG, KIM, tokenFor } from "../support/helpers";
import { Browser, signInAll } from "../support/signin";
import { SoftAuthenticator } from "../support/authenticator";
import { makePasskey, newPerson, passkeySignIn, smsOnAccount } from "../support/passkeys";
import { storeAt, type OneTimeStore } from "../../workers/provider/store/one-time/one-time-store";
import { metricsStore } from "../../workers/provider/store/metrics/reach";
import { rollupHooks } from "../../workers/provider/store/flows/one-time-alarm";
import type { AuditRecord } from "../../workers/provider/store/one-time/audit";

afterEach(() => {
  rollupHooks.beforeApply = undefined;
  rollupHooks.afterApply = undefined;
});

const HOUR = 3_600_000;

/** The trail's count of each type per hour (R2), as `${hour}|${type}` → n. */
async function trailCounts(since: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const e of await auditEvents({ since })) {
    const n = e.type === "code.redeemed" ? (JSON.parse(e.detail!) as { count: number }).count : 1;
    const key = `${e.at - (e.at % HOUR)}|${e.type}`;
    out.set(key, (out.get(key) ?? 0) + n);
  }
  return out;
}

/** The roll-up's count of the same types per hour (all apps). */
async function rolledUp(since: number, types: string[]): Promise<Map<string, number>> {
  const rows = (await metricsStore(env).read("1h", since - (since % HOUR), Date.now() + HOUR, "", types)) as [
    number,
    string,
    number,
  ][];
  return new Map(rows.filter((r) => r[2] > 0).map(([t, s, n]) => [`${t}|${s}`, n]));
}

describe("the roll-up equals the audit trail", () => {
  it("after real sign-ins, tokens and a refusal: each type's hourly count is the trail's", async () => {
    const since = Date.now() - (Date.now() % HOUR);
    await signInAll(new Browser(), HONG);
    await tokenFor(KIM.phone);
    await tokenFor(HONG.phone);
    const wrong = await admin("GET", "/admin/metrics", { token: null });
    expect(wrong.status).toBe(401);
    await flushAudit();
    const trail = await trailCounts(since);
    const types = [...new Set([...trail.keys()].map((k) => k.split("|")[1]!))];
    expect(types).toEqual(expect.arrayContaining(["signin.success", "consent", "code.redeemed"]));
    expect(await rolledUp(since, types)).toEqual(trail);
    // the seed's numbers have fixed codes: no SMS was sent for their sign-ins, which count apart,
    // as many as the trail's successes marked so
    const fixed = (await auditEvents({ since })).filter(
      (e) => e.type === "signin.success" && (JSON.parse(e.detail ?? "{}") as { fixedCode?: boolean }).fixedCode,
    ).length;
    expect(fixed).toBeGreaterThan(0);
    const apart = await rolledUp(since, ["signin.success.fixed_code"]);
    expect([...apart.values()].reduce((a, n) => a + n, 0)).toBe(fixed);
  });

  it("after an SMS sign-in on /account, a passkey made there, an app sign-in by it and fixed-code sign-ins: each .passkey and .fixed_code series equals the trail's sign-ins marked so", async () => {
    const since = Date.now() - (Date.now() % HOUR);
    const who = await newPerson();
    const b = new Browser({ vars: { PASSKEY_ACTIVATION_SECONDS: "0" } });
    const auth = new SoftAuthenticator();
    const { credential } = await makePasskey(b, await smsOnAccount(b, who), auth);
    const app = new Browser();
    let p = await passkeySignIn(app, await app.authorize(), auth, credential);
    if (p.form?.step === "consent") p = await app.submit(p, { agree: "Y" });
    expect(p.status).toBe(302);
    await signInAll(new Browser(), HONG);
    await flushAudit();
    const kinds = ["signin.success", "account.signin", "console.signin", "developer.signin"];
    const want = new Map<string, number>();
    for (const e of await auditEvents({ since })) {
      if (!kinds.includes(e.type)) continue;
      const d = JSON.parse(e.detail ?? "{}") as { mode?: string; method?: string; fixedCode?: boolean };
      if (d.mode === "automatic") continue;
      const series = d.method === "passkey" ? `${e.type}.passkey` : d.fixedCode ? `${e.type}.fixed_code` : null;
      if (series) want.set(series, (want.get(series) ?? 0) + 1);
    }
    expect(want.get("signin.success.passkey")).toBeGreaterThan(0);
    expect(want.get("signin.success.fixed_code")).toBeGreaterThan(0);
    const names = kinds.flatMap((k) => [`${k}.passkey`, `${k}.fixed_code`]);
    const rolled = new Map<string, number>();
    for (const [key, n] of await rolledUp(since, names)) {
      const series = key.split("|")[1]!;
      rolled.set(series, (rolled.get(series) ?? 0) + n);
    }
    expect(rolled).toEqual(want);
  });

  it("invariant: random events in random objects, flushes failing at random, every hour equal once all is flushed", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            shard: fc.integer({ min: 0, max: 3 }),
            type: fc.constantFrom(
              "signin.success",
              "signin.failure",
              "sms.attempt",
              "consent",
              "code.redeemed",
              "disconnect",
            ),
            ago: fc.integer({ min: 0, max: 3 * HOUR }),
            count: fc.integer({ min: 1, max: 5 }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }),
        async (events, faults) => {
          await flushAudit(); // whatever an earlier run left
          const since = Date.now() - 4 * HOUR;
          const before = await trailCounts(since);
          const rolledBefore = await rolledUp(since, [...new Set(events.map((e) => e.type))]);
          const now = Date.now();
          const byShard = new Map<number, AuditRecord[]>();
          for (const e of events) {
            const detail =
              e.type === "code.redeemed"
                ? JSON.stringify({ count: e.count, until: now })
                : e.type === "sms.attempt"
                  ? JSON.stringify({ provider: "naver-sens", result: "delivered", ms: 10 })
                  : e.type === "signin.failure"
                    ? JSON.stringify({ reason: "wrong_code" })
                    : null;
            const r: AuditRecord = [now - e.ago, e.type, DEMO.clientId, "ok", detail];
            byShard.set(e.shard, [...(byShard.get(e.shard) ?? []), r]);
          }
          for (const [s, records] of byShard) await storeAt(env, s).appendAudit(records);
          let f = 0;
          rollupHooks.beforeApply = async () => {
            if (faults[f++ % faults.length]) throw new Error("injected: the metrics store is unreachable");
          };
          // each failed flush is tried again, as the object's alarm does, until every object is flushed
          for (let round = 0; round < 50; round++) {
            // inside the object, as its alarm calls it (a rejected RPC would be logged as uncaught)
            const moved = await Promise.all(
              [0, 1, 2, 3].map((s) =>
                runInDurableObject(storeAt(env, s), (o: OneTimeStore) =>
                  o.flushAudit().then(
                    (m) => m,
                    () => -1,
                  ),
                ),
              ),
            );
            if (moved.every((m) => m === 0)) break;
          }
          rollupHooks.beforeApply = undefined;
          const types = [...new Set(events.map((e) => e.type))];
          const trail = await trailCounts(since);
          const rolled = await rolledUp(since, types);
          for (const key of new Set([...trail.keys(), ...rolled.keys()])) {
            if (!(types as string[]).includes(key.split("|")[1]!)) continue;
            expect(rolled.get(key) ?? 0, key).toBe(trail.get(key) ?? 0);
            // and what this run added is exactly its events
            const added = (rolled.get(key) ?? 0) - (rolledBefore.get(key) ?? 0);
            expect(added, key).toBe((trail.get(key) ?? 0) - (before.get(key) ?? 0));
          }
        },
      ),
      { numRuns: 15 },
    );
  });

  it("a flush that fails after its roll-up is retried with the same rows, though more were appended meanwhile", async () => {
    await flushAudit();
    const since = Date.now() - HOUR;
    const before = await trailCounts(since);
    const rolledBefore = await rolledUp(since, ["consent"]);
    const consent = (): AuditRecord => [Date.now(), "consent", DEMO.clientId, "ok", null];
    const flush = () =>
      runInDurableObject(storeAt(env, 2), (o: OneTimeStore) =>
        o.flushAudit().then(
          (m) => m,
          () => -1,
        ),
      );
    await storeAt(env, 2).appendAudit([consent(), consent(), consent()]);
    let failed = false;
    rollupHooks.afterApply = async () => {
      if (failed) return;
      failed = true;
      throw new Error("injected: the answer of the roll-up is lost");
    };
    expect(await flush()).toBe(-1);
    // more events arrive before the retry
    await storeAt(env, 2).appendAudit([consent(), consent()]);
    for (let i = 0; i < 5 && (await flush()) !== 0; i++);
    const hour = (m: Map<string, number>) =>
      [...m].filter(([k]) => k.endsWith("|consent")).reduce((a, [, n]) => a + n, 0);
    const trailAdded = hour(await trailCounts(since)) - hour(before);
    const rolledAdded = hour(await rolledUp(since, ["consent"])) - hour(rolledBefore);
    expect(trailAdded).toBe(5);
    expect(rolledAdded).toBe(5);
  });

  it("an object writes to the trail under one name, however it was woken (its alarm does not tell it)", async () => {
    await runInDurableObject(storeAt(env, 1), (o: OneTimeStore, state) => {
      const audit = (o as unknown as { audit: { label(name: string | undefined, id: string): string } }).audit;
      expect(audit.label(state.id.name ?? "shard-1", state.id.toString())).toBe(state.id.name ?? "shard-1");
      expect(audit.label(undefined, state.id.toString())).toBe(state.id.name ?? "shard-1");
    });
  });

  it("a batch applied twice counts once", async () => {
    const m = metricsStore(env);
    const t = Date.now() - (Date.now() % 60_000);
    expect(await m.apply("test-batch-1", [[t, "twice.test", null, 3]])).toBe(true);
    expect(await m.apply("test-batch-1", [[t, "twice.test", null, 3]])).toBe(false);
    const rows = (await m.read("1m", t, t + 60_000, "", ["twice.test"])) as [number, string, number][];
    expect(rows).toEqual([[t, "twice.test", 3]]);
  });
});

describe("GET /admin/metrics", () => {
  it("answers a viewer token with the series; refuses no token; bad parameters are 400", async () => {
    const made = await admin("POST", "/admin/tokens", { json: { name: "grafana", role: "viewer" } });
    const { token } = (await made.json()) as { token: string };
    await signInAll(new Browser(), HONG);
    await flushAudit();
    const res = await admin("GET", "/admin/metrics?step=1m&series=signin.success", { token });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { step: string; series: Record<string, [string, number][]> };
    expect(body.step).toBe("1m");
    expect(body.series["signin.success"]!.reduce((a, [, n]) => a + n, 0)).toBeGreaterThan(0);
    const app = await admin("GET", `/admin/metrics?step=1h&client_id=${DEMO.clientId}`, { token });
    expect(Object.keys(((await app.json()) as { series: object }).series)).toContain("signin.success");
    expect((await admin("GET", "/admin/metrics", { token: null })).status).toBe(401);
    for (const q of [
      "step=5m",
      "step=1m&client_id=demo-client",
      "from=yesterday",
      "series=A%20B",
      "step=1m&from=2020-01-01",
    ]) {
      const bad = await admin("GET", `/admin/metrics?${q}`, { token });
      expect(bad.status, q).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toBe("invalid_request");
    }
  });
});
