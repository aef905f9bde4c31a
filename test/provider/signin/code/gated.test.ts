// The gated code and consent steps (docs/signin.md "Gated steps"), through the HTTP interface: a
// code entry and an agreement each take one call on the sign-in's store, with no read before; what
// a gated call cannot settle goes the full way with the same answers as before (another browser,
// a code made before `txBound`), and counts nothing it would not have counted.
import { env } from "../../../support/env";
import { describe, expect, it, vi } from "vitest";
import { admin } from "../../../support/admin";
import { basic, call, DEMO, form, FORM, HONG, KIM, mintFor } from "../../../support/helpers";
import { aroundCalls, shardRows } from "../../../support/shards";
import { Browser, type Page } from "../../../support/signin";
import { storeFor } from "../../../../workers/provider/store/one-time/one-time-store";
import { providerConfig } from "../../../../workers/provider/config";
import { challengeHash, txKey } from "../../../../workers/provider/signin/transaction";
import { phoneKey } from "../../../../workers/provider/signin/limits";
import { sha256 } from "../../../../workers/core/crypto";
import { ciOf, importRows, lastCode } from "../../../support/directory";
import { auditEvents } from "../../../support/audit";
import { subscriberByPhone } from "../../../../workers/provider/store/directory/directory";
import { homeOfId, numberShard } from "../../../../workers/provider/store/directory/keys";

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

