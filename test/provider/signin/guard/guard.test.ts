// The SMS-abuse guard (docs/abuse.md) through the sign-in pages, in workerd with the Turnstile fake:
// each kind of scope turning suspect on unverified codes and recovering after its cool-down, the
// challenge (forged, replayed and expired tokens refused, a siteverify that hangs or fails is
// "try again", never a pass), the safe list, a slowed network's allowance, exact counts under 50
// concurrent sends, and the decision taken before anyone is looked up.
import { describe, expect, it } from "vitest";
import { env } from "../../../support/env";
import { insertSubscriber, aroundCalls } from "../../../support/shards";
import { alertText, Browser, type Page, type Who } from "../../../support/signin";
import { age, siteverifyMode, solve } from "../../../support/turnstile";
import { guardStore } from "../../../../workers/provider/store/guard/reach";
import { guardConfig } from "../../../../workers/provider/signin/guard-config";
import { lastCode } from "../../../support/directory";
import { abortAllDurableObjects } from "cloudflare:test";

/** The guard's simulated clock only moves forward: each test starts two days after the last one's start. */
let T = Date.UTC(2026, 10, 26, 3, 0, 0);
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
const HOST = "localhost";

let nextPhone = 0;
/** A subscriber with a real number (codes by SMS) in prefix 010-`prefix`. */
async function person(prefix: string): Promise<Who> {
  const n = nextPhone++;
  const phone = `010${prefix}${String(n % 10_000).padStart(4, "0")}`;
  const name = `보호${n}`;
  await insertSubscriber({ telco: "S", phone, name, birth: "1990-01-02", ci: `CI-guard-${phone}` });
  return { telco: "S", name, phone, code: "" };
}

let nextPrefix = 7000;
const freshPrefix = () => String(nextPrefix++);

interface Where {
  ip: string;
  asn: string;
  country: string;
}
let nextNet = 1;
/** A network no other test uses: its own /24, ASN and country code. */
function freshNet(): Where {
  const n = nextNet++;
  return {
    ip: `10.${n >> 8}.${n & 255}.9`,
    asn: String(64_000 + n),
    country: `Q${String.fromCharCode(65 + (n % 26))}`,
  };
}

/** A browser at `where`, at simulated time `clock.now`, with the guard's variables. */
function browser(where: Where, clock: { now: number }, vars: Record<string, string> = {}) {
  const headers: Record<string, string> = { "X-Dev-Asn": where.asn, "X-Dev-Country": where.country };
  const b = new Browser({ ip: where.ip, vars: { ...BASE_VARS, ...vars }, headers });
  const fetch = b.fetch.bind(b);
  b.fetch = (path, init) => {
    headers["X-Dev-Clock"] = String(clock.now);
    return fetch(path, init);
  };
  return b;
}

async function identify(
  b: Browser,
  who: Who,
  fields: Record<string, string> = {},
  client = "demo-client",
): Promise<Page> {
  const p1 = await b.authorize({ client_id: client });
  return b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone, ...fields });
}

const challenged = (p: Page) => /class="cf-turnstile"/.test(p.html);

async function sends(phone: string): Promise<number> {
  const r = await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox WHERE phone = ?")
    .bind(phone)
    .first<{ n: number }>();
  return r!.n;
}

