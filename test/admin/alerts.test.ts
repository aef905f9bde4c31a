// Alerts (docs/operations.md "Alerts"): judged every minute by the metrics store's alarm from its
// roll-ups; a rule fires once, repeats at most hourly while it holds, and sends a recovery when it
// clears; each message goes to ALERT_WEBHOOK_URL signed as the SMS webhook is. Here a stand-in
// receiver checks the signature and the timestamp as a real one would, and can refuse (the message
// is tried again later).
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "../support/env";
import { hmacSha256Hex, randomToken } from "../../workers/core/crypto";
import type { MetricsRoom, MetricsStore } from "../../workers/provider/store/metrics/metrics-store";
import { alertsAlarm, judge, type AlertEnv } from "../../workers/provider/store/flows/alerts";
import { kstDayStart } from "../../workers/provider/store/config";
import { raiseNotice, resolveNotice } from "../../workers/provider/store/notices";
import { admin, createClient } from "../support/admin";

const RECEIVER = "http://127.0.0.1:9899/alerts";
const SECRET = "test-only-alert-webhook-secret";

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

interface Received {
  alert: string;
  status: "firing" | "resolved";
  value: number;
  text: string;
}

/** A receiver that checks each message's signature and age, and answers `status()`. */
function receiver(status: () => number = () => 204) {
  const got: Received[] = [];
  const bad: string[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (req.url !== RECEIVER) return real(input, init);
    const body = await req.text();
    const ts = req.headers.get("X-Signature-Timestamp") ?? "";
    const want = "sha256=" + (await hmacSha256Hex(SECRET, `${ts}.${body}`));
    if (req.headers.get("X-Signature") !== want) bad.push("signature");
    if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) bad.push("stale");
    const code = status();
    if (code < 300) got.push(JSON.parse(body) as Received);
    return new Response(null, { status: code });
  });
  return { got, bad };
}

function store(): DurableObjectStub<MetricsStore> {
  return env.METRICS.get(env.METRICS.idFromName(`alerts-${randomToken(6)}`));
}

const minute = (t: number) => t - (t % 60_000);

async function sms(m: DurableObjectStub<MetricsStore>, at: number, delivered: number, failed: number) {
  await m.apply(`b-${randomToken(6)}`, [
    [minute(at), "sms.naver-sens.delivered", null, delivered],
    [minute(at), "sms.naver-sens.server_error", null, failed],
    [minute(at), "sms.attempt", null, delivered + failed],
  ]);
}

