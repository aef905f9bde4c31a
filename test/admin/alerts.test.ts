// Alerts (docs/operations.md "Alerts"): judged every minute by the metrics store's alarm from its
// roll-ups; a rule fires once, repeats at most hourly while it holds, and sends a recovery when it
// clears; each message goes to ALERT_WEBHOOK_URL signed as the SMS webhook is. Here a stand-in
// receiver checks the signature and the timestamp as a real one would, and can refuse (the message
// is tried again later).
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "../support/env";
import { hmacSha256Hex, randomToken } from "../../workers/core/crypto";
import type { MetricsStore } from "../../workers/provider/store/metrics/metrics-store";

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
