// The risk window after a SIM change or a port (docs/security.md "SIM changes and ports"): the
// carrier's signals from an import's optional columns and from the carrier API's match answer;
// inside the window no automatic login (a grant made before stops, none is made, said once the
// number is proven), no passkey enrolment and pending ones cancelled, a right code signing nothing
// in for a person with an active passkey, and nothing of it shown before a proof to whoever typed
// the number; /account's destructive actions waiting on an SMS proof; a CAEP credential-change
// event sent once per change to each app that takes it and to no other; a carrier-kind change, a
// change older than the window and test numbers leave everything as before.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { env } from "../../../support/env";
import { admin, asClient, createClient } from "../../../support/admin";
import { DEMO, HONG, mintFor } from "../../../support/helpers";
import { ciOf, importRows, lastCode } from "../../../support/directory";
import { alertText, Browser, parseForms, type Page } from "../../../support/signin";
import { SoftAuthenticator } from "../../../support/authenticator";
import { enrolFormOf, makePasskey, passkeySignIn, postForm, smsOnAccount } from "../../../support/passkeys";
import { CARRIER_VARS, carrierControl } from "../../../support/fake-carrier";
import { verifyHs256 } from "../../../../workers/core/jws";
import { passkeysOf } from "../../../../workers/provider/store/directory/passkeys";
import { subscriberByPhone } from "../../../../workers/provider/store/directory/directory";
import { auditEvents } from "../../../support/audit";
import { tellCredentialChange } from "../../../../workers/provider/store/flows/end-plids";

/** The event type URI and fields the issue names (copied from it, not from the code). */
const CAEP_CREDENTIAL_CHANGE = "https://schemas.openid.net/secevent/caep/event-type/credential-change";
const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const RISK_TEXT = "자동 로그인을 쓸 수 없습니다";
/** Sign-ins of one number in a row, each getting its code. */
const AGAIN = { SIGNIN_RESEND_COOLDOWN_SECONDS: "0" };

let n = 0;
/** A person with an ordinary number (codes from the dev outbox), and their import row. */
function newPerson(extra: Record<string, string> = {}) {
  const i = n++;
  const phone = `0107700${String(1000 + i).padStart(4, "0")}`;
  const row = {
    telcoCd: "K",
    phoneNo: phone,
    name: `위험${i}`,
    gender: "F",
    birth: "1991-02-03",
    foreign: "L",
    ci: ciOf(600 + i),
    ...extra,
  };
  return { telco: "K", name: row.name, phone, ci: row.ci, row };
}
type Who = ReturnType<typeof newPerson>;

