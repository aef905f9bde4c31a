// An app's statistics in the developer console (docs/developers.md "Statistics"), through HTTP in
// workerd: real sign-ins to a testing app (two test numbers the service allocated, one typing a
// wrong code first), a stranger the testing stage refuses and a disconnect by the app, rolled up by
// flushing the audit outbox; then the JSON, the CSV download and the page (Korean and
// English) give the same exact figures for the Korean day, zeros for the 29 days before, and the
// failures' reasons; a team member reads them, a second developer gets 404 on every one.
import { describe, expect, it } from "vitest";
import { flushAudit } from "../support/audit";
import {
  api,
  createApp,
  csrfOf,
  developer as developerIn,
  identifyAt,
  person as personIn,
  signIn,
  SHOP,
  type Person,
} from "../support/developers";
import { basic, call, exchange, FORM, form, userMe } from "../support/helpers";
import { alertText, Browser } from "../support/signin";
import { csvCell, STATS_DAYS, type AppStats } from "../../workers/developers/stats";

const person = () => personIn("0107");
const developer = () => developerIn("0107");

async function signInTo(clientId: string, who: Person, otp: string, wrongFirst = false) {
  const b = new Browser();
  const q = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: SHOP.redirect_uris[0]!,
    state: "s1",
  });
  const p1 = await b.page(await b.fetch(`/oauth2/authorize?${q}`));
  expect(p1.form?.step, p1.html.slice(0, 300)).toBe("identify");
  let p = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  expect(p.form?.step, alertText(p.html)).toBe("verify");
  if (wrongFirst) {
    p = await b.submit(p, { otp: otp.replace(/\d/g, (c) => String((Number(c) + 1) % 10)) });
    expect(p.form?.step, alertText(p.html)).toBe("verify");
  }
  p = await b.submit(p, { otp });
  if (p.form?.step === "consent") p = await b.submit(p, { agree: "Y" });
  expect(p.status, alertText(p.html)).toBe(302);
  return new URL(p.res.headers.get("Location")!).searchParams.get("code")!;
}

const DAY = 86_400_000;
/** The Korean calendar day `ms` falls in, YYYY-MM-DD. */
const kstDay = (ms: number) => new Date(ms + 9 * 3_600_000).toISOString().slice(0, 10);