describe("each scope turns suspect on unverified codes, and recovers after its cool-down", () => {
  // Each case sends unverified codes that share one scope of the kind and no other (fresh networks,
  // prefixes); then a sign-in sharing that scope is challenged and one sharing none is not.
  const cases: {
    kind: string;
    needed: number;
    share: (w: Where, prefix: string) => [Where, string];
    fresh: () => [Where, string];
  }[] = [
    {
      kind: "block",
      needed: 3,
      share: (w) => [{ ...freshNet(), ip: w.ip.replace(/\.\d+$/, `.${20 + nextNet}`) }, freshPrefix()],
      fresh: () => [freshNet(), freshPrefix()],
    },
    { kind: "prefix", needed: 3, share: (_w, p) => [freshNet(), p], fresh: () => [freshNet(), freshPrefix()] },
    {
      kind: "asn",
      needed: 6,
      share: (w) => [{ ...freshNet(), asn: w.asn }, freshPrefix()],
      fresh: () => [freshNet(), freshPrefix()],
    },
    {
      kind: "country",
      needed: 6,
      share: (w) => [{ ...freshNet(), country: w.country }, freshPrefix()],
      fresh: () => [freshNet(), freshPrefix()],
    },
  ];
  for (const c of cases)
    it(`${c.kind}: ${c.needed} codes sent and none verified make it suspect; 600 s later it is not`, async () => {
      const clock = newClock();
      const first = freshNet();
      const prefix = freshPrefix();
      // the app's own conversion kept above 30% meanwhile: 3 codes verified elsewhere
      for (let i = 0; i < 3; i++) {
        const b = browser(freshNet(), clock);
        const who = await person(freshPrefix());
        const p = await identify(b, who);
        expect((await b.submit(p, { otp: await lastCode(who.phone) })).form?.step).not.toBe("verify");
      }
      for (let i = 0; i < c.needed; i++) {
        const [w, p] = i === 0 ? [first, prefix] : c.share(first, prefix);
        const page = await identify(browser(w, clock), await person(p));
        expect(page.form?.step, `send ${i}`).toBe("verify");
      }
      clock.now += 20_000; // the sends' bucket has ended (GUARD_SETTLE_SECONDS=0)
      const [sw, sp] = c.share(first, prefix);
      const who = await person(sp);
      const asked = await identify(browser(sw, clock), who);
      expect(asked.status).toBe(200);
      expect(challenged(asked)).toBe(true);
      expect(await sends(who.phone)).toBe(0);
      // a sign-in sharing none of its scopes is not asked
      const [fw, fp] = c.fresh();
      expect(challenged(await identify(browser(fw, clock), await person(fp)))).toBe(false);
      // recovery: after the cool-down, the same scope gets its code without a challenge
      clock.now += 601_000;
      const later = await person(sp);
      const [lw] = c.share(first, prefix);
      const back = await identify(browser(c.kind === "prefix" ? freshNet() : lw, clock), later);
      expect(back.form?.step).toBe("verify");
      expect(await sends(later.phone)).toBe(1);
    });

  it("app: its codes unverified from everywhere make every sign-in of the app challenged, and no other app's", async () => {
    const clock = newClock();
    const app = await newApp();
    for (let i = 0; i < 6; i++) {
      const page = await identify(browser(freshNet(), clock), await person(freshPrefix()), {}, app);
      expect(page.form?.step).toBe("verify");
    }
    clock.now += 20_000;
    expect(challenged(await identify(browser(freshNet(), clock), await person(freshPrefix()), {}, app))).toBe(true);
    expect(challenged(await identify(browser(freshNet(), clock), await person(freshPrefix())))).toBe(false);
  });
});

describe("paused bursts", () => {
  // A bot that sends bursts and pauses longer than an idle object lives: the objects are evicted
  // between bursts (their memory is gone, their storage stays). The sends must still be judged.
  it("bursts of 6 untyped codes 20 s apart from one network block, the guard's object evicted between bursts, are challenged by the third burst", async () => {
    const clock = newClock();
    const app = await newApp();
    const net = freshNet();
    const block = net.ip.replace(/\.\d+$/, "");
    const vars = { GUARD_SETTLE_SECONDS: "30", GUARD_WINDOW_SECONDS: "3600" };
    let codes = 0;
    let challengedAt = -1;
    for (let burst = 0; burst < 8 && challengedAt < 0; burst++) {
      for (let i = 0; i < 6; i++) {
        const where = { ...net, ip: `${block}.${10 + burst * 6 + i}` };
        const page = await identify(browser(where, clock, vars), await person(freshPrefix()), {}, app);
        if (challenged(page)) {
          challengedAt = burst;
          break;
        }
        expect(page.form?.step).toBe("verify");
        codes++;
      }
      // every object of the service evicted (memory gone, storage kept), as idle objects are
      await abortAllDurableObjects();
      clock.now += 20_000;
    }
    // the first burst's codes settle 40 s in (their 10 s bucket, then 30 s): the third burst is judged
    expect({ codes, challengedAt }).toEqual({ codes: 12, challengedAt: 2 });
  });
});