/** Every signed event a receiver other than the dev worker's own was sent, and the demo kit's (decoded). */
let sent: { url: string; token: string }[] = [];
beforeEach(() => {
  sent = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (req.headers.get("Content-Type") === "application/secevent+jwt") {
      sent.push({ url: req.url, token: new TextDecoder().decode(await req.arrayBuffer()) });
      return new Response(null, { status: 202 });
    }
    return real(input, init);
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function setTypes(clientId: string, types: string[]): Promise<void> {
  const res = await admin("PATCH", `/admin/clients/${clientId}`, { json: { event_types: types } });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** The identify page → the page after it, for `who`. */
async function identify(b: Browser, who: Who, start?: Page): Promise<Page> {
  return b.submit(start ?? (await b.authorize()), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
}

/** An SMS sign-in to demo-client to its redirect (consent agreed), with the code page's `verify` fields. */
async function smsSignIn(
  b: Browser,
  who: Who,
  verify: Record<string, string> = {},
): Promise<{ verify: Page; end: Page }> {
  const p2 = await identify(b, who);
  expect(p2.form?.step, alertText(p2.html)).toBe("verify");
  let p3 = await b.submit(p2, { otp: await lastCode(who.phone), ...verify });
  if (p3.form?.step === "consent") p3 = await b.submit(p3, { agree: "Y", ...verify });
  expect(p3.status, alertText(p3.html)).toBe(302);
  return { verify: p2, end: p3 };
}

/** The claims of a signed event (its signature checked under the client's secret). */
async function claimsOf(token: string, secret: string): Promise<Record<string, unknown>> {
  const v = await verifyHs256(token, secret);
  if ("refused" in v) throw new Error(`event not verified: ${v.refused}`);
  expect(v.header).toEqual({ alg: "HS256", typ: "secevent+jwt" });
  return v.claims;
}

/**
 * A page as someone who has not proven the number can compare it: what differs by sign-in and by
 * number anyway (the form's tokens, the nonce, the masked number's last digits and the particle
 * after them, the clock times,
 * the countdown's seconds) blanked.
 */
function asStrangerSees(p: Page): string {
  return p.html
    .replace(/value="[A-Za-z0-9_-]{16,}"/g, 'value="…"')
    .replace(/nonce="[^"]*"/g, 'nonce="…"')
    .replace(/010-\*+-\d{4}으?로/g, "010-****-…(으)로")
    .replace(/\d{1,2}:\d{2}/g, "…:…")
    .replace(/data-seconds="\d+"/g, 'data-seconds="…"');
}

const settle = () => new Promise((r) => setTimeout(r, 300));

describe("the risk window, from an import's columns", () => {
  it("opens on a person-kind SIM change: automatic login stops, and the box, shown as to anyone, makes none; the event goes once to each app that takes it", async () => {
    const who = newPerson();
    await importRows([who.row]);
    // an app that takes credential-change (demo-client, its receiver the dev worker's kit) and one that does not
    const other = await createClient({ events_uri: "https://other.example/events" });
    await mintFor(who.phone, { client: asClient(other) });
    await setTypes(DEMO.clientId, ["plid-deleted", "credential-change"]);
    try {
      // before: a sign-in ticking automatic login, then logged in at once
      const b = new Browser({ vars: AGAIN });
      const first = await smsSignIn(b, who, { autoLogin: "Y" });
      expect(first.verify.form!.names.has("autoLogin")).toBe(true);
      expect((await b.authorize()).status).toBe(302);
      const plid = await linkPlid(who);
      expect(sent).toEqual([]);

      const changedAt = Date.now() - HOUR;
      const report = await importRows([{ ...who.row, simChangedAt: iso(changedAt), simChangeKind: "person" }]);
      expect(report.signals_changed).toBe(1);
      await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 5000, interval: 25 });
      expect(sent[0]!.url).toBe("http://localhost:8787/auth/events");
      const claims = await claimsOf(sent[0]!.token, DEMO.secret);
      expect(claims.aud).toBe(DEMO.clientId);
      expect(claims.events).toEqual({
        [CAEP_CREDENTIAL_CHANGE]: {
          plid,
          credential_type: "phone-sms",
          change_type: "update",
          event_timestamp: Math.floor(changedAt / 1000),
        },
      });

      // the grant made before stops working: the pages ask for a proof
      const again = await b.authorize();
      expect(again.status).toBe(200);
      expect(again.form?.step).toBe("identify");
      // an SMS sign-in goes on; the code page, the box on it, is as for any number (it tells no
      // stranger of the window), and the box ticked makes no grant
      const second = await smsSignIn(b, who, { autoLogin: "Y" });
      expect(second.verify.form!.names.has("autoLogin")).toBe(true);
      expect(second.verify.html).not.toContain(RISK_TEXT);
      expect((await b.authorize()).status).toBe(200);

      // the same file again changes nothing and tells nobody again
      const same = await importRows([{ ...who.row, simChangedAt: iso(changedAt), simChangeKind: "person" }]);
      expect(same.signals_changed).toBe(0);
      // a file without the columns leaves the window as it was
      const plain = await importRows([who.row]);
      expect(plain.signals_changed).toBe(0);
      await settle();
      expect(sent).toHaveLength(1);
      const tb = new Browser({ vars: AGAIN });
      await smsSignIn(tb, who, { autoLogin: "Y" });
      expect((await tb.authorize()).status).toBe(200);
      // audited per app, without the number or the plid
      const opened = await auditEvents({ type: "risk.window_opened" });
      expect(opened.map((e) => [e.client_id, JSON.parse(e.detail!)]).sort()).toEqual(
        [
          [DEMO.clientId, { event: true }],
          [other.client_id, { event: false }],
        ].sort(),
      );
      expect(JSON.stringify(opened)).not.toContain(who.phone);
    } finally {
      await setTypes(DEMO.clientId, ["plid-deleted"]);
    }
  });

  it("a port opens it too; a later change opens a new one and tells the app again, once", async () => {
    const who = newPerson();
    await importRows([who.row]);
    await mintFor(who.phone);
    await setTypes(DEMO.clientId, ["credential-change"]);
    try {
      const ported = Date.now() - 2 * HOUR;
      expect((await importRows([{ ...who.row, portedAt: iso(ported) }])).signals_changed).toBe(1);
      await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 5000, interval: 25 });
      const changed = Date.now() - HOUR;
      // a change without a kind counts as the person's
      expect((await importRows([{ ...who.row, simChangedAt: iso(changed) }])).signals_changed).toBe(1);
      await vi.waitFor(() => expect(sent).toHaveLength(2), { timeout: 5000, interval: 25 });
      const stamps = await Promise.all(
        sent.map(async (s) => {
          const c = await claimsOf(s.token, DEMO.secret);
          return (c.events as Record<string, { event_timestamp: number }>)[CAEP_CREDENTIAL_CHANGE]!.event_timestamp;
        }),
      );
      expect(stamps).toEqual([Math.floor(ported / 1000), Math.floor(changed / 1000)]);
      const nb = new Browser({ vars: AGAIN });
      await smsSignIn(nb, who, { autoLogin: "Y" });
      expect((await nb.authorize()).status).toBe(200);
    } finally {
      await setTypes(DEMO.clientId, ["plid-deleted"]);
    }
  });

  it("the job that tells the apps, run again as after a kill before it was marked done (twice, at once): delivery is at least once, every copy of one change is the same event (one jti) for the app to drop, and the trail has one window_opened per change", async () => {
    const since = Date.now();
    const who = newPerson();
    await importRows([who.row]);
    await mintFor(who.phone);
    await setTypes(DEMO.clientId, ["credential-change"]);
    const jtis = async () => Promise.all(sent.map(async (x) => (await claimsOf(x.token, DEMO.secret)).jti as string));
    try {
      const ported = Date.now() - 2 * HOUR;
      expect((await importRows([{ ...who.row, portedAt: iso(ported) }])).signals_changed).toBe(1);
      await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 5000, interval: 25 });
      const person = await subscriberByPhone(env, who.phone);
      expect(person?.riskFrom).toBe(ported);
      // the job's step again (its `at` is the window's start), twice at once: each run records the
      // event at most once while it waits, and a copy sent again carries the same jti
      await Promise.all([tellCredentialChange(env, person!.id, ported), tellCredentialChange(env, person!.id, ported)]);
      await settle();
      expect(sent.length).toBeGreaterThanOrEqual(1);
      expect(sent.length).toBeLessThanOrEqual(3);
      expect(new Set(await jtis()).size).toBe(1);
      // a later change is another event, with a jti of its own
      const changed = Date.now() - HOUR;
      const before = sent.length;
      expect((await importRows([{ ...who.row, simChangedAt: iso(changed) }])).signals_changed).toBe(1);
      await vi.waitFor(() => expect(sent).toHaveLength(before + 1), { timeout: 5000, interval: 25 });
      await Promise.all([
        tellCredentialChange(env, person!.id, changed),
        tellCredentialChange(env, person!.id, changed),
      ]);
      await settle();
      expect(new Set(await jtis()).size).toBe(2);
      // two changes of one link, each told by three or two runs of its job: two audit events
      const opened = await auditEvents({ type: "risk.window_opened", clientId: DEMO.clientId, since });
      expect(opened.map((e) => JSON.parse(e.detail!))).toEqual([{ event: true }, { event: true }]);
    } finally {
      await setTypes(DEMO.clientId, ["plid-deleted"]);
    }
  });

  it("a carrier-kind change (a mass USIM replacement) and a change older than the window change nothing", async () => {
    await setTypes(DEMO.clientId, ["plid-deleted", "credential-change"]);
    try {
      const carrierKind = newPerson({ simChangedAt: iso(Date.now() - HOUR), simChangeKind: "carrier" });
      const old = newPerson({ portedAt: iso(Date.now() - 4 * 24 * HOUR) });
      for (const who of [carrierKind, old]) {
        await importRows([who.row]);
        await mintFor(who.phone);
      }
      for (const who of [carrierKind, old]) {
        const b = new Browser({ vars: AGAIN });
        const s = await smsSignIn(b, who, { autoLogin: "Y" });
        expect(s.verify.form!.names.has("autoLogin")).toBe(true);
        expect(s.verify.html).not.toContain(RISK_TEXT);
        expect((await b.authorize()).status).toBe(302);
      }
      await settle();
      expect(sent).toEqual([]);
    } finally {
      await setTypes(DEMO.clientId, ["plid-deleted"]);
    }
  });

  it("refuses malformed signals row by row with a reason naming the column, never the value", async () => {
    const who = newPerson();
    const res = await admin("POST", "/admin/directory/import", {
      json: [
        { ...who.row, simChangedAt: "yesterday" },
        { ...newPerson().row, simChangedAt: iso(Date.now() - HOUR), simChangeKind: "someone" },
        { ...newPerson().row, simChangeKind: "person" },
        { ...newPerson().row, portedAt: iso(Date.now() + 24 * HOUR) },
        { ...newPerson().row, simChangedAt: "2026-11-26" },
      ],
    });
    expect(res.status).toBe(200);
    const report = (await res.json()) as { rejected: { row: number; reason: string }[]; inserted: number };
    expect(report.inserted).toBe(0);
    expect(report.rejected).toEqual([
      { row: 1, reason: "simChangedAt must be an ISO 8601 time with its offset" },
      { row: 2, reason: "simChangeKind must be person or carrier" },
      { row: 3, reason: "simChangeKind needs simChangedAt" },
      { row: 4, reason: "portedAt must not be in the future" },
      { row: 5, reason: "simChangedAt must be an ISO 8601 time with its offset" },
    ]);
  });

  it("test numbers are exempt: their rows take no signals", async () => {
    const before = await subscriberByPhone(env, HONG.phone);
    const res = await admin("POST", "/admin/directory/import", {
      json: [
        {
          telcoCd: "S",
          phoneNo: HONG.phone,
          name: before!.name,
          gender: before!.gender,
          birth: before!.birth,
          foreign: before!.foreign,
          ci: before!.ci,
          simChangedAt: iso(Date.now() - HOUR),
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { signals_changed: number }).signals_changed).toBe(0);
    const after = await subscriberByPhone(env, HONG.phone);
    expect(after!.riskFrom).toBeNull();
  });
});

