// The developer console (docs/developers.md) through HTTP in workerd:
// - a person signs in at /developers with the service's own steps (code from the dev SMS outbox) and
//   gets a session of its own (`__Host-pl_developer`); a fixed-code test number never does;
// - an app registered there starts in the testing stage, owned by its developer, its secret shown once;
//   a developer owns at most DEVELOPER_MAX_APPS, also when the registrations race;
// - a testing app admits only its team's numbers and its test numbers, decided before anyone is looked
//   up: an existing and a non-existing number get the same page and no code is sent;
// - test numbers come from the range no subscriber holds and sign in to their app only;
// - no developer reads or changes another's app: every route with an app in its path, enumerated
//   from the route tables, answers a second developer as it answers an unknown app;
// - every change names its developer in the audit trail.
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "../support/env";
import { auditEvents } from "../support/audit";
import { admin } from "../support/admin";
import { ciOf, importRows, lastCode } from "../support/directory";
import {
  api,
  createApp,
  csrfOf,
  developer as developerIn,
  identifyAt,
  outboxCount,
  person as personIn,
  post,
  signIn,
  SHOP,
} from "../support/developers";

afterEach(() => {
  vi.useRealTimers();
});

const person = () => personIn("0108");
const developer = () => developerIn("0108");
import { HONG } from "../support/helpers";
import { alertText, Browser } from "../support/signin";
import { apiTable, pageTable } from "../../workers/developers/routes";
import { journalSeen, journalSeq, watchJournal } from "../support/faults";
import { journalRows } from "../../workers/provider/store/change-journal";

describe("signing in to the developer console", () => {
  it("a person proves their number and gets the developer console's own strict session; the operations console does not open with it", async () => {
    const who = await person();
    const b = new Browser();
    const p1 = await b.page(await b.fetch("/developers"));
    expect(p1.html).toContain("개발자 콘솔");
    const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    const p3 = await b.submit(p2, { otp: await lastCode(who.phone) });
    expect(p3.status).toBe(303);
    const cookie = p3.res.headers.getAll("Set-Cookie").find((c) => c.startsWith("__Host-pl_developer="))!;
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("HttpOnly");
    const home = await b.page(await b.fetch(p3.res.headers.get("Location")!));
    expect(home.status).toBe(200);
    expect(home.html).toContain("내 앱");
    expect(home.html).not.toContain(who.phone);
    // the console is another door: its sign-in shows
    const console = await b.page(await b.fetch("/console"));
    expect(console.form?.step).toBe("identify");
    expect((await auditEvents({ type: "developer.signin" })).length).toBeGreaterThan(0);
  });

  it("a fixed-code test number cannot be a developer: a page says why and no session opens", async () => {
    const b = new Browser();
    const p1 = await b.page(await b.fetch("/developers?lang=en"));
    const p2 = await b.submit(p1, { telcoCd: HONG.telco, name: HONG.name, phoneNo: HONG.phone });
    const p3 = await b.submit(p2, { otp: HONG.code });
    expect(p3.status).toBe(403);
    expect(p3.html).toContain("A test number cannot be a developer");
    expect([...b.cookies.keys()].some((k) => k.includes("pl_developer"))).toBe(false);
  });
});

