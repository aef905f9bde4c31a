// Findings of the security review (login service and relying-party kit), each asserted through
// HTTP: the failure it guards against must make the test fail.
import { afterEach, describe, expect, it, vi } from "vitest";
import { decryptField } from "../../workers/core/crypto";
import { admin, asClient, createClient } from "../support/admin";
import { exchange, FORM, form, HONG, mintFor, userMe } from "../support/helpers";
import { kit, send } from "../support/kit";
import { Browser } from "../support/signin";

afterEach(() => {
  vi.useRealTimers();
});

describe("per-IP limits count an IPv6 client by its /64 network", () => {
  // One IPv6 subscriber, host or VM is routed a whole /64 (2^64 addresses): a limit keyed on the
  // full address is no limit. IPv4 stays per address; IPv4-mapped IPv6 counts as the IPv4 address.
  /** The status of one step-1 submission from `ip` in a new browser, under SIGNIN_IP_LIMIT=limit. */
  async function step1From(ip: string, limit: number): Promise<number> {
    const b = new Browser({ ip, vars: { SIGNIN_IP_LIMIT: String(limit), SIGNIN_IP_WINDOW_SECONDS: "600" } });
    return (await b.submit(await b.authorize(), { telcoCd: "S", name: "nobody", phoneNo: "01000000000" })).status;
  }

  it("step 1: SIGNIN_IP_LIMIT=3 refuses the 4th submission from another address of the same /64, in any spelling", async () => {
    for (const ip of ["2001:db8:aa:bb::1", "2001:db8:aa:bb:ffff::2", "2001:0DB8:00aa:00bb:0:0:0:3"])
      expect(await step1From(ip, 3), ip).toBe(200);
    expect(await step1From("2001:db8:aa:bb:1234:5678:9abc:def0", 3)).toBe(429);
    expect(await step1From("2001:db8:aa:bc::1", 3)).toBe(200);
  });

  it("step 1: IPv4 addresses stay separate, and ::ffff:a.b.c.d counts as a.b.c.d", async () => {
    for (const ip of ["192.0.2.201", "::ffff:192.0.2.201"]) expect(await step1From(ip, 2), ip).toBe(200);
    expect(await step1From("192.0.2.201", 2)).toBe(429);
    expect(await step1From("192.0.2.202", 2)).toBe(200);
  });

  it("kit /auth/token: RP_TOKEN_RATE_LIMIT=3 refuses the 4th request from another address of the same /64", async () => {
    const k = kit({ RP_TOKEN_RATE_LIMIT: "3" });
    const from = (ip: string) =>
      send(k, "/auth/token", {
        method: "POST",
        headers: { ...FORM, "CF-Connecting-IP": ip },
        body: form({ code: "x" }),
      });
    for (let i = 1; i <= 3; i++) expect((await from(`2001:db8:77:1::${i}`)).status).not.toBe(429);
    expect((await from("2001:db8:77:1::99")).status).toBe(429);
    expect((await from("2001:db8:77:2::1")).status).not.toBe(429);
  });
});

describe("user/me encrypts with the secret that authenticated the exchange, across rotations", () => {
  // spec §2.2: the app decrypts with the secret it holds. A rotation between the exchange and the
  // read must not switch the key under it: the grant names the secret itself, not a generation.
  type NewClient = Awaited<ReturnType<typeof createClient>>;

  /** An access token of a fresh client for HONG, exchanged with `secret`. */
  async function tokenVia(c: NewClient, secret: string): Promise<string> {
    const { code } = await mintFor(HONG.phone, { client: asClient(c) });
    const res = await exchange(code, { clientId: c.client_id, secret });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  async function rotate(c: NewClient, body: Record<string, unknown> = {}): Promise<string> {
    const res = await admin("POST", `/admin/clients/${c.client_id}/rotate-secret`, { json: body });
    expect(res.status).toBe(200);
    return ((await res.json()) as { client_secret: string }).client_secret;
  }

  it("a token exchanged with the current secret and read after a rotation (grace) is encrypted with that secret", async () => {
    const c = await createClient();
    const token = await tokenVia(c, c.client_secret);
    await rotate(c);
    const me = await userMe(token);
    expect(me.status).toBe(200);
    const { user } = (await me.json()) as { user: Record<string, string> };
    expect(await decryptField(c.client_secret, user.name!)).toBe(HONG.name);
  });

  it("a token exchanged with the previous secret reads nothing once a second rotation drops that secret (never under the one now previous)", async () => {
    const c = await createClient();
    await rotate(c);
    const token = await tokenVia(c, c.client_secret); // the previous secret, within its grace
    await rotate(c); // now the first rotation's secret is previous; the exchanging one is gone
    expect((await userMe(token)).status).toBe(401);
  });

  it("a token whose exchanging secret was revoked at once (grace 0, a leaked secret) reads nothing", async () => {
    const c = await createClient();
    const token = await tokenVia(c, c.client_secret);
    await rotate(c, { grace_seconds: 0 });
    expect((await userMe(token)).status).toBe(401);
  });
});