/** The person's plid with demo-client. */
async function linkPlid(who: Who): Promise<string> {
  const s = await subscriberByPhone(env, who.phone, DEMO.clientId);
  return s!.link!.plid;
}

describe("the risk window and passkeys", () => {
  const NOW = { PASSKEY_ACTIVATION_SECONDS: "0", SIGNIN_RESEND_COOLDOWN_SECONDS: "0" };

  it("a person with an active passkey must use it: a right code signs nothing in, with a page saying why and what to do; the passkey signs in, without automatic login; no new passkey", async () => {
    const who = newPerson();
    await importRows([who.row]);
    const b = new Browser({ vars: NOW });
    const auth = new SoftAuthenticator();
    const { credential } = await makePasskey(b, await smsOnAccount(b, who), auth);
    await importRows([{ ...who.row, simChangedAt: iso(Date.now() - HOUR) }]);

    const app = new Browser({ vars: NOW });
    const start = await app.authorize();
    const codePage = await identify(app, who, start);
    expect(codePage.form?.step).toBe("verify");
    const refused = await app.submit(codePage, { otp: await lastCode(who.phone) });
    expect(refused.status).toBe(403);
    expect(refused.form?.step).toBe("identify");
    expect(alertText(refused.html)).toContain("등록된 패스키로 로그인해 주세요");
    expect(alertText(refused.html)).toContain("통신사에 문의하세요");
    const [audit] = await auditEvents({ type: "risk.refused" });
    expect(JSON.parse(audit!.detail!)).toEqual({ reason: "passkey_required" });

    const signedIn = await passkeySignIn(app, await app.authorize(), auth, credential, { autoLogin: "Y" });
    expect(signedIn.form?.step, alertText(signedIn.html)).toBe("consent");
    expect(signedIn.form!.names.has("autoLogin")).toBe(false);
    const done = await app.submit(signedIn, { agree: "Y", autoLogin: "Y" });
    expect(done.status).toBe(302);
    // no grant was made: the next authorize shows the pages
    expect((await app.authorize()).status).toBe(200);

    // on /account with the passkey: no enrolment form
    const acct = new Browser({ vars: NOW });
    const r = await passkeySignIn(acct, await acct.page(await acct.fetch("/account")), auth, credential);
    expect(r.status, alertText(r.html)).toBe(303);
    const dash = await acct.page(await acct.fetch(r.res.headers.get("Location")!));
    expect(enrolFormOf(dash)).toBeUndefined();
  });

  it("as a stranger sees it: a number in the window with a passkey, one in the window without, and one not in it get the same code page, and the same answer to a wrong code; only the right code tells", async () => {
    const withKey = newPerson();
    const without = newPerson();
    const outside = newPerson();
    await importRows([withKey.row, without.row, outside.row]);
    const auth = new SoftAuthenticator();
    const owner = new Browser({ vars: NOW });
    const { credential } = await makePasskey(owner, await smsOnAccount(owner, withKey), auth);
    await importRows([
      { ...withKey.row, simChangedAt: iso(Date.now() - HOUR), simChangeKind: "person" },
      { ...without.row, simChangedAt: iso(Date.now() - HOUR), simChangeKind: "person" },
    ]);

    // a stranger: the name, carrier and number from a leaked list, a new browser each
    const strangers = [withKey, without, outside].map((who) => ({ who, b: new Browser({ vars: NOW }) }));
    const codePages = await Promise.all(strangers.map(({ who, b }) => identify(b, who)));
    for (const p of codePages) {
      expect(p.status, alertText(p.html)).toBe(200);
      expect(p.form?.step).toBe("verify");
      expect(p.form!.names.has("autoLogin")).toBe(true);
      expect(p.html).not.toContain("유심");
      expect(p.html).not.toContain(RISK_TEXT);
    }
    const [a, ...rest] = codePages.map(asStrangerSees);
    for (const other of rest) expect(other).toBe(a);
    // a wrong code: the same answer
    const wrong = await Promise.all(strangers.map(({ b }, i) => b.submit(codePages[i]!, { otp: "000000" })));
    expect(new Set(wrong.map((p) => p.status))).toEqual(new Set([200]));
    const [w, ...wRest] = wrong.map(asStrangerSees);
    for (const other of wRest) expect(other).toBe(w);

    // the line's holder, with the right code: the passkey is asked for now, and why
    const [holderWithKey, holderWithout] = strangers;
    const refused = await holderWithKey!.b.submit(wrong[0]!, { otp: await lastCode(withKey.phone) });
    expect(refused.status).toBe(403);
    expect(refused.form?.step).toBe("identify");
    expect(alertText(refused.html)).toContain("등록된 패스키로 로그인해 주세요");
    expect(alertText(refused.html)).toContain("통신사에 문의하세요");
    // the passkey signs in from that page
    const signedIn = await passkeySignIn(holderWithKey!.b, refused, auth, credential);
    expect(signedIn.form?.step, alertText(signedIn.html)).toBe("consent");
    // without a passkey: the code signs in, the box ticked makes no grant, and the consent page says why
    const goesOn = await holderWithout!.b.submit(wrong[1]!, { otp: await lastCode(without.phone), autoLogin: "Y" });
    expect(goesOn.form?.step, alertText(goesOn.html)).toBe("consent");
    expect(goesOn.html).toContain(RISK_TEXT);
    expect((await holderWithout!.b.submit(goesOn, { agree: "Y" })).status).toBe(302);
    expect((await holderWithout!.b.authorize()).status).toBe(200);
  });

  it("the window's start cancels passkeys not yet usable, and an enrolment ticket taken before it makes nothing", async () => {
    const who = newPerson();
    await importRows([who.row]);
    const b = new Browser({ vars: { PASSKEY_ACTIVATION_SECONDS: "86400" } });
    const auth = new SoftAuthenticator();
    const dash = await smsOnAccount(b, who);
    const made = await makePasskey(b, dash, auth);
    expect(made.page.status, alertText(made.page.html)).toBe(200);
    const id = (await subscriberByPhone(env, who.phone))!.id;
    expect(await passkeysOf(env, id)).toHaveLength(1);

    // a second person holds an enrolment page open when the change lands
    const late = newPerson();
    await importRows([late.row]);
    const lb = new Browser({ vars: NOW });
    const open = await smsOnAccount(lb, late);
    expect(enrolFormOf(open)).toBeDefined();

    await importRows([
      { ...who.row, simChangedAt: iso(Date.now() - HOUR) },
      { ...late.row, portedAt: iso(Date.now() - HOUR) },
    ]);
    expect(await passkeysOf(env, id)).toEqual([]);
    const lateMade = await makePasskey(lb, open, new SoftAuthenticator());
    expect(alertText(lateMade.page.html)).toContain("패스키를 만들 수 없습니다");
    expect(await passkeysOf(env, (await subscriberByPhone(env, late.phone))!.id)).toEqual([]);
  });

  it("/account: an SMS proof alone cannot end a login during the window; the page says until when", async () => {
    const who = newPerson();
    await importRows([who.row]);
    await mintFor(who.phone);
    await importRows([{ ...who.row, simChangedAt: iso(Date.now() - HOUR) }]);
    const b = new Browser({ vars: NOW });
    const dash = await smsOnAccount(b, who);
    const end = parseForms(dash.html).find((f) => f.names.has("action") && f.hidden.client_id === DEMO.clientId);
    expect(end).toBeDefined();
    const refused = await postForm(b, end!, { action: "terminate", confirm: "Y" });
    expect(refused.status).toBe(403);
    expect(alertText(refused.html)).toContain("문자 인증만으로 연결을 끊거나 패스키를 지울 수 없습니다");
    expect(await linkPlid(who)).toMatch(/./);
  });
});

