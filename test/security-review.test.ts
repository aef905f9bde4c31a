// Findings of the security review (login service and relying-party kit), each asserted through
// HTTP: the failure it guards against must make the test fail.
import { afterEach, describe, expect, it, vi } from "vitest";
import { FORM, form } from "./helpers";
import { kit, send } from "./rp-helpers";
import { Browser } from "./signin-helpers";

afterEach(() => {
  vi.useRealTimers();
});

describe("per-IP limits count an IPv6 client by its /64 network", () => {
  // One IPv6 subscriber, host or VM is routed a whole /64 (2^64 addresses): a limit keyed on the
  // full address is no limit. IPv4 stays per address; IPv4-mapped IPv6 counts as the IPv4 address.
  it("step 1: SIGNIN_IP_LIMIT=3 refuses the 4th submission from another address of the same /64, in any spelling", async () => {
    const vars = { SIGNIN_IP_LIMIT: "3", SIGNIN_IP_WINDOW_SECONDS: "600" };
    const fields = { telcoCd: "S", name: "nobody", phoneNo: "01000000000" };
    const ips = ["2001:db8:aa:bb::1", "2001:db8:aa:bb:ffff::2", "2001:0DB8:00aa:00bb:0:0:0:3"];
    for (const ip of ips) {
      const b = new Browser({ ip, vars });
      expect((await b.submit(await b.authorize(), fields)).status).toBe(200);
    }
    const same64 = new Browser({ ip: "2001:db8:aa:bb:1234:5678:9abc:def0", vars });
    expect((await same64.submit(await same64.authorize(), fields)).status).toBe(429);
    const other64 = new Browser({ ip: "2001:db8:aa:bc::1", vars });
    expect((await other64.submit(await other64.authorize(), fields)).status).toBe(200);
  });

  it("step 1: IPv4 addresses stay separate, and ::ffff:a.b.c.d counts as a.b.c.d", async () => {
    const vars = { SIGNIN_IP_LIMIT: "2", SIGNIN_IP_WINDOW_SECONDS: "600" };
    const fields = { telcoCd: "S", name: "nobody", phoneNo: "01000000000" };
    for (const ip of ["192.0.2.201", "::ffff:192.0.2.201"]) {
      const b = new Browser({ ip, vars });
      expect((await b.submit(await b.authorize(), fields)).status).toBe(200);
    }
    const again = new Browser({ ip: "192.0.2.201", vars });
    expect((await again.submit(await again.authorize(), fields)).status).toBe(429);
    const neighbour = new Browser({ ip: "192.0.2.202", vars });
    expect((await neighbour.submit(await neighbour.authorize(), fields)).status).toBe(200);
  });

  it("kit /auth/token: RP_TOKEN_RATE_LIMIT=3 refuses the 4th request from another address of the same /64", async () => {
    const k = kit({ RP_TOKEN_RATE_LIMIT: "3" });
    const from = (ip: string) => send(k, "/auth/token", { method: "POST", headers: { ...FORM, "CF-Connecting-IP": ip }, body: form({ code: "x" }) });
    for (let i = 1; i <= 3; i++) expect((await from(`2001:db8:77:1::${i}`)).status).not.toBe(429);
    expect((await from("2001:db8:77:1::99")).status).toBe(429);
    expect((await from("2001:db8:77:2::1")).status).not.toBe(429);
  });
});