/** The app's statistics once the audit outbox is flushed and `done` holds (audits sent after an answer land soon after). */
async function statsOnceRolledUp(b: Browser, csrf: string, clientId: string, done: (s: AppStats) => boolean) {
  let s: AppStats | undefined;
  for (let i = 0; i < 40; i++) {
    await flushAudit();
    const res = await api(b, csrf, "GET", `/developers/api/apps/${clientId}/stats`);
    expect(res.status).toBe(200);
    s = (await res.json()) as AppStats;
    if (done(s)) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
  return s!;
}

const sum = (s: AppStats, k: "signins" | "consents" | "disconnects" | "failures") =>
  s.days.reduce((a, r) => a + r[k], 0);

describe("an app's statistics", () => {
  it("counts the real sign-ins, new consents, a disconnect and the failures of the Korean day; the JSON, the CSV and the page agree", async () => {
    const owner = await developer();
    const made = await createApp(owner.b, owner.csrf);
    const id = made.client_id;
    const dayBefore = kstDay(Date.now());
    // two test numbers the service allocated sign in and consent (no SMS: their codes are fixed);
    // the second types a wrong code first, and the app then disconnects it
    const numbers = [];
    for (let i = 0; i < 2; i++) {
      const res = await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${id}/test-numbers`);
      expect(res.status).toBe(201);
      numbers.push((await res.json()) as { phoneNo: string; name: string; telcoCd: string; code: string });
    }
    const [t, u] = numbers as [(typeof numbers)[0], (typeof numbers)[0]];
    await signInTo(id, { telco: t.telcoCd, name: t.name, phone: t.phoneNo }, t.code);
    const code = await signInTo(id, { telco: u.telcoCd, name: u.name, phone: u.phoneNo }, u.code, true);
    const token = await exchange(code, { clientId: id, secret: made.client_secret });
    expect(token.status, await token.clone().text()).toBe(200);
    const me = await userMe(((await token.json()) as { access_token: string }).access_token);
    expect(me.status).toBe(200);
    const { plid } = ((await me.json()) as { user: { plid: string } }).user;
    const gone = await call("/v1/user/disconnect", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(id, made.client_secret) },
      body: form({ plid }),
    });
    expect(gone.status, await gone.clone().text()).toBe(200);
    // a stranger is refused by the testing stage
    expect((await identifyAt(id, await person())).status).toBe(403);

    const s = await statsOnceRolledUp(
      owner.b,
      owner.csrf,
      id,
      (s) => sum(s, "signins") >= 2 && sum(s, "disconnects") >= 1 && sum(s, "failures") >= 2,
    );
    const today = kstDay(Date.now());
    expect(s.client_id).toBe(id);
    expect(s.days).toHaveLength(STATS_DAYS);
    expect(s.to).toBe(today);
    expect(s.from).toBe(kstDay(Date.now() - (STATS_DAYS - 1) * DAY));
    expect(s.days.map((r) => r.day)).toEqual(
      Array.from({ length: STATS_DAYS }, (_, i) => kstDay(Date.now() - (STATS_DAYS - 1 - i) * DAY)),
    );
    expect({
      signins: sum(s, "signins"),
      consents: sum(s, "consents"),
      disconnects: sum(s, "disconnects"),
      failures: sum(s, "failures"),
    }).toEqual({ signins: 2, consents: 2, disconnects: 1, failures: 2 });
    expect(s.failure_reasons).toEqual({ app_testing: 1, otp_wrong: 1 });
    // all on the Korean day they happened (unless the test crossed midnight KST), the others zeros
    if (dayBefore === today) {
      expect(s.days.at(-1)).toEqual({ day: today, signins: 2, consents: 2, disconnects: 1, failures: 2 });
      for (const r of s.days.slice(0, -1))
        expect(r).toEqual({ day: r.day, signins: 0, consents: 0, disconnects: 0, failures: 0 });
    }
    expect(JSON.stringify(s)).not.toContain(t.phoneNo);
    expect(JSON.stringify(s)).not.toContain(u.phoneNo);
    expect(JSON.stringify(s)).not.toContain(plid);

    // the CSV: a download named after the app, a header row, a row a day oldest first
    const csv = await owner.b.fetch(`/developers/apps/${id}/stats.csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("Content-Disposition")).toBe(`attachment; filename="${id}-stats.csv"`);
    expect(csv.headers.get("Cache-Control")).toBe("no-store");
    const lines = (await csv.text()).split("\r\n");
    expect(lines.at(-1)).toBe("");
    expect(lines[0]).toBe("day,signins,consents,disconnects,failures");
    expect(lines.slice(1, -1)).toEqual(
      s.days.map((r) => `${r.day},${r.signins},${r.consents},${r.disconnects},${r.failures}`),
    );
    if (dayBefore === today) expect(lines.at(-2)).toBe(`${today},2,2,1,2`);
    for (const cell of lines.flatMap((l) => l.split(","))) expect(cell).not.toMatch(/^[=+\-@]/);

    // the page, Korean by default, English on asking; the app's page links to it
    const ko = await owner.b.page(await owner.b.fetch(`/developers/apps/${id}/stats`));
    expect(ko.status).toBe(200);
    expect(ko.html).toContain("<h1>Demo Shop · 통계</h1>");
    expect(ko.html).toContain("로그인<b>2</b>");
    expect(ko.html).toContain("새 동의<b>2</b>");
    expect(ko.html).toContain("연결 해제<b>1</b>");
    expect(ko.html).toContain("실패<b>2</b>");
    expect(ko.html).toContain("<caption>실패 사유</caption>");
    expect(ko.html).toContain("<tr><td><code>otp_wrong</code></td><td>1</td></tr>");
    expect(ko.html).toContain("<tr><td><code>app_testing</code></td><td>1</td></tr>");
    expect(ko.html).toContain(`href="/developers/apps/${id}/stats.csv"`);
    expect(ko.html).not.toContain(t.phoneNo);
    expect(ko.html).not.toContain(u.phoneNo);
    if (dayBefore === today)
      expect(ko.html).toContain(`<tr><td class="mono">${today}</td><td>2</td><td>2</td><td>1</td><td>2</td></tr>`);
    const en = await owner.b.page(await owner.b.fetch(`/developers/apps/${id}/stats?lang=en`));
    expect(en.status).toBe(200);
    expect(en.html).toContain('<html lang="en"');
    expect(en.html).toContain("<h1>Demo Shop · Statistics</h1>");
    expect(en.html).toContain("Sign-ins<b>2</b>");
    expect(en.html).toContain("New consents<b>2</b>");
    expect(en.html).toContain("Disconnects<b>1</b>");
    expect(en.html).toContain("<caption>Failure reasons</caption>");
    expect(en.html).toContain(`href="/developers/apps/${id}/stats.csv?lang=en"`);
    expect(en.html).toContain("Download CSV");
    const app = await owner.b.page(await owner.b.fetch(`/developers/apps/${id}?lang=en`));
    expect(app.html).toContain(`<a href="/developers/apps/${id}/stats?lang=en">Statistics</a>`);
  });

  it("an app without counts shows its 30 days as zeros and no failure; a team member reads them too", async () => {
    const owner = await developer();
    const made = await createApp(owner.b, owner.csrf);
    const id = made.client_id;
    const mate = await person();
    const inv = await api(owner.b, owner.csrf, "POST", `/developers/api/apps/${id}/team`, {
      phone: mate.phone,
      role: "member",
    });
    expect(inv.status, await inv.clone().text()).toBe(201);
    const b = new Browser();
    const csrf = csrfOf(await signIn(b, mate));
    expect((await api(b, csrf, "POST", `/developers/api/invites/${id}/accept`)).status).toBe(200);
    const res = await api(b, csrf, "GET", `/developers/api/apps/${id}/stats`);
    expect(res.status).toBe(200);
    const s = (await res.json()) as AppStats;
    expect(s.days).toHaveLength(STATS_DAYS);
    expect(s.days.every((r) => r.signins + r.consents + r.disconnects + r.failures === 0)).toBe(true);
    expect(s.failure_reasons).toEqual({});
    const csv = (await (await b.fetch(`/developers/apps/${id}/stats.csv`)).text()).split("\r\n");
    expect(csv).toHaveLength(STATS_DAYS + 2);
    expect(csv.slice(1, -1).every((l) => /^\d{4}-\d{2}-\d{2},0,0,0,0$/.test(l))).toBe(true);
    const page = await b.page(await b.fetch(`/developers/apps/${id}/stats`));
    expect(page.status).toBe(200);
    expect(page.html).toContain("이 기간에 실패한 로그인이 없습니다.");
    const en = await b.page(await b.fetch(`/developers/apps/${id}/stats?lang=en`));
    expect(en.html).toContain("No sign-in failed in this range.");
  });

  it("a second developer gets 404 on the page, the CSV and the API; without a session, 401 and the sign-in", async () => {
    const one = await developer();
    const two = await developer();
    const made = await createApp(one.b, one.csrf);
    const id = made.client_id;
    const paths = [`/developers/apps/${id}/stats`, `/developers/apps/${id}/stats.csv`];
    for (const path of paths) {
      const res = await two.b.fetch(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("Content-Type"), path).toContain("text/html");
      expect(await res.text(), path).not.toContain("signins");
    }
    expect((await api(two.b, two.csrf, "GET", `/developers/api/apps/${id}/stats`)).status).toBe(404);
    // an unknown app answers the same
    expect((await api(two.b, two.csrf, "GET", "/developers/api/apps/NoSuchApp000000000000/stats")).status).toBe(404);
    const none = new Browser();
    expect((await none.fetch(`/developers/api/apps/${id}/stats`)).status).toBe(401);
    for (const path of paths) {
      const res = await none.fetch(path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get("Location"), path).toMatch(/^\/developers\?next=/);
    }
  });

  it("a CSV cell is never read as a formula and is quoted when it must be", () => {
    expect(csvCell("2025-01-02")).toBe("2025-01-02");
    expect(csvCell(12)).toBe("12");
    expect(csvCell("=HYPERLINK(1)")).toBe("'=HYPERLINK(1)");
    expect(csvCell("+1")).toBe("'+1");
    expect(csvCell("-1")).toBe("'-1");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
  });
});
