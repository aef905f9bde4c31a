// The person's /account page (docs/account.md): proving the number with the sign-in's own steps
// and counters, the 10-minute session, the list of connected apps and its two actions, and the
// sign-in's automatic-login box, never shown ticked before the code is proven.
import { env } from "../../support/env";
import { shardRows } from "../../support/shards";
import { afterEach, describe, expect, it, vi } from "vitest";
import { bodyText, DEMO, HONG, KIM, LEE, SMITH, tokenFor, userMe } from "../../support/helpers";
import {
  alertText,
  Browser,
  parseForms,
  signInAll,
  withoutOwnScripts,
  type Page,
  type Who,
} from "../../support/signin";
import { subscriberByPhone } from "../../../workers/provider/store/directory/directory";
import { findLink } from "../../../workers/provider/store/directory/links";
import { lastAuditEvent } from "../../support/audit";

afterEach(() => {
  vi.restoreAllMocks();
});

/** Captures the service's outbound event deliveries (the seed's demo-client has an events_uri). */
function captureEvents(status = 202) {
  const sent: { url: string; headers: Headers; body: string }[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    sent.push({ url: req.url, headers: req.headers, body: await bodyText(req) });
    return new Response(null, { status });
  });
  return { sent, spy };
}

/** Proves `who`'s number on /account; returns the dashboard. */
async function proveOnAccount(b: Browser, who: Who, query = ""): Promise<Page> {
  const p1 = await b.page(await b.fetch(`/account${query}`));
  expect(p1.status).toBe(200);
  expect(p1.form).toMatchObject({ action: "/account", step: "identify" });
  const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  expect(p2.form?.step, alertText(p2.html)).toBe("verify");
  const p3 = await b.submit(p2, { otp: who.code });
  expect(p3.status).toBe(303);
  expect(p3.res.headers.get("Location")).toMatch(/^\/account\?lang=(ko|en)$/);
  return b.page(await b.fetch(p3.res.headers.get("Location")!));
}

/** The dashboard form of `clientId`. */
function appForm(p: Page, clientId: string) {
  const f = parseForms(p.html).find((x) => x.hidden.client_id === clientId);
  if (!f) throw new Error(`no form for ${clientId}`);
  return f;
}

async function act(b: Browser, p: Page, clientId: string, action: string): Promise<Page> {
  const f = appForm(p, clientId);
  return b.page(
    await b.fetch("/account", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...f.hidden, action }).toString(),
    }),
  );
}