describe("codes outstanding", () => {
  // With codes settling 30 s after their send, a burst used to be judged only once its first
  // 10 s bucket had settled: 40 s in, 80 codes at 2 a second. Its codes outstanding are judged
  // as they go: each weighted by the share of people who would have typed it by its age.
  const vars = { GUARD_SETTLE_SECONDS: "30", GUARD_WINDOW_SECONDS: "3600" };

  it("a burst of untyped codes from one block, 2 a second, is judged before its 50th code", async () => {
    const clock = newClock();
    const app = await newApp();
    const net = freshNet();
    const block = net.ip.replace(/\.\d+$/, "");
    let codes = 0;
    for (let i = 0; i < 120; i++) {
      clock.now += 500;
      const page = await identify(
        browser({ ...net, ip: `${block}.${10 + (i % 200)}` }, clock, vars),
        await person(freshPrefix()),
        {},
        app,
      );
      if (challenged(page)) break;
      expect(page.form?.step).toBe("verify");
      codes++;
    }
    expect(codes).toBeGreaterThan(0);
    expect(codes).toBeLessThan(50);
  });

  it("a bot's burst on one app, 8 a second from blocks never seen, no code typed: the app is held (a surge) before its 50th code, and stays suspect once they settle", async () => {
    const clock = newClock();
    const app = await newApp();
    let codes = 0;
    for (let i = 0; i < 120; i++) {
      clock.now += 125;
      const page = await identify(browser(freshNet(), clock, vars), await person(freshPrefix()), {}, app);
      if (challenged(page)) break;
      expect(page.form?.step).toBe("verify");
      codes++;
    }
    expect(codes).toBeGreaterThanOrEqual(40);
    expect(codes).toBeLessThan(50);
    // its codes settle untyped: the app is suspect for its cool-down, another app is not
    clock.now += 60_000;
    expect(challenged(await identify(browser(freshNet(), clock, vars), await person(freshPrefix()), {}, app))).toBe(
      true,
    );
    expect(challenged(await identify(browser(freshNet(), clock, vars), await person(freshPrefix())))).toBe(false);
  });

  it("a bot's burst spread over 20 apps, 8 a second from blocks never seen, no code typed: every app is held before the 50th code, until an editor clears it", async () => {
    // the editor's clear ends a state at the real clock: the guard's is later, however this test is run
    T = Math.max(T, Date.now());
    const clock = newClock();
    const apps: string[] = [];
    for (let i = 0; i < 20; i++) apps.push(await newApp());
    let codes = 0;
    for (let i = 0; i < 120; i++) {
      clock.now += 125;
      const page = await identify(browser(freshNet(), clock, vars), await person(freshPrefix()), {}, apps[i % 20]);
      if (challenged(page)) break;
      expect(page.form?.step).toBe("verify");
      codes++;
    }
    // 2 or 3 codes an app: no app's own surge, the service's
    expect(codes).toBeGreaterThanOrEqual(40);
    expect(codes).toBeLessThan(50);
    // held on every app, one the bot never reached too, and still once its codes settle untyped
    const untouched = await newApp();
    for (const app of [apps[0]!, untouched, undefined])
      expect(challenged(await identify(browser(freshNet(), clock, vars), await person(freshPrefix()), {}, app))).toBe(
        true,
      );
    clock.now += 60_000;
    expect(
      challenged(await identify(browser(freshNet(), clock, vars), await person(freshPrefix()), {}, untouched)),
    ).toBe(true);
    // an editor who judges it wrong clears it from any app: the service's state ends with the app's
    const { admin } = await import("../../../support/admin");
    const cleared = await admin("POST", `/admin/clients/${untouched}/guard/clear`, { json: { scope: "app" } });
    expect(cleared.status).toBe(200);
    expect(challenged(await identify(browser(freshNet(), clock, vars), await person(freshPrefix()), {}, apps[3]))).toBe(
      false,
    );
  });

  it("people who type their codes 15 s after they come, 2 sign-ins a second from one block, are never challenged", async () => {
    const clock = newClock();
    const app = await newApp();
    const net = freshNet();
    const block = net.ip.replace(/\.\d+$/, "");
    const waiting: { b: ReturnType<typeof browser>; page: Page; who: Who; at: number }[] = [];
    for (let i = 0; i < 80; i++) {
      clock.now += 500;
      const who = await person(freshPrefix());
      const b = browser({ ...net, ip: `${block}.${10 + (i % 200)}` }, clock, vars);
      const page = await identify(b, who, {}, app);
      expect(challenged(page), `sign-in ${i}`).toBe(false);
      expect(page.form?.step).toBe("verify");
      waiting.push({ b, page, who, at: clock.now });
      // each person types their code 15 s after it was sent
      while (waiting.length > 0 && clock.now - waiting[0]!.at >= 15_000) {
        const w = waiting.shift()!;
        const done = await w.b.submit(w.page, { otp: await lastCode(w.who.phone) });
        expect(done.form?.step === "verify", `code of sign-in typed at ${clock.now}`).toBe(false);
      }
    }
  });
});