describe("registering an app", () => {
  it("starts in the testing stage, owned by its developer; the secret is shown once and the trail names the developer", async () => {
    const { b, csrf } = await developer();
    const made = await createApp(b, csrf);
    expect(made).toMatchObject({ stage: "testing", role: "owner", status: "active" });
    expect(made.client_secret).toMatch(/^[A-Za-z0-9]{64}$/);
    const again = await (await api(b, csrf, "GET", `/developers/api/apps/${made.client_id}`)).json();
    expect(again).not.toHaveProperty("client_secret");
    const page = await b.page(await b.fetch(`/developers/apps/${made.client_id}`));
    expect(page.status).toBe(200);
    expect(page.html).not.toContain(made.client_secret);
    const [created] = await auditEvents({ type: "client.created", clientId: made.client_id });
    expect(JSON.parse(created!.detail!).actor).toMatch(/^developer:dv_[A-Za-z0-9_-]{16}$/);
    // the admin API sees it with its stage; an app the admin API registers is live
    expect(((await (await admin("GET", `/admin/clients/${made.client_id}`)).json()) as { stage: string }).stage).toBe(
      "testing",
    );
    const ops = (await (
      await admin("POST", "/admin/clients", { json: { name: "Ops", redirect_uris: ["https://ops.example/cb"] } })
    ).json()) as { stage: string };
    expect(ops.stage).toBe("live");
    const list = (await (await api(b, csrf, "GET", "/developers/api/apps")).json()) as {
      apps: { client_id: string }[];
    };
    expect(list.apps.map((a) => a.client_id)).toContain(made.client_id);
  });

  it("through the form: the app's page shows the secret once, in the page's language", async () => {
    const { b, home } = await developer();
    const form = new URLSearchParams({
      csrf: csrfOf(home),
      lang: "en",
      name: "Form Shop",
      redirect_uris: "https://form.example/cb",
      item_name: "on",
    });
    const res = await b.page(
      await b.fetch("/developers/apps", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: form.toString(),
      }),
    );
    expect(res.status).toBe(200);
    expect(res.html).toContain("The client secret, shown this once");
    expect(res.html).toContain('<p class="notice" role="status">The app is registered, in its testing stage.</p>');
    expect(res.html).toMatch(/<code class="secret">[A-Za-z0-9]{64}<\/code>/);
    expect(res.html).toContain("Testing");
    // what the app's server calls: the interface's four addresses under the service's public URL
    const base = env.PUBLIC_BASE_URL as string;
    expect(res.html).toContain("<h2>Integration</h2>");
    for (const path of ["/oauth2/authorize", "/oauth2/token", "/v1/user/me", "/v1/user/disconnect"])
      expect(res.html).toContain(`<dd class="mono">${base}${path}</dd>`);
    expect(res.html).not.toContain("/.well-known/openid-configuration");
    // the items as the consent page names them to the person, the API's field beside
    expect(res.html).toMatch(/name="item_phoneNo"> Mobile number <code>phoneNo<\/code>/);
    expect(res.html).toMatch(/name="item_name" checked> Name <code>name<\/code>/);
    const id = /\/developers\/apps\/([A-Za-z0-9]{20})/.exec(res.html)![1]!;
    // and phone-login-kit's configuration for this app, to paste (the secret named, never shown in it)
    const snippet = /<pre class="snippet"><code>([^<]*)<\/code><\/pre>/
      .exec(res.html)![1]!
      .replaceAll("&quot;", '"')
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">");
    expect(snippet).toBe(
      `createPhoneLogin<Env>({\n  providerUrl: "${base}",\n  clientId: "${id}",\n  redirectUri: "https://form.example/cb",\n  // clientSecret: env.PHONE_LOGIN_CLIENT_SECRET (npx wrangler secret put PHONE_LOGIN_CLIENT_SECRET)\n});`,
    );
    const ko = await b.page(await b.fetch(`/developers/apps/${id}`));
    expect(ko.html).toContain("<h2>연동 정보</h2>");
    expect(ko.html).toMatch(/name="item_phoneNo"> 휴대폰번호 <code>phoneNo<\/code>/);
    expect(ko.html).toMatch(/name="item_ci"> 연계정보\(CI\) <code>ci<\/code>/);
  });

  it("OpenID Connect is the developer's switch: the form's box turns it on, the app's page gives the issuer URL, the trail names it; off again, the page says nothing of it", async () => {
    const { b, home, csrf } = await developer();
    const res = await b.page(
      await b.fetch("/developers/apps", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          csrf: csrfOf(home),
          lang: "en",
          name: "OIDC Shop",
          redirect_uris: "https://oidc-shop.example/cb",
          item_name: "on",
          oidc: "on",
        }).toString(),
      }),
    );
    expect(res.status).toBe(200);
    expect(res.html).toContain("OpenID Connect issuer URL");
    expect(res.html).toContain(`<dd class="mono">${env.PUBLIC_BASE_URL as string}</dd>`);
    expect(res.html).toContain(
      `<dt>OpenID Connect discovery</dt><dd class="mono">${env.PUBLIC_BASE_URL as string}/.well-known/openid-configuration</dd>`,
    );
    const id = /\/developers\/apps\/([A-Za-z0-9]{20})/.exec(res.html)![1]!;
    const view = (await (await api(b, csrf, "GET", `/developers/api/apps/${id}`)).json()) as { oidc: boolean };
    expect(view.oidc).toBe(true);
    const [created] = await auditEvents({ type: "client.created", clientId: id });
    expect(JSON.parse(created!.detail!)).toMatchObject({ oidc: true });
    const off = await api(b, csrf, "PATCH", `/developers/api/apps/${id}`, { oidc: false });
    expect(off.status).toBe(200);
    expect(((await off.json()) as { oidc: boolean }).oidc).toBe(false);
    const [updated] = await auditEvents({ type: "client.updated", clientId: id });
    expect(JSON.parse(updated!.detail!)).toMatchObject({ fields: "oidc" });
    const page = await b.page(await b.fetch(`/developers/apps/${id}?lang=en`));
    expect(page.html).not.toContain("OpenID Connect issuer URL");
    // not a boolean: a clear 400, nothing changed
    const bad = await api(b, csrf, "PATCH", `/developers/api/apps/${id}`, { oidc: "yes" });
    expect(bad.status).toBe(400);
  });

  it("a developer owns at most DEVELOPER_MAX_APPS (10): twelve registrations at once make exactly ten", async () => {
    const { b, csrf } = await developer();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api(b, csrf, "POST", "/developers/api/apps", { ...SHOP, name: `Shop ${i}` }).then((r) => r.status),
      ),
    );
    expect(results.filter((s) => s === 201)).toHaveLength(10);
    expect(results.filter((s) => s === 400)).toHaveLength(2);
    const list = (await (await api(b, csrf, "GET", "/developers/api/apps")).json()) as { apps: unknown[] };
    expect(list.apps).toHaveLength(10);
  });

  it("a change without the CSRF token, or from another origin, is refused; malformed input is a clear 400", async () => {
    const { b, csrf } = await developer();
    expect((await api(b, "", "POST", "/developers/api/apps", SHOP)).status).toBe(403);
    expect((await api(b, csrf, "POST", "/developers/api/apps", SHOP, { Origin: "https://evil.example" })).status).toBe(
      403,
    );
    expect((await api(b, csrf, "POST", "/developers/api/apps", SHOP, { Origin: "null" })).status).toBe(403);
    // a form from another origin is refused as well; the pages send their Origin (same-origin referrer policy)
    const page = await b.fetch("/developers");
    expect(page.headers.get("Referrer-Policy")).toBe("same-origin");
    const forged = await b.fetch("/developers/apps", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: "https://evil.example" },
      body: new URLSearchParams({ csrf, name: "X", redirect_uris: "https://x.example/cb" }).toString(),
    });
    expect(forged.status).toBe(403);
    const bad = await b.fetch("/developers/api/apps", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    const unknown = await api(b, csrf, "POST", "/developers/api/apps", { ...SHOP, sms_daily_budget: 5 });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("sms_daily_budget");
    expect((await new Browser().fetch("/developers/api/apps")).status).toBe(401);
  });
});

