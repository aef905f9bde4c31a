// The operations console (docs/console.md) through HTTP in workerd:
// - a number granted a role signs in with the service's own steps (code from the dev SMS outbox)
//   and takes the role; its session is its own `__Host-pl_console` cookie, SameSite=Strict;
// - a person without a role sees "no access"; a fixed-code test number never takes a role;
// - a viewer and an editor are refused (403) on every console route above their role, enumerated
//   from the console's route table; the admin handlers the pages call check the same roles;
// - the sessions of /account and /console never open one another;
// - idle 30 minutes and 12 hours absolute end a session; an admin action asks for a sign-in from the
//   last 10 minutes; a form without the session's CSRF token is refused;
// - a role ends when its number passes to another person;
// - every change made from the console is audited with `operator:<id>`.
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { metricsStore } from "../../workers/provider/store/metrics/reach";
import { guardIndex, guardNet, guardStore } from "../../workers/provider/store/guard/reach";
import { guardRules } from "../../workers/provider/store/guard/config";
import { env } from "../support/env";
import { admin } from "../support/admin";
import { auditEvents } from "../support/audit";
import { ciOf, importRows, lastCode } from "../support/directory";
import { DEMO, HONG, KIM } from "../support/helpers";
import { flushAudit } from "../support/audit";
import { alertText, Browser, signInAll, type Page } from "../support/signin";
import { smsPrices } from "../../workers/console/overview";
import { table } from "../../workers/console/routes";
import { inviteKey } from "../../workers/provider/store/operators";
import { getClient } from "../../workers/provider/store/clients";
import { auditRefused } from "../support/faults";
import { journalRows, UNFINISHED_AFTER_MS } from "../../workers/provider/store/change-journal";
import { sweepUnfinished } from "../../workers/provider/store/flows/journaled-change";

afterEach(() => {
  vi.useRealTimers();
});

interface Person {
  telco: string;
  name: string;
  phone: string;
}

let seq = 0;
/** A new person of the directory with an ordinary number (codes go to the dev SMS outbox). */
async function person(): Promise<Person> {
  seq++;
  const phone = `0107${String(Date.now() % 10000).padStart(4, "0")}${String(seq).padStart(3, "0")}`.slice(0, 11);
  const p = { telco: "K", name: "운영자", phone };
  await importRows([
    { telcoCd: "K", phoneNo: phone, name: p.name, gender: "F", birth: "1988-02-03", foreign: "L", ci: ciOf(100 + seq) },
  ]);
  return p;
}

async function grant(phone: string, role: string): Promise<void> {
  const res = await admin("POST", "/admin/operators", { json: { phone, role } });
  expect(res.status, await res.clone().text()).toBe(201);
}

/** Proves `who`'s number at /console[?query]; the page the sign-in ends on (followed). */
async function signIn(b: Browser, who: Person, query = ""): Promise<Page> {
  const p1 = await b.page(await b.fetch(`/console${query}`));
  expect(p1.status).toBe(200);
  expect(p1.form).toMatchObject({ action: "/console", step: "identify" });
  const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  expect(p2.form?.step, alertText(p2.html)).toBe("verify");
  const p3 = await b.submit(p2, { otp: await lastCode(who.phone) });
  expect(p3.status, alertText(p3.html)).toBe(303);
  return b.page(await b.fetch(p3.res.headers.get("Location")!));
}

async function operator(role: string): Promise<{ b: Browser; who: Person; home: Page }> {
  const who = await person();
  await grant(who.phone, role);
  const b = new Browser();
  const home = await signIn(b, who);
  return { b, who, home };
}

const csrfOf = (p: Page) => /<meta name="csrf" content="([^"]+)">/.exec(p.html)![1]!;

function post(b: Browser, path: string, fields: Record<string, string>): Promise<Response> {
  return b.fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
}

