// An app's daily SMS budget (docs/operations.md "SMS budgets"): a client field `sms_daily_budget`,
// in messages, null for every app registered before it existed and by default (SMS_APP_DAILY_BUDGET
// applies), set, changed and reset through the admin API, checked against its bounds, audited with
// who changed it to what, and read by the store as `smsDailyBudget`; `appSmsBudget` gives the one
// that applies. The variables are lenient: a malformed one is logged and its default kept.
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "../support/env";
import { admin, createClient } from "../support/admin";
import { auditEvents } from "../support/audit";
import { clientOfAnyStatus } from "../../workers/provider/store/clients";
import { appSmsBudget, kstDayStart, smsBudgetConfig, SMS_BUDGET_MAX } from "../../workers/provider/store/config";

afterEach(() => {
  vi.restoreAllMocks();
});

type Budgeted = { sms_daily_budget: number | null };

async function invalid(res: Response): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: string; message: string };
  expect(body).toEqual({
    error: "invalid_request",
    message:
      "The value of sms_daily_budget is not valid: must be a whole number of messages from 1 to 10000000, or null for the default (SMS_APP_DAILY_BUDGET).",
  });
}

describe("sms_daily_budget", () => {
  it("every app has none of its own until given one: the seeded apps (registered before the field) and a new one by default", async () => {
    for (const id of ["demo-client", "limited-client"]) {
      const c = (await (await admin("GET", `/admin/clients/${id}`)).json()) as Budgeted;
      expect(c.sms_daily_budget, id).toBeNull();
    }
    const created = (await createClient()) as unknown as Budgeted & { client_id: string };
    expect(created.sms_daily_budget).toBeNull();
    expect((await clientOfAnyStatus(env, created.client_id, 0))!.smsDailyBudget).toBeNull();
  });

  it("is set at creation, changed and reset to the default (null); the store reads it and appSmsBudget applies it", async () => {
    const c = (await createClient({ sms_daily_budget: 500 })) as unknown as Budgeted & { client_id: string };
    expect(c.sms_daily_budget).toBe(500);
    const stored = async () => (await clientOfAnyStatus(env, c.client_id, 0))!;
    expect((await stored()).smsDailyBudget).toBe(500);
    expect(appSmsBudget(await stored(), {})).toBe(500);
    const patched = await admin("PATCH", `/admin/clients/${c.client_id}`, {
      json: { sms_daily_budget: SMS_BUDGET_MAX },
    });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as Budgeted).sms_daily_budget).toBe(10_000_000);
    expect(appSmsBudget(await stored(), { SMS_APP_DAILY_BUDGET: "7" })).toBe(10_000_000);
    const reset = await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { sms_daily_budget: null } });
    expect(((await reset.json()) as Budgeted).sms_daily_budget).toBeNull();
    const read = (await (await admin("GET", `/admin/clients/${c.client_id}`)).json()) as Budgeted;
    expect(read.sms_daily_budget).toBeNull();
    expect(appSmsBudget(await stored(), {})).toBe(10_000);
    expect(appSmsBudget(await stored(), { SMS_APP_DAILY_BUDGET: "7" })).toBe(7);
    // the smallest budget is one message
    const one = await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { sms_daily_budget: 1 } });
    expect(((await one.json()) as Budgeted).sms_daily_budget).toBe(1);
  });

  it("every change is audited with who made it and the value (default when reset)", async () => {
    const c = await createClient({ sms_daily_budget: 500 });
    await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { sms_daily_budget: 20_000 } });
    await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { sms_daily_budget: null } });
    await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { name: "Renamed" } });
    const [created] = await auditEvents({ type: "client.created", clientId: c.client_id });
    expect(JSON.parse(created!.detail!)).toMatchObject({ actor: "token:ADMIN_TOKEN", sms_daily_budget: 500 });
    const updated = await auditEvents({ type: "client.updated", clientId: c.client_id });
    expect(updated.map((e) => JSON.parse(e.detail!))).toEqual([
      { actor: "token:ADMIN_TOKEN", fields: "sms_daily_budget", sms_daily_budget: 20_000 },
      { actor: "token:ADMIN_TOKEN", fields: "sms_daily_budget", sms_daily_budget: "default" },
      { actor: "token:ADMIN_TOKEN", fields: "name" },
    ]);
  });

  it("refuses what is not a whole number from 1 to 10,000,000 or null with 400 invalid_request, changing nothing", async () => {
    const c = await createClient({ sms_daily_budget: 300 });
    for (const v of [0, -1, 1.5, 10_000_001, "100", "", true, {}, [100]]) {
      await invalid(
        await admin("POST", "/admin/clients", {
          json: { name: "B", redirect_uris: ["https://b.example/cb"], sms_daily_budget: v },
        }),
      );
      await invalid(await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { sms_daily_budget: v } }));
    }
    const read = (await (await admin("GET", `/admin/clients/${c.client_id}`)).json()) as Budgeted;
    expect(read.sms_daily_budget).toBe(300);
  });
});

describe("the budgets' variables", () => {
  it("default to 10,000 messages an app and 1,000,000 for the service; set values within their bounds apply", () => {
    expect(smsBudgetConfig({})).toEqual({ appDaily: 10_000, globalDaily: 1_000_000 });
    expect(smsBudgetConfig({ SMS_APP_DAILY_BUDGET: "1", SMS_GLOBAL_DAILY_BUDGET: "100000000" })).toEqual({
      appDaily: 1,
      globalDaily: 100_000_000,
    });
    expect(smsBudgetConfig({ SMS_APP_DAILY_BUDGET: "10000000" }).appDaily).toBe(10_000_000);
  });

  it("a malformed or out-of-bounds value (0, off, 10,000,001, 1e4) is logged naming it and the default kept: never a failed sign-in", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    for (const v of ["0", "off", "10000001", "1e4", "-5", "10,000"]) {
      expect(smsBudgetConfig({ SMS_APP_DAILY_BUDGET: v }).appDaily, v).toBe(10_000);
      expect(appSmsBudget({ smsDailyBudget: null }, { SMS_APP_DAILY_BUDGET: v }), v).toBe(10_000);
    }
    expect(smsBudgetConfig({ SMS_GLOBAL_DAILY_BUDGET: "100000001" }).globalDaily).toBe(1_000_000);
    const lines = log.mock.calls.map((c) => String(c[0]));
    expect(lines.some((l) => l.includes("SMS_APP_DAILY_BUDGET") && l.includes('"worker":"sms-budget"'))).toBe(true);
    expect(lines.some((l) => l.includes("SMS_GLOBAL_DAILY_BUDGET"))).toBe(true);
    // parsed once per env object: logged once
    const env1 = { SMS_APP_DAILY_BUDGET: "off" };
    log.mockClear();
    appSmsBudget({ smsDailyBudget: null }, env1);
    appSmsBudget({ smsDailyBudget: null }, env1);
    expect(log).toHaveBeenCalledTimes(1);
  });

  it("the day a budget counts is the Korean calendar day: from 15:00 UTC", () => {
    const start = Date.parse("2026-05-01T15:00:00Z"); // 2026-05-02 00:00 KST
    expect(kstDayStart(start)).toBe(start);
    expect(kstDayStart(Date.parse("2026-05-02T14:59:59.999Z"))).toBe(start);
    expect(kstDayStart(Date.parse("2026-05-02T00:00:00Z"))).toBe(start);
    expect(kstDayStart(Date.parse("2026-05-01T14:59:59.999Z"))).toBe(start - 86_400_000);
  });
});
