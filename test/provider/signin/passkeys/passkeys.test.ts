// Passkeys through HTTP (docs/passkeys.md), with a software authenticator: enrolment on /account
// after an SMS proof (pending, the notice SMS), the activation delay, a passkey sign-in to an app
// with no code SMS as the same person (the app's plid unchanged), replayed, other-RP and unverified
// assertions refused, a reassigned number's passkey signing nobody in, and the rules of /account.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { dirAt } from "../../../../workers/provider/store/directory/directory-shard";
import { homeOfId } from "../../../../workers/provider/store/directory/keys";
import { env } from "../../../support/env";
import { alertText, Browser, type Page } from "../../../support/signin";
import { SoftAuthenticator, type SoftCredential } from "../../../support/authenticator";
import { ciOf, importRows, lastCode } from "../../../support/directory";
import { HONG } from "../../../support/helpers";
import {
  assertionFor,
  enrolFormOf,
  makePasskey,
  newPerson,
  passkeyFormOf,
  passkeySignIn,
  postForm,
  smsOnAccount,
  type Person,
} from "../../../support/passkeys";
import { subscriberByPhone } from "../../../../workers/provider/store/directory/directory";
import { findLink } from "../../../../workers/provider/store/directory/links";
import { lastAuditEvent } from "../../../support/audit";
import { admin } from "../../../support/admin";
import { passkeysOf } from "../../../../workers/provider/store/directory/passkeys";

const NOW = { PASSKEY_ACTIVATION_SECONDS: "0" };

async function outbox(phone: string): Promise<string[]> {
  const r = await env.DB.prepare("SELECT body FROM sms_outbox WHERE phone = ? ORDER BY id")
    .bind(phone)
    .all<{ body: string }>();
  return r.results.map((x) => x.body);
}

interface Holder {
  who: Person;
  auth: SoftAuthenticator;
  credential: SoftCredential;
}

/** A person with a usable passkey (made on /account with the activation delay at 0). */
async function withPasskey(): Promise<Holder> {
  const who = await newPerson();
  const b = new Browser({ vars: NOW });
  const auth = new SoftAuthenticator();
  const { page, credential } = await makePasskey(b, await smsOnAccount(b, who), auth);
  expect(page.status, alertText(page.html)).toBe(200);
  return { who, auth, credential };
}

/** An SMS sign-in to demo-client (consent agreed), from a browser that may offer a passkey (`pk`). */
async function smsSignIn(b: Browser, who: Person, verify: Record<string, string> = {}): Promise<Page> {
  const p1 = await b.authorize();
  const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  expect(p2.form?.step, alertText(p2.html)).toBe("verify");
  let p3 = await b.submit(p2, { otp: await lastCode(who.phone), ...verify });
  if (p3.form?.step === "consent") p3 = await b.submit(p3, { agree: "Y", ...verify });
  return p3;
}