describe("alerts", () => {
  it("an SMS gateway failing fires once, repeats after an hour, and recovers; every message is signed", async () => {
    const r = receiver();
    const m = store();
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.now();
    await sms(m, t0, 2, 8); // 80% failed
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => [g.alert, g.status])).toEqual([["sms.naver-sens.failures", "firing"]]);
    expect(r.got[0]!.text).toMatch(/^\[phone-login\] FIRING: SMS gateway naver-sens: 80\.0% of 10 attempts failed/);
    // still failing a few minutes on: nothing more
    vi.setSystemTime(t0 + 3 * 60_000);
    await sms(m, Date.now(), 0, 5);
    await runDurableObjectAlarm(m);
    expect(r.got).toHaveLength(1);
    expect((await m.alerts()).find((a) => a.rule === "sms.naver-sens.failures")?.firing).toBe(true);
    // an hour on and still failing: sent again
    vi.setSystemTime(t0 + 61 * 60_000);
    await sms(m, Date.now(), 1, 9);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => g.status)).toEqual(["firing", "firing"]);
    // the gateway recovers: a recovery, once
    vi.setSystemTime(t0 + 70 * 60_000);
    await sms(m, Date.now(), 10, 0);
    await runDurableObjectAlarm(m);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => g.status)).toEqual(["firing", "firing", "resolved"]);
    expect(r.got[2]!.text).toMatch(/^\[phone-login\] RESOLVED: /);
    expect(r.bad).toEqual([]);
  });

  it("below the least volume nothing fires; codes sent and never typed fire the conversion rule", async () => {
    const r = receiver();
    const m = store();
    await sms(m, Date.now(), 0, 3); // 3 attempts: too few to judge
    await runDurableObjectAlarm(m);
    expect(r.got).toEqual([]);
    await m.apply(`b-${randomToken(6)}`, [
      [minute(Date.now()), "sms.outbox.delivered", null, 120],
      [minute(Date.now()), "signin.success.interactive", null, 10],
    ]);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => g.alert)).toEqual(["code.conversion"]);
    expect(r.got[0]!.text).toContain("8.3% of 120 codes sent were typed");
  });

  it("passkey and fixed-code sign-ins, which no SMS preceded, do not hide codes sent and never typed", async () => {
    const r = receiver();
    const m = store();
    // 110 interactive sign-ins, 100 of them with no SMS: 10 of the 120 codes delivered were typed
    await m.apply(`b-${randomToken(6)}`, [
      [minute(Date.now()), "sms.outbox.delivered", null, 120],
      [minute(Date.now()), "signin.success.interactive", null, 110],
      [minute(Date.now()), "signin.success.passkey", null, 80],
      [minute(Date.now()), "signin.success.fixed_code", null, 20],
    ]);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => g.alert)).toEqual(["code.conversion"]);
    expect(r.got[0]!.text).toContain("8.3% of 120 codes sent were typed");
    // the same sign-ins all by SMS, in another metrics store: 91.7% typed, nothing more fires
    const m2 = store();
    await m2.apply(`b-${randomToken(6)}`, [
      [minute(Date.now()), "sms.outbox.delivered", null, 120],
      [minute(Date.now()), "signin.success.interactive", null, 110],
    ]);
    await runDurableObjectAlarm(m2);
    expect(r.got).toHaveLength(1);
    expect(r.bad).toEqual([]);
  });

  it("an app's codes delivered and never typed fire code.untyped.<app> for that app alone; texts the person sent are no codes typed", async () => {
    const m = store();
    const at = minute(Date.now());
    await m.apply(`b-${randomToken(6)}`, [
      // the attacked app: 300 codes delivered, 20 typed, and 100 sign-ins by a text the person sent
      [at, "sms.outbox.delivered", "attacked-app", 300],
      [at, "signin.success.interactive", "attacked-app", 120],
      [at, "signin.success.text", "attacked-app", 100],
      // a healthy app: 300 delivered, 280 typed
      [at, "sms.outbox.delivered", "healthy-app", 300],
      [at, "signin.success.interactive", "healthy-app", 280],
    ]);
    const rules = await runInDurableObject(m, async (o: MetricsStore) => {
      const room = (o as unknown as { room: MetricsRoom }).room;
      return (await judge(room, {}, Date.now())).filter((j) => j.rule.startsWith("code.untyped."));
    });
    const attacked = rules.find((j) => j.rule === "code.untyped.attacked-app")!;
    expect(attacked.active, JSON.stringify(attacked)).toBe(true);
    expect(attacked.text).toContain("280 of 300 codes sent this and the last hour were never typed");
    expect(rules.find((j) => j.rule === "code.untyped.healthy-app")?.active ?? false).toBe(false);
  });

  it("confirmed numbers that stop finishing fire the completion rule against the same hour's 7-day median", async () => {
    const r = receiver();
    const m = store();
    const end = Date.now() - 2 * 60_000;
    /** An hour ending `daysBack` days before the rule's window end: `matched` confirmed, `done` signed in. */
    const hour = (daysBack: number, matched: number, done: number) =>
      m.apply(
        `b-${randomToken(6)}`,
        Array.from({ length: 4 }, (_, i) => {
          const t = minute(end - daysBack * 86_400_000 - (i + 1) * 10 * 60_000);
          return [
            [t, "identify.matched", null, matched / 4],
            [t, "signin.success.interactive", null, done / 4],
          ] as [number, string, null, number][];
        }).flat(),
      );
    // two past days only: no median yet, however bad the hour
    await hour(1, 200, 180);
    await hour(2, 200, 176);
    await hour(0, 200, 40);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => g.alert)).toEqual([]);
    // a third day: the median of 0.90, 0.88 and 0.90 is 0.90; 0.20 is 22% of it
    await hour(5, 400, 360);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => [g.alert, g.status])).toEqual([["signin.completion", "firing"]]);
    expect(r.got[0]!.text).toContain("20.0% of 200 confirmed numbers signed in");
    // the hour catches up past 70% of the median (0.70 of 0.90: 78%): resolved
    await hour(0, 0, 100);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => g.status)).toEqual(["firing", "resolved"]);
  });

  it("carrier checks without an answer above 1% over 5 minutes fire; below the least volume nothing does", async () => {
    const r = receiver();
    const m = store();
    const t = minute(Date.now());
    await m.apply(`b-${randomToken(6)}`, [[t, "carrier.failed", null, 2]]);
    await runDurableObjectAlarm(m);
    expect(r.got).toEqual([]);
    await m.apply(`b-${randomToken(6)}`, [[t, "carrier.ok", null, 98]]);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => [g.alert, g.status])).toEqual([["carrier.failures", "firing"]]);
    expect(r.got[0]!.text).toContain("2.0% of 100 checks had no answer");
    await m.apply(`b-${randomToken(6)}`, [[t, "carrier.ok", null, 200]]);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => g.status)).toEqual(["firing", "resolved"]);
  });

  it("an app whose events all failed for an hour fires its own rule; an app with one delivered does not", async () => {
    const r = receiver();
    const m = store();
    const t = minute(Date.now());
    await m.apply(`b-${randomToken(6)}`, [
      [t, "event.failed", "app-down", 3],
      [t, "event.failed", "app-flaky", 3],
      [t, "event.delivered", "app-flaky", 1],
      [t, "event.delivered", "app-fine", 5],
    ]);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => [g.alert, g.status])).toEqual([["events.app-down", "firing"]]);
    expect(r.got[0]!.text).toContain("Events to app app-down: 3 tries failed and none delivered in the last hour");
  });

  it("attempts past the first gateway of SMS_SENDER above 10% over 5 minutes fire the failover rule; at 10% it does not", async () => {
    const m = store();
    const t = minute(Date.now());
    const failover = async () =>
      runInDurableObject(m, async (o: MetricsStore) => {
        const room = (o as unknown as { room: MetricsRoom }).room;
        return (await judge(room, { SMS_SENDER: "naver-sens,nhn-cloud" }, Date.now())).find(
          (j) => j.rule === "sms.failover",
        );
      });
    await m.apply(`b-${randomToken(6)}`, [
      [t, "sms.naver-sens.delivered", null, 90],
      [t, "sms.nhn-cloud.delivered", null, 10],
    ]);
    expect(await failover()).toMatchObject({ active: false, value: 10 });
    await m.apply(`b-${randomToken(6)}`, [[t, "sms.nhn-cloud.delivered", null, 2]]);
    const j = await failover();
    expect(j?.active).toBe(true);
    expect(j?.text).toContain(
      "SMS failover: 11.8% of 102 attempts went past naver-sens over 5 minutes (threshold 10%)",
    );
  });

  it("an operator's or developer's change that never answered fires request.unfinished for the hour after it", async () => {
    const m = store();
    const now = Date.now();
    const rule = (at: number) =>
      runInDurableObject(m, async (o: MetricsStore) => {
        const room = (o as unknown as { room: MetricsRoom }).room;
        return (await judge(room, {}, at)).find((j) => j.rule === "request.unfinished");
      });
    expect(await rule(now)).toMatchObject({ active: false, value: 0 });
    await m.apply(`b-${randomToken(6)}`, [[minute(now), "request.unfinished", null, 2]]);
    const fired = await rule(now);
    expect(fired).toMatchObject({ active: true, value: 2 });
    expect(fired!.text).toContain("npm run admin -- audit list --type request.unfinished");
    expect(await rule(minute(now) + 61 * 60_000)).toMatchObject({ active: false, value: 0 });
  });

  it("a review test number suspended by its cap of wrong codes (an open notice) fires its rule until resolved", async () => {
    const m = store();
    const suspended = async () =>
      runInDurableObject(m, async (o: MetricsStore) => {
        const room = (o as unknown as { room: MetricsRoom }).room;
        return (await judge(room, { DB: env.DB }, Date.now())).find((j) => j.rule === "test_number.suspended");
      });
    const before = (await suspended())!.value;
    await raiseNotice(env, "test_number.suspended", "alerts-test-subject", "010-****-0000 suspended");
    expect(await suspended()).toMatchObject({ active: true, value: before + 1 });
    await resolveNotice(env, "test_number.suspended", "alerts-test-subject");
    expect((await suspended())!.value).toBe(before);
  });

  it("a message the receiver refuses is tried again at the next alarm after its backoff", async () => {
    let code = 503;
    const r = receiver(() => code);
    const m = store();
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.now();
    await sms(m, t0, 0, 10);
    await runDurableObjectAlarm(m);
    expect(r.got).toEqual([]);
    code = 204;
    vi.setSystemTime(t0 + 30_000); // before the backoff (1 minute): not yet
    await runDurableObjectAlarm(m);
    expect(r.got).toEqual([]);
    vi.setSystemTime(t0 + 61_000);
    await runDurableObjectAlarm(m);
    expect(r.got.map((g) => g.status)).toEqual(["firing"]);
  });
});

