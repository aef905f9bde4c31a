// The counts the audit trail does not record (docs/operations.md "Metrics", approximate): each
// isolate sums them and sends the sums to the metrics store at most once per METRICS_FLUSH_SECONDS,
// in a call no request waits for. What must hold: every step of a sign-in made through the pages
// is counted once for its app (first page, identify outcomes, code outcomes, user/me), latencies
// land in their bucket, and counts made between sends are not lost but go with the next send.
import { describe, expect, it, vi } from "vitest";
import { env } from "../../../support/env";
import { createClient } from "../../../support/admin";
import { basic, form, FORM, HONG } from "../../../support/helpers";
import { alertText, Browser } from "../../../support/signin";
import { metricsStore } from "../../../../workers/provider/store/metrics/reach";
import {
  bucketOf,
  pointsOf,
  provenByCode,
  provenByPasskey,
  provenBySmsCode,
  seriesOf,
} from "../../../../workers/provider/store/metrics/series";
import { tally, timing } from "../../../../workers/provider/store/metrics/tally";
import { MAX_POINTS, writeDataPoints } from "../../../../workers/provider/store/metrics/analytics";

const HOUR = 3_600_000;

async function counts(client: string, since: number): Promise<Record<string, number>> {
  const rows = (await metricsStore(env).read("1h", since - (since % HOUR), Date.now() + HOUR, client, null)) as [
    number,
    string,
    number,
  ][];
  const out: Record<string, number> = {};
  for (const [, s, n] of rows) out[s] = (out[s] ?? 0) + n;
  return out;
}

describe("a sign-in's uncounted steps", () => {
  it("are each counted once for the app: first page, identify outcomes, code outcomes, user/me", async () => {
    const since = Date.now();
    const app = await createClient({ name: "Tally Shop" });
    const b = new Browser({ vars: { METRICS_FLUSH_SECONDS: "0" } });
    const params = { client_id: app.client_id, redirect_uri: "https://shop.example/cb" };
    const first = await b.authorize(params);
    const bad = await b.submit(first, { telcoCd: HONG.telco, name: HONG.name, phoneNo: "12" });
    expect(alertText(bad.html)).toBeTruthy();
    const code = await b.submit(bad, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    expect(code.form?.step).toBe("verify");
    const wrong = await b.submit(code, { otp: HONG.code === "000000" ? "111111" : "000000" });
    expect(wrong.form?.step).toBe("verify");
    let p = await b.submit(wrong, { otp: HONG.code });
    if (p.form?.step === "consent") p = await b.submit(p, { agree: "Y" });
    expect(p.status).toBe(302);
    const authCode = new URL(p.res.headers.get("Location")!).searchParams.get("code")!;
    const tokenRes = await b.fetch("/oauth2/token", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(app.client_id, app.client_secret) },
      body: form({ grant_type: "authorization_code", code: authCode }),
    });
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    expect((await b.fetch("/v1/user/me", { headers: { Authorization: `Bearer ${access_token}` } })).status).toBe(200);

    const c = await counts(app.client_id, since);
    expect({
      start: c["signin.start"],
      invalid: c["identify.invalid"],
      matched: c["identify.matched"],
      wrong: c["verify.wrong"],
      ok: c["verify.ok"],
      userMe: c["userme.ok"],
    }).toEqual({ start: 1, invalid: 1, matched: 1, wrong: 1, ok: 1, userMe: 1 });
    // global only: the carrier check and the steps' times, in some bucket
    const all = await counts("", since);
    expect(all["carrier.ok"]).toBeGreaterThanOrEqual(1);
    const identifyTimes = Object.entries(all).filter(([s]) => s.startsWith("latency.step.identify.le_"));
    expect(identifyTimes.reduce((a, [, n]) => a + n, 0)).toBeGreaterThanOrEqual(2);
    expect(Object.keys(c).some((s) => s.startsWith("latency."))).toBe(false);
  });
});