describe("signing in to the console", () => {
  it("a granted number takes its role at its first sign-in; the session is its own strict cookie", async () => {
    const who = await person();
    await grant(who.phone, "admin");
    const b = new Browser();
    const p1 = await b.page(await b.fetch("/console"));
    expect(p1.html).toContain("운영 콘솔");
    expect(p1.res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    const p3 = await b.submit(p2, { otp: await lastCode(who.phone) });
    expect(p3.status).toBe(303);
    const cookie = p3.res.headers.getAll("Set-Cookie").find((c) => c.startsWith("__Host-pl_console="))!;
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("Secure");
    const home = await b.page(await b.fetch(p3.res.headers.get("Location")!));
    expect(home.status).toBe(200);
    expect(home.html).toContain("010-****-");
    expect(home.html).toContain("관리자");
    expect(home.res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    const [taken] = await auditEvents({ type: "operator.taken" });
    expect(JSON.parse(taken!.detail!)).toMatchObject({ role: "admin" });
    // nothing of the number in the operators' list but its masked form
    const list = await (await admin("GET", "/admin/operators")).text();
    expect(list).not.toContain(who.phone);
  });

  it("a person without a role sees a clear no-access page (403), in English too", async () => {
    const who = await person();
    const b = new Browser();
    const p = await signIn(b, who);
    expect(p.status).toBe(403);
    expect(p.html).toContain("콘솔 권한이 없습니다");
    const en = await b.page(await b.fetch("/console/apps?lang=en"));
    expect(en.status).toBe(403);
    expect(en.html).toContain("No access to the console");
  });

  it("a fixed-code test number never takes a role, even with an invitation in D1", async () => {
    // the API refuses the grant (test/admin/operators.test.ts); an invitation written behind its back
    const key = await inviteKey(env.SEAL_KEY, HONG.phone);
    await env.DB.prepare(
      "INSERT INTO operator_invites (phone_key, role, masked, granted_by, created_at, expires_at) VALUES (?, 'admin', 'x', 'test', ?, ?)",
    )
      .bind(key, Date.now(), Date.now() + 86_400_000)
      .run();
    const b = new Browser();
    const p1 = await b.page(await b.fetch("/console"));
    const p2 = await b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    const p3 = await b.submit(p2, { otp: HONG.code });
    const home = await b.page(await b.fetch(p3.res.headers.get("Location")!));
    expect(home.status).toBe(403);
    expect(home.html).toContain("콘솔 권한이 없습니다");
  });

  it("the /account session never opens the console, nor the console's /account", async () => {
    const { b } = await operator("viewer");
    const acct = await b.page(await b.fetch("/account"));
    expect(acct.form).toMatchObject({ action: "/account", step: "identify" });
    const other = new Browser();
    const who = await person();
    const a1 = await other.page(await other.fetch("/account"));
    const a2 = await other.submit(a1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    await other.submit(a2, { otp: await lastCode(who.phone) });
    expect([...other.cookies.keys()]).toContain("__Host-pl_account");
    const c = await other.page(await other.fetch("/console/apps"));
    expect(c.status).toBe(303);
    expect(c.res.headers.get("Location")).toMatch(/^\/console\?next=/);
    // a step of an /account sign-in cannot be posted to /console
    const third = new Browser();
    const s1 = await third.page(await third.fetch("/account"));
    expect(s1.form?.hidden.tx).toBeTruthy();
    const wrong = await post(third, "/console", {
      ...s1.form!.hidden,
      telcoCd: who.telco,
      name: who.name,
      phoneNo: who.phone,
    });
    expect(wrong.status, await wrong.clone().text()).toBe(403);
    expect([...third.cookies.keys()]).not.toContain("__Host-pl_console");
  });
});

describe("roles in the console", () => {
  const ORDER = ["viewer", "editor", "admin"];
  const concrete = (path: string) =>
    path.replace(":id", "AAAAAAAAAAAAAAAAAAAA").replace(":phone", "01000000000").replace(":name", "nobody");

  for (const role of ["viewer", "editor"]) {
    it(`a ${role} is refused on every console route above the role, enumerated from its table`, async () => {
      const { b, home } = await operator(role);
      const csrf = csrfOf(home);
      const above = table.filter((r) => r.role !== null && ORDER.indexOf(r.role) > ORDER.indexOf(role));
      expect(above.length).toBeGreaterThan(role === "viewer" ? 10 : 5);
      for (const r of above) {
        const res =
          r.method === "GET" ? await b.fetch(concrete(r.path)) : await post(b, concrete(r.path), { csrf, lang: "ko" });
        expect(res.status, `${r.method} ${r.path}`).toBe(403);
        expect(await res.text()).toContain("권한이 부족합니다");
      }
      // and the menu shows only the pages the role may open
      expect(home.html).not.toContain('href="/console/operators"');
    });
  }

  it("a form with the right CSRF token from another origin or Origin null is refused on every console POST route, enumerated from its table; a missing Origin is not refused", async () => {
    const { b, home } = await operator("admin");
    const csrf = csrfOf(home);
    // the pages send their Origin (same-origin referrer policy: under no-referrer Chromium posts `null`)
    expect(home.res.headers.get("Referrer-Policy")).toBe("same-origin");
    const posts = table.filter((r) => r.method === "POST" && r.role !== null);
    expect(posts.length).toBeGreaterThan(15);
    const fields = { csrf, lang: "ko" };
    const refused = "요청을 확인할 수 없습니다";
    for (const origin of ["https://evil.example", "null"]) {
      for (const r of posts) {
        const res = await b.fetch(concrete(r.path), {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin },
          body: new URLSearchParams(fields).toString(),
        });
        expect(res.status, `${origin} ${r.path}`).toBe(403);
        expect(await res.text(), `${origin} ${r.path}`).toContain(refused);
      }
      // nor does a sign-out from there end the session
      const out = await b.fetch("/console/sign-out", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin },
        body: new URLSearchParams(fields).toString(),
      });
      expect(out.status, origin).toBe(303);
      expect((await b.fetch("/console/apps")).status, origin).toBe(200);
      // nor the admin API called with the console's cookie and its CSRF header
      const api = await b.fetch("/admin/clients", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, Origin: origin },
        body: JSON.stringify({ name: "X", redirect_uris: ["https://x.example/cb"] }),
      });
      expect(api.status, origin).toBe(403);
    }
    // without an Origin (not a browser) and from this site, the token decides: nothing is refused for where it came from
    for (const origin of [undefined, new URL((await b.fetch("/console/apps")).url).origin]) {
      for (const r of posts) {
        const res = await b.fetch(concrete(r.path), {
          method: "POST",
          headers: {
            "Content-Type": "application/x-www-form-urlencoded",
            ...(origin === undefined ? {} : { Origin: origin }),
          },
          body: new URLSearchParams(fields).toString(),
        });
        expect(await res.text(), `${origin} ${r.path}`).not.toContain(refused);
      }
    }
  });

  it("a form without the session's CSRF token is refused", async () => {
    const { b } = await operator("editor");
    const res = await post(b, "/console/apps", { name: "X", redirect_uris: "https://x.example/cb", lang: "ko" });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("요청을 확인할 수 없습니다");
  });
});

