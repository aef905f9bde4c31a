// A guard that learns across apps and judges early (docs/abuse.md "Service-wide history", "Sliding
// allowances"), through the sign-in pages in workerd with the Turnstile fake: a block's history on
// one app seen by a second app's first sign-in from it, with the isolate's copies fresh a sign-in
// waits for no store call, a block never seen inside a slowed ASN, the slowed allowance over a
// sliding window, and the app itself slowed.
import { describe, expect, it } from "vitest";
import { env } from "../../../support/env";
import { aroundCalls, insertSubscriber } from "../../../support/shards";
import { alertText, Browser, type Page, type Who } from "../../../support/signin";
import { solve } from "../../../support/turnstile";
import { lastCode } from "../../../support/directory";

let T = Date.UTC(2027, 5, 1, 3, 0, 0);
/** The guard's simulated clock only moves forward: each test starts two days after the last one's start. */
const newClock = () => ({ now: (T += 2 * 86_400_000) });
const BASE_VARS = {
  SMS_GUARD: "on",
  GUARD_MIN_SENDS: "3",
  GUARD_WIDE_FACTOR: "2",
  GUARD_SETTLE_SECONDS: "0",
  GUARD_CACHE_SECONDS: "0",
  GUARD_FLUSH_MS: "0",
  GUARD_COOLDOWN_SECONDS: "600",
  SIGNIN_IP_LIMIT: "100000",
};
/** The text a person sends offered where the guard would stop a sign-in (DEV_MODE's receiving number). */
const TEXT = { SIGNIN_MO: "guard" };
const HOST = "localhost";

let nextPhone = 0;
let nextPrefix = 6000;
const freshPrefix = () => String(nextPrefix++);
/** A subscriber with a real number (codes by SMS) in a prefix no other sign-in uses. */
async function person(): Promise<Who> {
  const n = nextPhone++;
  const phone = `010${freshPrefix()}${String(n % 10_000).padStart(4, "0")}`;
  const name = `학습${n}`;
  await insertSubscriber({ telco: "S", phone, name, birth: "1990-01-02", ci: `CI-learn-${phone}` });
  return { telco: "S", name, phone, code: "" };
}

interface Where {
  ip: string;
  asn: string;
}
let nextNet = 1;
/** A network block no other test uses (10.210.x.0/24), in its own ASN unless one is given. */
function freshNet(asn?: string): Where {
  const n = nextNet++;
  return { ip: `10.${210 + (n >> 8)}.${n & 255}.9`, asn: asn ?? String(65_100 + n) };
}

/** A browser at `where`, at simulated time `clock.now`, with the guard's variables. */
function browser(where: Where, clock: { now: number }, vars: Record<string, string> = {}, bindings = {}) {
  const headers: Record<string, string> = { "X-Dev-Asn": where.asn, "X-Dev-Country": "QL" };
  const b = new Browser({ ip: where.ip, vars: { ...BASE_VARS, ...vars }, headers, bindings });
  const fetch = b.fetch.bind(b);
  b.fetch = (path, init) => {
    headers["X-Dev-Clock"] = String(clock.now);
    return fetch(path, init);
  };
  return b;
}

async function identify(b: Browser, who: Who, app: string, fields: Record<string, string> = {}): Promise<Page> {
  const p1 = await b.authorize({ client_id: app });
  return b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone, ...fields });
}

const challenged = (p: Page) => /class="cf-turnstile"/.test(p.html);
const token = () => solve("identify", HOST);

async function sends(phone: string): Promise<number> {
  const r = await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox WHERE phone = ?")
    .bind(phone)
    .first<{ n: number }>();
  return r!.n;
}