describe("/account: proving the number", () => {
  it("Korean by default and English with lang=en, the sign-in's identify form posting to /account, strict headers", async () => {
    const ko = await new Browser({ lang: "en-US" }).page(await new Browser().fetch("/account"));
    expect(ko.status).toBe(200);
    expect(ko.html).toContain('<html lang="ko">');
    expect(ko.html).toContain("내 휴대폰번호 로그인");
    expect(ko.form!.names).toEqual(new Set(["tx", "csrf", "telcoCd", "name", "phoneNo", "carrierTerms", "cancel"]));
    const csp = ko.res.headers.get("Content-Security-Policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(ko.res.headers.get("Cache-Control")).toContain("no-store");
    // no script but the page's own passkey script, by nonce
    expect(withoutOwnScripts(ko)).not.toMatch(/<script/i);

    const en = await new Browser().page(await new Browser().fetch("/account?lang=en"));
    expect(en.html).toContain('<html lang="en">');
    expect(en.html).toContain("Prove your number to see and manage the apps you log in to with it.");
  });

  it("a proven number opens a 10-minute __Host- session (SameSite=Strict) and lists the apps it logs in to", async () => {
    const b = new Browser();
    const loc = await signInAll(b, KIM, {}, { autoLogin: "Y" });
    expect(loc.searchParams.get("code")).toBeTruthy();
    const p1 = await b.page(await b.fetch("/account"));
    const p2 = await b.submit(p1, { telcoCd: KIM.telco, name: KIM.name, phoneNo: KIM.phone });
    const p3 = await b.submit(p2, { otp: KIM.code });
    const cookie = p3.res.headers.getAll("Set-Cookie").find((c) => c.startsWith("__Host-pl_account="))!;
    expect(cookie).toMatch(/; Path=\/; Secure; HttpOnly; SameSite=Strict; Max-Age=600$/);
    const dash = await b.page(await b.fetch("/account"));
    expect(dash.status).toBe(200);
    expect(dash.html).toContain("010-****-6789 번호로 로그인하는 앱입니다.");
    expect(dash.html).toContain('<h2 id="app-0">Demo Shop</h2>');
    expect(dash.html).toMatch(/처음 연결<\/dt><dd>\d{4}년 \d{1,2}월 \d{1,2}일 \d{2}:\d{2}<\/dd>/);
    expect(dash.html).toMatch(/마지막 로그인<\/dt><dd>\d{4}년 \d{1,2}월 \d{1,2}일 \d{2}:\d{2}<\/dd>/);
    expect(dash.html).toMatch(/자동 로그인: 켜짐 \(\d{4}년 \d{1,2}월 \d{1,2}일 \d{2}:\d{2}까지\)/);
    const f = appForm(dash, "demo-client");
    expect(f.action).toBe("/account");
    expect(f.names).toEqual(new Set(["csrf", "lang", "client_id", "action"]));
    expect(dash.html).toContain('name="action" value="end_auto_login"');
    expect(dash.html).toContain('name="action" value="terminate"');
    // The number never appears in full, nor in the address.
    expect(dash.html).not.toContain(KIM.phone);
  });

  it("the dates are Korea Standard Time", async () => {
    const b = new Browser();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2026, 10, 22, 8, 38)); // 17:38 KST
    await signInAll(b, SMITH);
    const dash = await proveOnAccount(b, SMITH, "?lang=en");
    vi.useRealTimers();
    expect(dash.html).toContain("<dt>Connected</dt><dd>22 Nov 2026, 17:38 KST</dd>");
    expect(dash.html).toContain("<dt>Last login</dt><dd>22 Nov 2026, 17:38 KST</dd>");
    expect(dash.html).toContain("Automatic login: off");
  });

  it("codes for the account page count toward the number's failure budget, with the sign-in's counters", async () => {
    const vars = { SIGNIN_LOCK_AFTER_FAILURES: "3", SIGNIN_OTP_MAX_ATTEMPTS: "5" };
    const b = new Browser({ vars, ip: "203.0.113.90" });
    const p1 = await b.page(await b.fetch("/account"));
    let p = await b.submit(p1, { telcoCd: LEE.telco, name: LEE.name, phoneNo: LEE.phone });
    for (let i = 0; i < 3; i++) p = await b.submit(p, { otp: "000000" });
    expect(p.status).toBe(429);
    // The same network is now locked out of this number in an app's sign-in too.
    const app = new Browser({ vars, ip: "203.0.113.90" });
    const v = await app.submit(await app.authorize(), { telcoCd: LEE.telco, name: LEE.name, phoneNo: LEE.phone });
    expect(v.status).toBe(429);
  });

  it("a transaction serves its own purpose: an app's step posted to /account, or the reverse, is refused", async () => {
    const b = new Browser();
    const appPage = await b.authorize();
    const wrong = await b.page(
      await b.fetch("/account", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          ...appPage.form!.hidden,
          telcoCd: HONG.telco,
          name: HONG.name,
          phoneNo: HONG.phone,
        }).toString(),
      }),
    );
    expect(wrong.status).toBe(403);
    const acct = await b.page(await b.fetch("/account"));
    const reverse = await b.page(
      await b.fetch("/oauth2/authorize", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          ...acct.form!.hidden,
          telcoCd: HONG.telco,
          name: HONG.name,
          phoneNo: HONG.phone,
        }).toString(),
      }),
    );
    expect(reverse.status).toBe(403);
  });

  it("cancel on the account page returns to /account, never to an app", async () => {
    const b = new Browser();
    const p1 = await b.page(await b.fetch("/account?lang=en"));
    const c = await b.submit(p1, { cancel: "Y" });
    expect(c.status).toBe(303);
    expect(c.res.headers.get("Location")).toBe("/account");
  });

  it("proving a number here ends another subscriber's automatic login on this browser (a shared browser), and keeps the person's own", async () => {
    const b = new Browser();
    /** What the browser's automatic login at the demo app answers now (prompt=none: never a page). */
    const automatic = async () => {
      const p = await b.authorize({ prompt: "none" });
      expect(p.status).toBe(302);
      return new URL(p.res.headers.get("Location")!).searchParams.has("code") ? "logged in" : "login_required";
    };
    await signInAll(b, HONG, {}, { autoLogin: "Y" });
    expect(await automatic()).toBe("logged in");
    // KIM, at HONG's browser, proves their own number on the account page
    await proveOnAccount(b, KIM);
    // before the fix: the browser still logged in to the app as HONG
    expect(await automatic()).toBe("login_required");
    // KIM's own grant on this browser outlives KIM's next proof here
    await signInAll(b, KIM, { prompt: "login" }, { autoLogin: "Y" });
    b.cookies.delete("__Host-pl_account"); // the first check's session, over
    await proveOnAccount(b, KIM);
    expect(await automatic()).toBe("logged in");
  });
});