async function newApp(): Promise<string> {
  const { admin } = await import("../../../support/admin");
  const res = await admin("POST", "/admin/clients", {
    json: { name: "보호 앱", redirect_uris: ["https://demo.example/callback"], items: ["ci", "name"] },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

describe("the challenge", () => {
  /** A fresh block made suspect: three unverified codes from it. */
  async function suspectNet(clock: { now: number }): Promise<Where> {
    const w = freshNet();
    for (let i = 0; i < 3; i++) await identify(browser(w, clock), await person(freshPrefix()));
    clock.now += 20_000;
    return w;
  }

  it("asks, then a solved token sends the code; the page allows the widget's origin only while it shows it", async () => {
    const clock = newClock();
    const w = await suspectNet(clock);
    const b = browser(w, clock);
    const who = await person(freshPrefix());
    // the first page from the suspect block shows the challenge already; from another network, none
    const first = await b.authorize();
    expect(challenged(first)).toBe(true);
    // the widget's origin beside the page's own nonce'd (passkey) script, and nothing else
    expect(first.res.headers.get("Content-Security-Policy")).toMatch(
      /script-src 'nonce-[A-Za-z0-9_-]+' http:\/\/127\.0\.0\.1:9810;/,
    );
    const elsewhere = await browser(freshNet(), clock).authorize();
    expect(challenged(elsewhere)).toBe(false);
    expect(elsewhere.res.headers.get("Content-Security-Policy")).not.toContain("127.0.0.1:9810");
    const asked = await identify(b, who);
    expect(challenged(asked)).toBe(true);
    const csp = asked.res.headers.get("Content-Security-Policy")!;
    expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9_-]+' http:\/\/127\.0\.0\.1:9810;/);
    expect(csp).toContain("frame-src http://127.0.0.1:9810");
    expect(asked.html).toContain('data-action="identify"');
    expect(asked.html).toMatch(/<noscript><p class="alert">[^<]*JavaScript/);
    const token = await solve("identify", HOST);
    const sent = await b.submit(asked, {
      telcoCd: who.telco,
      name: who.name,
      phoneNo: who.phone,
      "cf-turnstile-response": token,
    });
    expect(sent.form?.step).toBe("verify");
    expect(await sends(who.phone)).toBe(1);
    // a page that shows no widget allows no third-party script
    expect(sent.res.headers.get("Content-Security-Policy")).not.toContain("127.0.0.1:9810");
  });

  it("refuses a forged, a replayed, another action's, another host's and an expired token, sending nothing", async () => {
    const clock = newClock();
    const w = await suspectNet(clock);
    const used = await solve("identify", HOST);
    const first = await person(freshPrefix());
    expect((await identify(browser(w, clock), first, { "cf-turnstile-response": used })).form?.step).toBe("verify");
    const expired = await solve("identify", HOST);
    await age(expired, 301_000);
    const tokens = {
      forged: "0.fake.not-a-token-it-issued",
      replayed: used,
      otherAction: await solve("resend", HOST),
      otherHost: await solve("identify", "evil.example"),
      expired,
    };
    for (const [what, token] of Object.entries(tokens)) {
      const who = await person(freshPrefix());
      const p = await identify(browser(w, clock), who, { "cf-turnstile-response": token });
      expect(p.status, what).toBe(403);
      expect(challenged(p), what).toBe(true);
      expect(await sends(who.phone), what).toBe(0);
    }
  });

  it("a siteverify that hangs past TURNSTILE_TIMEOUT_MS, or fails, is 'try again' (503), never a pass", async () => {
    const clock = newClock();
    const w = await suspectNet(clock);
    for (const mode of ["hang", "fail", "internal-error"] as const) {
      await siteverifyMode(mode, 1);
      const who = await person(freshPrefix());
      const p = await identify(browser(w, clock, { TURNSTILE_TIMEOUT_MS: "300" }), who, {
        "cf-turnstile-response": await solve("identify", HOST),
      });
      expect(p.status, mode).toBe(503);
      expect(p.res.headers.get("Retry-After"), mode).toBe("5");
      expect(challenged(p), mode).toBe(true);
      expect(await sends(who.phone), mode).toBe(0);
    }
    await siteverifyMode("ok");
  });
});

describe("the safe list, and a slowed network", () => {
  it("a safe block is never challenged, even when its own codes go unverified", async () => {
    const clock = newClock();
    const w = { ...freshNet(), ip: "203.0.113.40" };
    const vars = { GUARD_SAFE_BLOCKS: "192.0.2.0/24, 203.0.113.0/24" };
    for (let i = 0; i < 4; i++) await identify(browser(w, clock, vars), await person(freshPrefix()));
    clock.now += 20_000;
    const p = await identify(browser({ ...w, ip: "203.0.113.41" }, clock, vars), await person(freshPrefix()));
    expect(challenged(p)).toBe(false);
    expect(p.form?.step).toBe("verify");
    // its sends counted for the app and the number's prefix only, not for the block, ASN or country
    const rules = guardConfig({ ...env, ...BASE_VARS } as never).rules;
    const stub = guardStore(env as never, "demo-client");
    expect((await stub.totals("block:203.0.113.0/24", clock.now, rules)).sent).toBe(0);
    expect((await stub.totals(`asn:${w.asn}`, clock.now, rules)).sent).toBe(0);
  });

  it("a suspect block whose codes after a passed challenge go unverified too is slowed: GUARD_SLOW_CODES per window", async () => {
    const clock = newClock();
    const w = freshNet();
    const vars = { GUARD_SLOW_CODES: "1", GUARD_SLOW_WINDOW_SECONDS: "600" };
    for (let i = 0; i < 3; i++) await identify(browser(w, clock, vars), await person(freshPrefix()));
    clock.now += 20_000;
    // two codes after passed challenges, never verified (half the block's 3, rounded up)
    for (let i = 0; i < 2; i++) {
      const p = await identify(browser(w, clock, vars), await person(freshPrefix()), {
        "cf-turnstile-response": await solve("identify", HOST),
      });
      expect(p.form?.step).toBe("verify");
    }
    clock.now += 20_000;
    const ok = await identify(browser(w, clock, vars), await person(freshPrefix()), {
      "cf-turnstile-response": await solve("identify", HOST),
    });
    expect(ok.form?.step).toBe("verify"); // the window's one code
    const who = await person(freshPrefix());
    const slowed = await identify(browser(w, clock, vars), who, {
      "cf-turnstile-response": await solve("identify", HOST),
    });
    expect(slowed.status).toBe(429);
    expect(Number(slowed.res.headers.get("Retry-After"))).toBeGreaterThan(500);
    expect(alertText(slowed.html)).toMatch(/인증번호 요청이 많아/);
    expect(await sends(who.phone)).toBe(0);
  });
});

describe("a slowed ASN", () => {
  it("limits the blocks of it whose own codes went untyped, and only challenges its other blocks", async () => {
    const clock = newClock();
    const vars = { GUARD_SLOW_CODES: "1" };
    const asn = freshNet().asn;
    const at = (): Where => ({ ...freshNet(), asn });
    const token = () => solve("identify", HOST);
    const used: Where[] = [];
    for (let i = 0; i < 6; i++) {
      const w = at();
      used.push(w);
      expect((await identify(browser(w, clock, vars), await person(freshPrefix()))).form?.step).toBe("verify");
    }
    // a block of the ASN whose person types the code (1 of 7 typed: the ASN still below 30%)
    const good = at();
    const gb = browser(good, clock, vars);
    const typer = await person(freshPrefix());
    const typing = await identify(gb, typer);
    expect((await gb.submit(typing, { otp: await lastCode(typer.phone) })).form?.step).not.toBe("verify");
    clock.now += 20_000; // six untyped codes settled: the ASN (and the app) suspect
    for (let i = 0; i < 2; i++) {
      const p = await identify(browser(at(), clock, vars), await person(freshPrefix()), {
        "cf-turnstile-response": await token(),
      });
      expect(p.form?.step).toBe("verify");
    }
    clock.now += 20_000; // two more, after passed challenges, untyped: the ASN is slowed
    const first = await identify(browser(used[0]!, clock, vars), await person(freshPrefix()), {
      "cf-turnstile-response": await token(),
    });
    expect(first.form?.step).toBe("verify"); // the window's one code
    const who = await person(freshPrefix());
    const second = await identify(browser(used[1]!, clock, vars), who, { "cf-turnstile-response": await token() });
    expect(second.status).toBe(429);
    // the allowance has a code again a window (10 minutes) after the one given, and it says when
    expect(Number(second.res.headers.get("Retry-After"))).toBe(600);
    expect(await sends(who.phone)).toBe(0);
    // a block of the ASN whose codes are typed: a challenge, and its code
    const clean = await identify(browser(good, clock, vars), await person(freshPrefix()), {
      "cf-turnstile-response": await token(),
    });
    expect(clean.form?.step).toBe("verify");
    // and without a token it is asked for the challenge first
    expect(challenged(await identify(browser(at(), clock, vars), await person(freshPrefix())))).toBe(true);
  });
});

describe("counts", () => {
  it("are exact under 50 concurrent sends from one block, and a verification is credited to its send", async () => {
    const clock = newClock();
    const w = freshNet();
    const people = await Promise.all(Array.from({ length: 50 }, () => person(freshPrefix())));
    const pages = await Promise.all(people.map((who) => identify(browser(w, clock, { GUARD_MIN_SENDS: "1000" }), who)));
    expect(pages.every((p) => p.form?.step === "verify")).toBe(true);
    const rules = guardConfig({ ...env, ...BASE_VARS } as never).rules;
    const block = `block:${w.ip.replace(/\.\d+$/, ".0")}/24`;
    const stub = guardStore(env as never, "demo-client");
    expect(await stub.totals(block, clock.now, rules)).toEqual({ sent: 50, verified: 0, csent: 0, cverified: 0 });
    expect((await stub.totals(`asn:${w.asn}`, clock.now, rules)).sent).toBe(50);
    // one person types the code, 30 s later: credited to the bucket of the send
    const b = browser(w, clock, { GUARD_MIN_SENDS: "1000" });
    const who = await person(freshPrefix());
    const p = await identify(b, who);
    clock.now += 30_000;
    const done = await b.submit(p, { otp: await lastCode(who.phone) });
    expect([200, 302]).toContain(done.status);
    expect(await stub.totals(block, clock.now, rules)).toEqual({ sent: 51, verified: 1, csent: 0, cverified: 0 });
  });
});

describe("decided before anyone is looked up", () => {
  it("a matching and a non-matching name and number get the same challenge page, with no directory read", async () => {
    const clock = newClock();
    const w = freshNet();
    for (let i = 0; i < 3; i++) await identify(browser(w, clock), await person(freshPrefix()));
    clock.now += 20_000;
    const real = await person(freshPrefix());
    const fake: Who = { ...real, name: "없는사람" };
    const reads: string[] = [];
    const pages: string[] = [];
    for (const who of [real, fake]) {
      const b = new Browser({
        ip: w.ip,
        vars: BASE_VARS,
        headers: { "X-Dev-Asn": w.asn, "X-Dev-Country": w.country, "X-Dev-Clock": String(clock.now) },
        bindings: { DIRECTORY: aroundCalls(env.DIRECTORY, (m) => void reads.push(m)) },
      });
      const p1 = await b.authorize();
      reads.length = 0;
      const p = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
      expect(p.status).toBe(200);
      expect(reads).toEqual([]);
      // the same page but for its nonce, its sign-in's hidden fields and what the person typed
      pages.push(
        p.html
          .replace(/nonce="[^"]+"/g, "")
          .replace(/name="(tx|csrf)" value="[^"]+"/g, "")
          .replace(/(id="(?:name|phoneNo)" name="\w+" value=)"[^"]*"/g, "$1"),
      );
    }
    expect(pages[0]).toBe(pages[1]);
    expect(challenged({ html: pages[0]! } as Page)).toBe(true);
  });
});

describe("an app's daily SMS budget", () => {
  it("reached: that app's sends stop with the paused page (decided before any lookup), other apps go on; the next Korean day they start again", async () => {
    const { admin } = await import("../../../support/admin");
    const app = await newApp();
    const set = await admin("PATCH", `/admin/clients/${app}`, { json: { sms_daily_budget: 2 } });
    expect(set.status).toBe(200);
    const clock = newClock();
    // 23:00 KST (14:00 UTC) of the next day: an hour before the budget's day ends
    T = clock.now = clock.now - (clock.now % 86_400_000) + 86_400_000 + 14 * 3_600_000;
    for (let i = 0; i < 2; i++)
      expect((await identify(browser(freshNet(), clock), await person(freshPrefix()), {}, app)).form?.step).toBe(
        "verify",
      );
    const reads: string[] = [];
    const w = freshNet();
    const b = new Browser({
      ip: w.ip,
      vars: BASE_VARS,
      headers: { "X-Dev-Asn": w.asn, "X-Dev-Country": w.country, "X-Dev-Clock": String(clock.now) },
      bindings: { DIRECTORY: aroundCalls(env.DIRECTORY, (m) => void reads.push(m)) },
    });
    const p1 = await b.authorize({ client_id: app });
    reads.length = 0;
    const who = await person(freshPrefix());
    const paused = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    expect(paused.status).toBe(503);
    expect(paused.html).toContain("문자 인증이 잠시 멈췄습니다");
    // in English, the words: "this app's sign-ins by SMS are paused; try later"
    const en = new Browser({ ip: w.ip, lang: "en", vars: BASE_VARS, headers: { "X-Dev-Clock": String(clock.now) } });
    const enPage = await en.submit(await en.authorize({ client_id: app }), {
      telcoCd: who.telco,
      name: who.name,
      phoneNo: who.phone,
    });
    expect(enPage.status).toBe(503);
    expect(enPage.html).toMatch(/sign-ins by SMS are paused/);
    expect(enPage.html).toMatch(/[Tt]ry again/);
    expect(Number(paused.res.headers.get("Retry-After"))).toBeLessThanOrEqual(3600);
    expect(reads).toEqual([]);
    expect(await sends(who.phone)).toBe(0);
    // another app is not paused
    expect((await identify(browser(freshNet(), clock), await person(freshPrefix()))).form?.step).toBe("verify");
    // midnight KST: a new day's budget
    clock.now += 3_600_000;
    expect((await identify(browser(freshNet(), clock), await person(freshPrefix()), {}, app)).form?.step).toBe(
      "verify",
    );
  });
});

describe("the operator's view: suspect scopes listed, an editor clears one, all audited without a number, prefix or block", () => {
  it("lists, clears (audited with who), and the cleared block gets its code without a challenge", async () => {
    const { admin } = await import("../../../support/admin");
    const { auditEvents } = await import("../../../support/audit");
    const app = await newApp();
    const since = Date.now();
    const clock = newClock();
    const w = freshNet();
    for (let i = 0; i < 3; i++) await identify(browser(w, clock), await person(freshPrefix()), {}, app);
    clock.now += 20_000;
    expect(challenged(await identify(browser(w, clock), await person(freshPrefix()), {}, app))).toBe(true);
    const block = `block:${w.ip.replace(/\.\d+$/, ".0")}/24`;
    // the states are judged at the guard's (simulated) clock: listed at the real one only while they last
    const listed = (await (await admin("GET", `/admin/clients/${app}/guard`)).json()) as {
      scopes: { scope: string; kind: string; state: string; sent: number; verified: number }[];
    };
    expect(listed.scopes.map((s) => s.scope)).toContain(block);
    expect(listed.scopes.find((s) => s.scope === block)).toMatchObject({ kind: "block", state: "suspect" });
    // and in the list across apps
    const across = async () =>
      ((await (await admin("GET", "/admin/guard")).json()) as { scopes: { client_id: string; scope: string }[] }).scopes
        .filter((s) => s.client_id === app)
        .map((s) => s.scope);
    expect(await across()).toContain(block);
    expect(
      (await admin("POST", `/admin/clients/${app}/guard/clear`, { json: { scope: "block:not a scope" } })).status,
    ).toBe(400);
    expect((await admin("POST", `/admin/clients/${app}/guard/clear`, { json: { scope: "asn:1" } })).status).toBe(404);
    const cleared = await admin("POST", `/admin/clients/${app}/guard/clear`, { json: { scope: block } });
    expect(cleared.status).toBe(200);
    expect(await across()).not.toContain(block);
    const back = await identify(browser(w, clock), await person(freshPrefix()), {}, app);
    expect(challenged(back)).toBe(false);
    expect(back.form?.step).toBe("verify");
    const events = await auditEvents({ type: "guard.", clientId: app, since });
    const details = events.map((e) => `${e.type} ${e.outcome} ${e.detail}`);
    expect(details).toContain('guard.state ok {"kind":"block","state":"suspect","strikes":1}');
    expect(details).toContain('guard.decision refused {"decision":"challenge_asked","kinds":"block"}');
    expect(details).toContain(
      'guard.state ok {"actor":"token:ADMIN_TOKEN","kind":"block","state":"cleared","strikes":1}',
    );
    // never a prefix, block, address or number in the trail
    for (const e of events) expect(e.detail ?? "").not.toMatch(/010-|\d+\.\d+\.\d+|\/24/);
    // and each decision and change of state counted in the app's metrics, by its kind
    const { metricsStore } = await import("../../../../workers/provider/store/metrics/reach");
    const rows = await metricsStore(env).read("1h", since - 3_600_000, Date.now() + 3_600_000, app, [
      "guard.decision.challenge_asked",
      "guard.state.block.suspect",
      "guard.state.block.cleared",
    ]);
    const sum = (name: string) => rows.filter((r) => r[1] === name).reduce((a, r) => a + Number(r[2]), 0);
    expect([
      sum("guard.decision.challenge_asked"),
      sum("guard.state.block.suspect"),
      sum("guard.state.block.cleared"),
    ]).toEqual([1, 1, 1]);
  });
});

describe("a viewer counts the prefixes and blocks the guard suspects; an editor and above read them", () => {
  it("GET /admin/guard and /admin/clients/:id/guard: values for editor and admin, counts by kind for viewer", async () => {
    const { admin } = await import("../../../support/admin");
    const { guardIndex } = await import("../../../../workers/provider/store/guard/reach");
    const { guardRules } = await import("../../../../workers/provider/store/guard/config");
    const tokenOf = async (name: string, role: string) => {
      const res = await admin("POST", "/admin/tokens", { json: { name, role } });
      expect(res.status).toBe(201);
      return ((await res.json()) as { token: string }).token;
    };
    const app = await newApp();
    // codes from a prefix, a block and an ASN, none typed, settled: each suspect (a wide scope, the
    // ASN, needs wideFactor times a narrow one's sends)
    const scopes = ["prefix:010-5027", "block:198.51.100.0/24", "asn:64999"];
    const rules = guardRules(env);
    const sentAt = Date.now() - 120_000;
    const events = scopes.flatMap((scope) =>
      Array.from({ length: rules.minSends * rules.wideFactor }, () => ({
        kind: "sent" as const,
        scopes: [scope],
        sentAt,
        challenged: false,
      })),
    );
    const now = Date.now();
    const { transitions } = await guardStore(env, app).record("guard-roles", events, null, now, rules);
    expect(transitions.map((t) => t.scope).sort()).toEqual([...scopes].sort());
    await guardIndex(env).indexNote(app, transitions, now);

    type Listed = { scopes: { scope: string; kind: string }[]; withheld: Record<string, unknown>[] };
    const read = async (path: string, token?: string) => {
      const res = await admin("GET", path, token === undefined ? {} : { token });
      expect(res.status).toBe(200);
      const text = await res.text();
      return { text, body: JSON.parse(text) as Listed };
    };
    const mine = (b: Listed) => ({
      ...b,
      scopes: b.scopes.filter((s) => !("client_id" in s) || (s as { client_id: string }).client_id === app),
      withheld: b.withheld.filter((w) => !("client_id" in w) || w.client_id === app),
    });
    const editor = await tokenOf("guard-editor", "editor");
    for (const token of [editor, undefined]) {
      for (const path of [`/admin/clients/${app}/guard`, "/admin/guard"]) {
        const { body } = await read(path, token);
        expect(
          mine(body)
            .scopes.map((s) => s.scope)
            .sort(),
          path,
        ).toEqual([...scopes].sort());
        expect(mine(body).withheld, path).toEqual([]);
      }
    }
    const viewer = await tokenOf("guard-viewer", "viewer");
    const one = await read(`/admin/clients/${app}/guard`, viewer);
    expect(one.body.scopes.map((s) => s.scope)).toEqual(["asn:64999"]);
    const byKind = (w: Record<string, unknown>[]) =>
      [...w].sort((a, b) => String(a.kind).localeCompare(String(b.kind)));
    expect(byKind(one.body.withheld)).toEqual([
      { kind: "block", state: "suspect", count: 1 },
      { kind: "prefix", state: "suspect", count: 1 },
    ]);
    const across = await read("/admin/guard", viewer);
    expect(mine(across.body).scopes.map((s) => s.scope)).toEqual(["asn:64999"]);
    expect(byKind(mine(across.body).withheld)).toEqual([
      { client_id: app, kind: "block", state: "suspect", count: 1 },
      { client_id: app, kind: "prefix", state: "suspect", count: 1 },
    ]);
    for (const { text } of [one, across]) {
      expect(text).not.toContain("010-5027");
      expect(text).not.toContain("198.51.100");
    }
  });
});