describe("the isolate's sums", () => {
  it("are held between sends and go, all of them, with the next one", async () => {
    const since = Date.now();
    const waits: Promise<unknown>[] = [];
    const w = { waitUntil: (p: Promise<unknown>) => void waits.push(p) };
    const slow = { ...env, METRICS_FLUSH_SECONDS: "3600" };
    const series = `tally.test.${crypto.randomUUID().slice(0, 8)}`;
    // a send now (forced with 0), then held for an hour: 5 counts held
    tally({ ...env, METRICS_FLUSH_SECONDS: "0" }, w, series, null);
    for (let i = 0; i < 5; i++) tally(slow, w, series, null, 2);
    await Promise.all(waits.splice(0));
    expect((await counts("", since))[series]).toBe(1);
    tally({ ...env, METRICS_FLUSH_SECONDS: "0" }, w, series, null);
    await Promise.all(waits.splice(0));
    expect((await counts("", since))[series]).toBe(12);
  });

  it("a malformed METRICS_FLUSH_SECONDS never fails the step that counts: logged, and the default kept", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const waits: Promise<unknown>[] = [];
    expect(() =>
      tally({ ...env, METRICS_FLUSH_SECONDS: "soon" }, { waitUntil: (p) => void waits.push(p) }, "x.bad", null),
    ).not.toThrow();
    expect(log.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining("METRICS_FLUSH_SECONDS")]);
    log.mockRestore();
  });

  it("count nothing in a worker without the metrics binding", () => {
    const waits: Promise<unknown>[] = [];
    tally({ METRICS_FLUSH_SECONDS: "0" }, { waitUntil: (p) => void waits.push(p) }, "x", null);
    expect(waits).toEqual([]);
  });

  it("put a latency in the first bucket that holds it", () => {
    expect(bucketOf("carrier", 0)).toBe("latency.carrier.le_10");
    expect(bucketOf("carrier", 10)).toBe("latency.carrier.le_10");
    expect(bucketOf("carrier", 11)).toBe("latency.carrier.le_25");
    expect(bucketOf("sms.sens", 5000)).toBe("latency.sms.sens.le_5000");
    expect(bucketOf("sms.sens", 5001)).toBe("latency.sms.sens.le_inf");
    const waits: Promise<unknown>[] = [];
    timing({}, { waitUntil: (p) => void waits.push(p) }, "carrier", 3);
    expect(waits).toEqual([]);
  });

  it("an audited SMS attempt counts its gateway's time, a skipped one none", () => {
    const row = (result: string, ms: number) => ({
      at: 0,
      type: "sms.attempt",
      client_id: null,
      detail: JSON.stringify({ provider: "sens", result, ms }),
    });
    expect(seriesOf(row("delivered", 180))).toEqual([
      ["sms.attempt", 1],
      ["sms.sens.delivered", 1],
      ["latency.sms.sens.le_250", 1],
    ]);
    // the time is kept for all apps only; the attempt's own series for its app too
    const points = pointsOf([{ ...row("delivered", 180), client_id: "app-x" }]);
    expect(points.filter((p) => p[1].startsWith("latency.")).map((p) => p[2])).toEqual([null]);
    expect(points.filter((p) => p[1] === "sms.sens.delivered").map((p) => p[2])).toEqual(["app-x"]);
    expect(seriesOf(row("circuit_open", 0))).toEqual([
      ["sms.attempt", 1],
      ["sms.sens.circuit_open", 1],
    ]);
  });

  it("a sign-in no SMS preceded (a passkey, a fixed code) counts apart, and the code conversion leaves it out", () => {
    const success = (type: string, detail: Record<string, unknown>) =>
      seriesOf({ at: 0, type, client_id: type === "signin.success" ? "app-x" : null, detail: JSON.stringify(detail) });
    expect(success("signin.success", { mode: "interactive", method: "sms", autoLogin: false })).toEqual([
      ["signin.success", 1],
      ["signin.success.interactive", 1],
    ]);
    expect(success("signin.success", { mode: "interactive", method: "passkey", autoLogin: true })).toEqual([
      ["signin.success", 1],
      ["signin.success.interactive", 1],
      ["signin.success.auto_login_opt_in", 1],
      ["signin.success.passkey", 1],
    ]);
    expect(
      success("signin.success", { mode: "interactive", method: "sms", autoLogin: false, fixedCode: true }),
    ).toEqual([
      ["signin.success", 1],
      ["signin.success.interactive", 1],
      ["signin.success.fixed_code", 1],
    ]);
    expect(success("signin.success", { mode: "automatic", method: "automatic" })).toEqual([
      ["signin.success", 1],
      ["signin.success.automatic", 1],
    ]);
    // the service's own pages: /account by a passkey, /console by a fixed code, /developers by SMS
    expect(success("account.signin", { method: "passkey" })).toEqual([
      ["account.signin", 1],
      ["account.signin.passkey", 1],
    ]);
    expect(success("console.signin", { method: "sms", fixedCode: true })).toEqual([
      ["console.signin", 1],
      ["console.signin.fixed_code", 1],
    ]);
    expect(success("developer.signin", { method: "sms" })).toEqual([["developer.signin", 1]]);
    // apps: 2 by SMS, 1 passkey, 1 fixed code, 1 automatic; own pages: 2 by SMS, 1 passkey, 1 fixed code
    const counts = new Map<string, number>();
    for (const [type, d] of [
      ["signin.success", { mode: "interactive", method: "sms" }],
      ["signin.success", { mode: "interactive", method: "sms" }],
      ["signin.success", { mode: "interactive", method: "passkey" }],
      ["signin.success", { mode: "interactive", method: "sms", fixedCode: true }],
      ["signin.success", { mode: "automatic", method: "automatic" }],
      ["account.signin", { method: "sms" }],
      ["account.signin", { method: "passkey" }],
      ["console.signin", { method: "sms", fixedCode: true }],
      ["developer.signin", { method: "sms" }],
    ] as const)
      for (const [k, n] of success(type, d)) counts.set(k, (counts.get(k) ?? 0) + n);
    const count = (k: string) => counts.get(k) ?? 0;
    expect(provenByCode(count)).toBe(3);
    expect(provenBySmsCode(count)).toBe(4);
    // each passkey sign-in is an SMS not sent: the app's and /account's
    expect(provenByPasskey(count)).toBe(2);
    // hours rolled up before the passkey and fixed-code series: every such sign-in, as then
    const old = (k: string) => ({ "signin.success.interactive": 7, "console.signin": 2 })[k] ?? 0;
    expect([provenByCode(old), provenBySmsCode(old), provenByPasskey(old)]).toEqual([7, 9, 0]);
  });
});