describe("the risk window, from the carrier API's answer", () => {
  const HTTP = {
    ...CARRIER_VARS,
    SIGNIN_RESEND_COOLDOWN_SECONDS: "0",
  };
  beforeEach(async () => {
    await carrierControl("/_carrier/reset", {});
  });

  it("a match carrying simChangedAt opens the window and tells the app once; the same answer again writes nothing", async () => {
    const who = newPerson();
    const person = { telcoCd: who.telco, name: who.name, ci: who.ci, gender: "F", birth: "1991-02-03", foreign: "L" };
    await carrierControl("/_carrier/people", { [who.phone]: person });
    // a carrier of today's format: a sign-in as before, with the box
    const b = new Browser({ vars: HTTP });
    const first = await smsSignIn(b, who);
    expect(first.verify.form!.names.has("autoLogin")).toBe(true);
    await setTypes(DEMO.clientId, ["credential-change"]);
    try {
      const changedAt = Date.now() - HOUR;
      await carrierControl("/_carrier/people", {
        [who.phone]: { ...person, simChangedAt: iso(changedAt), simChangeKind: "person" },
      });
      const sb = new Browser({ vars: HTTP });
      const second = await smsSignIn(sb, who, { autoLogin: "Y" });
      expect(second.verify.form!.names.has("autoLogin")).toBe(true);
      expect(second.verify.html).not.toContain(RISK_TEXT);
      expect((await sb.authorize()).status).toBe(200);
      await vi.waitFor(() => expect(sent).toHaveLength(1), { timeout: 5000, interval: 25 });
      const claims = await claimsOf(sent[0]!.token, DEMO.secret);
      expect((claims.events as Record<string, unknown>)[CAEP_CREDENTIAL_CHANGE]).toEqual({
        plid: await linkPlid(who),
        credential_type: "phone-sms",
        change_type: "update",
        event_timestamp: Math.floor(changedAt / 1000),
      });
      await smsSignIn(new Browser({ vars: HTTP }), who);
      await settle();
      expect(sent).toHaveLength(1);
      // a carrier-kind change at a later time closes nothing already open, and opens nothing
      await carrierControl("/_carrier/people", {
        [who.phone]: { ...person, simChangedAt: iso(Date.now() - 60_000), simChangeKind: "carrier" },
      });
      await smsSignIn(new Browser({ vars: HTTP }), who);
      await settle();
      expect(sent).toHaveLength(1);
    } finally {
      await setTypes(DEMO.clientId, ["plid-deleted"]);
    }
  });

  it("signals out of shape are the carrier's fault: 503 'try again', nothing written", async () => {
    const who = newPerson();
    const person = { telcoCd: who.telco, name: who.name, ci: who.ci, gender: "F", birth: "1991-02-03", foreign: "L" };
    for (const bad of [{ simChangedAt: "last night" }, { simChangeKind: "person" }, { portedAt: 1764000000 }]) {
      await carrierControl("/_carrier/people", { [who.phone]: { ...person, ...bad } });
      const p = await identify(new Browser({ vars: HTTP }), who);
      expect(p.status).toBe(503);
    }
    expect(await subscriberByPhone(env, who.phone)).toBeNull();
  });
});
