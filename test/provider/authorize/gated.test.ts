// The gated code and consent steps (docs/signin.md "Gated steps"), through the HTTP interface: a
// code entry and an agreement each take one call on the sign-in's store, with no read before; what
// a gated call cannot settle goes the full way with the same answers as before (another browser,
// a code made before `txBound`), and counts nothing it would not have counted.
import { env } from "../../support/env";
import { describe, expect, it } from "vitest";
import { admin } from "../../support/admin";
import { basic, call, DEMO, form, FORM, HONG, mintFor } from "../../support/helpers";
import { aroundCalls, shardRows } from "../../support/shards";
import { Browser, type Page } from "../../support/signin";
import { storeFor } from "../../../workers/provider/store/one-time-store";
import { providerConfig } from "../../../workers/provider/config";
import { challengeHash, txKey } from "../../../workers/provider/authorize/transaction";
import { phoneKey } from "../../../workers/provider/authorize/limits";
import { sha256 } from "../../../workers/core/crypto";

const CB = "https://gated.example/cb";

/** A client nobody has consented to yet; its id. */
async function newClient(): Promise<string> {
  const res = await admin("POST", "/admin/clients", { json: { name: "앱", redirect_uris: [CB], items: ["gender"] } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** A browser whose one-time store calls are listed in `calls`, at the code page of a new client. */
async function atCodePage(): Promise<{ b: Browser; calls: string[]; code: Page; clientId: string }> {
  const calls: string[] = [];
  const ONE_TIME = aroundCalls(env.ONE_TIME, (method) => void calls.push(method));
  const b = new Browser({ bindings: { ONE_TIME } });
  const clientId = await newClient();
  const p1 = await b.authorize({ client_id: clientId, redirect_uri: CB });
  const code = await b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
  expect(code.form?.step).toBe("verify");
  calls.length = 0;
  return { b, calls, code, clientId };
}

/** The stored record of the sign-in a page belongs to. */
async function recordOf(p: Page) {
  const id = p.form!.hidden.tx!;
  const stub = storeFor(env, id, providerConfig(env).oneTimeShards);
  return { id, stub, key: await txKey(id), tx: (await stub.signinGet(await txKey(id)))! };
}

describe("gated steps: one store call each", () => {
  it("a first login: the code entry is one call, the agreement one call and the code's mint", async () => {
    const { b, calls, code } = await atCodePage();
    const consent = await b.submit(code, { otp: HONG.code });
    expect(consent.form?.step).toBe("consent");
    expect(calls).toEqual(["signinVerifyGated"]);
    calls.length = 0;
    const done = await b.submit(consent, { agree: "Y" });
    expect(done.status).toBe(302);
    expect(new URL(done.res.headers.get("Location")!).searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(calls).toEqual(["signinFinishGated", "putCode"]);
  });

  it("a returning person (consented to everything asked): the code entry ends the sign-in with a code, without a consent page", async () => {
    const first = await atCodePage();
    await first.b.submit(await first.b.submit(first.code, { otp: HONG.code }), { agree: "Y" });
    const calls: string[] = [];
    const b = new Browser({ bindings: { ONE_TIME: aroundCalls(env.ONE_TIME, (m) => void calls.push(m)) } });
    const p1 = await b.authorize({ client_id: first.clientId, redirect_uri: CB });
    const code = await b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    calls.length = 0;
    const done = await b.submit(code, { otp: HONG.code });
    expect(done.status).toBe(302);
    expect(new URL(done.res.headers.get("Location")!).searchParams.get("state")).toBe("st-1");
    expect(calls).toEqual(["signinVerifyGated", "signinFinish", "putCode"]);
  });
});

describe("gated steps: what they cannot settle goes the full way", () => {
  it("another browser's code entry (the page's token, not its cookie) is refused as before and counts no try", async () => {
    const { code } = await atCodePage();
    const other = new Browser();
    const refused = await other.submit(code, { otp: "000000" });
    expect(refused.status).toBe(403);
    expect((await recordOf(code)).tx.challenge?.attempts).toBe(0);
  });

  it("a wrong CSRF token with the right cookie is refused as before and counts no try", async () => {
    const { b, code } = await atCodePage();
    const refused = await b.submit(code, { otp: "000000" }, { csrf: "A".repeat(43) });
    expect(refused.status).toBe(403);
    expect((await recordOf(code)).tx.challenge?.attempts).toBe(0);
  });

  it("a code made before `txBound` (hashed with the number) still verifies, and a wrong one still counts", async () => {
    const { b, calls, code } = await atCodePage();
    const { id, stub, key, tx } = await recordOf(code);
    const digest = await sha256(HONG.code);
    const legacy = {
      hash: await challengeHash(id, digest, await phoneKey(HONG.phone)),
      attempts: 0,
      expiresAt: tx.challenge!.expiresAt,
    };
    await stub.signinCreate(key, { ...tx, challenge: legacy });
    const wrong = await b.submit(code, { otp: "000000" });
    expect(wrong.status).toBe(200);
    expect(wrong.form?.step).toBe("verify");
    expect((await recordOf(code)).tx.challenge?.attempts).toBe(1);
    const right = await b.submit(wrong, { otp: HONG.code });
    expect(right.form?.step).toBe("consent");
    expect(calls).toContain("signinGet"); // the full way: read, then verified
  });

  it("an agreement naming another app is taken the full way, for the sign-in's own app", async () => {
    const { b, calls, code, clientId } = await atCodePage();
    const consent = await b.submit(code, { otp: HONG.code });
    const other = await newClient();
    calls.length = 0;
    const done = await b.submit(consent, { agree: "Y" }, { app: other });
    expect(done.status).toBe(302);
    expect(done.res.headers.get("Location")!.startsWith(`${CB}?code=`)).toBe(true);
    expect(calls[0]).toBe("signinFinishGated"); // unsettled: nothing ended
    expect(calls).toContain("signinGet");
    const linkedTo = async (client: string) => shardRows("SELECT plid FROM links WHERE client_id = ?", client);
    expect(await linkedTo(clientId)).toHaveLength(1);
    expect(await linkedTo(other)).toEqual([]);
  });
});

describe("step 1: the first page's read and its network's count in one call", () => {
  const FIELDS = { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone };

  /** A browser at `ip` whose one-time store calls are listed, with the per-IP limit at `limit`. */
  function watched(ip: string, limit: string) {
    const calls: string[] = [];
    const ONE_TIME = aroundCalls(env.ONE_TIME, (method) => void calls.push(method));
    return { calls, b: new Browser({ ip, vars: { SIGNIN_IP_LIMIT: limit }, bindings: { ONE_TIME } }) };
  }

  it("from the network that drew the page: the read counts the submission (no call of its own), and the limit holds", async () => {
    const { b, calls } = watched("203.0.113.141", "1");
    const page = await b.authorize();
    calls.length = 0;
    expect((await b.submit(page, FIELDS)).form?.step).toBe("verify");
    expect(calls).toEqual(["signinGetHit", "signinOpen", "signinSupersede"]);
    const refused = await b.submit(page, FIELDS); // the same page again: over the limit of 1
    expect(refused.status).toBe(429);
  });

  it("from another network than the page's (a phone changing networks): counted by a call of its own, against the network it came from", async () => {
    const { b, calls } = watched("203.0.113.142", "1");
    const page = await b.authorize();
    const moved = watched("198.51.100.143", "1");
    for (const [k, v] of b.cookies) moved.b.cookies.set(k, v);
    expect((await moved.b.submit(page, FIELDS)).form?.step).toBe("verify");
    expect(moved.calls).toEqual(["signinGet", "hit", "signinOpen", "signinSupersede"]);
    expect((await moved.b.submit(page, FIELDS)).status).toBe(429);
    // the page's own network has not been counted: its first submission goes on
    calls.length = 0;
    const again = await b.authorize();
    expect((await b.submit(again, FIELDS)).form?.step).toBe("verify");
  });
});

describe("the link read with the number: a first login's code step reads no link", () => {
  /** A browser whose one-time store and directory calls are listed, the two lists apart. */
  function watchedBoth() {
    const store: string[] = [];
    const directory: string[] = [];
    const b = new Browser({
      bindings: {
        ONE_TIME: aroundCalls(env.ONE_TIME, (m) => void store.push(m)),
        DIRECTORY: aroundCalls(env.DIRECTORY, (m) => void directory.push(m)),
      },
    });
    const clear = () => {
      store.length = 0;
      directory.length = 0;
    };
    return { b, store, directory, clear };
  }

  /** The code page of `clientId` for HONG in browser `b`. */
  async function codePage(b: Browser, clientId: string): Promise<Page> {
    const p1 = await b.authorize({ client_id: clientId, redirect_uri: CB });
    const code = await b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    expect(code.form?.step).toBe("verify");
    return code;
  }

  /** HONG's plids with `clientId`, as the directory holds them. */
  const plidsOf = async (clientId: string) =>
    (await shardRows<{ plid: string }>("SELECT plid FROM links WHERE client_id = ?", clientId)).map((r) => r.plid);

  it("no link at the number's read: the carrier check is the step's one directory call, and the code step makes none", async () => {
    const w = watchedBoth();
    const clientId = await newClient();
    const p1 = await w.b.authorize({ client_id: clientId, redirect_uri: CB });
    w.clear();
    const code = await w.b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    expect(w.directory).toEqual(["holder"]);
    expect((await recordOf(code)).tx.consentDue).toBe(true);
    w.clear();
    const consent = await w.b.submit(code, { otp: HONG.code });
    expect(consent.form?.step).toBe("consent");
    expect(w.store).toEqual(["signinVerifyGated"]);
    expect(w.directory).toEqual([]);
  });

  it("a link covering the app's items at the number's read: nothing is marked, and the code step reads the link as it is then", async () => {
    const first = await atCodePage();
    await first.b.submit(await first.b.submit(first.code, { otp: HONG.code }), { agree: "Y" });
    const w = watchedBoth();
    const code = await codePage(w.b, first.clientId);
    expect((await recordOf(code)).tx.consentDue).toBeUndefined();
    w.clear();
    const done = await w.b.submit(code, { otp: HONG.code });
    expect(done.status).toBe(302);
    expect(w.directory).toEqual(["findLink", "person", "touchLink"]);
  });

  it("a link made by another sign-in after the number's read: the consent page is shown again, and agreeing keeps that link's plid", async () => {
    const clientId = await newClient();
    const late = watchedBoth();
    const lateCode = await codePage(late.b, clientId); // no link yet: consent due
    const other = new Browser();
    const otherCode = await codePage(other, clientId);
    expect((await other.submit(await other.submit(otherCode, { otp: HONG.code }), { agree: "Y" })).status).toBe(302);
    const plids = await plidsOf(clientId);
    expect(plids).toHaveLength(1);
    const consent = await late.b.submit(lateCode, { otp: HONG.code });
    expect(consent.form?.step).toBe("consent");
    const done = await late.b.submit(consent, { agree: "Y" });
    expect(done.status).toBe(302);
    expect(await plidsOf(clientId)).toEqual(plids);
  });

  it("a link that no longer covers what the app asks (an item added since): consent is due at the number's read", async () => {
    const first = await atCodePage();
    await first.b.submit(await first.b.submit(first.code, { otp: HONG.code }), { agree: "Y" });
    const res = await admin("PATCH", `/admin/clients/${first.clientId}`, { json: { items: ["gender", "birthday"] } });
    expect(res.status).toBe(200);
    const w = watchedBoth();
    const code = await codePage(w.b, first.clientId);
    expect((await recordOf(code)).tx.consentDue).toBe(true);
    w.clear();
    const consent = await w.b.submit(code, { otp: HONG.code });
    expect(consent.form?.step).toBe("consent");
    expect(w.directory).toEqual([]);
  });

  it("a link ended after the number's read (a disconnect): the code step's read finds it gone and asks consent", async () => {
    const { plid } = await mintFor(HONG.phone); // HONG linked with the demo app
    const w = watchedBoth();
    const p1 = await w.b.authorize();
    const code = await w.b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    expect((await recordOf(code)).tx.consentDue).toBeUndefined();
    const res = await call("/v1/user/disconnect", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
      body: form({ plid }),
    });
    expect(res.status).toBe(200);
    w.clear();
    const consent = await w.b.submit(code, { otp: HONG.code });
    expect(consent.form?.step).toBe("consent");
    expect(w.directory).toEqual(["findLink"]);
  });
});