// The daily SMS budgets (docs/operations.md "SMS budgets"): each app's SMS delivered since midnight
// in Korea against its budget (its own, else SMS_APP_DAILY_BUDGET), and every SMS against
// SMS_GLOBAL_DAILY_BUDGET, fire a rule at 80% and an `.exhausted` one at 100%; the next day clears
// them. Alerts only: nothing here stops a send.
describe("SMS budgets", () => {
  /** The budget rules whose names begin with `prefix`, judged at `now` with `vars`, by name. */
  async function budgets(m: DurableObjectStub<MetricsStore>, prefix: string, vars: AlertEnv, now = Date.now()) {
    return runInDurableObject(m, async (o: MetricsStore) => {
      const room = (o as unknown as { room: MetricsRoom }).room;
      const all = await judge(room, vars, now);
      return Object.fromEntries(all.filter((j) => j.rule.startsWith(prefix)).map((j) => [j.rule, j]));
    });
  }

  /** `n` SMS delivered for `client` (null: the service's own pages) at `at`, on `gateway`. */
  const delivered = (
    m: DurableObjectStub<MetricsStore>,
    client: string | null,
    n: number,
    at = Date.now(),
    gateway = "naver-sens",
  ) => m.apply(`b-${randomToken(6)}`, [[minute(at), `sms.${gateway}.delivered`, client, n]]);

  it("an app's SMS today fire sms.budget.<client_id> at 80% of its own budget, not at 79%, and .exhausted at 100%", async () => {
    const c = await createClient({ sms_daily_budget: 100 });
    const id = c.client_id;
    const m = store();
    const now = Date.now();
    const rule = `sms.budget.${id}`;
    // yesterday's (in Korea) and failed attempts count for nothing; the gateways' deliveries add up
    await delivered(m, id, 50, kstDayStart(now) - 60_000);
    await m.apply(`b-${randomToken(6)}`, [[minute(now), "sms.naver-sens.server_error", id, 30]]);
    await delivered(m, id, 70, now);
    await delivered(m, id, 9, now, "nhn-cloud");
    let j = await budgets(m, rule, { DB: env.DB }, now);
    expect(j[rule]).toMatchObject({ active: false, value: 79 });
    expect(j[`${rule}.exhausted`]).toMatchObject({ active: false, value: 79 });
    await delivered(m, id, 1, now);
    j = await budgets(m, rule, { DB: env.DB }, now);
    expect(j[rule]).toMatchObject({ active: true, value: 80 });
    expect(j[rule]!.text).toBe(
      `SMS budget of app Test Shop (${id}): 80 of 100 messages sent today (KST), 80.0% (threshold 80%)`,
    );
    expect(j[`${rule}.exhausted`]).toMatchObject({ active: false, value: 80 });
    await delivered(m, id, 19, now);
    expect((await budgets(m, rule, { DB: env.DB }, now))[`${rule}.exhausted`]?.active).toBe(false);
    await delivered(m, id, 1, now);
    j = await budgets(m, rule, { DB: env.DB }, now);
    expect(j[rule]).toMatchObject({ active: true, value: 100 });
    expect(j[`${rule}.exhausted`]).toMatchObject({ active: true, value: 100 });
    expect(j[`${rule}.exhausted`]!.text).toBe(
      `SMS budget of app Test Shop (${id}) used up: 100 of 100 messages sent today (KST), 100.0%: its sign-ins by SMS are paused until midnight KST`,
    );
  });

  it("an app without a budget of its own is judged against SMS_APP_DAILY_BUDGET; a change of its budget applies at the next judgement", async () => {
    const c = await createClient();
    const id = c.client_id;
    const m = store();
    const now = Date.now();
    const rule = `sms.budget.${id}`;
    await delivered(m, id, 39, now);
    const vars = { DB: env.DB, SMS_APP_DAILY_BUDGET: "50" };
    expect((await budgets(m, rule, vars, now))[rule]).toMatchObject({ active: false, value: 78 });
    await delivered(m, id, 1, now);
    expect((await budgets(m, rule, vars, now))[rule]).toMatchObject({ active: true, value: 80 });
    // the default unset: 10,000 messages
    expect((await budgets(m, rule, { DB: env.DB }, now))[rule]).toMatchObject({ active: false, value: 0.4 });
    // the operator gives the app 40: used up
    const res = await admin("PATCH", `/admin/clients/${id}`, { json: { sms_daily_budget: 40 } });
    expect(res.status).toBe(200);
    expect((await budgets(m, rule, vars, now))[`${rule}.exhausted`]).toMatchObject({ active: true, value: 100 });
  });

  it("every SMS today (apps and the service's own pages) fires sms.budget.global at 80% of SMS_GLOBAL_DAILY_BUDGET, not at 79%, and .exhausted at 100%", async () => {
    const m = store();
    const now = Date.now();
    const vars = { SMS_GLOBAL_DAILY_BUDGET: "1000" };
    const rule = "sms.budget.global";
    await delivered(m, null, 500, now);
    await delivered(m, "app-one", 200, now);
    await delivered(m, "app-two", 90, now, "nhn-cloud");
    await delivered(m, null, 400, kstDayStart(now) - 60_000); // yesterday in Korea
    let j = await budgets(m, rule, vars, now);
    expect(j[rule]).toMatchObject({ active: false, value: 79 });
    expect(j[`${rule}.exhausted`]).toMatchObject({ active: false });
    await delivered(m, null, 10, now);
    j = await budgets(m, rule, vars, now);
    expect(j[rule]).toMatchObject({ active: true, value: 80 });
    expect(j[rule]!.text).toBe(
      "SMS budget of the service: 800 of 1,000 messages sent today (KST), 80.0% (threshold 80%)",
    );
    await delivered(m, "app-one", 199, now);
    expect((await budgets(m, rule, vars, now))[`${rule}.exhausted`]).toMatchObject({ active: false });
    await delivered(m, null, 1, now);
    j = await budgets(m, rule, vars, now);
    expect(j[`${rule}.exhausted`]).toMatchObject({ active: true, value: 100 });
    expect(j[`${rule}.exhausted`]!.text).toBe(
      "SMS budget of the service used up: 1,000 of 1,000 messages sent today (KST), 100.0%: nothing is stopped (each app's own budget still applies)",
    );
    // unset: 1,000,000 messages
    expect((await budgets(m, rule, {}, now))[rule]).toMatchObject({ active: false, value: 0.1 });
  });

  it("an app's budget rules fire once (the alarm's webhook) and clear when the day turns at midnight KST", async () => {
    const r = receiver();
    const c = await createClient({ sms_daily_budget: 10 });
    const id = c.client_id;
    const m = store();
    vi.useFakeTimers({ toFake: ["Date"] });
    // a midnight days ahead, so that the object's real alarm (a minute after the faked clock) never
    // comes due during the test: near a real midnight KST it fired on its own and took the minute
    const midnight = kstDayStart(Date.now()) + 30 * 86_400_000;
    vi.setSystemTime(midnight - 10 * 60_000);
    await delivered(m, id, 10, Date.now());
    await runDurableObjectAlarm(m);
    const budget = () => r.got.filter((g) => g.alert.startsWith("sms.budget.")).map((g) => [g.alert, g.status]);
    expect(budget()).toEqual([
      [`sms.budget.${id}`, "firing"],
      [`sms.budget.${id}.exhausted`, "firing"],
    ]);
    vi.setSystemTime(midnight - 60_000);
    await runDurableObjectAlarm(m);
    expect(budget()).toHaveLength(2);
    // 00:00 KST: a new day, nothing sent yet
    vi.setSystemTime(midnight + 60_000);
    await runDurableObjectAlarm(m);
    expect(budget()).toEqual([
      [`sms.budget.${id}`, "firing"],
      [`sms.budget.${id}.exhausted`, "firing"],
      [`sms.budget.${id}`, "resolved"],
      [`sms.budget.${id}.exhausted`, "resolved"],
    ]);
    const states = await m.alerts();
    expect(states.filter((s) => s.rule.startsWith(`sms.budget.${id}`)).map((s) => s.firing)).toEqual([false, false]);
    vi.setSystemTime(midnight + 2 * 60_000);
    await runDurableObjectAlarm(m);
    expect(budget()).toHaveLength(4);
    expect(r.bad).toEqual([]);
  });

  it("the global rules fire at 80% and 100% of SMS_GLOBAL_DAILY_BUDGET and clear when the day turns at midnight KST", async () => {
    const r = receiver();
    const m = store();
    const vars: AlertEnv = {
      DB: env.DB,
      SMS_GLOBAL_DAILY_BUDGET: "20",
      // the receiver is on loopback, which ALERT_WEBHOOK_URL may name only in DEV_MODE
      DEV_MODE: "true",
      ALERT_WEBHOOK_URL: RECEIVER,
      ALERT_WEBHOOK_SECRET: SECRET,
    };
    const alarm = () =>
      runInDurableObject(m, (o: MetricsStore) => alertsAlarm(vars, (o as unknown as { room: MetricsRoom }).room));
    const budget = () => r.got.filter((g) => g.alert.startsWith("sms.budget.")).map((g) => [g.alert, g.status]);
    vi.useFakeTimers({ toFake: ["Date"] });
    // a midnight days ahead, so that the object's real alarm (a minute after the faked clock) never
    // comes due during the test: near a real midnight KST it fired on its own and took the minute
    const midnight = kstDayStart(Date.now()) + 30 * 86_400_000;
    vi.setSystemTime(midnight - 10 * 60_000);
    await delivered(m, null, 15, Date.now());
    await alarm();
    expect(budget()).toEqual([]);
    await delivered(m, null, 1, Date.now());
    await alarm();
    expect(budget()).toEqual([["sms.budget.global", "firing"]]);
    expect(r.got.at(-1)!.text).toBe(
      "[phone-login] FIRING: SMS budget of the service: 16 of 20 messages sent today (KST), 80.0% (threshold 80%)",
    );
    vi.setSystemTime(midnight - 5 * 60_000);
    await delivered(m, null, 4, Date.now());
    await alarm();
    expect(budget()).toEqual([
      ["sms.budget.global", "firing"],
      ["sms.budget.global.exhausted", "firing"],
    ]);
    vi.setSystemTime(midnight + 60_000);
    await alarm();
    expect(budget()).toEqual([
      ["sms.budget.global", "firing"],
      ["sms.budget.global.exhausted", "firing"],
      ["sms.budget.global", "resolved"],
      ["sms.budget.global.exhausted", "resolved"],
    ]);
    expect(r.bad).toEqual([]);
  });
});

