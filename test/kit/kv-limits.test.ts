// Deployed KV takes one write to a key per second and refuses a second one within it (429); the
// local KV does not, so these tests put that limit over the real namespace (withKeyWriteLimit).
// A login must never depend on writing one key twice within a second.
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import { encryptField, randomToken, sha256 } from "../../workers/core/crypto";
import { createPkce } from "../../packages/kit/src/client";
import { HONG, KIM, mintFor } from "../support/helpers";
import { Browser, kit, send, withKeyWriteLimit } from "../support/kit";
import { emptyRecord, fullRecord, gate, loginAs, ScriptedProvider, SECRET, signedEvent } from "./scripted-provider";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const limited = (vars: Record<string, unknown> = {}) => kit({ RP_KV: withKeyWriteLimit(env.RP_KV), ...vars });

describe("the kit under KV's one write per key per second", () => {
  it("a login (claim, exchange, outcome, session) completes: its claim and its outcome are two keys", async () => {
    const k = limited();
    const { res } = await new Browser(k).login(HONG.phone);
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/");
  });

  it("two logins of one person within a second both complete, and both are in the plid's index: a disconnect deletes both sessions themselves", async () => {
    const p = new ScriptedProvider();
    const k = kit({ RP_KV: withKeyWriteLimit(env.RP_KV) }, p.fetcher);
    const plid = randomToken(16);
    const user = await fullRecord(plid, { autoLoginYn: "N", autoStatusCheck: "N" });
    const [a, b] = [new Browser(k), new Browser(k)];
    const answers = await Promise.all([loginAs(a, p, user), loginAs(b, p, user)]);
    expect(answers.map((r) => r.status)).toEqual([303, 303]);
    const sessions = await Promise.all([a, b].map((x) => sha256(x.jar.get("__Host-rp_session")!)));
    await sleep(1100);
    expect((await a.post("/auth/disconnect", { headers: { Accept: "application/json" } })).status).toBe(200);
    for (const h of sessions) expect(await env.RP_KV.get(`session:${h}`)).toBeNull();
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

  it("a full login within a second of an automatic login of the same plid stores what it received: the automatic login's write-back of the older identity does not win", async () => {
    const p = new ScriptedProvider();
    const k = kit({ RP_KV: withKeyWriteLimit(env.RP_KV) }, p.fetcher);
    const plid = randomToken(16);
    const before = await fullRecord(plid, { autoLoginYn: "Y", autoStatusCheck: "Y" });
    expect((await loginAs(new Browser(k), p, before)).status).toBe(303);
    await sleep(1100);
    // the name changed at the service; a device with automatic login signs in (writes back the stored identity)...
    const auto = new Browser(k);
    expect((await loginAs(auto, p, emptyRecord(plid))).status).toBe(303);
    // ...and within that second an interactive login on another device reports the new name
    const fresh = new Browser(k);
    const changed = { ...before, name: await encryptField(SECRET, "홍길순"), autoLoginYn: "N", autoStatusCheck: "N" };
    expect((await loginAs(fresh, p, changed)).status).toBe(303);
    for (const b of [fresh, auto])
      expect(((await (await b.get("/auth/me")).json()) as { name: string }).name).toBe("홍길순");
  });

  it("the end of a plid within a second of a login of it is recorded all the same: a login in flight across the service's event keeps nothing", async () => {
    const p = new ScriptedProvider();
    const plid = randomToken(16);
    const k = kit({ RP_KV: withKeyWriteLimit(env.RP_KV) }, p.fetcher);
    const user = await fullRecord(plid, { autoLoginYn: "N", autoStatusCheck: "N" });
    // login C (another device): its user read done, its writes still to come
    const c = new Browser(k);
    const g = gate();
    const lateLogin = loginAs(c, p, user, g.wait);
    await g.reached;
    // login A completes; within that second the service's plid-deleted event arrives
    const a = new Browser(k);
    expect((await loginAs(a, p, user)).status).toBe(303);
    const ev = await send(k, "/auth/events", {
      method: "POST",
      headers: { "Content-Type": "application/secevent+jwt" },
      body: await signedEvent(plid),
    });
    expect(ev.status).toBe(202);
    expect((await a.get("/auth/me")).status).toBe(401);
    await sleep(1100); // C's writes come a moment later
    g.open();
    const cRes = await lateLogin;
    expect({ cLogin: cRes.status, cMe: (await c.get("/auth/me")).status }).toEqual({ cLogin: 502, cMe: 401 });
  });
});