describe("/account: the two actions", () => {
  it("end_auto_login ends every grant of the person for the app; the plid stays; the next login asks for the code", async () => {
    const b = new Browser();
    await signInAll(b, HONG, {}, { autoLogin: "Y" });
    const s = (await subscriberByPhone(env, HONG.phone))!;
    const before = (await findLink(env, "demo-client", s.id))!;
    // automatic login works before
    expect((await b.authorize()).status).toBe(302);
    const dash = await proveOnAccount(b, HONG);
    const done = await act(b, dash, "demo-client", "end_auto_login");
    expect(done.status).toBe(200);
    expect(done.html).toContain('<p class="notice" role="status">Demo Shop의 자동 로그인을 껐습니다.</p>');
    expect(done.html).toContain("자동 로그인: 꺼짐");
    expect(done.html).not.toContain('value="end_auto_login"');
    const again = await b.authorize();
    expect(again.status).toBe(200);
    expect(again.form?.step).toBe("identify");
    expect((await findLink(env, "demo-client", s.id))!.plid).toBe(before.plid);
    const audit = await lastAuditEvent("account.end_auto_login");
    expect(audit).toMatchObject({ client_id: "demo-client", outcome: "ok", detail: JSON.stringify({ grants: 1 }) });
  });

  it("terminate deletes link and plid, ends outstanding tokens at once, sends user_terminated; the next login asks consent and gets a new plid", async () => {
    const { sent } = captureEvents();
    const b = new Browser();
    await signInAll(b, HONG);
    const { token, plid } = await tokenFor(HONG.phone);
    const dash = await proveOnAccount(b, HONG, "?lang=en");
    // one click asks first: a page of its own that ends nothing
    const asked = await act(b, dash, "demo-client", "terminate");
    expect(asked.status).toBe(200);
    expect(asked.html).toContain("<h1>End your login with Demo Shop?</h1>");
    expect((await findLink(env, "demo-client", (await subscriberByPhone(env, HONG.phone))!.id))!.plid).toBe(plid);
    const confirm = parseForms(asked.html).find((f) => f.hidden.confirm === "Y")!;
    expect(confirm.hidden).toMatchObject({ client_id: "demo-client", lang: "en" });
    const done = await b.page(
      await b.fetch("/account", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...confirm.hidden, action: "terminate" }).toString(),
      }),
    );
    expect(done.status).toBe(200);
    expect(done.html).toContain('<p class="notice" role="status">Your login with Demo Shop has ended.</p>');
    expect(done.html).not.toContain("Demo Shop</h2>");
    const me = await userMe(token);
    expect(me.status).toBe(401);
    const s = (await subscriberByPhone(env, HONG.phone))!;
    expect(await findLink(env, "demo-client", s.id)).toBeNull();
    await vi.waitFor(() => expect(sent.length).toBe(1), { timeout: 5000, interval: 50 });
    expect(sent[0]!.url).toBe(DEMO.eventsUri);
    const claims = JSON.parse(atob(sent[0]!.body.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")));
    expect(claims.events).toEqual({ "urn:phone-login:event:plid-deleted": { plid, reason: "user_terminated" } });
    // the next login: consent again, a new plid
    const b2 = new Browser();
    const p1 = await b2.authorize();
    const p2 = await b2.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    const p3 = await b2.submit(p2, { otp: HONG.code });
    expect(p3.form?.step).toBe("consent");
    await b2.submit(p3, { agree: "Y" });
    const fresh = (await findLink(env, "demo-client", s.id))!;
    expect(fresh.plid).not.toBe(plid);
    const audit = await lastAuditEvent("account.terminate");
    expect(audit).toMatchObject({ client_id: "demo-client", outcome: "ok" });
  });

  it("refused without the session's CSRF token, for an app the number is not connected to, and with no session", async () => {
    captureEvents();
    const b = new Browser();
    await signInAll(b, SMITH, { client_id: "demo-client" });
    const dash = await proveOnAccount(b, SMITH);
    const f = appForm(dash, "demo-client");
    const post = (body: Record<string, string>, browser = b) =>
      browser.fetch("/account", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(body).toString(),
      });
    expect((await post({ ...f.hidden, csrf: "x".repeat(43), action: "terminate" })).status).toBe(403);
    const other = await b.page(await post({ ...f.hidden, client_id: "limited-client", action: "terminate" }));
    expect(other.status).toBe(404);
    expect(alertText(other.html)).toBe("그 앱은 이 번호와 연결되어 있지 않습니다.");
    // another browser without the session cookie: the identify page again, nothing ended
    const stranger = new Browser();
    const nope = await stranger.page(await post({ ...f.hidden, action: "terminate" }, stranger));
    expect(nope.form?.step).toBe("identify");
    const s = (await subscriberByPhone(env, SMITH.phone))!;
    expect(await findLink(env, "demo-client", s.id)).not.toBeNull();
  });

  it("sign_out ends the session: the page asks for the number again", async () => {
    const b = new Browser();
    const dash = await proveOnAccount(b, KIM);
    const form = parseForms(dash.html).find((x) => x.hidden.client_id === undefined && x.names.has("action"))!;
    const out = await b.page(
      await b.fetch("/account", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...form.hidden, action: "sign_out" }).toString(),
      }),
    );
    expect(out.form?.step).toBe("identify");
    expect(out.html).toContain("이 화면에서 나갔습니다. 다시 보려면 본인 확인을 해 주세요.");
    expect((await b.page(await b.fetch("/account"))).form?.step).toBe("identify");
  });
});