describe("the overview's metrics", () => {
  it("shows the sign-ins just made once the audit is flushed, with the SMS sent and their cost; an app's page its statistics", async () => {
    const { b, who } = await operator("viewer");
    // the operator's own sign-in sent one SMS (the outbox: 0 원); a demo sign-in succeeds
    await signInAll(new Browser(), KIM);
    await flushAudit();
    const home = await b.page(await b.fetch("/console"));
    expect(home.status).toBe(200);
    expect(home.html).toContain('id="live-toggle"');
    const kpi = (label: string) => new RegExp(`${label}<b>([^<]+)</b>`).exec(home.html)?.[1];
    expect(Number(kpi("로그인 성공")!.replace(/,/g, ""))).toBeGreaterThanOrEqual(1);
    expect(kpi("오늘 보낸 문자 · 비용")).toMatch(/^[1-9][\d,]* · 0원$/);
    expect(home.html).toMatch(/<svg[^>]*role="img"/);
    const app = await b.page(await b.fetch(`/console/apps/${DEMO.clientId}`));
    expect(app.html).toContain("통계 (최근 30일)");
    expect(Number(/로그인 성공<b>([^<]+)<\/b>/.exec(app.html)![1]!.replace(/,/g, ""))).toBeGreaterThanOrEqual(1);
    // each range answers
    for (const range of ["1h", "24h", "7d", "30d"])
      expect((await b.fetch(`/console?range=${range}&lang=en`)).status, range).toBe(200);
    expect(who.phone).toMatch(/^010/);
  });

  it("a firing alert is on the overview and in GET /admin/alerts", async () => {
    const { b } = await operator("viewer");
    const m = metricsStore(env);
    const t = Date.now() - (Date.now() % 60_000);
    await m.apply(`console-alert-${Date.now()}`, [
      [t, "sms.nhn-cloud.timeout", null, 9],
      [t, "sms.nhn-cloud.delivered", null, 1],
    ]);
    await runDurableObjectAlarm(m);
    const home = await b.page(await b.fetch("/console"));
    expect(home.html).toMatch(
      /data-rule="sms\.nhn-cloud\.failures">SMS gateway nhn-cloud: 90\.0% of 10 attempts failed/,
    );
    // the SMS and carrier page counts the gateway's attempts by result
    const sms = await b.page(await b.fetch("/console/sms"));
    expect(sms.status).toBe(200);
    expect(sms.html).toMatch(/<code>nhn-cloud<\/code><\/th><td>\d+<\/td><td>\d+<\/td><td>timeout \d+<\/td>/);
    const api = (await (await admin("GET", "/admin/alerts")).json()) as { alerts: { rule: string; firing: boolean }[] };
    expect(api.alerts.find((a) => a.rule === "sms.nhn-cloud.failures")?.firing).toBe(true);
  });

  it("the funnel shows each step's conversion (its last step and the code conversion without passkey and fixed-code sign-ins), and the steps' and gateways' times their p50 and p95", async () => {
    const { b } = await operator("viewer");
    const t = Date.now() - (Date.now() % 60_000);
    // counts far above any other test's traffic, so the shares are exact to the shown decimal
    await metricsStore(env).apply(`console-funnel-${Date.now()}`, [
      [t, "signin.start", "funnel-app", 1_000_000],
      [t, "identify.matched", "funnel-app", 800_000],
      [t, "verify.ok", "funnel-app", 600_000],
      // 600,000 interactive: 100,000 by a passkey (no identify, no SMS), 50,000 by a fixed
      // code (no SMS), 450,000 by a code sent by SMS
      [t, "signin.success.interactive", "funnel-app", 600_000],
      [t, "signin.success.passkey", "funnel-app", 100_000],
      [t, "signin.success.fixed_code", "funnel-app", 50_000],
      [t, "latency.step.identify.le_50", null, 1_000_000],
      [t, "latency.step.identify.le_1000", null, 100_000],
      [t, "latency.sms.naver-sens.le_250", null, 1_000_000],
      [t, "latency.sms.naver-sens.le_inf", null, 1_000_000],
      [t, "sms.naver-sens.delivered", null, 2_000_000],
      [t, "carrier.ok", null, 990_000],
      [t, "carrier.failed", null, 10_000],
      [t, "latency.carrier.le_100", null, 1_000_000],
    ]);
    const home = await b.page(await b.fetch("/console?range=1h&lang=en"));
    const row = (label: string) =>
      new RegExp(`<th scope="row">${label}</th>((?:<td>[^<]*</td>)+)</tr>`)
        .exec(home.html)?.[1]
        ?.match(/<td>([^<]*)<\/td>/g)
        ?.map((td) => td.slice(4, -5));
    expect(row("First page")?.[1]).toBe("—");
    expect(row("Number confirmed")?.[1]).toBe("80.0%");
    expect(row("Code proven")?.[1]).toBe("75.0%");
    // signed in by a code: 500,000 of the 600,000 codes proven
    expect(row("Signed in")?.[1]).toBe("83.3%");
    // codes typed per SMS delivered: 450,000 of 2,000,000, neither passkeys nor test numbers counted
    expect(home.html).toMatch(/Code conversion \(typed per sent\)<b>22\.5%<\/b>/);
    // 1,000,000 of 1,100,000 within 50 ms: the median there, the 95th percentile in the next bucket
    expect(row("Number")?.slice(1)).toEqual(["≤ 50 ms", "≤ 1,000 ms"]);
    const sms = await b.page(await b.fetch("/console/sms?lang=en"));
    expect(sms.html).toMatch(/<code>naver-sens<\/code>.*?<td>≤ 250 ms · &gt; 5,000 ms<\/td><\/tr>/);
    expect(sms.html).toMatch(/Answered<b>99\.0%<\/b>/);
    expect(sms.html).toMatch(/Answer time p50 · p95<b>≤ 100 ms · ≤ 100 ms<\/b>/);
  });

  it("passkey sign-ins (apps' and /account's) are shown as SMS saved, priced as the primary gateway's message", async () => {
    const { b } = await operator("viewer");
    // other tests' passkey sign-ins share the metrics store: what this one adds is counted on top
    const savedNow = async () => {
      const page = await b.page(await b.fetch("/console?range=1h&lang=en"));
      return Number(/SMS saved by passkeys · cost<b>([\d,]+) · 0 KRW<\/b>/.exec(page.html)![1]!.replaceAll(",", ""));
    };
    const before = await savedNow();
    const t = Date.now() - (Date.now() % 60_000);
    await metricsStore(env).apply(`console-saved-${Date.now()}`, [
      [t, "signin.success.passkey", "saved-app", 2_000_000],
      [t, "account.signin.passkey", null, 1_000_000],
    ]);
    // the dev worker's primary sender is the outbox, priced 0
    expect(await savedNow()).toBe(before + 3_000_000);
    const ko = await b.page(await b.fetch("/console?range=1h&lang=ko"));
    expect(ko.html).toMatch(
      new RegExp(`패스키로 아낀 문자 · 비용<b>${(before + 3_000_000).toLocaleString("en-US")} · 0원</b>`),
    );
  });

  it("SMS_PRICES_KRW prices each gateway; a malformed value names the variable", () => {
    const price = smsPrices({ SMS_PRICES_KRW: "naver-sens:19.8, nhn-cloud:18" });
    expect([price("naver-sens"), price("nhn-cloud"), price("outbox"), price("other")]).toEqual([19.8, 18, 0, 20]);
    expect(() => smsPrices({ SMS_PRICES_KRW: "naver-sens=20" })).toThrow(/SMS_PRICES_KRW/);
  });
});

