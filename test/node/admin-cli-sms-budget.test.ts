// The admin CLI's --sms-daily-budget (scripts/admin.mjs, docs/operations.md "SMS budgets"): clients
// create and update send the client's `sms_daily_budget` (update's "default" as null), refuse what is
// not a whole number before calling the service, and clients get shows an app without a budget of
// its own as taking the default. The requests are captured in process; the service's side is
// test/admin/sms-budget.test.ts.
import { describe, expect, it } from "vitest";
import { run } from "./admin-cli-stand-in";

const CLIENT = { client_id: "c1", name: "Shop", sms_daily_budget: 5000 };
const CREATE = ["clients", "create", "--name", "Shop", "--redirect-uri", "https://shop.example/cb"];

describe("clients --sms-daily-budget", () => {
  it("create sends the budget as a number; without the option the service's default applies (nothing sent)", async () => {
    const r = await run([...CREATE, "--sms-daily-budget", "5000"], CLIENT);
    expect(r.code, r.err).toBe(0);
    expect(r.calls[0]).toMatchObject({ method: "POST", path: "/admin/clients" });
    expect((r.calls[0]!.body as Record<string, unknown>).sms_daily_budget).toBe(5000);
    const plain = await run(CREATE, { ...CLIENT, sms_daily_budget: null });
    expect(plain.calls[0]!.body).not.toHaveProperty("sms_daily_budget");
  });

  it('update sends the new budget, "default" as null; it alone is a change', async () => {
    const set = await run(["clients", "update", "c1", "--sms-daily-budget", "20000"], CLIENT);
    expect(set.code, set.err).toBe(0);
    expect(set.calls[0]).toEqual({ method: "PATCH", path: "/admin/clients/c1", body: { sms_daily_budget: 20000 } });
    const reset = await run(["clients", "update", "c1", "--sms-daily-budget", "default"], {
      ...CLIENT,
      sms_daily_budget: null,
    });
    expect(reset.calls[0]!.body).toEqual({ sms_daily_budget: null });
    const help = await run(["clients", "update", "--help"], CLIENT);
    expect(help.out).toContain("--sms-daily-budget");
  });

  it("what is not a whole number is a usage error (exit 2) and nothing is sent; create has no default to ask for", async () => {
    for (const argv of [
      ["clients", "update", "c1", "--sms-daily-budget", "10k"],
      ["clients", "update", "c1", "--sms-daily-budget", "-1"],
      [...CREATE, "--sms-daily-budget", "default"],
    ]) {
      const r = await run(argv, CLIENT);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.err).toContain("--sms-daily-budget must be a whole number of messages");
      expect(r.calls).toEqual([]);
    }
  });

  it("clients get shows the app's budget, or the default it takes", async () => {
    const own = await run(["clients", "get", "c1"], CLIENT);
    expect(own.code, own.err).toBe(0);
    expect(own.out).toMatch(/^sms_daily_budget\s+5000$/m);
    const none = await run(["clients", "get", "c1"], { ...CLIENT, sms_daily_budget: null });
    expect(none.out).toMatch(/^sms_daily_budget\s+default \(SMS_APP_DAILY_BUDGET\)$/m);
    const json = await run(["clients", "get", "c1", "--json"], { ...CLIENT, sms_daily_budget: null });
    expect(JSON.parse(json.out)).toMatchObject({ sms_daily_budget: null });
  });
});