describe("the Analytics Engine sink", () => {
  /** A dataset that keeps what is written (Miniflare's binding keeps nothing to read back). */
  const recorder = () => {
    const written: AnalyticsEngineDataPoint[] = [];
    return { written, writeDataPoint: (p?: AnalyticsEngineDataPoint) => void written.push(p!) };
  };

  it("gets one data point per series and app of a batch, summed over its minutes", () => {
    const ds = recorder();
    writeDataPoints(ds, [
      [120_000, "signin.success", "app-a", 2],
      [60_000, "signin.success", "app-a", 3],
      [60_000, "signin.success", null, 1],
    ]);
    expect(ds.written).toEqual([
      { blobs: ["signin.success", "app-a"], doubles: [5, 60_000], indexes: ["app-a"] },
      { blobs: ["signin.success", ""], doubles: [1, 60_000], indexes: ["all"] },
    ]);
  });

  it("an index longer than Analytics Engine takes (96 bytes) is written as 'long'", () => {
    const ds = recorder();
    writeDataPoints(ds, [[0, "consent", "x".repeat(97), 1]]);
    expect(ds.written[0]!.indexes).toEqual(["long"]);
  });

  it("with the dataset bound, the store writes a batch's points there too and its roll-up is unchanged", async () => {
    expect(env.METRICS_AE).toBeDefined();
    const series = `ae.test.${crypto.randomUUID().slice(0, 8)}`;
    const t = Date.now() - (Date.now() % 60_000);
    expect(await metricsStore(env).apply(`ae-${series}`, [[t, series, "app-ae", 4]])).toBe(true);
    expect((await counts("app-ae", t))[series]).toBe(4);
  });

  it("never more than an invocation may write: past 250, per series for all apps, counts kept", () => {
    const ds = recorder();
    const points = Array.from({ length: 300 }, (_, i) => [0, i % 2 ? "consent" : "disconnect", `app-${i}`, 1] as const);
    writeDataPoints(ds, points as never);
    expect(ds.written.length).toBe(2);
    expect(ds.written.reduce((a, p) => a + p.doubles![0]!, 0)).toBe(300);
    expect(ds.written.length).toBeLessThanOrEqual(MAX_POINTS);
  });
});
