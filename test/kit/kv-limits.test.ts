// Deployed KV takes one write to a key per second and refuses a second one within it (429); the
// local KV does not, so these tests put that limit over the real namespace (withKeyWriteLimit).
// A login must never depend on writing one key twice within a second.
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import { createPkce } from "../../workers/kit/client";
import { HONG, KIM, mintFor } from "../support/helpers";
import { Browser, kit, send, withKeyWriteLimit } from "../support/kit";

const limited = (vars: Record<string, unknown> = {}) => kit({ RP_KV: withKeyWriteLimit(env.RP_KV), ...vars });

describe("the kit under KV's one write per key per second", () => {
  it("a login (claim, exchange, outcome, session) completes: its claim and its outcome are two keys", async () => {
    const k = limited();
    const { res } = await new Browser(k).login(HONG.phone);
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/");
  });

  it("two logins of one person within a second both complete (the plid's session index is written twice)", async () => {
    const k = limited();
    const [a, b] = await Promise.all([new Browser(k).login(KIM.phone), new Browser(k).login(KIM.phone)]);
    expect(a.plid).toBe(b.plid);
    expect([a.res.status, b.res.status]).toEqual([303, 303]);
  });

  it("two /auth/token calls from one address within a second both answer (the rate counter is written twice)", async () => {
    const k = limited();
    for (const phone of [HONG.phone, KIM.phone]) {
      const pkce = await createPkce();
      const { code } = await mintFor(phone, { redirectUri: "demoapp://callback", codeChallenge: pkce.challenge });
      const res = await send(k, "/auth/token", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", "CF-Connecting-IP": "203.0.113.9" },
        body: new URLSearchParams({ code, code_verifier: pkce.verifier }).toString(),
      });
      expect(res.status).toBe(200);
    }
  });
});