async function newApp(): Promise<string> {
  const { admin } = await import("../../../support/admin");
  const res = await admin("POST", "/admin/clients", {
    json: { name: "학습 앱", redirect_uris: ["https://demo.example/callback"], items: ["ci", "name"] },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** `n` codes sent to people signing in to `app` from `where` and never typed. */
async function untyped(where: Where, clock: { now: number }, app: string, n: number, fields = {}, vars = {}) {
  for (let i = 0; i < n; i++) {
    const p = await identify(browser(where, clock, vars), await person(), app, fields);
    expect(p.form?.step, `send ${i}`).toBe("verify");
  }
}

/** `n` codes sent to people signing in to `app` from `where`, each typed back. */
async function typed(where: Where, clock: { now: number }, app: string, n: number) {
  for (let i = 0; i < n; i++) {
    const b = browser(where, clock);
    const who = await person();
    const p = await identify(b, who, app);
    expect(p.form?.step).toBe("verify");
    expect((await b.submit(p, { otp: await lastCode(who.phone) })).form?.step).not.toBe("verify");
  }
}

describe("service-wide block and ASN history", () => {
  it("a service-wide block history seen by a second app: a block whose codes go untyped on app A is challenged at its first sign-in on app B, or gets the text", async () => {
    const clock = newClock();
    const [a, b] = [await newApp(), await newApp()];
    const bad = freshNet();
    // app A's own conversion kept up meanwhile, from other networks: only the block is judged
    await typed(freshNet(), clock, a, 3);
    await untyped(bad, clock, a, 3);
    clock.now += 20_000; // settled (GUARD_SETTLE_SECONDS=0): the block is suspect on A and service-wide
    // app B has never seen the block: its first sign-in from it is challenged, no code sent
    const who = await person();
    const asked = await identify(browser(bad, clock), who, b);
    expect(asked.status).toBe(200);
    expect(challenged(asked)).toBe(true);
    expect(await sends(who.phone)).toBe(0);
    // with the text on, app B offers the text instead, and sends nothing
    const texter = await person();
    const text = await identify(browser(bad, clock, TEXT), texter, b);
    expect(text.form?.step).toBe("text");
    expect(await sends(texter.phone)).toBe(0);
  });

  it("an editor's clear of the block on app B's page clears its service-wide state: app B's next sign-in from it gets its code", async () => {
    const { admin } = await import("../../../support/admin");
    const clock = newClock();
    const [a, b] = [await newApp(), await newApp()];
    const bad = freshNet();
    await typed(freshNet(), clock, a, 3);
    await untyped(bad, clock, a, 3);
    clock.now += 20_000;
    expect(challenged(await identify(browser(bad, clock), await person(), b))).toBe(true);
    const block = `block:${bad.ip.replace(/\.\d+$/, ".0")}/24`;
    const cleared = await admin("POST", `/admin/clients/${b}/guard/clear`, { json: { scope: block } });
    expect(cleared.status).toBe(200);
    const who = await person();
    const p = await identify(browser(bad, clock), who, b);
    expect(challenged(p)).toBe(false);
    expect(p.form?.step).toBe("verify");
    expect(await sends(who.phone)).toBe(1);
  });

  it("a block with good history on app A is not challenged on app B", async () => {
    const clock = newClock();
    const [a, b] = [await newApp(), await newApp()];
    const good = freshNet();
    await typed(good, clock, a, 4);
    clock.now += 20_000;
    const who = await person();
    const p = await identify(browser(good, clock), who, b);
    expect(challenged(p)).toBe(false);
    expect(p.form?.step).toBe("verify");
    expect(await sends(who.phone)).toBe(1);
  });

  it("an ASN whose codes go untyped on app A is challenged on app A only: app B's people behind the same carrier are not", async () => {
    const clock = newClock();
    const [a, b] = [await newApp(), await newApp()];
    const asn = freshNet().asn;
    await typed(freshNet(), clock, a, 6);
    // six codes from six blocks of the ASN (an ASN needs GUARD_MIN_SENDS × GUARD_WIDE_FACTOR)
    for (let i = 0; i < 6; i++) await untyped(freshNet(asn), clock, a, 1);
    clock.now += 20_000;
    expect(challenged(await identify(browser(freshNet(asn), clock), await person(), a))).toBe(true);
    expect(challenged(await identify(browser(freshNet(asn), clock), await person(), b))).toBe(false);
  });

  it("with the isolate's copies fresh, a sign-in waits for no store call of the guard; a stale copy costs one round of two reads made together", async () => {
    const clock = newClock();
    const app = await newApp();
    const calls: string[] = [];
    let inFlight = 0;
    let most = 0;
    const GUARD = aroundCalls(
      env.GUARD,
      (m) => {
        calls.push(m);
        most = Math.max(most, ++inFlight);
      },
      () => void inFlight--,
    );
    // one browser: one env, so one isolate's copies (GUARD_CACHE_SECONDS=5)
    const b = browser(freshNet(), clock, { GUARD_CACHE_SECONDS: "5" }, { GUARD });
    const awaited = () => calls.filter((m) => m === "view" || m === "take");
    const first = await b.authorize({ client_id: app });
    // the app's states and the service-wide ones: read together, once
    expect(awaited()).toEqual(["view", "view"]);
    expect(most).toBe(2);
    calls.length = 0;
    const who = await person();
    const sent = await b.submit(first, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    expect(sent.form?.step).toBe("verify");
    expect(awaited()).toEqual([]);
    // a second sign-in within GUARD_CACHE_SECONDS: none either
    clock.now += 2_000;
    calls.length = 0;
    const again = await person();
    expect((await identify(b, again, app)).form?.step).toBe("verify");
    expect(awaited()).toEqual([]);
  });
});

/** An ASN made slowed on `app`: six untyped codes from six blocks, then two more after passed challenges. */
async function slowedAsn(clock: { now: number }, app: string, vars: Record<string, string>): Promise<string> {
  const asn = freshNet().asn;
  for (let i = 0; i < 6; i++) await untyped(freshNet(asn), clock, app, 1, {}, vars);
  clock.now += 20_000; // settled: the ASN suspect
  for (let i = 0; i < 2; i++)
    await untyped(freshNet(asn), clock, app, 1, { "cf-turnstile-response": await token() }, vars);
  clock.now += 20_000; // its challenged codes untyped too: slowed
  return asn;
}

describe("a block never seen inside a slowed ASN", () => {
  it("takes from the ASN's allowance (a bot's fresh blocks share its few codes), while a block whose codes are typed is challenged only", async () => {
    const clock = newClock();
    const app = await newApp();
    const vars = { GUARD_SLOW_CODES: "1" };
    const asn = freshNet().asn;
    // a block of the ASN where people type their codes, before the attack
    const good = freshNet(asn);
    await typed(good, clock, app, 1);
    for (let i = 0; i < 6; i++) await untyped(freshNet(asn), clock, app, 1, {}, vars);
    clock.now += 20_000;
    for (let i = 0; i < 2; i++)
      await untyped(freshNet(asn), clock, app, 1, { "cf-turnstile-response": await token() }, vars);
    clock.now += 20_000;
    // fresh blocks of the ASN, each with a solved challenge: the ASN's one code, then none
    const first = await identify(browser(freshNet(asn), clock, vars), await person(), app, {
      "cf-turnstile-response": await token(),
    });
    expect(first.form?.step).toBe("verify");
    const who = await person();
    const second = await identify(browser(freshNet(asn), clock, vars), who, app, {
      "cf-turnstile-response": await token(),
    });
    expect(second.status).toBe(429);
    expect(await sends(who.phone)).toBe(0);
    // the block whose people type their codes: the challenge, and its code
    const person2 = await person();
    const served = await identify(browser(good, clock, vars), person2, app, { "cf-turnstile-response": await token() });
    expect(served.form?.step).toBe("verify");
    expect(await sends(person2.phone)).toBe(1);
  });

  it("with the text on, gets the text and no SMS", async () => {
    const clock = newClock();
    const app = await newApp();
    const asn = await slowedAsn(clock, app, { GUARD_SLOW_CODES: "1" });
    for (let i = 0; i < 3; i++) {
      const who = await person();
      const p = await identify(browser(freshNet(asn), clock, { GUARD_SLOW_CODES: "1", ...TEXT }), who, app);
      expect(p.form?.step).toBe("text");
      expect(await sends(who.phone)).toBe(0);
    }
  });
});

describe("the slowed allowance slides", () => {
  it("2×GUARD_SLOW_CODES sends straddling a clock boundary get only GUARD_SLOW_CODES; the wait says the sliding time, and with the text on the text is offered instead", async () => {
    const clock = newClock();
    const app = await newApp();
    const vars = { GUARD_SLOW_CODES: "2", GUARD_SLOW_WINDOW_SECONDS: "600" };
    const w = freshNet();
    // the block suspect (3 untyped codes), then slowed (2 untyped after passed challenges)
    await untyped(w, clock, app, 3, {}, vars);
    clock.now += 20_000;
    for (let i = 0; i < 2; i++) await untyped(w, clock, app, 1, { "cf-turnstile-response": await token() }, vars);
    clock.now += 20_000;
    // a second before a 10-minute boundary of the clock, then a second after it
    const boundary = clock.now - (clock.now % 600_000) + 600_000;
    const pages: Page[] = [];
    const people: Who[] = [];
    for (const at of [boundary - 1_000, boundary - 1_000, boundary + 1_000, boundary + 1_000]) {
      clock.now = at;
      const who = await person();
      people.push(who);
      pages.push(await identify(browser(w, clock, vars), who, app, { "cf-turnstile-response": await token() }));
    }
    expect(pages.map((p) => (p.status === 429 ? 429 : p.form?.step))).toEqual(["verify", "verify", 429, 429]);
    expect(await Promise.all(people.map((who) => sends(who.phone)))).toEqual([1, 1, 0, 0]);
    // the allowance has a code again when the first code of the window is 600 s old: 598 s after the boundary's second
    expect(pages[2]!.res.headers.get("Retry-After")).toBe("598");
    expect(alertText(pages[2]!.html)).toMatch(/10분/);
    // with the text on, the spent allowance is the text page, never a wait
    const texter = await person();
    const text = await identify(browser(w, clock, { ...vars, ...TEXT }), texter, app);
    expect(text.status).toBe(200);
    expect(text.form?.step).toBe("text");
    expect(await sends(texter.phone)).toBe(0);
  });
});

describe("the app slowed", () => {
  it("an app whose challenged codes go untyped is slowed: its fresh blocks share GUARD_SLOW_CODES, a block whose codes are typed is challenged only, and with the text on the text is offered", async () => {
    const clock = newClock();
    const app = await newApp();
    const vars = { GUARD_SLOW_CODES: "1" };
    // a block where people type their codes, before the attack
    const good = freshNet();
    await typed(good, clock, app, 1);
    // six untyped codes from six networks (the app needs GUARD_MIN_SENDS × GUARD_WIDE_FACTOR): suspect
    for (let i = 0; i < 6; i++) await untyped(freshNet(), clock, app, 1, {}, vars);
    clock.now += 20_000;
    // two more after passed challenges, untyped (half GUARD_MIN_SENDS): slowed
    for (let i = 0; i < 2; i++)
      await untyped(freshNet(), clock, app, 1, { "cf-turnstile-response": await token() }, vars);
    clock.now += 20_000;
    const first = await identify(browser(freshNet(), clock, vars), await person(), app, {
      "cf-turnstile-response": await token(),
    });
    expect(first.form?.step).toBe("verify"); // the app's one code of the window
    const who = await person();
    const second = await identify(browser(freshNet(), clock, vars), who, app, {
      "cf-turnstile-response": await token(),
    });
    expect(second.status).toBe(429);
    expect(Number(second.res.headers.get("Retry-After"))).toBe(600);
    expect(await sends(who.phone)).toBe(0);
    // the block whose people type their codes: the challenge, and its code
    const regular = await person();
    const served = await identify(browser(good, clock, vars), regular, app, { "cf-turnstile-response": await token() });
    expect(served.form?.step).toBe("verify");
    // with the text on: the text, no SMS, no wait
    const texter = await person();
    const text = await identify(browser(freshNet(), clock, { ...vars, ...TEXT }), texter, app);
    expect(text.form?.step).toBe("text");
    expect(await sends(texter.phone)).toBe(0);
    // another app is not slowed
    const other = await person();
    expect((await identify(browser(freshNet(), clock, vars), other, await newApp())).form?.step).toBe("verify");
  });
});