describe("what an operator does", () => {
  it("an admin registers an app, rotates its secret (shown once), and each change names operator:<id>", async () => {
    const { b, home } = await operator("admin");
    const csrf = csrfOf(home);
    const made = await b.page(
      await post(b, "/console/apps", {
        csrf,
        lang: "ko",
        name: "콘솔 상점",
        redirect_uris: "https://shop.example/cb\nhttps://shop.example/cb2",
        item_name: "on",
        item_phoneNo: "on",
        purpose: "회원 가입",
        retention: "탈퇴 시까지",
        oidc: "on",
        "event_credential-change": "on",
      }),
    );
    expect(made.status, alertText(made.html)).toBe(200);
    const secret = /data-secret>([A-Za-z0-9]{64})</.exec(made.html)![1]!;
    const id = /<code>([A-Za-z0-9]{20})<\/code>/.exec(made.html)![1]!;
    // OpenID Connect is the operator's switch too; the items named as the consent page names them
    // so are the event types: the boxes checked are the types taken
    expect(await (await admin("GET", `/admin/clients/${id}`)).json()).toMatchObject({
      oidc: true,
      event_types: ["credential-change"],
    });
    const page = await b.page(await b.fetch(`/console/apps/${id}`));
    expect(page.html).toContain('<input type="checkbox" name="oidc" checked>');
    expect(page.html).toContain('<input type="checkbox" name="event_credential-change" checked>');
    expect(page.html).toContain('<input type="checkbox" name="event_plid-deleted">');
    // a new app's form starts with the default types checked
    expect((await b.page(await b.fetch("/console/apps"))).html).toContain(
      '<input type="checkbox" name="event_plid-deleted" checked>',
    );
    expect(page.html).toMatch(/name="item_phoneNo" checked> 휴대폰번호 <code>phoneNo<\/code>/);
    expect(page.html).toMatch(/name="item_gender"> 성별 <code>gender<\/code>/);
    const rotated = await b.page(await post(b, `/console/apps/${id}/rotate-secret`, { csrf, lang: "ko" }));
    const secret2 = /data-secret>([A-Za-z0-9]{64})</.exec(rotated.html)![1]!;
    expect(secret2).not.toBe(secret);
    const again = await b.page(await b.fetch(`/console/apps/${id}`));
    expect(again.html).not.toContain(secret2);
    const events = await auditEvents({ clientId: id });
    expect(events.map((e) => e.type)).toEqual(["client.created", "client.secret_rotated"]);
    expect(JSON.parse(events[0]!.detail!)).toMatchObject({ oidc: true });
    const ops = (await (await admin("GET", "/admin/operators")).json()) as { operators: { id: string }[] };
    const actors = events.map((e) => JSON.parse(e.detail!).actor as string);
    expect(actors.every((a) => a === actors[0] && /^operator:op_/.test(a))).toBe(true);
    expect(ops.operators.map((o) => `operator:${o.id}`)).toContain(actors[0]);
    // a bad value is a clear error with the request id, and nothing is lost
    const bad = await b.page(
      await post(b, "/console/apps", { csrf, lang: "ko", name: "잘못", redirect_uris: "http://evil.example/cb" }),
    );
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("redirect_uris");
    expect(bad.html).toMatch(/요청 ID: [A-Za-z0-9._:-]+/);
  });

  it("an editor sets an app's daily SMS budget on its page, sees the SMS of the day against it, and resets it to the default; each change names operator:<id> and the value", async () => {
    const { b, home } = await operator("editor");
    const csrf = csrfOf(home);
    const form = { csrf, lang: "ko", name: "예산 상점", redirect_uris: "https://budget.example/cb" };
    const made = await b.page(await post(b, "/console/apps", { ...form, sms_daily_budget: "250" }));
    expect(made.status, alertText(made.html)).toBe(200);
    const id = /<code>([A-Za-z0-9]{20})<\/code>/.exec(made.html)![1]!;
    const budgetInput = (html: string) => /<input type="number" name="sms_daily_budget"[^>]*>/.exec(html)![0];
    expect(budgetInput(made.html)).toContain('value="250"');
    expect(budgetInput(made.html)).toContain('placeholder="10000"');
    expect(made.html).toContain("비워 두면 기본값 10,000건을 씁니다.");
    // two SMS delivered today (KST) for the app: 2 of 250
    const t = Date.now() - (Date.now() % 60_000);
    await metricsStore(env).apply(`console-budget-${id}`, [[t, "sms.naver-sens.delivered", id, 2]]);
    const page = await b.page(await b.fetch(`/console/apps/${id}`));
    expect(/오늘 보낸 문자 \/ 하루 예산<b>([^<]+)<\/b>/.exec(page.html)?.[1]).toBe("2 / 250 (0.8%)");
    expect(/가장 많이 보낸 날의 문자<b>([^<]+)<\/b>/.exec(page.html)?.[1]).toBe("2");
    // a value out of bounds is the API's clear refusal, and nothing changes
    const bad = await b.page(await post(b, `/console/apps/${id}`, { ...form, sms_daily_budget: "0" }));
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("sms_daily_budget");
    expect(bad.html).toMatch(/요청 ID: [A-Za-z0-9._:-]+/);
    const raised = await b.page(await post(b, `/console/apps/${id}`, { ...form, sms_daily_budget: "20000" }));
    expect(raised.status, alertText(raised.html)).toBe(200);
    expect(budgetInput(raised.html)).toContain('value="20000"');
    // an empty field gives back the default
    const reset = await b.page(await post(b, `/console/apps/${id}`, form));
    expect(budgetInput(reset.html)).toContain('value=""');
    expect(/오늘 보낸 문자 \/ 하루 예산<b>([^<]+)<\/b>/.exec(reset.html)?.[1]).toBe("2 / 10,000 (0.0%)");
    const read = (await (await admin("GET", `/admin/clients/${id}`)).json()) as { sms_daily_budget: number | null };
    expect(read.sms_daily_budget).toBeNull();
    const events = await auditEvents({ clientId: id });
    const details = events.map((e) => ({ type: e.type, ...JSON.parse(e.detail!) }));
    expect(details.map((d) => [d.type, d.sms_daily_budget])).toEqual([
      ["client.created", 250],
      ["client.updated", 20000],
      ["client.updated", "default"],
    ]);
    expect(details.every((d) => /^operator:op_/.test(d.actor))).toBe(true);
    // a viewer sees the budget, and cannot change it
    const viewer = await operator("viewer");
    const seen = await viewer.b.page(await viewer.b.fetch(`/console/apps/${id}`));
    expect(budgetInput(seen.html)).toContain(" disabled");
  });

  it("a change from a page whose audit event cannot be written is named by the trail with the operator and the page's route", async () => {
    const { b, home } = await operator("editor");
    const csrf = csrfOf(home);
    const form = { csrf, lang: "ko", name: "중단 상점", redirect_uris: "https://unfinished.example/cb" };
    const made = await b.page(await post(b, "/console/apps", form));
    expect(made.status, alertText(made.html)).toBe(200);
    const id = /<code>([A-Za-z0-9]{20})<\/code>/.exec(made.html)![1]!;
    const [created] = await auditEvents({ type: "client.created", clientId: id });
    const actor = String((JSON.parse(created!.detail!) as { actor: string }).actor);
    expect(actor).toMatch(/^operator:/);
    // the same session, on a worker whose audit appends fail after the change
    const failing = new Browser({ bindings: { ONE_TIME: auditRefused() } });
    for (const [k, v] of b.cookies) failing.cookies.set(k, v);
    const res = await post(failing, `/console/apps/${id}`, { ...form, name: "중단 상점 2" });
    expect(res.status).toBe(500);
    expect((await getClient(env, id))?.name).toBe("중단 상점 2");
    const rows = (await journalRows(env)).filter((r) => r.actor === actor);
    // the page's route, and the method of the admin handler it called (an app's update is a PATCH)
    expect(rows.map(({ method, route }) => ({ method, route }))).toEqual([
      { method: "PATCH", route: "/console/apps/:id" },
    ]);
    while ((await sweepUnfinished(env, Date.now() + UNFINISHED_AFTER_MS + 1)) > 0);
    const named = (await auditEvents({ type: "request.unfinished" })).filter(
      (e) => (JSON.parse(e.detail!) as { actor: string }).actor === actor,
    );
    expect(named.map((e) => [e.outcome, (JSON.parse(e.detail!) as { route: string }).route, e.client_id])).toEqual([
      ["unknown", "/console/apps/:id", id],
    ]);
  });

  it("an app's page shows its sign-ins by route and its codes sent and never typed (30 days)", async () => {
    const { b, home } = await operator("editor");
    const made = await b.page(
      await post(b, "/console/apps", {
        csrf: csrfOf(home),
        lang: "ko",
        name: "경로 상점",
        redirect_uris: "https://route.example/cb",
      }),
    );
    const id = /<code>([A-Za-z0-9]{20})<\/code>/.exec(made.html)![1]!;
    const t = Date.now() - (Date.now() % 60_000);
    // what the roll-ups hold after: 10 interactive sign-ins (2 by passkey, 3 by a text the person
    // sent, 1 by a review test number's fixed code, so 4 by a code sent by SMS) and 4 automatic;
    // 9 SMS delivered, 5 right code entries (1 of them the fixed code): 5 codes never typed
    await metricsStore(env).apply(`console-routes-${id}`, [
      [t, "signin.success", id, 14],
      [t, "signin.success.interactive", id, 10],
      [t, "signin.success.passkey", id, 2],
      [t, "signin.success.text", id, 3],
      [t, "signin.success.fixed_code", id, 1],
      [t, "signin.success.automatic", id, 4],
      [t, "sms.sens.delivered", id, 6],
      [t, "sms.nhn.delivered", id, 3],
      [t, "verify.ok", id, 5],
    ]);
    const page = await b.page(await b.fetch(`/console/apps/${id}?lang=en`));
    expect(page.status, alertText(page.html)).toBe(200);
    const cell = (label: string) => new RegExp(`<td>${label}</td><td>([^<]+)</td>`).exec(page.html)?.[1];
    expect(page.html).toContain("Sign-ins by route (30 days)");
    expect(cell("Code sent by SMS")).toBe("4");
    expect(cell("Text sent by the person")).toBe("3");
    expect(cell("Passkey")).toBe("2");
    expect(cell("Automatic login")).toBe("4");
    expect(cell("Review test number")).toBe("1");
    expect(/Codes sent and never typed \/ SMS sent \(30 days\)<b>([^<]+)<\/b>/.exec(page.html)?.[1]).toBe("5 / 9");
  });

  it("the SMS page names the service-wide block history (~net) without a link to an app page it has not", async () => {
    const { b } = await operator("editor");
    const sentAt = Date.now() - 120_000;
    const events = Array.from({ length: 5 }, () => ({
      kind: "sent" as const,
      scopes: ["block:198.51.101.0/24"],
      sentAt,
      challenged: false,
    }));
    const now = Date.now();
    const { transitions } = await guardNet(env).record("console-net", events, null, now, guardRules(env));
    expect(transitions.map((t) => `${t.scope} ${t.state}`)).toEqual(["block:198.51.101.0/24 suspect"]);
    await guardIndex(env).indexNote("~net", transitions, now);
    const sms = await b.page(await b.fetch("/console/sms"));
    expect(sms.html).toContain("<code>~net</code>");
    expect(sms.html).not.toContain('href="/console/apps/~net');
  });

  it("an app's page lists the guard's suspect scopes; an editor clears one (audited as operator:<id>), a viewer sees no Clear and counts, not blocks", async () => {
    const { b, home } = await operator("editor");
    const csrf = csrfOf(home);
    const made = await b.page(
      await post(b, "/console/apps", {
        csrf,
        lang: "ko",
        name: "보호 상점",
        redirect_uris: "https://guard.example/cb",
      }),
    );
    const id = /<code>([A-Za-z0-9]{20})<\/code>/.exec(made.html)![1]!;
    // five codes from one block, none typed, settled: the block is suspect
    const sentAt = Date.now() - 120_000;
    const events = Array.from({ length: 5 }, () => ({
      kind: "sent" as const,
      scopes: ["block:198.51.100.0/24"],
      sentAt,
      challenged: false,
    }));
    // the app's object judges the block suspect and, as the sign-in does, the list across apps is told
    const now = Date.now();
    const { transitions } = await guardStore(env, id).record("console-guard", events, null, now, guardRules(env));
    expect(transitions.map((t) => `${t.scope} ${t.state}`)).toEqual(["block:198.51.100.0/24 suspect"]);
    await guardIndex(env).indexNote(id, transitions, now);
    const sms = await b.page(await b.fetch("/console/sms"));
    expect(sms.html).toContain(`href="/console/apps/${id}"`);
    expect(sms.html).toContain("block:198.51.100.0/24");
    const page = await b.page(await b.fetch(`/console/apps/${id}`));
    expect(page.html).toContain("문자 남용 방지");
    expect(page.html).toContain("block:198.51.100.0/24");
    expect(page.html).toContain("5 / 0");
    // the guard's decisions of the last 30 days, from the roll-ups: challenges asked / passed, codes held back
    const t = Date.now() - (Date.now() % 60_000);
    await metricsStore(env).apply(`console-guard-${id}`, [
      [t, "guard.decision.challenge_asked", id, 3],
      [t, "guard.decision.challenge_passed", id, 2],
      [t, "guard.decision.slowed", id, 4],
      [t, "guard.decision.paused", id, 1],
    ]);
    const figures = await b.page(await b.fetch(`/console/apps/${id}`));
    expect(/사람 확인 요청 \/ 통과 \(30일\)<b>([^<]+)<\/b>/.exec(figures.html)?.[1]).toBe("3 / 2");
    expect(/제한·중지로 보내지 않은 인증번호 \(30일\)<b>([^<]+)<\/b>/.exec(figures.html)?.[1]).toBe("5");
    const viewer = await operator("viewer");
    const seen = await viewer.b.page(await viewer.b.fetch(`/console/apps/${id}`));
    // a viewer counts the blocks and prefixes, an editor reads them (admin/guard.ts)
    expect(seen.html).not.toContain("198.51.100");
    expect(seen.html).toContain("block 범위 1개 (어느 범위인지는 편집자 이상에게 보입니다)");
    expect(seen.html).not.toContain("/guard/clear");
    const seenSms = await viewer.b.page(await viewer.b.fetch("/console/sms?lang=en"));
    expect(seenSms.html).not.toContain("198.51.100");
    expect(seenSms.html).toContain(`href="/console/apps/${id}`);
    expect(seenSms.html).toContain("1 block scope(s) (which ones is shown to editors and above)");
    const cleared = await b.page(
      await post(b, `/console/apps/${id}/guard/clear`, { csrf, lang: "ko", scope: "block:198.51.100.0/24" }),
    );
    expect(cleared.status, alertText(cleared.html)).toBe(200);
    expect(cleared.html).toContain("지금 의심 상태인 범위가 없습니다.");
    expect((await b.page(await b.fetch("/console/sms"))).html).not.toContain(`href="/console/apps/${id}"`);
    const audit = await auditEvents({ type: "guard.state", clientId: id });
    expect(audit.map((e) => JSON.parse(e.detail!) as Record<string, unknown>)).toEqual([
      { kind: "block", state: "cleared", strikes: 1, actor: expect.stringMatching(/^operator:op_/) },
    ]);
  });

  it("the operators page never offers to end the last admin's role; an admin ends another's, or gives up their own and is shown what they have now", async () => {
    const a = await operator("admin");
    const other = await operator("admin");
    const list = async () =>
      ((await (await admin("GET", "/admin/operators")).json()) as { operators: { id: string; role: string }[] })
        .operators;
    const ops = await list();
    const mine = (await a.b.page(await a.b.fetch("/console/operators?lang=en"))).html;
    // the signed-in admin's own id is the one the page offers to give up
    const me =
      /\/console\/operators\/(op_[A-Za-z0-9_-]{16})\/revoke"><input[^>]*><input[^>]*><button type="submit" class="secondary">Give up my role</.exec(
        mine,
      )![1]!;
    const others = ops.filter((o) => o.role === "admin" && o.id !== me).map((o) => o.id);
    expect(others.length).toBeGreaterThanOrEqual(1);
    for (const id of others) expect(mine).toContain(`/console/operators/${id}/revoke`);
    // an admin ends another admin's role through the form
    const otherId = others.at(-1)!;
    const ended = await a.b.page(
      await post(a.b, `/console/operators/${otherId}/revoke`, { csrf: csrfOf(a.home), lang: "en" }),
    );
    expect(ended.status).toBe(200);
    expect(ended.html).toContain("Saved.");
    expect(ended.html).not.toContain(`<code>${otherId}</code>`);
    expect((await other.b.fetch("/console/apps")).status).toBe(403);
    // down to one admin (the rest ended through the API): no way to end it, and the page says why
    for (const id of others.slice(0, -1)) expect((await admin("DELETE", `/admin/operators/${id}`)).status).toBe(200);
    const last = (await a.b.page(await a.b.fetch("/console/operators?lang=en"))).html;
    expect(last).toContain("The last admin. Grant another admin first to end this role.");
    expect(last).not.toContain(`/console/operators/${me}/revoke`);
    // the form posted anyway: the service's refusal on the page, and the role kept
    const refused = await a.b.page(
      await post(a.b, `/console/operators/${me}/revoke`, { csrf: csrfOf(a.home), lang: "en" }),
    );
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("the last admin");
    // nor does an invitation to a lesser role, taken at the next sign-in: the role is kept, and the
    // trail says why
    await grant(a.who.phone, "viewer");
    // (two minutes on: the number's next code is not held back by the last one's)
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 2 * 60_000);
    const again = new Browser();
    await signIn(again, a.who);
    expect((await again.fetch("/console/operators")).status).toBe(200);
    const kept = (await auditEvents({ type: "operator.taken" })).filter((e) => e.outcome === "refused");
    expect(kept.map((e) => JSON.parse(e.detail!))).toEqual([{ reason: "last_admin" }]);
    // with a second admin, the first gives up their own role: the console then shows no access
    await operator("admin");
    const gaveUp = await post(a.b, `/console/operators/${me}/revoke`, { csrf: csrfOf(a.home), lang: "en" });
    expect(gaveUp.status).toBe(303);
    expect(gaveUp.headers.get("Location")).toBe("/console?lang=en");
    const now = await a.b.page(await a.b.fetch("/console?lang=en"));
    expect(now.status).toBe(403);
    expect(now.html).toContain("No access to the console");
    expect((await list()).filter((o) => o.role === "admin").map((o) => o.id)).not.toContain(me);
  });

  it("an admin action asks for a sign-in from the last 10 minutes", async () => {
    const { b, home, who } = await operator("admin");
    const csrf = csrfOf(home);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 11 * 60_000);
    const res = await b.page(await post(b, "/console/tokens", { csrf, lang: "ko", name: "ci", role: "viewer" }));
    expect(res.status).toBe(403);
    expect(res.html).toContain("다시 로그인해 확인해 주세요");
    // viewing an admin page is not an admin action: no fresh proof needed
    expect((await b.fetch("/console/tokens")).status).toBe(200);
    // (still 11 minutes on: the number's next code is not held back by the last one's)
    const fresh = await signIn(b, who, "?reauth=1&next=/console/tokens");
    expect(fresh.html).toContain("API 토큰");
    const made = await b.page(
      await post(b, "/console/tokens", { csrf: csrfOf(fresh), lang: "ko", name: "ci", role: "viewer" }),
    );
    expect(made.status).toBe(200);
    expect(made.html).toMatch(/data-secret>plt_/);
  });

  it("a session ends after 30 idle minutes, and after 12 hours however busy", async () => {
    const { b } = await operator("viewer");
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(start + 29 * 60_000);
    expect((await b.fetch("/console/apps")).status).toBe(200);
    vi.setSystemTime(start + 29 * 60_000 + 31 * 60_000);
    expect((await b.fetch("/console/apps")).status).toBe(303);

    const busy = await operator("viewer");
    const t0 = Date.now();
    let last = 200;
    for (let m = 20; m <= 12 * 60 + 20; m += 20) {
      vi.setSystemTime(t0 + m * 60_000);
      last = (await busy.b.fetch("/console/apps")).status;
      if (m < 12 * 60) expect(last, `at ${m} minutes`).toBe(200);
    }
    expect(last).toBe(303);
  });

  it("a role ends when its number passes to another person; the audit says so", async () => {
    const { b, who } = await operator("editor");
    expect((await b.fetch("/console/apps")).status).toBe(200);
    // the carrier's file gives the number to another person (another ci); the run's commit removes the first
    const run = "console-reassign-run";
    const res = await admin("POST", `/admin/directory/import?run=${run}`, {
      json: [
        {
          telcoCd: "K",
          phoneNo: who.phone,
          name: "새사람",
          gender: "M",
          birth: "1970-01-01",
          foreign: "L",
          ci: ciOf(250),
        },
      ],
    });
    expect(res.status).toBe(200);
    expect((await admin("POST", `/admin/directory/import/commit?run=${run}`)).status).toBe(200);
    const after = await b.page(await b.fetch("/console/apps"));
    expect(after.status).toBe(403);
    expect(after.html).toContain("콘솔 권한이 없습니다");
    const [ended] = await auditEvents({ type: "operator.ended" });
    expect(JSON.parse(ended!.detail!)).toMatchObject({ reason: "person_left" });
    // the new holder of the number signs in with no role (a few minutes on: a new code is sent)
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 5 * 60_000);
    const next = new Browser();
    const p = await signIn(next, { telco: "K", name: "새사람", phone: who.phone });
    expect(p.status).toBe(403);
  });
});
