// The operator's live view and an alert's life in Debian Chromium against the real `npm start`
// server (docs/console.md "Overview", docs/operations.md "Alerts"). The service sends its codes
// through the SENS and NHN fakes (test/support/fixtures/, served here by Node, checking each
// request as the providers do), judges its alerts every 2 seconds and refreshes the overview every
// 2 seconds (ALERT_EVALUATE_SECONDS, CONSOLE_REFRESH_SECONDS), and posts its alert messages to a
// local receiver that checks their signature and timestamp as a real one would.
//
// What must hold: the overview shows a sign-in made in another browser without a reload; SENS
// failing 4 sends of 5 fires `sms.naver-sens.failures` once (the failed sends reach the person
// through NHN), the overview shows it without a reload, and the receiver gets it signed; SENS
// recovering clears it with one signed recovery.
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, stateShot } from "./chromium";
import { devAdminToken, startServer, type Server } from "./server";
import { CookieJar, parseForm } from "./signin-driver";

const ROOT = join(import.meta.dirname, "..", "..");
const FIXTURES = join(ROOT, "test", "support", "fixtures");
const OUT = join(ROOT, "test-results", "console");
const OPERATOR = { carrier: "KT", telco: "K", name: "박서준", phone: "01056789012" };
const PERSON = { telco: "L", name: "알림받는사람", phone: "01077770001" };
const SENS = {
  serviceId: "ncp:sms:kr:100000000001:alerts-browser",
  accessKey: "FAKEsensAccessKey0001",
  secretKey: "fakeSensSecretKey-0123456789abcdefghijKLMN",
};
const NHN = { appKey: "FakeAppKeyAlertsBrowser", secretKey: "fakeNhnSecretKey01" };
const WEBHOOK_SECRET = "alerts-browser-webhook-secret-0123456789";
const RULE = "sms.naver-sens.failures";

interface Served {
  url: string;
  close(): Promise<void>;
}

/** A fetch handler (a fake written for workerd) served by Node on a loopback port. */
async function serve(handler: (req: Request) => Promise<Response>): Promise<Served> {
  const srv = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const answer = await handler(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : undefined,
      }),
    );
    const out: Record<string, string> = {};
    answer.headers.forEach((v, k) => (out[k] = v));
    res.writeHead(answer.status, out);
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => srv.close(() => resolve())),
  };
}

interface AlertMessage {
  alert: string;
  status: "firing" | "resolved";
  text: string;
}

/** The alert receiver: keeps each message whose signature and timestamp hold, and counts the others. */
function receiver() {
  const got: AlertMessage[] = [];
  const bad: string[] = [];
  const handler = async (req: Request): Promise<Response> => {
    const body = await req.text();
    const ts = req.headers.get("X-Signature-Timestamp") ?? "";
    const want = "sha256=" + createHmac("sha256", WEBHOOK_SECRET).update(`${ts}.${body}`).digest("hex");
    if (req.headers.get("X-Signature") !== want) bad.push(`signature of ${body.slice(0, 80)}`);
    else if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) bad.push("stale timestamp");
    else got.push(JSON.parse(body) as AlertMessage);
    return new Response(null, { status: 204 });
  };
  return { got, bad, handler };
}

let server: Server;
let browser: Browser;
let sens: Served;
let nhn: Served;
let alerts: Served;
const inbox = receiver();

