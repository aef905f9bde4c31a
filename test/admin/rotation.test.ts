// Client secret rotation (docs/operations.md "Rotating a client secret"): the old secret
// keeps working for the grace period, because apps redeploy with the new one meanwhile and the
// field cipher of spec §2.2 is keyed by the secret that authenticated the exchange.
import { afterEach, describe, expect, it, vi } from "vitest";
import { decryptField } from "../../workers/core/crypto";
import { admin, asClient, createClient, type CreatedClient } from "../support/admin";
import { exchange, HONG, mintFor, userMe } from "../support/helpers";

afterEach(() => {
  vi.useRealTimers();
});

async function rotate(
  c: CreatedClient,
  json?: unknown,
): Promise<{ client_secret: string; previous_secret_valid_until: string | null }> {
  const res = await admin("POST", `/admin/clients/${c.client_id}/rotate-secret`, json === undefined ? {} : { json });
  expect(res.status).toBe(200);
  return (await res.json()) as { client_secret: string; previous_secret_valid_until: string | null };
}

/** Signs in HONG for the client and exchanges the code with `secret`: the exchange's response. */
async function exchangeWith(c: CreatedClient, secret: string): Promise<Response> {
  const { code } = await mintFor(HONG.phone, { client: asClient(c) });
  return exchange(code, { clientId: c.client_id, secret });
}

async function readUser(res: Response): Promise<Record<string, string>> {
  expect(res.status).toBe(200);
  const { access_token } = (await res.json()) as { access_token: string };
  const me = await userMe(access_token);
  expect(me.status).toBe(200);
  return ((await me.json()) as { user: Record<string, string> }).user;
}

describe("rotate-secret", () => {
  it("answers a new 64-alphanumeric secret once, and the old one's end of grace (24 h by default)", async () => {
    const c = await createClient();
    const before = Date.now();
    const r = await rotate(c);
    expect(r.client_secret).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(r.client_secret).not.toBe(c.client_secret);
    const until = Date.parse(r.previous_secret_valid_until!);
    expect(until).toBeGreaterThanOrEqual(before + 86_400_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 86_400_000);
    const read = await (await admin("GET", `/admin/clients/${c.client_id}`)).text();
    expect(read).not.toContain(r.client_secret);
    expect(JSON.parse(read)).toMatchObject({ previous_secret_valid_until: r.previous_secret_valid_until });
  });

  it("during the grace period both secrets exchange codes; user/me encrypts with the secret that authenticated the exchange", async () => {
    const c = await createClient();
    const r = await rotate(c);
    const underOld = await readUser(await exchangeWith(c, c.client_secret));
    expect(await decryptField(c.client_secret, underOld.name!)).toBe(HONG.name);
    await expect(decryptField(r.client_secret, underOld.name!)).rejects.toThrow();
    const underNew = await readUser(await exchangeWith(c, r.client_secret));
    expect(await decryptField(r.client_secret, underNew.name!)).toBe(HONG.name);
  });

  it("after the grace period the old secret is refused (401 invalid_client) and the new one works", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const c = await createClient();
    const r = await rotate(c, { grace_seconds: 3600 });
    vi.setSystemTime(Date.now() + 3599_000);
    expect((await exchangeWith(c, c.client_secret)).status).toBe(200);
    vi.setSystemTime(Date.now() + 2_000);
    const late = await exchangeWith(c, c.client_secret);
    expect(late.status).toBe(401);
    expect(await late.json()).toMatchObject({ error: "invalid_client" });
    expect((await exchangeWith(c, r.client_secret)).status).toBe(200);
    const read = (await (await admin("GET", `/admin/clients/${c.client_id}`)).json()) as Record<string, unknown>;
    expect(read.previous_secret_valid_until).toBeNull();
  });

  it("a token issued under the old secret during grace is still encrypted with it when read after the grace ended", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const c = await createClient();
    await rotate(c, { grace_seconds: 60 });
    const res = await exchangeWith(c, c.client_secret);
    expect(res.status).toBe(200);
    const { access_token } = (await res.json()) as { access_token: string };
    vi.setSystemTime(Date.now() + 61_000);
    const { user } = (await (await userMe(access_token)).json()) as { user: Record<string, string> };
    expect(await decryptField(c.client_secret, user.name!)).toBe(HONG.name);
  });

  it("grace_seconds 0 ends the old secret at once (a leaked secret)", async () => {
    const c = await createClient();
    const r = await rotate(c, { grace_seconds: 0 });
    expect(r.previous_secret_valid_until).toBeNull();
    expect((await exchangeWith(c, c.client_secret)).status).toBe(401);
    expect((await exchangeWith(c, r.client_secret)).status).toBe(200);
  });

  it("a second rotation within the grace period keeps only the generation just replaced", async () => {
    const c = await createClient();
    const r1 = await rotate(c);
    const r2 = await rotate(c);
    expect((await exchangeWith(c, c.client_secret)).status).toBe(401);
    expect((await exchangeWith(c, r1.client_secret)).status).toBe(200);
    expect((await exchangeWith(c, r2.client_secret)).status).toBe(200);
  });

  it.each([[-1], [1.5], ["60"], [30 * 86400 + 1]])(
    "grace_seconds %s is refused (whole seconds, 0 to 30 days)",
    async (grace) => {
      const c = await createClient();
      const res = await admin("POST", `/admin/clients/${c.client_id}/rotate-secret`, {
        json: { grace_seconds: grace },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        error: "invalid_request",
        message: expect.stringMatching(/grace_seconds/),
      });
      expect((await exchangeWith(c, c.client_secret)).status).toBe(200);
    },
  );
});