describe("sign-in: the automatic-login box of a person who has automatic login", () => {
  it("is not shown ticked before the code is proven (it would tell whoever typed the number); left unticked, the grant stays (the person ends it on /account)", async () => {
    const b = new Browser();
    await signInAll(b, KIM, {}, { autoLogin: "Y" });
    const v = new Browser();
    const p1 = await v.authorize({ prompt: "login" });
    const p2 = await v.submit(p1, { telcoCd: KIM.telco, name: KIM.name, phoneNo: KIM.phone });
    expect(p2.html).toContain('id="autoLogin"');
    expect(p2.html).not.toMatch(/id="autoLogin"[^>]* checked/);
    const s = (await subscriberByPhone(env, KIM.phone))!;
    const grants = async () =>
      (await shardRows("SELECT 1 FROM grants WHERE client_id = 'demo-client' AND subscriber_id = ?", s.id)).length;
    const other = new Browser();
    const q1 = await other.authorize({ prompt: "login" });
    const q2 = await other.submit(q1, { telcoCd: KIM.telco, name: KIM.name, phoneNo: KIM.phone });
    expect((await other.submit(q2, { otp: KIM.code })).status).toBe(302); // unticked: no autoLogin field
    expect(await grants()).toBeGreaterThan(0);
    expect((await b.authorize()).status).toBe(302);
  });

  it("is unticked for a person without automatic login, and ticking it keeps working", async () => {
    const b = new Browser();
    const p1 = await b.authorize({ prompt: "login" });
    const p2 = await b.submit(p1, { telcoCd: LEE.telco, name: LEE.name, phoneNo: LEE.phone });
    expect(p2.html).toContain('id="autoLogin"');
    expect(p2.html).not.toMatch(/id="autoLogin"[^>]* checked/);
    const ticked = new Browser();
    await signInAll(ticked, HONG, {}, { autoLogin: "Y" });
    const again = await ticked.authorize({ prompt: "login" });
    const v = await ticked.submit(again, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    const done = await ticked.submit(v, { otp: HONG.code, autoLogin: "Y" });
    expect(done.status).toBe(302);
    expect((await ticked.authorize()).status).toBe(302);
  });
});