describe("passkeys: enrolment on /account after an SMS proof", () => {
  it("is pending for PASSKEY_ACTIVATION_SECONDS: listed with its time and a cancel, a notice SMS with no code, no sign-in before", async () => {
    const who = await newPerson();
    const b = new Browser();
    const dash = await smsOnAccount(b, who);
    expect(dash.html).toContain("패스키 만들기");
    const before = (await outbox(who.phone)).length;
    const auth = new SoftAuthenticator();
    const { page, credential } = await makePasskey(b, dash, auth);
    expect(page.status).toBe(200);
    expect(page.html).toContain("부터 쓸 수 있습니다");
    expect(page.html).toContain("부터 사용 가능");
    const sms = await outbox(who.phone);
    expect(sms.length).toBe(before + 1);
    expect(sms.at(-1)).toContain("패스키");
    expect(sms.at(-1)).not.toMatch(/\d{6}/);
    const app = new Browser();
    const r = await passkeySignIn(app, await app.authorize(), auth, credential);
    expect(r.status).toBe(403);
    expect(alertText(r.html)).toContain("부터 쓸 수 있습니다");
    expect(r.res.headers.get("Location")).toBeNull();
  });

  it("at its time the shard's alarm tells the number the passkey is usable, once, and it signs in", async () => {
    const who = await newPerson();
    const b = new Browser({ vars: { PASSKEY_ACTIVATION_SECONDS: "1" } });
    const auth = new SoftAuthenticator();
    const { credential } = await makePasskey(b, await smsOnAccount(b, who), auth);
    const shard = dirAt(env, homeOfId((await subscriberByPhone(env, who.phone))!.id));
    const before = (await outbox(who.phone)).length;
    await new Promise((r) => setTimeout(r, 1100));
    // the alarm may have fired by itself by now; run it in case it has not
    await runDurableObjectAlarm(shard);
    await expect.poll(async () => (await outbox(who.phone)).length).toBe(before + 1);
    expect((await outbox(who.phone)).at(-1)).toContain("새 패스키 이제 사용 가능");
    await runDurableObjectAlarm(shard);
    expect((await outbox(who.phone)).length).toBe(before + 1);
    const app = new Browser();
    expect((await passkeySignIn(app, await app.authorize(), auth, credential)).form?.step).toBe("consent");
  });

  it("an import while a passkey's notice is due and its shard's alarm has not run succeeds; the alarm then tells the number once", async () => {
    const who = await newPerson();
    const b = new Browser({ vars: { PASSKEY_ACTIVATION_SECONDS: "1" } });
    await makePasskey(b, await smsOnAccount(b, who), new SoftAuthenticator());
    const shard = dirAt(env, homeOfId((await subscriberByPhone(env, who.phone))!.id));
    // the shard's alarm held back an hour: the notice is due, and nothing has sent it yet
    await runInDurableObject(shard, (_o, state) => state.storage.setAlarm(Date.now() + 3_600_000));
    const before = (await outbox(who.phone)).length;
    await new Promise((r) => setTimeout(r, 1100));
    const report = await importRows([
      {
        telcoCd: "K",
        phoneNo: "01066999001",
        name: "가져옴",
        gender: "F",
        birth: "1990-01-01",
        foreign: "L",
        ci: ciOf(252),
      },
    ]);
    expect(report).toMatchObject({ inserted: 1 });
    expect((await outbox(who.phone)).length).toBe(before);
    await runDurableObjectAlarm(shard);
    expect((await outbox(who.phone)).length).toBe(before + 1);
    expect((await outbox(who.phone)).at(-1)).toContain("새 패스키 이제 사용 가능");
    await runDurableObjectAlarm(shard);
    expect((await outbox(who.phone)).length).toBe(before + 1);
  });

  it("a pending passkey cancelled on /account never becomes usable, and its number is not told it is", async () => {
    const who = await newPerson();
    const b = new Browser({ vars: { PASSKEY_ACTIVATION_SECONDS: "1" } });
    const auth = new SoftAuthenticator();
    const { page, credential } = await makePasskey(b, await smsOnAccount(b, who), auth);
    const cancel = postFormByValue(page, credential.id);
    const after = await postForm(b, cancel, { action: "passkey_remove" });
    expect(after.html).toContain("패스키를 취소했습니다");
    const before = (await outbox(who.phone)).length;
    await new Promise((r) => setTimeout(r, 1100));
    await runDurableObjectAlarm(dirAt(env, homeOfId((await subscriberByPhone(env, who.phone))!.id)));
    expect((await outbox(who.phone)).length).toBe(before);
    const app = new Browser();
    const r = await passkeySignIn(app, await app.authorize(), auth, credential);
    expect(r.status).toBe(403);
    expect(alertText(r.html)).toContain("등록되어 있지 않거나");
  });
});

