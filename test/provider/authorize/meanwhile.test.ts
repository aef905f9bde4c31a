// What changes at the operator's hand while a sign-in is open must hold when the sign-in goes on:
// a redirect URI removed receives no code, a client deleted ends the sign-in with a page (not a
// server error), and an ended plid stays ended whatever the ending worker's token lifetime.
import { env } from "../../support/env";
import { beforeShardCall, shardRows } from "../../support/shards";
import { maskItems } from "../../../workers/provider/store/directory/keys";
import { describe, expect, it, vi } from "vitest";
import { admin } from "../../support/admin";
import { DEMO, HONG, intercept, KIM } from "../../support/helpers";
import { Browser, throughCode } from "../../support/signin";
import { forgetClient } from "../../../workers/provider/store/clients";
import { storeConfig } from "../../../workers/provider/store/config";
import { providerConfig } from "../../../workers/provider/config";
import { subscriberByPhone } from "../../../workers/provider/store/directory/directory";
import { endLink } from "../../../workers/provider/store/flows/end-plids";
import { findLink } from "../../../workers/provider/store/directory/links";
import { recordConsent } from "../../support/store";
import { auditEvents } from "../../support/audit";
import { deleteClient } from "../../../workers/provider/store/flows/delete-client";

/** A client registered through the admin API (with the automatic-login opt-in when asked); its id. */
async function newClient(redirectUris: string[], autoLogin = false): Promise<string> {
  const res = await admin("POST", "/admin/clients", {
    json: { name: "앱", redirect_uris: redirectUris, items: ["gender"], ...(autoLogin ? { auto_login: true } : {}) },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

describe("changes during an open sign-in", () => {
  it.each([
    [
      "its redirect URI removed",
      (id: string) => admin("PATCH", `/admin/clients/${id}`, { json: { redirect_uris: ["https://b.example/cb"] } }),
    ],
    ["disabled", (id: string) => admin("POST", `/admin/clients/${id}/disable`)],
  ])(
    "a stop page's way back to the app (restart=Y) goes nowhere once the client is %s: the page a cancel gets, no redirect",
    async (_what, change) => {
      const id = await newClient(["https://a.example/cb", "https://b.example/cb"]);
      const b = new Browser();
      const p1 = await b.authorize({ client_id: id, redirect_uri: "https://a.example/cb", state: "keep-me" });
      expect(p1.form?.step).toBe("identify");
      expect((await change(id)).status).toBe(200);
      forgetClient(id); // as every isolate does within CLIENT_CACHE_SECONDS
      const cancel = await b.submit(p1, {}, { cancel: "Y" });
      const back = await b.submit(p1, {}, { restart: "Y" });
      expect(cancel.status).toBe(403);
      expect(cancel.html).toContain("앱을 이용할 수 없습니다");
      expect(back.status).toBe(cancel.status);
      expect(back.html).toContain("앱을 이용할 수 없습니다");
      expect(back.res.headers.get("Location")).toBeNull();
      expect(back.html).not.toContain("keep-me");
    },
  );

  it("a redirect URI removed by the operator receives no code: the next step shows 'the app is not available'", async () => {
    const id = await newClient(["https://a.example/cb", "https://b.example/cb"]);
    const b = new Browser();
    const p1 = await b.authorize({ client_id: id, redirect_uri: "https://a.example/cb" });
    expect(p1.form?.step).toBe("identify");
    const patched = await admin("PATCH", `/admin/clients/${id}`, { json: { redirect_uris: ["https://b.example/cb"] } });
    expect(patched.status).toBe(200);
    forgetClient(id); // as every isolate does within CLIENT_CACHE_SECONDS
    const p2 = await b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    expect(p2.status).toBe(403);
    expect(p2.html).toContain("앱을 이용할 수 없습니다");
    expect(p2.res.headers.get("Location")).toBeNull();
  });

  it("a client deleted while still cached: the consent ends the sign-in with a page, no link, no server error", async () => {
    const id = await newClient(["https://gone.example/cb"]);
    const b = new Browser();
    const consent = await throughCode(b, KIM, { client_id: id, redirect_uri: "https://gone.example/cb" });
    expect(consent.form?.step).toBe("consent");
    // deleted by the admin API behind this isolate's client cache (another isolate's call): the
    // person's home shard, where the consent links, knows the client ended
    await deleteClient(env, id);
    const done = await b.submit(consent, { agree: "Y" });
    expect(done.status).toBe(403);
    expect(done.html).toContain("로그인을 계속할 수 없습니다");
    expect(done.res.headers.get("Location")).toBeNull();
    const links = await shardRows("SELECT plid FROM links WHERE client_id = ?", id);
    expect(links).toEqual([]);
    forgetClient(id);
  });

  it("the app's items (or name, purpose, retention) changed while the consent page was shown: the agreement does not cover them, the page is shown again with the new terms, and only an agreement to those links", async () => {
    const id = await newClient(["https://terms.example/cb"]);
    const b = new Browser();
    const consent = await throughCode(b, HONG, { client_id: id, redirect_uri: "https://terms.example/cb" });
    expect(consent.form?.step).toBe("consent");
    expect(consent.html).not.toContain("연계정보(CI)");
    const patched = await admin("PATCH", `/admin/clients/${id}`, { json: { items: ["gender", "ci", "phoneNo"] } });
    expect(patched.status).toBe(200);
    forgetClient(id);
    const again = await b.submit(consent, { agree: "Y" });
    expect(again.status).toBe(200);
    expect(again.form?.step).toBe("consent");
    expect(again.html).toContain("앱이 요청하는 정보가 바뀌었습니다");
    expect(again.html).toContain("연계정보(CI)");
    expect(again.res.headers.get("Location")).toBeNull();
    const linked = async () =>
      (await shardRows<{ items: number }>("SELECT items FROM links WHERE client_id = ?", id))[0] ?? null;
    expect(await linked()).toBeNull();
    // an agreement that does not post the terms it answers (a tool dropping the hidden field) neither
    const bare = await b.submit(again, { agree: "Y" }, { terms: "" });
    expect(bare.form?.step).toBe("consent");
    expect(await linked()).toBeNull();
    const done = await b.submit(bare, { agree: "Y" });
    expect(done.status).toBe(302);
    expect(maskItems((await linked())!.items)).toEqual(["ci", "phoneNo", "gender"]); // spec §2.1 order
  });

  it("an ended plid is kept at least as long as the longest token any worker may issue, whatever the ending worker's own settings", () => {
    const short = storeConfig({ ACCESS_TOKEN_TTL_SECONDS: "60", CODE_TTL_SECONDS: "10" } as never);
    const long = storeConfig({ ACCESS_TOKEN_TTL_SECONDS: "86400", CODE_TTL_SECONDS: "600" } as never);
    expect(short.revocationRetainMs).toBe(long.revocationRetainMs);
    expect(short.revocationRetainMs).toBeGreaterThanOrEqual((86_400 + 600) * 1000);
  });
});

/**
 * The real shards, with the app's disconnect of `clientId`'s link (its plid as `plidOf` finds it)
 * landing as the automatic-login grant is about to be written; the grant is written after it.
 * `disconnect()`: whether that end found the link (the race happened), or null if it never ran.
 */
function disconnectBeforeGrant(clientId: string, plidOf: () => Promise<string>) {
  const cfg = providerConfig(env);
  let disconnect: Promise<boolean> | null = null;
  const dir = beforeShardCall(
    env.DIRECTORY,
    (method) => method === "putGrant",
    async () => {
      disconnect = endLink(env, clientId, await plidOf(), cfg.oneTimeShards, cfg.revocationRetainMs);
      await disconnect;
    },
  );
  return { browser: new Browser({ vars: { DIRECTORY: dir } as never }), disconnect: () => disconnect };
}

describe("an end of the plid racing the automatic-login opt-in", () => {
  it("a disconnect landing between the sign-in's link read and its grant: no grant stays, no code, a 'start again' page", async () => {
    const hong = (await subscriberByPhone(env, HONG.phone))!;
    const plid = (await recordConsent(env, DEMO.clientId, hong.id, DEMO.items))!;
    const race = disconnectBeforeGrant(DEMO.clientId, async () => plid);
    const done = await throughCode(race.browser, HONG, {}, { autoLogin: "Y" });
    expect(await race.disconnect()).toBe(true); // the race happened
    expect(done.status).toBe(403);
    expect(done.res.headers.get("Location")).toBeNull();
    const grants = await shardRows(
      "SELECT 1 FROM grants WHERE client_id = ? AND subscriber_id = ?",
      DEMO.clientId,
      hong.id,
    );
    expect(grants).toEqual([]);
  });

  it("a first sign-in's consent, with a disconnect landing before its grant: the consent's event is recorded once on its own, no success, no grant, no code", async () => {
    const id = await newClient(["https://lone.example/cb"], true);
    const kim = (await subscriberByPhone(env, KIM.phone))!;
    // The consent writes the link; the disconnect of that new link lands before the grant, so the
    // sign-in mints nothing.
    const race = disconnectBeforeGrant(id, async () => (await findLink(env, id, kim.id))!.plid);
    const b = race.browser;
    const consent = await throughCode(
      b,
      KIM,
      { client_id: id, redirect_uri: "https://lone.example/cb" },
      { autoLogin: "Y" },
    );
    expect(consent.form?.step).toBe("consent");
    const done = await b.submit(consent, { agree: "Y" });
    expect(await race.disconnect()).toBe(true); // the race happened
    expect(done.status).toBe(403);
    expect(done.res.headers.get("Location")).toBeNull();
    const ofClient = async () => (await auditEvents()).filter((r) => r.client_id === id && r.type !== "client.created");
    // both events are sent after the answer (waitUntil)
    await vi.waitFor(async () => expect((await ofClient()).length).toBe(2), { timeout: 5000, interval: 50 });
    const events = (await ofClient()).map((r) => [r.type, r.outcome, JSON.parse(r.detail ?? "{}").reason ?? null]);
    expect(events.sort()).toEqual([
      ["consent", "ok", null],
      ["signin.failure", "refused", "gone_meanwhile"],
    ]);
    const grants = await shardRows("SELECT 1 FROM grants WHERE client_id = ?", id);
    expect(grants).toEqual([]);
    forgetClient(id);
  });

  it("a first sign-in's consent whose next write fails (the store down before the code): a server error, no code, and the consent that was written keeps its event, once", async () => {
    const id = await newClient(["https://down.example/cb"], true);
    const dir = beforeShardCall(
      env.DIRECTORY,
      (method) => method === "putGrant",
      async () => {
        throw new Error("shard unavailable");
      },
    );
    const b = new Browser({ vars: { DIRECTORY: dir } as never });
    const consent = await throughCode(
      b,
      KIM,
      { client_id: id, redirect_uri: "https://down.example/cb" },
      { autoLogin: "Y" },
    );
    expect(consent.form?.step).toBe("consent");
    const done = await b.submit(consent, { agree: "Y" });
    expect(dir.landed()).toBe(true); // the failure happened
    expect(done.status).toBe(500);
    expect(done.res.headers.get("Location")).toBeNull();
    const kim = (await subscriberByPhone(env, KIM.phone))!;
    expect(await findLink(env, id, kim.id)).not.toBeNull(); // the consent was written
    const ofClient = async () => (await auditEvents()).filter((r) => r.client_id === id && r.type !== "client.created");
    await vi.waitFor(async () => expect((await ofClient()).length).toBe(1), { timeout: 5000, interval: 50 });
    await new Promise((r) => setTimeout(r, 200)); // nothing else follows
    expect((await ofClient()).map((r) => [r.type, r.outcome])).toEqual([["consent", "ok"]]);
    forgetClient(id);
  });
});