// Where alerts may go (docs/operations.md "Alerts", docs/security.md): ALERT_WEBHOOK_URL takes an
// app's events_uri host rules, and a redirect is never followed. The network here is a stand-in
// that answers as fetch does: a 3xx is followed to its Location unless the request says
// `redirect: "manual"`, when the 3xx itself is the answer.
describe("the alert webhook's destination", () => {
  const HOOK = "https://alerts.receiver.example/hook";
  const ELSEWHERE = "https://elsewhere.example.net/collect";

  function network(answer: (url: string) => Response) {
    const hits: { url: string; signed: boolean }[] = [];
    const send = async (req: Request): Promise<Response> => {
      hits.push({ url: req.url, signed: req.headers.has("X-Signature") });
      const res = answer(req.url);
      const location = res.headers.get("Location");
      if (res.status >= 300 && res.status < 400 && location && req.redirect !== "manual")
        return send(new Request(location, req));
      return res;
    };
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => send(new Request(input, init)));
    return hits;
  }

  async function alarm(vars: AlertEnv) {
    const m = store();
    await sms(m, Date.now(), 0, 10); // a gateway failing: one rule to send
    await runInDurableObject(m, (o: MetricsStore) => alertsAlarm(vars, (o as unknown as { room: MetricsRoom }).room));
    return m;
  }

  it("with DEV_MODE=false a 307 from ALERT_WEBHOOK_URL is not followed: the signed alert reaches no other host, and it is tried again later", async () => {
    const hits = network((url) =>
      url === HOOK ? new Response(null, { status: 307, headers: { Location: ELSEWHERE } }) : new Response(null),
    );
    const m = await alarm({ DEV_MODE: "false", ALERT_WEBHOOK_URL: HOOK, ALERT_WEBHOOK_SECRET: SECRET });
    // every message (the gateway's rule, and the config.* rules of this bare env) went to the hook alone, signed
    expect(hits.length).toBeGreaterThan(0);
    expect(new Set(hits.map((h) => h.url))).toEqual(new Set([HOOK]));
    expect(hits.every((h) => h.signed)).toBe(true);
    // none delivered: each waits for its next try
    const waiting = await runInDurableObject(m, (o: MetricsStore) =>
      (o as unknown as { room: MetricsRoom }).room.alerts.due(Date.now() + 3_600_000, 20),
    );
    expect(waiting.map((w) => w.attempts)).toEqual(hits.map(() => 1));
  });

  it("ALERT_WEBHOOK_URL takes events_uri's host rules: https to a public host; http, private and metadata hosts, and loopback outside DEV_MODE send nothing and fire config.ALERT_WEBHOOK_URL", async () => {
    for (const url of [
      "http://alerts.receiver.example/hook",
      "https://10.0.0.5/alerts",
      "https://169.254.169.254/latest",
      "https://metadata.google.internal/alerts",
      "https://127.0.0.1:9899/alerts",
      RECEIVER,
    ]) {
      const hits = network(() => new Response(null, { status: 204 }));
      const m = await alarm({ DEV_MODE: "false", ALERT_WEBHOOK_URL: url, ALERT_WEBHOOK_SECRET: SECRET });
      expect(hits, url).toEqual([]);
      expect((await m.alerts()).find((a) => a.rule === "config.ALERT_WEBHOOK_URL")?.firing, url).toBe(true);
      vi.restoreAllMocks();
    }
    // a public https host receives; in DEV_MODE the loopback test receiver does too
    for (const [devMode, url] of [
      ["false", HOOK],
      ["true", RECEIVER],
    ] as const) {
      const hits = network(() => new Response(null, { status: 204 }));
      await alarm({ DEV_MODE: devMode, ALERT_WEBHOOK_URL: url, ALERT_WEBHOOK_SECRET: SECRET });
      expect(hits.length).toBeGreaterThan(0);
      expect(new Set(hits.map((h) => h.url))).toEqual(new Set([url]));
      vi.restoreAllMocks();
    }
  });
});