/** The /account form that removes the passkey `id`. */
function postFormByValue(p: Page, id: string) {
  const forms = [...p.html.matchAll(/<form\b[\s\S]*?<\/form>/g)].map((m) => m[0]);
  const html = forms.find((f) => f.includes(`value="${id}"`));
  if (!html) throw new Error("no form for the passkey");
  const hidden: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) hidden[m[1]!] = m[2]!;
  return { action: "/account", step: undefined, hidden, names: new Set(Object.keys(hidden)) };
}

describe("passkeys: signing in", () => {
  it("signs in to an app with no code SMS, as the same person: the app's plid is the one the SMS sign-in made", async () => {
    const h = await withPasskey();
    const sms = await smsSignIn(new Browser({ vars: { SIGNIN_RESEND_COOLDOWN_SECONDS: "0" } }), h.who);
    expect(sms.status).toBe(302);
    const person = (await subscriberByPhone(env, h.who.phone))!;
    const plid = (await findLink(env, "demo-client", person.id))!.plid;
    const before = (await outbox(h.who.phone)).length;
    const b = new Browser();
    const r = await passkeySignIn(b, await b.authorize(), h.auth, h.credential);
    expect(r.status, alertText(r.html)).toBe(302);
    const loc = new URL(r.res.headers.get("Location")!);
    expect(loc.searchParams.get("code")).toBeTruthy();
    expect(loc.searchParams.get("state")).toBe("st-1");
    expect((await outbox(h.who.phone)).length).toBe(before);
    expect((await findLink(env, "demo-client", person.id))!.plid).toBe(plid);
    // audited as a passkey sign-in; the passkey shows its last use on /account
    const success = await lastAuditEvent("signin.success");
    expect(JSON.parse(success!.detail!)).toMatchObject({ mode: "interactive", method: "passkey" });
    expect(success!.detail).not.toContain(h.who.phone);
  });

  it("a first sign-in to an app by passkey asks consent, then ends with a code", async () => {
    const h = await withPasskey();
    const b = new Browser();
    const r = await passkeySignIn(
      b,
      await b.authorize({ client_id: "limited-client", redirect_uri: "https://limited.example/cb" }),
      h.auth,
      h.credential,
    );
    if (r.status === 302) return; // the seed's limited client may have no consent to ask
    expect(r.form?.step, alertText(r.html)).toBe("consent");
    const done = await b.submit(r, { agree: "Y" });
    expect(done.status).toBe(302);
    expect(new URL(done.res.headers.get("Location")!).searchParams.get("code")).toBeTruthy();
  });

  it("the identify page's passkey form has no automatic-login box; after a passkey, the consent page offers it, and ticked it logs in at once next time", async () => {
    const h = await withPasskey();
    const b = new Browser();
    const start = await b.authorize();
    expect(passkeyFormOf(start).names.has("autoLogin")).toBe(false);
    const r = await passkeySignIn(b, start, h.auth, h.credential);
    expect(r.form?.step, alertText(r.html)).toBe("consent");
    expect(r.form!.names.has("autoLogin")).toBe(true);
    const done = await b.submit(r, { agree: "Y", autoLogin: "Y" });
    expect(done.status).toBe(302);
    expect((await b.authorize()).status).toBe(302);
  });

  it("a replayed assertion is refused, and of concurrent submissions of one exactly one signs in", async () => {
    const h = await withPasskey();
    const b = new Browser();
    const p = await b.authorize();
    const assertion = await assertionFor(h.auth, h.credential, p);
    const f = passkeyFormOf(p);
    const all = await Promise.all(Array.from({ length: 6 }, () => postForm(b, f, { passkey: assertion })));
    // the one that wins goes on (to the consent page: the person's first sign-in to the app)
    const won = all.filter((x) => x.status !== 403);
    expect(won, all.map((x) => `${x.status} ${alertText(x.html)}`).join("; ")).toHaveLength(1);
    expect(won[0]!.form?.step).toBe("consent");
    for (const x of all.filter((x) => x.status === 403)) expect(alertText(x.html)).toContain("이미 사용된");
    const again = await postForm(b, f, { passkey: assertion });
    expect(again.status).toBe(403);
    expect(alertText(again.html)).toContain("이미 사용된");
  });

  it("an assertion for another RP ID or origin, or without user verification, is refused", async () => {
    const h = await withPasskey();
    for (const o of [{ rpId: "evil.example" }, { origin: "https://evil.example" }, { noUserVerification: true }]) {
      const b = new Browser();
      const p = await b.authorize();
      const r = await postForm(b, passkeyFormOf(p), { passkey: await assertionFor(h.auth, h.credential, p, o) });
      expect(r.status, JSON.stringify(o)).toBe(403);
      expect(r.res.headers.get("Location")).toBeNull();
    }
  });

  it("malformed, oversized and unknown assertions get the identify page with an error, never a 500", async () => {
    const h = await withPasskey();
    const b = new Browser();
    const p = await b.authorize();
    const f = passkeyFormOf(p);
    for (const bad of [
      "{",
      "[]",
      "null",
      JSON.stringify({ id: "x", type: "public-key", response: {} }),
      "x".repeat(9000),
    ]) {
      const r = await postForm(b, f, { passkey: bad });
      expect([400, 403], `${bad.slice(0, 20)}: ${r.status} ${r.html.slice(0, 300)}`).toContain(r.status);
      expect(r.form?.step).toBe("identify");
    }
    const other = new SoftAuthenticator();
    const stranger = await other.create({
      rpId: "localhost",
      origin: "http://localhost:8787",
      challenge: "AAAA",
      userHandle: h.credential.userHandle,
    });
    const r = await postForm(b, f, { passkey: await assertionFor(other, stranger.credential, p) });
    expect(r.status).toBe(403);
  });

  it("a reassigned number's passkey signs nobody in: the new holder is not the passkey's person", async () => {
    const h = await withPasskey();
    await importRows([
      {
        telcoCd: h.who.telco,
        phoneNo: h.who.phone,
        name: "새주인",
        gender: "M",
        birth: "1980-02-02",
        foreign: "L",
        ci: ciOf(251),
      },
    ]);
    const b = new Browser();
    const r = await passkeySignIn(b, await b.authorize(), h.auth, h.credential);
    expect(r.status).toBe(403);
    expect(r.res.headers.get("Location")).toBeNull();
  });

  it("a person removed from the directory takes their passkeys with them", async () => {
    const h = await withPasskey();
    const person = (await subscriberByPhone(env, h.who.phone))!;
    expect(await passkeysOf(env, person.id)).toHaveLength(1);
    expect((await admin("DELETE", `/admin/directory/${h.who.phone}`)).status).toBe(200);
    expect(await passkeysOf(env, person.id)).toEqual([]);
    const b = new Browser();
    expect((await passkeySignIn(b, await b.authorize(), h.auth, h.credential)).status).toBe(403);
  });

  it("an offer's or an enrolment's answer that is forged, malformed or from another browser changes nothing and mints nothing", async () => {
    const who = await newPerson();
    const b = new Browser();
    const offer = await smsSignIn(b, who, { pk: "Y" });
    const e = enrolFormOf(offer)!;
    const forged = e.form.hidden.enrol!.replace(/.$/, (c) => (c === "A" ? "B" : "A"));
    for (const fields of [
      { enrol: forged, later: "Y" },
      { enrol: "pk1.x.y", later: "Y" },
      { enrol: "", later: "Y" },
      { enrol: "x".repeat(20_000), later: "Y" },
    ]) {
      const r = await postForm(b, e.form, fields);
      // an empty ticket is no answer at all: an authorization request missing its parameters (400)
      expect(r.status, fields.enrol.slice(0, 10)).toBe(fields.enrol === "" ? 400 : 403);
      expect(r.res.headers.get("Location")).toBeNull();
    }
    // another browser (no binding cookie) cannot answer it
    const other = new Browser();
    const stolen = await postForm(other, e.form, { later: "Y" });
    expect(stolen.status).toBe(403);
    // a malformed registration still ends the sign-in, saying nothing was made
    const bad = await postForm(b, e.form, { credential: '{"id":"x","type":"public-key","response":{}}' });
    expect(bad.status).toBe(200);
    expect(alertText(bad.html)).toContain("패스키를 만들지 못했습니다");
    expect(bad.html).toMatch(/href="https:\/\/demo\.example\/callback\?code=/);
    expect(await passkeysOf(env, (await subscriberByPhone(env, who.phone))!.id)).toEqual([]);
    // and on /account: a ticket of another person, or none, is refused with the dashboard
    const a = new Browser({ vars: { SIGNIN_RESEND_COOLDOWN_SECONDS: "0" } });
    const dash = await smsOnAccount(a, who);
    const mine = enrolFormOf(dash)!;
    const r = await postForm(a, mine.form, { enrol: e.form.hidden.enrol!, credential: "{}" });
    expect(r.status).toBe(400);
    expect(alertText(r.html)).toBeTruthy();
    const none = await postForm(a, mine.form, { enrol: "garbage", credential: "x" });
    expect(none.status).toBe(400);
  });

  it("a test number is never offered a passkey, on /account or at an app's end", async () => {
    const b = new Browser();
    const p1 = await b.page(await b.fetch("/account"));
    const p2 = await b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    const p3 = await b.submit(p2, { otp: HONG.code });
    const dash = await b.page(await b.fetch(p3.res.headers.get("Location")!));
    expect(dash.html).toContain("패스키");
    expect(enrolFormOf(dash)).toBeUndefined();
    const app = new Browser();
    const a1 = await app.authorize();
    const a2 = await app.submit(a1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    expect(a2.html).not.toContain('name="pk"');
    let a3 = await app.submit(a2, { otp: HONG.code, pk: "Y" });
    if (a3.form?.step === "consent") a3 = await app.submit(a3, { agree: "Y", pk: "Y" });
    expect(a3.status).toBe(302);
  });
});

describe("passkeys: the offer at an app's end", () => {
  it("an SMS sign-in in a browser that can make one is offered a passkey ('패스키'); 'not now' mints the code once, and the offer is not shown again", async () => {
    const who = await newPerson();
    const b = new Browser({ vars: { SIGNIN_RESEND_COOLDOWN_SECONDS: "0" } });
    const offer = await smsSignIn(b, who, { pk: "Y" });
    expect(offer.status, alertText(offer.html)).toBe(200);
    expect(offer.html).toMatch(/<button[^>]*id="enrol-create"[^>]*>[^<]*패스키/);
    const e = enrolFormOf(offer)!;
    // the ticket is readable in the page: it carries the person's id and the sign-in's end, not
    // the number, its hash or the sign-in's CSRF hash (its binding to the browser is a hash of the
    // HttpOnly cookie)
    const t = e.form.hidden.enrol!;
    const b64 = t.slice(4, t.lastIndexOf(".")).replace(/-/g, "+").replace(/_/g, "/");
    const seen = new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
    expect(seen).toContain('"s":');
    for (const secret of [who.phone, who.phone.slice(3), "phoneKey", "csrfHash", "masked"])
      expect(seen).not.toContain(secret);
    const later = await postForm(b, e.form, { later: "Y" });
    expect(later.status).toBe(302);
    expect(new URL(later.res.headers.get("Location")!).searchParams.get("code")).toBeTruthy();
    const twice = await postForm(b, e.form, { later: "Y" });
    expect(twice.status).toBe(403);
    expect((await smsSignIn(b, who, { pk: "Y" })).status).toBe(302);
  });

  it("making the passkey from the offer stores it pending and goes on to the app with a code", async () => {
    const who = await newPerson();
    const b = new Browser();
    const offer = await smsSignIn(b, who, { pk: "Y" });
    const auth = new SoftAuthenticator();
    const { page, credential } = await makePasskey(b, offer, auth);
    expect(page.status, alertText(page.html)).toBe(302);
    expect(new URL(page.res.headers.get("Location")!).searchParams.get("code")).toBeTruthy();
    const app = new Browser();
    const r = await passkeySignIn(app, await app.authorize(), auth, credential);
    expect(alertText(r.html)).toContain("부터 쓸 수 있습니다");
  });

  it("with no probe answer (no WebAuthn, or a WebView) the sign-in ends as before", async () => {
    const who = await newPerson();
    expect((await smsSignIn(new Browser(), who)).status).toBe(302);
    const hybrid = new Browser();
    const p1 = await hybrid.authorize({ isHybrid: "Y" });
    expect(p1.html).not.toContain("passkey-form");
    expect(p1.html).not.toContain("<script");
  });
});

describe("passkeys: /account's rules", () => {
  it("a passkey proof adds another at once; an SMS proof cannot add one while an active passkey exists, nor remove it while another is active", async () => {
    const h = await withPasskey();
    // signed in to /account with the passkey: a second one is usable at once
    const b = new Browser();
    const p1 = await b.page(await b.fetch("/account"));
    const r = await passkeySignIn(b, p1, h.auth, h.credential);
    expect(r.status, alertText(r.html)).toBe(303);
    const dash = await b.page(await b.fetch(r.res.headers.get("Location")!));
    expect(dash.html).toContain("바로 쓸 수 있습니다");
    const second = await makePasskey(b, dash, h.auth);
    expect(second.page.html).toContain("패스키를 만들었습니다.");
    expect(second.page.html).not.toContain("부터 사용 가능");
    // by SMS: no enrolment form, and an active passkey cannot be removed while the other is active
    const s = new Browser({ vars: { SIGNIN_RESEND_COOLDOWN_SECONDS: "0" } });
    const smsDash = await smsOnAccount(s, h.who);
    expect(enrolFormOf(smsDash)).toBeUndefined();
    const refused = await postForm(s, postFormByValue(smsDash, h.credential.id), { action: "passkey_remove" });
    expect(refused.status).toBe(403);
    // with the passkey proof it goes
    const removed = await postForm(b, postFormByValue(second.page, h.credential.id), { action: "passkey_remove" });
    expect(removed.html).toContain("패스키를 삭제했습니다");
    const app = new Browser();
    expect((await passkeySignIn(app, await app.authorize(), h.auth, h.credential)).status).toBe(403);
    // the other goes on (to the consent page: this person's first sign-in to the app)
    expect((await passkeySignIn(app, await app.authorize(), h.auth, second.credential)).form?.step).toBe("consent");
  });
});

describe("passkeys: limits", () => {
  it("a passkey submission counts against its network's step-1 limit: past it, 429 with Retry-After and nothing checked", async () => {
    const h = await withPasskey();
    const b = new Browser({ ip: "192.0.2.77", vars: { SIGNIN_IP_LIMIT: "2" } });
    for (let i = 0; i < 2; i++) {
      const p = await b.authorize();
      expect((await postForm(b, passkeyFormOf(p), { passkey: "{" })).status).toBe(400);
    }
    const p = await b.authorize();
    const r = await postForm(b, passkeyFormOf(p), { passkey: await assertionFor(h.auth, h.credential, p) });
    expect(r.status).toBe(429);
    expect(r.res.headers.get("Retry-After")).toBeTruthy();
    // nothing was taken: from another network the passkey signs in
    const other = new Browser({ ip: "198.51.100.99" });
    const q = await other.authorize();
    expect((await passkeySignIn(other, q, h.auth, h.credential)).form?.step).toBe("consent");
  });
});