describe("a consent whose code cannot be made", () => {
  // Invariant: a consent that stands (its link written) is in the audit trail, whether or not the
  // code it rode with was made.
  it("still reaches the audit trail, once, and no sign-in success is recorded", async () => {
    const clientId = await newClient();
    const ONE_TIME = aroundCalls(env.ONE_TIME, (method) => {
      if (method === "putCode") throw new Error("the code's object did not answer");
    });
    const b = new Browser({ bindings: { ONE_TIME } });
    const p1 = await b.authorize({ client_id: clientId, redirect_uri: CB });
    const code = await b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    const consent = await b.submit(code, { otp: HONG.code });
    expect(consent.form?.step).toBe("consent");
    const failed = await b.submit(consent, { agree: "Y" });
    expect(failed.status).toBe(500);
    // the event goes after the answer (waitUntil): wait for it to land
    await vi.waitFor(async () => expect(await auditEvents({ type: "consent", clientId })).toHaveLength(1), {
      timeout: 5000,
      interval: 100,
    });
    expect(await auditEvents({ type: "signin.success", clientId })).toEqual([]);
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

describe("the first page stores nothing: its tx is the signed request, the sign-in opens at identify", () => {
  const FIELDS = { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone };

  /** A browser at `ip` whose one-time store calls are listed, with the per-IP limit at `limit`. */
  function watched(ip: string, limit = "100", vars: Record<string, string> = {}) {
    const calls: string[] = [];
    const ONE_TIME = aroundCalls(env.ONE_TIME, (method) => void calls.push(method));
    return { calls, b: new Browser({ ip, vars: { SIGNIN_IP_LIMIT: limit, ...vars }, bindings: { ONE_TIME } }) };
  }

  /** The page with its `tx` replaced. */
  const withTx = (p: Page, tx: string): Page => ({ ...p, form: { ...p.form!, hidden: { ...p.form!.hidden, tx } } });

  it("drawing the page makes no store call; identify is the network's count and the open, and the limit holds", async () => {
    const { b, calls } = watched("203.0.113.141", "1");
    const page = await b.authorize();
    expect(page.form?.step).toBe("identify");
    expect(calls).toEqual([]);
    expect((await b.submit(page, FIELDS)).form?.step).toBe("verify");
    expect(calls).toEqual(["hit", "signinOpen"]);
    const refused = await b.submit(page, FIELDS); // the same page again: over the limit of 1
    expect(refused.status).toBe(429);
  });

  it("a request too long to carry in the page (a state of 5,000 characters) is stored, read at identify with the network's count", async () => {
    const { b, calls } = watched("203.0.113.149", "1");
    const state = "s".repeat(5000);
    const page = await b.authorize({ state });
    expect(page.form!.hidden.tx).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(calls).toEqual(["signinCreate"]);
    calls.length = 0;
    const code = await b.submit(page, FIELDS);
    expect(code.form?.step).toBe("verify");
    expect(calls).toEqual(["signinGetHit", "signinOpen", "signinSupersede"]);
    expect((await b.submit(page, FIELDS)).status).toBe(429);
    // it ends as any sign-in: the state comes back whole
    const done = await b.submit(code, { otp: HONG.code });
    const last = done.form?.step === "consent" ? await b.submit(done, { agree: "Y" }) : done;
    expect(new URL(last.res.headers.get("Location")!).searchParams.get("state")).toBe(state);
  });

  it("a phone that changed networks since the page is counted against the network it came from", async () => {
    const { b } = watched("203.0.113.142", "1");
    const page = await b.authorize();
    const moved = watched("198.51.100.143", "1");
    for (const [k, v] of b.cookies) moved.b.cookies.set(k, v);
    expect((await moved.b.submit(page, FIELDS)).form?.step).toBe("verify");
    expect(moved.calls).toEqual(["hit", "signinOpen"]);
    expect((await moved.b.submit(page, FIELDS)).status).toBe(429);
    // the page's own network has not been counted: its first submission goes on
    const again = await b.authorize();
    expect((await b.submit(again, FIELDS)).form?.step).toBe("verify");
  });

  it("an altered page, one signed with another key, an oversized tx and another browser are refused (403) and reach no store", async () => {
    const { b, calls } = watched("203.0.113.144");
    const page = await b.authorize();
    const tx = page.form!.hidden.tx!;
    expect(tx.startsWith("pg1.")).toBe(true);
    const dot = tx.lastIndexOf(".");
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
    const other = watched("203.0.113.144", "100", { SEAL_KEY: "YW5vdGhlci1kZXBsb3ltZW50cy1zZWFsLWtleS0zMmI=" });
    for (const [k, v] of b.cookies) other.b.cookies.set(k, v);
    const foreign = await other.b.authorize();
    const hostile = [
      flip(tx, 10), // the record
      flip(tx, dot + 5), // the signature
      tx.slice(0, dot), // no signature
      foreign.form!.hidden.tx!, // another deployment's key
      `pg1.${"A".repeat(9000)}.${"A".repeat(43)}`,
      "pg1..",
    ];
    calls.length = 0;
    for (const bad of hostile) {
      const res = await b.submit(withTx(page, bad), FIELDS);
      expect(res.status, bad.slice(0, 40)).toBe(403);
      expect(res.form?.step).toBeUndefined();
    }
    // another browser (no binding cookie) holding the genuine page
    const stranger = new Browser({ ip: "203.0.113.144" });
    expect((await stranger.submit(page, FIELDS)).status).toBe(403);
    expect(calls).toEqual([]);
    // the genuine page still works
    expect((await b.submit(page, FIELDS)).form?.step).toBe("verify");
  });

  it("a page past its lifetime answers the expired page, with the way back to the app", async () => {
    const { b, calls } = watched("203.0.113.145");
    const page = await b.authorize({ state: "late" });
    vi.useFakeTimers({ now: Date.now() + 601_000, toFake: ["Date"] });
    try {
      const res = await b.submit(page, FIELDS);
      expect(res.status).toBe(403);
      expect(res.html).toContain("restart");
      expect(calls).toEqual([]);
      vi.useRealTimers();
      const back = await b.submit(page, { restart: "Y" });
      expect(back.status).toBe(302);
      const loc = new URL(back.res.headers.get("Location")!);
      expect(loc.searchParams.get("error")).toBe("login_required");
      expect(loc.searchParams.get("state")).toBe("late");
    } finally {
      vi.useRealTimers();
    }
  });

  it("the language switch signs the page again (no store call), and the English page goes on", async () => {
    const { b, calls } = watched("203.0.113.146");
    const page = await b.authorize();
    const en = await b.submit(page, { lang: "en" });
    expect(en.form?.step).toBe("identify");
    expect(en.html).toContain('<html lang="en">');
    expect(en.form!.hidden.tx).not.toBe(page.form!.hidden.tx);
    expect(calls).toEqual([]);
    const code = await b.submit(en, FIELDS);
    expect(code.form?.step).toBe("verify");
    expect(code.html).toContain('<html lang="en">');
  });

  it("a cancel on the first page answers the app and stores nothing: the page posted later opens a sign-in, as its URL opened again would", async () => {
    const { b, calls } = watched("203.0.113.148");
    const page = await b.authorize({ state: "gone" });
    const cancelled = await b.submit(page, { cancel: "Y" });
    expect(new URL(cancelled.res.headers.get("Location")!).searchParams.get("error")).toBe("access_denied");
    expect(calls).toEqual(["appendAudit"]); // the cancellation's audit event, and nothing of the sign-in
    expect((await b.submit(page, FIELDS)).form?.step).toBe("verify");
  });

  it("the same number posted again from the page finds its sign-in; another number opens its own", async () => {
    const { b } = watched("203.0.113.147");
    const page = await b.authorize({ client_id: await newClient(), redirect_uri: CB });
    const first = await b.submit(page, FIELDS);
    const again = await b.submit(page, FIELDS);
    expect(again.form?.step).toBe("verify");
    expect(again.form!.hidden.tx).toBe(first.form!.hidden.tx);
    const kim = { telcoCd: KIM.telco, name: KIM.name, phoneNo: KIM.phone };
    const other = await b.submit(page, kim);
    expect(other.form?.step).toBe("verify");
    expect(other.form!.hidden.tx).not.toBe(first.form!.hidden.tx);
    // each code page proves its own number: HONG's code completes HONG's sign-in only
    expect((await b.submit(other, { otp: HONG.code })).form?.step).toBe("verify");
    expect((await b.submit(first, { otp: HONG.code })).form?.step).toBe("consent");
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
    expect(w.directory).toEqual(["findLink", "subscriber", "touchLink"]);
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

  it("a person whose number lives in another shard than their home (a changed number): the number's read brings no link, and the code step reads it", async () => {
    const ci = ciOf(43);
    const person = { telcoCd: "S", name: "원거리", gender: "F", birth: "1990-01-01", foreign: "L", ci };
    const before = "01043430001";
    await importRows([{ ...person, phoneNo: before }]);
    const home = homeOfId((await subscriberByPhone(env, before))!.id);
    const shards = Number(env.DIRECTORY_SHARDS);
    let after = "";
    for (let i = 2; !after; i++) {
      const c = `0104343${String(i).padStart(4, "0")}`;
      if (numberShard(c, shards) !== home) after = c;
    }
    const clientId = await newClient();
    const b0 = new Browser();
    const p0 = await b0.authorize({ client_id: clientId, redirect_uri: CB });
    const c0 = await b0.submit(p0, { telcoCd: "S", name: person.name, phoneNo: before });
    const a0 = await b0.submit(c0, { otp: await lastCode(before) });
    expect((await b0.submit(a0, { agree: "Y" })).status).toBe(302);
    // the person changed number: the new number's shard is not their home
    expect(await importRows([{ ...person, phoneNo: after }])).toMatchObject({ updated: 1 });
    const w = watchedBoth();
    const p1 = await w.b.authorize({ client_id: clientId, redirect_uri: CB });
    w.clear();
    const code = await w.b.submit(p1, { telcoCd: "S", name: person.name, phoneNo: after });
    expect(code.form?.step).toBe("verify");
    expect(w.directory).toEqual(["holder", "subscriber"]);
    expect((await recordOf(code)).tx.consentDue).toBeUndefined();
    w.clear();
    const done = await w.b.submit(code, { otp: await lastCode(after) });
    expect(done.status).toBe(302);
    expect(w.directory[0]).toBe("findLink");
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