async function api(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${server.base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${devAdminToken()}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Both fakes' logs for the accounts the service uses. */
async function sent(): Promise<{ at: number; to: string[]; content?: string; accepted: boolean; via: string }[]> {
  const log = async (base: string, account: string, via: string) =>
    (
      (await (await fetch(`${base}/_fake/log?account=${encodeURIComponent(account)}`)).json()) as {
        at: number;
        to?: string[];
        content?: string;
        accepted: boolean;
      }[]
    ).map((e) => ({ ...e, to: e.to ?? [], via }));
  return [...(await log(sens.url, SENS.serviceId, "sens")), ...(await log(nhn.url, NHN.appKey, "nhn"))];
}

/** The code of the newest message delivered to `phone` after `after` (ms). */
async function codeFor(phone: string, after: number): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const m = (await sent())
      .filter((e) => e.accepted && e.at >= after && e.to.includes(phone))
      .sort((a, b) => b.at - a.at)[0];
    const code = m?.content && /\d{6}/.exec(m.content)?.[0];
    if (code) return code;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no code delivered to ${phone}`);
}

beforeAll(async () => {
  const fake = async (file: string) =>
    (await import(pathToFileURL(join(FIXTURES, file)).href)) as { default: { fetch(r: Request): Promise<Response> } };
  sens = await serve((await fake("sens-fake.js")).default.fetch);
  nhn = await serve((await fake("nhn-fake.js")).default.fetch);
  alerts = await serve(inbox.handler);
  const vars: Record<string, string> = {
    SMS_SENDER: "naver-sens,nhn-cloud",
    SMS_FROM: "0212345678",
    SENS_BASE_URL: sens.url,
    SENS_SERVICE_ID: SENS.serviceId,
    SENS_ACCESS_KEY: SENS.accessKey,
    SENS_SECRET_KEY: SENS.secretKey,
    NHN_SMS_BASE_URL: nhn.url,
    NHN_SMS_APP_KEY: NHN.appKey,
    NHN_SMS_SECRET_KEY: NHN.secretKey,
    ALERT_WEBHOOK_URL: `${alerts.url}/alerts`,
    ALERT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    ALERT_EVALUATE_SECONDS: "2",
    CONSOLE_REFRESH_SECONDS: "2",
    AUDIT_FLUSH_SECONDS: "1",
    METRICS_FLUSH_SECONDS: "0",
    SIGNIN_RESEND_COOLDOWN_SECONDS: "0",
    SIGNIN_SENDS_PER_WINDOW: "40",
  };
  server = await startServer({ args: Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]) });
  browser = await launchChromium();
  await api("POST", "/admin/operators", { phone: OPERATOR.phone, role: "viewer" });
  await api("POST", "/admin/directory/import", [
    {
      telcoCd: PERSON.telco,
      phoneNo: PERSON.phone,
      name: PERSON.name,
      gender: "F",
      birth: "1992-04-05",
      foreign: "L",
      ci: Buffer.alloc(64, 5).toString("base64"),
    },
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await Promise.all([sens?.close(), nhn?.close(), alerts?.close()]);
});

async function open(): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US" });
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.host === new URL(server.base).host) return route.continue();
    // the demo app's callback: a page of its own, so the sign-in's end is seen
    if (url.host === "demo.example")
      return route.fulfill({ status: 200, contentType: "text/html", body: "<p>back</p>" });
    return route.abort();
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
  page.on("pageerror", (e) => problems.push(e.message));
  return { context, page, problems };
}

/** Identify and the code step in the browser: the page's own forms, the code from the fakes. */
async function throughCode(page: Page, who: { name: string; phone: string }, carrier: string): Promise<void> {
  await page.getByText(carrier, { exact: true }).click();
  await page.getByLabel("Name").fill(who.name);
  await page.getByLabel("Mobile number").fill(who.phone);
  const asked = Date.now();
  await page.getByLabel("Agree to all").check();
  await page.getByRole("button", { name: /Send code|Get code/ }).click();
  await page.getByLabel(/code/i).fill(await codeFor(who.phone, asked));
  await page.getByRole("button", { name: "Confirm", exact: true }).click();
}

/** `n` codes sent to PERSON over plain HTTP: a sign-in's identify, then `n - 1` resends. */
async function codesSent(n: number): Promise<void> {
  const jar = new CookieJar();
  const q = new URLSearchParams({
    response_type: "code",
    client_id: "demo-client",
    redirect_uri: "https://demo.example/callback",
    state: "alerts",
  });
  const post = async (res: Response, fields: Record<string, string>) => {
    const html = await res.text();
    if (res.status !== 200) throw new Error(`step answered ${res.status}: ${html.slice(0, 200)}`);
    const form = parseForm(html, res.url || server.base);
    const body = new URLSearchParams([...form.fields, ...Object.entries(fields)]);
    const next = await fetch(form.action, {
      method: "POST",
      redirect: "manual",
      headers: {
        Cookie: jar.header(),
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: new URL(form.action).origin,
      },
      body,
    });
    jar.take(next);
    return next;
  };
  let res = await fetch(`${server.base}/oauth2/authorize?${q}`, { redirect: "manual" });
  jar.take(res);
  res = await post(res, { telcoCd: PERSON.telco, name: PERSON.name, phoneNo: PERSON.phone, carrierTerms: "Y" });
  for (let i = 1; i < n; i++) res = await post(res, { resend: "Y" });
  await res.body?.cancel();
}

const firingOnPage = (page: Page) => page.locator(`[data-rule="${RULE}"]`).count();

describe("the operator's live view", () => {
  it("shows a sign-in made elsewhere, then an SMS gateway's alert firing and clearing, without a reload", async () => {
    const op = await open();
    const person = await open();
    try {
      await op.page.goto(`${server.base}/console?lang=en`);
      await throughCode(op.page, OPERATOR, OPERATOR.carrier);
      await op.page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      const signIns = () =>
        op.page
          .locator("ul.grid > li")
          .filter({ hasText: /^Sign-ins/ })
          .first()
          .locator("b")
          .innerText();
      expect(await signIns()).toBe("0");
      const loads: string[] = [];
      op.page.on("framenavigated", (f) => void (f === op.page.mainFrame() && loads.push(f.url())));

      // a person signs in to the demo app in another browser
      const q = new URLSearchParams({
        response_type: "code",
        client_id: "demo-client",
        redirect_uri: "https://demo.example/callback",
        state: "live",
        lang: "en",
      });
      await person.page.goto(`${server.base}/oauth2/authorize?${q}`);
      await throughCode(person.page, PERSON, "LG U+");
      await person.page.getByRole("button", { name: "Agree and continue" }).click();
      await person.page.waitForURL(/^https:\/\/demo\.example\/callback\?code=/);
      await expect.poll(signIns, { timeout: 20_000, interval: 500 }).toBe("1");

      // SENS fails 4 sends: each reaches the person through NHN; the 5th goes through SENS. With the
      // two sign-ins' codes before, SENS failed 4 of its 7 attempts in the last 5 minutes
      await fetch(`${sens.url}/_fake/mode`, {
        method: "POST",
        body: JSON.stringify({ account: SENS.serviceId, mode: "fail", times: 4 }),
      });
      const before = Date.now();
      await codesSent(5);
      const log = (await sent()).filter((e) => e.at >= before);
      expect(log.map((e) => `${e.via}:${e.accepted}`).sort()).toEqual([
        "nhn:true",
        "nhn:true",
        "nhn:true",
        "nhn:true",
        "sens:false",
        "sens:false",
        "sens:false",
        "sens:false",
        "sens:true",
      ]);
      await expect.poll(() => firingOnPage(op.page), { timeout: 20_000, interval: 500 }).toBe(1);
      await expect
        .poll(() => inbox.got.filter((m) => m.alert === RULE).map((m) => m.status), { timeout: 10_000 })
        .toEqual(["firing"]);
      // judged every 2 s while the sends went on: after SENS's 3rd, 4th or 5th attempt of the 5
      expect(inbox.got.find((m) => m.alert === RULE)!.text).toMatch(
        /^\[phone-login\] FIRING: SMS gateway naver-sens: (60\.0% of 5|66\.7% of 6|57\.1% of 7) attempts failed over 5 minutes/,
      );
      await stateShot(op.page, join(OUT, "overview-alert-firing.png"));

      // SENS recovers: 16 more sends through it bring the 5 minutes' failures to 4 of 23 (17%)
      await codesSent(16);
      await expect.poll(() => firingOnPage(op.page), { timeout: 20_000, interval: 500 }).toBe(0);
      await expect
        .poll(() => inbox.got.filter((m) => m.alert === RULE).map((m) => m.status), { timeout: 10_000 })
        .toEqual(["firing", "resolved"]);
      expect(inbox.bad).toEqual([]);
      // all of it seen live: the overview was never loaded again
      expect(loads).toEqual([]);
      expect(op.problems).toEqual([]);
    } catch (err) {
      await op.page.screenshot({ path: join(OUT, "failed-alerts.png"), fullPage: true });
      throw err;
    } finally {
      await op.context.close();
      await person.context.close();
    }
  }, 120_000);
});