describe("the testing stage", () => {
  it("admits only the team and the app's test numbers; an existing and a non-existing number see the same page and get no code", async () => {
    const { b, csrf, who } = await developer();
    const made = await createApp(b, csrf);
    const stranger = await person();
    const nobody = { telco: "K", name: "없는사람", phone: "01055550000" };
    const before = await outboxCount(stranger.phone);
    const a = await identifyAt(made.client_id, stranger);
    const n = await identifyAt(made.client_id, nobody);
    expect(a.status).toBe(403);
    expect(n.status).toBe(403);
    expect(a.html).toContain("아직 테스트 중인 앱입니다");
    expect(alertText(a.html)).toBe(
      `아직 테스트 중인 앱입니다이 앱(${SHOP.name})은 아직 테스트 단계라서 개발 팀과 테스트 번호만 로그인할 수 있습니다. 공개된 뒤에 다시 시도해 주세요. 인증번호는 보내지 않았습니다.`,
    );
    const norm = (h: string) => h.replace(/nonce-[^'"]+|nonce="[^"]+"|value="[^"]{20,}"/g, "");
    expect(norm(a.html)).toBe(norm(n.html));
    expect(await outboxCount(stranger.phone)).toBe(before);
    // the owner signs in: a code is sent and the sign-in ends at the app with a code
    const own = await identifyAt(made.client_id, who);
    expect(own.form?.step, alertText(own.html)).toBe("verify");
  });

  it("a test number comes from the range no subscriber holds, signs in to its app with its fixed code, and nowhere else", async () => {
    const { b, csrf } = await developer();
    const made = await createApp(b, csrf);
    const other = await createApp(b, csrf, { ...SHOP, name: "Other Shop" });
    const res = await api(b, csrf, "POST", `/developers/api/apps/${made.client_id}/test-numbers`);
    expect(res.status).toBe(201);
    const t = (await res.json()) as { phoneNo: string; name: string; code: string; telcoCd: string; ci: string };
    expect(t.phoneNo).toMatch(/^0100[1-9]\d{6}$/);
    expect(t.code).toMatch(/^\d{6}$/);
    expect(t.ci).toMatch(/^[A-Za-z0-9+/]{85}[AQgw]==$/);
    // it expires after 90 days (the figure), and a renewal gives 90 days from then with the same code
    const DAY = 86_400_000;
    const expires = Date.parse((t as unknown as { expires_at: string }).expires_at);
    expect(Math.abs(expires - (Date.now() + 90 * DAY))).toBeLessThan(60_000);
    const who = { telco: t.telcoCd, name: t.name, phone: t.phoneNo };
    const p = await identifyAt(made.client_id, who);
    expect(p.form?.step, alertText(p.html)).toBe("verify");
    // past its expiry the testing stage no longer admits it; renewed, it signs in again
    await env.DB.prepare("UPDATE app_test_numbers SET expires_at = ? WHERE phone = ?")
      .bind(Date.now() - 1, t.phoneNo)
      .run();
    expect((await identifyAt(made.client_id, who)).status).toBe(403);
    const renewed = (await (
      await api(b, csrf, "POST", `/developers/api/apps/${made.client_id}/test-numbers/${t.phoneNo}/renew`)
    ).json()) as { expires_at: string; code: string };
    expect(Math.abs(Date.parse(renewed.expires_at) - (Date.now() + 90 * DAY))).toBeLessThan(60_000);
    expect(renewed.code).toBe(t.code);
    expect((await identifyAt(made.client_id, who)).form?.step).toBe("verify");
    const b2 = new Browser();
    const q = new URLSearchParams({
      response_type: "code",
      client_id: made.client_id,
      redirect_uri: SHOP.redirect_uris[0]!,
      state: "s1",
    });
    const f1 = await b2.page(await b2.fetch(`/oauth2/authorize?${q}`));
    const f2 = await b2.submit(f1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    let f3 = await b2.submit(f2, { otp: t.code });
    if (f3.form?.step === "consent") f3 = await b2.submit(f3, { agree: "Y" });
    expect(f3.status, alertText(f3.html)).toBe(302);
    expect(new URL(f3.res.headers.get("Location")!).searchParams.get("code")).toBeTruthy();
    // the other app's testing stage does not know it
    expect((await identifyAt(other.client_id, who)).status).toBe(403);
    // the range is refused by an import
    const imported = await importRows([
      { telcoCd: "S", phoneNo: t.phoneNo, name: "X", gender: "M", birth: "1990-01-01", foreign: "L", ci: ciOf(7) },
    ]);
    expect(JSON.stringify(imported)).toContain("test numbers");
    // removed: it no longer signs in
    expect(
      (await api(b, csrf, "DELETE", `/developers/api/apps/${made.client_id}/test-numbers/${t.phoneNo}`)).status,
    ).toBe(200);
    expect((await identifyAt(made.client_id, who)).status).toBe(403);
  });
});

describe("deleting a developer's app", () => {
  it("an operator deletes it with its team, invitations and reviews, and its test numbers leave the directory", async () => {
    const { b, csrf } = await developer();
    const made = await createApp(b, csrf);
    const t = (await (await api(b, csrf, "POST", `/developers/api/apps/${made.client_id}/test-numbers`)).json()) as {
      phoneNo: string;
    };
    await api(b, csrf, "POST", `/developers/api/apps/${made.client_id}/team`, { phone: "01077771234" });
    await api(b, csrf, "POST", `/developers/api/apps/${made.client_id}/review`);
    const res = await admin("DELETE", `/admin/clients/${made.client_id}`);
    expect(res.status, await res.clone().text()).toBe(200);
    for (const table of ["app_members", "app_invites", "app_test_numbers", "app_reviews"]) {
      const r = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE client_id = ?`)
        .bind(made.client_id)
        .first<{ n: number }>();
      expect(r!.n, table).toBe(0);
    }
    const left = await env.DB.prepare("SELECT 1 FROM app_test_numbers WHERE phone = ?").bind(t.phoneNo).first();
    expect(left).toBeNull();
    const list = (await (await admin("GET", "/admin/test-numbers")).json()) as { test_numbers: { phoneNo: string }[] };
    expect(list.test_numbers.map((n) => n.phoneNo)).not.toContain(t.phoneNo);
    expect((await api(b, csrf, "GET", `/developers/api/apps/${made.client_id}`)).status).toBe(404);
  });
});

describe("the team", () => {
  it("an owner invites a number; only its person, signed in, accepts; the member signs in to the testing app; an app always keeps an owner", async () => {
    const owner = await developer();
    const made = await createApp(owner.b, owner.csrf);
    const mate = await person();
    // before joining, the testing stage does not admit the invitee
    expect((await identifyAt(made.client_id, mate)).status).toBe(403);
    const inv = await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${made.client_id}/team`, {
      phone: mate.phone,
      role: "member",
    });
    expect(inv.status, await inv.clone().text()).toBe(201);
    expect(await inv.clone().text()).not.toContain(mate.phone);
    // an invitation expires in 7 days (the figure)
    const invExpires = Date.parse(((await inv.clone().json()) as { expires_at: string }).expires_at);
    expect(Math.abs(invExpires - (Date.now() + 7 * 86_400_000))).toBeLessThan(60_000);
    // an invitation is not a membership: still refused
    expect((await identifyAt(made.client_id, mate)).status).toBe(403);
    // another developer cannot take it: it is not for their number
    const other = await developer();
    expect((await api(other.b, other.csrf, "POST", `/developers/api/invites/${made.client_id}/accept`)).status).toBe(
      404,
    );
    // the invitee signs in, sees it, and accepts
    const b = new Browser();
    const home = await signIn(b, mate);
    expect(home.html).toContain(SHOP.name);
    const csrf = csrfOf(home);
    const mine = (await (await api(b, csrf, "GET", "/developers/api/invites")).json()) as {
      invites: { client_id: string }[];
    };
    expect(mine.invites.map((i) => i.client_id)).toEqual([made.client_id]);
    const ok = await api(b, csrf, "POST", `/developers/api/invites/${made.client_id}/accept`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ role: "member" });
    // taken once
    expect((await api(b, csrf, "POST", `/developers/api/invites/${made.client_id}/accept`)).status).toBe(404);
    // the member signs in to the testing app, reads it, and cannot change its settings
    expect((await identifyAt(made.client_id, mate)).form?.step).toBe("verify");
    expect((await api(b, csrf, "GET", `/developers/api/apps/${made.client_id}`)).status).toBe(200);
    expect((await api(b, csrf, "PATCH", `/developers/api/apps/${made.client_id}`, { name: "Mine" })).status).toBe(403);
    // the last owner can neither leave nor be demoted; a second owner lets them
    const team = (await (
      await api(owner.b, owner.csrf, "GET", `/developers/api/apps/${made.client_id}/team`)
    ).json()) as {
      members: { member: string; role: string; masked: string }[];
    };
    expect(team.members).toHaveLength(2);
    const ownerId = team.members.find((m) => m.role === "owner")!.member;
    const mateId = team.members.find((m) => m.role === "member")!.member;
    expect(
      (await api(owner.b, owner.csrf, "DELETE", `/developers/api/apps/${made.client_id}/team/${ownerId}`)).status,
    ).toBe(400);
    expect(
      (
        await api(owner.b, owner.csrf, "PATCH", `/developers/api/apps/${made.client_id}/team/${ownerId}`, {
          role: "member",
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await api(owner.b, owner.csrf, "PATCH", `/developers/api/apps/${made.client_id}/team/${mateId}`, {
          role: "owner",
        })
      ).status,
    ).toBe(200);
    expect(
      (await api(owner.b, owner.csrf, "DELETE", `/developers/api/apps/${made.client_id}/team/${ownerId}`)).status,
    ).toBe(200);
    // the one who left sees the app no more
    expect((await api(owner.b, owner.csrf, "GET", `/developers/api/apps/${made.client_id}`)).status).toBe(404);
    const joined = await auditEvents({ type: "team.joined", clientId: made.client_id });
    expect(JSON.parse(joined[0]!.detail!).actor).toMatch(/^developer:dv_/);
  });

  it("the app's page offers only what the service would do: the last owner no change, each member a way out that lands on their apps", async () => {
    const owner = await developer();
    const made = await createApp(owner.b, owner.csrf, { ...SHOP, name: "Team Page Shop" });
    const page = async (b: Browser) => (await b.page(await b.fetch(`/developers/apps/${made.client_id}?lang=en`))).html;
    const ownerId = (
      (await (await api(owner.b, owner.csrf, "GET", `/developers/api/apps/${made.client_id}/team`)).json()) as {
        members: { member: string }[];
      }
    ).members[0]!.member;
    // the only owner: no demotion, no removal, and the page says why
    let html = await page(owner.b);
    expect(html).toContain("An app always keeps an owner.");
    expect(html).not.toContain(`/team/${ownerId}/remove`);
    expect(html).not.toContain(`/team/${ownerId}/role`);
    // a member joins: the owner may change or remove them; the member sees only their own way out
    const mate = await person();
    expect(
      (await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${made.client_id}/team`, { phone: mate.phone }))
        .status,
    ).toBe(201);
    const mb = new Browser();
    const mateCsrf = csrfOf(await signIn(mb, mate));
    expect((await api(mb, mateCsrf, "POST", `/developers/api/invites/${made.client_id}/accept`)).status).toBe(200);
    const mateId = (
      (await (await api(owner.b, owner.csrf, "GET", `/developers/api/apps/${made.client_id}/team`)).json()) as {
        members: { member: string; role: string }[];
      }
    ).members.find((m) => m.role === "member")!.member;
    html = await page(owner.b);
    expect(html).toContain(`/team/${mateId}/role`);
    expect(html).toContain(`/team/${mateId}/remove`);
    expect(html).not.toContain(`/team/${ownerId}/remove`);
    html = await page(mb);
    expect(html).toMatch(
      new RegExp(
        `/team/${mateId}/remove"><input[^>]*><input[^>]*><button type="submit" class="secondary">Leave the team</button>`,
      ),
    );
    expect(html).not.toContain(`/team/${ownerId}/`);
    expect(html).not.toContain(`/team/${mateId}/role`);
    expect(html).not.toContain("An app always keeps an owner.");
    // the member leaves through the form: their apps page follows, with a notice, without the app
    const left = await mb.page(
      await post(mb, `/developers/apps/${made.client_id}/team/${mateId}/remove`, { csrf: mateCsrf, lang: "en" }),
    );
    expect(left.status).toBe(200);
    expect(left.html).toContain("You left the team of Team Page Shop.");
    // nothing of the app is offered, its address neither (the language switch is the apps page's)
    expect(left.html).not.toContain(made.client_id);
    expect(left.html).toContain('<a href="/developers" lang="ko" hreflang="ko">한국어</a>');
    expect((await api(mb, mateCsrf, "GET", `/developers/api/apps/${made.client_id}`)).status).toBe(404);
    const removed = await auditEvents({ type: "team.removed", clientId: made.client_id });
    expect(removed).toHaveLength(1);
    // the owner's page again: only the owner, who still cannot leave
    html = await page(owner.b);
    expect(html).not.toContain(mateId);
    expect(html).toContain("An app always keeps an owner.");
  });

  it("an expired invitation cannot be accepted, and a withdrawn one neither", async () => {
    const owner = await developer();
    const made = await createApp(owner.b, owner.csrf);
    const mate = await person();
    await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${made.client_id}/team`, { phone: mate.phone });
    await env.DB.prepare("UPDATE app_invites SET expires_at = ? WHERE client_id = ?")
      .bind(Date.now() - 1, made.client_id)
      .run();
    const b = new Browser();
    const csrf = csrfOf(await signIn(b, mate));
    expect((await api(b, csrf, "POST", `/developers/api/invites/${made.client_id}/accept`)).status).toBe(404);
    const again = (await (
      await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${made.client_id}/team`, { phone: mate.phone })
    ).json()) as {
      invite: string;
    };
    expect(
      (await api(owner.b, owner.csrf, "DELETE", `/developers/api/apps/${made.client_id}/team/invites/${again.invite}`))
        .status,
    ).toBe(200);
    expect((await api(b, csrf, "POST", `/developers/api/invites/${made.client_id}/accept`)).status).toBe(404);
    expect((await identifyAt(made.client_id, mate)).status).toBe(403);
  });
});

/** Everything D1 holds of an app: what a refused request must leave as it was. */
async function snapshot(id: string): Promise<string> {
  const rs = await env.DB.batch([
    env.DB.prepare("SELECT * FROM clients WHERE client_id = ?").bind(id),
    env.DB.prepare("SELECT * FROM app_members WHERE client_id = ? ORDER BY subscriber_id").bind(id),
    env.DB.prepare("SELECT phone_key, role FROM app_invites WHERE client_id = ? ORDER BY phone_key").bind(id),
    env.DB.prepare("SELECT * FROM app_test_numbers WHERE client_id = ?").bind(id),
    env.DB.prepare("SELECT id, state FROM app_reviews WHERE client_id = ?").bind(id),
  ]);
  return JSON.stringify(rs.map((r) => r.results));
}

describe("no developer reads or changes another's app", () => {
  it("every route with an app in its path answers a second developer, a removed member and an expired invitee as an unknown app (404), with nothing changed", async () => {
    const one = await developer();
    const made = await createApp(one.b, one.csrf);
    const id = made.client_id;
    // the app's real test number, member and invitation, so that only who asks is wrong
    const t = (await (await api(one.b, one.csrf, "POST", `/developers/api/apps/${id}/test-numbers`)).json()) as {
      phoneNo: string;
    };
    const two = await developer();
    const removed = await developer();
    const invitee = await developer();
    await api(one.b, one.csrf, "POST", `/developers/api/apps/${id}/team`, { phone: removed.who.phone });
    expect((await api(removed.b, removed.csrf, "POST", `/developers/api/invites/${id}/accept`)).status).toBe(200);
    const team = (await (await api(one.b, one.csrf, "GET", `/developers/api/apps/${id}/team`)).json()) as {
      members: { member: string; role: string }[];
    };
    const removedId = team.members.find((m) => m.role === "member")!.member;
    const ownerId = team.members.find((m) => m.role === "owner")!.member;
    expect((await api(one.b, one.csrf, "DELETE", `/developers/api/apps/${id}/team/${removedId}`)).status).toBe(200);
    await api(one.b, one.csrf, "POST", `/developers/api/apps/${id}/team`, { phone: invitee.who.phone });
    await env.DB.prepare("UPDATE app_invites SET expires_at = ? WHERE client_id = ?")
      .bind(Date.now() - 1, id)
      .run();
    const live = (await (
      await api(one.b, one.csrf, "POST", `/developers/api/apps/${id}/team`, { phone: "01077775555" })
    ).json()) as { invite: string };
    const routes = [...apiTable, ...pageTable].filter((r) => r.path.includes(":id") && !r.path.endsWith("/*"));
    expect(routes.length).toBeGreaterThan(25);
    const before = await snapshot(id);
    await watchJournal();
    const seenBefore = await journalSeq();
    for (const [who, o] of [
      ["a second developer", two],
      ["a removed member", removed],
      ["an expired invitee", invitee],
    ] as const) {
      for (const r of routes) {
        const path = r.path
          .replace(":id", id)
          .replace(":phone", t.phoneNo)
          .replace(":member", ownerId)
          .replace(":invite", live.invite);
        const res = path.startsWith("/developers/api/")
          ? await api(o.b, o.csrf, r.method, path, r.method === "PATCH" ? { name: "Taken", role: "owner" } : undefined)
          : await o.b.fetch(path, {
              method: r.method,
              headers: { "Content-Type": "application/x-www-form-urlencoded" },
              body:
                r.method === "POST"
                  ? new URLSearchParams({
                      csrf: o.csrf,
                      name: "Taken",
                      redirect_uris: "https://x.example/cb",
                      phone: o.who.phone,
                      role: "owner",
                    }).toString()
                  : undefined,
            });
        expect(res.status, `${who}: ${r.method} ${r.path}`).toBe(404);
      }
    }
    const after = await snapshot(id);
    expect(after).toBe(before);
    // every change among them ran under a journal row, one per outsider, and none is left (refused: answered)
    const journaled = (await journalSeen(null, seenBefore)).map((r) => `${r.method} ${r.route}`);
    for (const r of routes.filter((r) => r.method !== "GET"))
      expect(journaled.filter((x) => x === `${r.method} ${r.path}`).length, `${r.method} ${r.path}`).toBe(3);
    expect(await journalRows(env)).toEqual([]);
  });

  it("a membership ends when the number passes to another person: the old session is signed out, the new holder is not on the team and cannot end a sign-in at the testing app", async () => {
    const owner = await developer();
    const made = await createApp(owner.b, owner.csrf);
    const mate = await developer();
    await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${made.client_id}/team`, { phone: mate.who.phone });
    expect((await api(mate.b, mate.csrf, "POST", `/developers/api/invites/${made.client_id}/accept`)).status).toBe(200);
    // the carrier gives the number to another person (another ci)
    await importRows([
      {
        telcoCd: "K",
        phoneNo: mate.who.phone,
        name: "새주인",
        gender: "M",
        birth: "1980-01-01",
        foreign: "L",
        ci: ciOf(231),
      },
    ]);
    // before anyone notices, the new holder tries the testing app: the number is still a team
    // number to the first check, but the person proven at the end is not on the team: no code
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 61_000); // past the number's resend wait
    const sb = new Browser();
    const p2 = await identifyAt(made.client_id, { telco: "K", name: "새주인", phone: mate.who.phone }, undefined, sb);
    expect(p2.form?.step, alertText(p2.html)).toBe("verify");
    let p3 = await sb.submit(p2, { otp: await lastCode(mate.who.phone) });
    if (p3.form?.step === "consent") p3 = await sb.submit(p3, { agree: "Y" });
    expect(p3.status).toBe(403);
    expect(p3.html).toContain("아직 테스트 중인 앱입니다");
    expect(p3.res.headers.get("Location")).toBeNull();
    // the old member's session is signed out, and their membership ends
    expect((await api(mate.b, mate.csrf, "GET", "/developers/api/apps")).status).toBe(401);
    const team = (await (
      await api(owner.b, owner.csrf, "GET", `/developers/api/apps/${made.client_id}/team`)
    ).json()) as {
      members: unknown[];
    };
    expect(team.members).toHaveLength(1);
    const [ended] = await auditEvents({ type: "team.removed", clientId: made.client_id });
    expect(JSON.parse(ended!.detail!).reason).toBe("person_left");
    // the new holder signs in to the developer console: no app of theirs, and the testing app's
    // first check no longer knows the number
    vi.setSystemTime(Date.now() + 61_000);
    const next = new Browser();
    const home = await signIn(next, { telco: "K", name: "새주인", phone: mate.who.phone });
    const apps = (await (await api(next, csrfOf(home), "GET", "/developers/api/apps")).json()) as { apps: unknown[] };
    expect(apps.apps).toEqual([]);
    expect((await identifyAt(made.client_id, { telco: "K", name: "새주인", phone: mate.who.phone })).status).toBe(403);
  });

  it("an app's test numbers are counted with the review test numbers in the directory's summary", async () => {
    const { b, csrf } = await developer();
    const made = await createApp(b, csrf);
    const count = async () =>
      ((await (await admin("GET", "/admin/directory")).json()) as { test_numbers: number }).test_numbers;
    const before = await count();
    await api(b, csrf, "POST", `/developers/api/apps/${made.client_id}/test-numbers`);
    expect(await count()).toBe(before + 1);
  });
});
