// Automatic login (spec §2.1 modes; docs/architecture.md §4.4, §4.5, §4.7; reference behaviour): the
// opt-in on the code step, the __Host- cookie, the code at once on a later authorize, the
// /v1/user/me modes, prompt semantics, and the ends of a grant (disconnect, expiry, another user,
// another person proving their number on a shared browser).
import { env } from "../../../support/env";
import { insertSubscriber, shardExec, shardRows } from "../../../support/shards";
import { itemsMask } from "../../../../workers/provider/store/directory/keys";
import fc from "fast-check";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { decryptField, sha256 } from "../../../../workers/core/crypto";
import { createClient } from "../../../support/admin";
import {
  basic,
  call,
  DEMO,
  exchange,
  FORM,
  form,
  HONG,
  KIM,
  LEE,
  LIMITED,
  SMITH,
  userMe,
} from "../../../support/helpers";
import { Browser, DEMO_CB, signInAll, throughCode, type Who } from "../../../support/signin";
import { IDENTITY_ITEMS } from "../../../../workers/core/spec";
import { forgetClient } from "../../../../workers/provider/store/clients";
import { deviceOf, findAutoLoginGrant, type Device } from "../../../../workers/provider/store/directory/grants";
import { auditEvents } from "../../../support/audit";

afterEach(() => {
  vi.useRealTimers();
});

type User = Record<string, string>;

async function readUser(code: string): Promise<User> {
  const tok = await exchange(code);
  expect(tok.status).toBe(200);
  const me = await userMe(((await tok.json()) as { access_token: string }).access_token);
  expect(me.status).toBe(200);
  return ((await me.json()) as { user: User }).user;
}

function codeOf(loc: URL): string {
  const code = loc.searchParams.get("code");
  expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return code!;
}

/** A sign-in that ticks the automatic-login box on the code step. */
function optIn(b: Browser, who: Who, params: Record<string, string> = {}): Promise<URL> {
  return signInAll(b, who, params, { autoLogin: "Y" });
}

/** An authorize that should answer at once: the 302 Location. */
async function instant(b: Browser, params: Record<string, string> = {}): Promise<URL> {
  const p = await b.authorize(params);
  expect(p.status, p.html.slice(0, 200)).toBe(302);
  return new URL(p.res.headers.get("Location")!);
}

async function deviceHash(b: Browser): Promise<string> {
  return sha256(b.cookies.get("__Host-pl_auto")!);
}

/** The browser's automatic-login device, as the grants know it (its shard and hash). */
async function device(b: Browser): Promise<Device> {
  return deviceOf(env, b.cookies.get("__Host-pl_auto")!);
}

describe("the opt-in (docs/architecture.md §4.7: on the code step, whenever eligible)", () => {
  it("shown to SKT and KT subscribers of a client that allows it, on every interactive sign-in", async () => {
    for (const who of [HONG, KIM]) {
      const b = new Browser();
      const verify = await b.submit(await b.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
      expect(verify.form!.names.has("autoLogin")).toBe(true);
      expect(verify.html).toMatch(/<input type="checkbox" id="autoLogin" name="autoLogin" value="Y"/);
      expect(verify.html).toContain("자동 로그인: 이 기기에서 14일 동안 Demo Shop에 바로 로그인합니다.");
    }
    // a returning user (consent already given) is offered it again
    await signInAll(new Browser(), HONG);
    const b = new Browser();
    const again = await b.submit(await b.authorize(), { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    expect(again.form!.names.has("autoLogin")).toBe(true);
  });

  it("a wrong code keeps the box as the person left it", async () => {
    const b = new Browser();
    const verify = await b.submit(await b.authorize(), { telcoCd: "K", name: KIM.name, phoneNo: KIM.phone });
    const ticked = await b.submit(verify, { otp: "000000", autoLogin: "Y" });
    expect(ticked.html).toMatch(/name="autoLogin" value="Y" aria-describedby="autoLogin-hint" checked>/);
    const unticked = await b.submit(ticked, { otp: "000000" });
    expect(unticked.html).toMatch(/name="autoLogin" value="Y" aria-describedby="autoLogin-hint">/);
  });

  it.each([
    ["an LG U+ subscriber", SMITH, {}],
    ["a client without automatic login", LEE, { client_id: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! }],
    ["prompt=N", HONG, { prompt: "N" }],
  ] as const)("not shown to %s, and a posted autoLogin=Y is ignored", async (_n, who, params) => {
    const b = new Browser();
    const verify = await b.submit(await b.authorize(params), {
      telcoCd: who.telco,
      name: who.name,
      phoneNo: who.phone,
    });
    expect(verify.form!.names.has("autoLogin")).toBe(false);
    let p = await b.submit(verify, { otp: who.code, autoLogin: "Y" });
    if (p.form?.step === "consent") p = await b.submit(p, { agree: "Y", autoLogin: "Y" });
    expect(p.status).toBe(302);
    // no cookie but the browser's proof of the number (docs/abuse.md "A browser that proved its number")
    expect(p.res.headers.getAll("Set-Cookie").filter((c) => !c.startsWith("__Host-pl_nb="))).toEqual([]);
    expect(b.cookies.has("__Host-pl_auto")).toBe(false);
  });
});

describe("automatic login through /v1/user/me (spec §2.1 modes)", () => {
  it("opting in sets __Host-pl_auto (HttpOnly, Secure, SameSite=Lax, Path=/, 14 days); that login's record is full with Y/Y", async () => {
    const b = new Browser();
    const p = await throughCode(b, KIM, {}, { autoLogin: "Y" });
    const done = p.form?.step === "consent" ? await b.submit(p, { agree: "Y" }) : p;
    expect(done.status).toBe(302);
    const cookie = done.res.headers.getAll("Set-Cookie").find((c) => c.startsWith("__Host-pl_auto="))!;
    expect(cookie).toMatch(
      /^__Host-pl_auto=[A-Za-z0-9_-]{43}; Path=\/; Secure; HttpOnly; SameSite=Lax; Max-Age=1209600$/,
    );
    const user = await readUser(codeOf(new URL(done.res.headers.get("Location")!)));
    expect(user.autoLoginYn).toBe("Y");
    expect(user.autoStatusCheck).toBe("Y");
    expect(await decryptField(DEMO.secret, user.name!)).toBe(KIM.name);
    expect(user.telcoCd).toBe("K");
  });

  it("a later authorize answers 302 with a code at once (no page); its record is mode 2: plid, Y, N, identity empty", async () => {
    const b = new Browser();
    const first = await readUser(codeOf(await optIn(b, HONG, { state: "one" })));
    expect(first).toMatchObject({ autoLoginYn: "Y", autoStatusCheck: "Y" });
    const loc = await instant(b, { state: "two" });
    expect(loc.origin + loc.pathname).toBe(DEMO_CB);
    expect(loc.searchParams.get("state")).toBe("two");
    const later = await readUser(codeOf(loc));
    expect(later.plid).toBe(first.plid);
    expect(later.autoLoginYn).toBe("Y");
    expect(later.autoStatusCheck).toBe("N");
    for (const item of IDENTITY_ITEMS) {
      const v = later[item]!;
      expect(
        ["ci", "phoneNo", "name", "birthday", "birthdate"].includes(item) ? await decryptField(DEMO.secret, v) : v,
      ).toBe("");
    }
  });

  it("an interactive login by the same subscriber while the grant exists (prompt=login): ticked, the grant renews, Y/Y; left unticked, Y/N and the device's grant is kept", async () => {
    const b = new Browser();
    await readUser(codeOf(await optIn(b, KIM)));
    const p = await b.authorize({ prompt: "login" });
    expect(p.status).toBe(200);
    const kept = await readUser(codeOf(await optIn(b, KIM, { prompt: "login" })));
    expect(kept).toMatchObject({ autoLoginYn: "Y", autoStatusCheck: "Y", telcoCd: "K" });
    expect(await decryptField(DEMO.secret, kept.name!)).toBe(KIM.name);
    const unticked = await readUser(codeOf(await signInAll(b, KIM, { prompt: "login" })));
    expect(unticked).toMatchObject({ autoLoginYn: "Y", autoStatusCheck: "N", telcoCd: "K" });
    expect((await b.authorize()).status).toBe(302);
  });

  it("the code step never tells whoever typed a number whether it has automatic login with the app: the box is unticked before the code is proven, for everyone", async () => {
    await optIn(new Browser(), HONG); // HONG has automatic login with the app (their own phone)
    const box = async (who: Who) => {
      const b = new Browser();
      const verify = await b.submit(await b.authorize(), { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
      expect(verify.form?.step).toBe("verify");
      return /<input type="checkbox" id="autoLogin"[^>]*>/.exec(verify.html)![0];
    };
    // LEE (SKT, eligible too) without automatic login with the app
    await shardExec("DELETE FROM grants WHERE subscriber_id IN (SELECT id FROM people WHERE phone = ?)", LEE.phone);
    expect(await box(HONG)).toBe(await box(LEE));
    expect(await box(HONG)).not.toContain("checked");
  });

  it("ticking the box again renews the grant: that login reports Y/Y once more", async () => {
    const b = new Browser();
    await readUser(codeOf(await optIn(b, HONG)));
    const again = await readUser(codeOf(await optIn(b, HONG, { prompt: "select_account" })));
    expect(again).toMatchObject({ autoLoginYn: "Y", autoStatusCheck: "Y" });
  });

  it("no grant: full identity with N/N", async () => {
    const user = await readUser(codeOf(await signInAll(new Browser(), HONG, { prompt: "login" })));
    expect(user).toMatchObject({ autoLoginYn: "N", autoStatusCheck: "N", telcoCd: "S" });
  });
});

describe("prompt (docs/architecture.md §4.4)", () => {
  it.each(["login", "select_account"])("prompt=%s shows the pages even with a grant", async (prompt) => {
    const b = new Browser();
    await optIn(b, HONG);
    const p = await b.authorize({ prompt });
    expect(p.status).toBe(200);
    expect(p.form?.step).toBe("identify");
  });

  it("prompt=none with a grant: the code at once", async () => {
    const b = new Browser();
    await optIn(b, KIM);
    const loc = await instant(b, { prompt: "none", state: "n1" });
    expect(loc.searchParams.get("state")).toBe("n1");
    codeOf(loc);
  });

  it("prompt=none without a grant never shows a page: 302 error=login_required with message and state", async () => {
    const loc = await instant(new Browser(), { prompt: "none", state: 'a b&c=d/%ZZ한글"<>' });
    expect(loc.origin + loc.pathname).toBe(DEMO_CB);
    expect([...loc.searchParams.keys()]).toEqual(["error", "message", "state"]);
    expect(loc.searchParams.get("error")).toBe("login_required");
    expect(loc.searchParams.get("state")).toBe('a b&c=d/%ZZ한글"<>');
  });

  it("prompt=N neither uses a grant nor offers the box; the login reports N/N", async () => {
    const b = new Browser();
    await optIn(b, HONG);
    const p = await b.authorize({ prompt: "N" });
    expect(p.status).toBe(200);
    const verify = await b.submit(p, { telcoCd: "S", name: HONG.name, phoneNo: HONG.phone });
    expect(verify.form!.names.has("autoLogin")).toBe(false);
    const done = await b.submit(verify, { otp: HONG.code });
    const user = await readUser(codeOf(new URL(done.res.headers.get("Location")!)));
    expect(user).toMatchObject({ autoLoginYn: "N", autoStatusCheck: "N" });
    // the grant itself is left as it was
    expect((await instant(b)).searchParams.get("code")).toBeTruthy();
  });

  it("an unknown prompt value is the default: the grant is used", async () => {
    const b = new Browser();
    await optIn(b, KIM);
    codeOf(await instant(b, { prompt: "consent" }));
  });
});

describe("the ends of automatic login", () => {
  it("disconnect ends it: the next authorize shows the pages, prompt=none gets login_required, and consent is asked again", async () => {
    const b = new Browser();
    const user = await readUser(codeOf(await optIn(b, KIM)));
    const res = await call("/v1/user/disconnect", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
      body: form({ plid: user.plid! }),
    });
    expect(res.status).toBe(200);
    expect(await findAutoLoginGrant(env, await device(b), DEMO.clientId)).toBeNull();
    expect((await b.authorize()).form?.step).toBe("identify");
    expect((await instant(b, { prompt: "none" })).searchParams.get("error")).toBe("login_required");
    const p = await throughCode(b, KIM);
    expect(p.form?.step).toBe("consent");
    const again = await readUser(codeOf(new URL((await b.submit(p, { agree: "Y" })).res.headers.get("Location")!)));
    expect(again.plid).not.toBe(user.plid);
  });

  it("a grant lasts 14 days", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const b = new Browser();
    await optIn(b, HONG);
    vi.setSystemTime(Date.now() + 14 * 86_400_000 - 60_000);
    codeOf(await instant(b));
    vi.setSystemTime(Date.now() + 120_000);
    expect((await b.authorize()).form?.step).toBe("identify");
  });

  it("another subscriber signing in on the device ends the first one's grant for that client", async () => {
    const b = new Browser();
    await optIn(b, HONG);
    const hash = await device(b);
    await signInAll(b, KIM, { prompt: "select_account" });
    expect(await findAutoLoginGrant(env, hash, DEMO.clientId)).toBeNull();
    expect((await b.authorize()).form?.step).toBe("identify");
  });

  it("prompt=N leaves only the signing-in person's own grants as they are: another subscriber's interactive sign-in with prompt=N still ends the first one's grant, and the next ordinary login shows the pages", async () => {
    const b = new Browser();
    const hong = await readUser(codeOf(await optIn(b, HONG)));
    const hash = await device(b);
    // KIM, at HONG's browser, through an app page asking for prompt=N (name, number, KIM's code)
    const kim = await readUser(codeOf(await signInAll(b, KIM, { prompt: "N" })));
    expect(kim.plid).not.toBe(hong.plid);
    expect(await findAutoLoginGrant(env, hash, DEMO.clientId)).toBeNull();
    const next = await b.authorize();
    // before the fix: 302 with a code for HONG's plid, no page
    expect(next.status, next.res.headers.get("Location") ?? "").toBe(200);
    expect(next.form?.step).toBe("identify");
  });

  it("another subscriber who has automatic login elsewhere and unticks the box here still ends the device's grant of the first one", async () => {
    const b = new Browser();
    await optIn(b, HONG);
    const hash = await device(b);
    await optIn(new Browser(), KIM); // KIM has automatic login with the app on their own phone
    // KIM on HONG's browser, leaving the box unticked so nothing is remembered here
    await signInAll(b, KIM, { prompt: "login" });
    expect(await findAutoLoginGrant(env, hash, DEMO.clientId)).toBeNull();
    expect((await b.authorize()).form?.step).toBe("identify");
  });

  it("is not used when the client's agreed items grew (consent needed) or the client no longer allows it", async () => {
    const b = new Browser();
    await optIn(b, HONG);
    await env.DB.prepare("UPDATE clients SET auto_login = 0 WHERE client_id = ?").bind(DEMO.clientId).run();
    forgetClient(DEMO.clientId);
    try {
      expect((await b.authorize()).form?.step).toBe("identify");
    } finally {
      await env.DB.prepare("UPDATE clients SET auto_login = 1 WHERE client_id = ?").bind(DEMO.clientId).run();
      forgetClient(DEMO.clientId);
    }
    codeOf(await instant(b));
    await shardExec("UPDATE links SET items = ? WHERE client_id = ?", itemsMask(["gender"]), DEMO.clientId);
    expect((await b.authorize()).form?.step).toBe("identify");
    // prompt=none still shows no page: the unusable grant gives login_required
    expect((await instant(b, { prompt: "none" })).searchParams.get("error")).toBe("login_required");
  });

  it("a cookie without a grant, or a malformed one, just shows the pages", async () => {
    const b = new Browser();
    b.cookies.set("__Host-pl_auto", "A".repeat(43));
    expect((await b.authorize()).form?.step).toBe("identify");
    b.cookies.set("__Host-pl_auto", "<bad>");
    expect((await b.authorize()).form?.step).toBe("identify");
  });
});

describe("the grant belongs to (device, client)", () => {
  it("every opt-in gets a fresh device id; the person's grant for another client moves with it; the audit carries no personal data", async () => {
    const other = await createClient({
      name: "Second Shop",
      redirect_uris: ["https://second.example/cb"],
      auto_login: true,
    });
    const b = new Browser();
    await optIn(b, HONG, { client_id: other.client_id, redirect_uri: "https://second.example/cb" });
    const first = b.cookies.get("__Host-pl_auto")!;
    await optIn(b, HONG);
    const second = b.cookies.get("__Host-pl_auto")!;
    expect(second).not.toBe(first);
    // one cookie, both clients: the grant at the second shop moved to the new device id
    codeOf(await instant(b));
    codeOf(await instant(b, { client_id: other.client_id, redirect_uri: "https://second.example/cb" }));
    expect(await findAutoLoginGrant(env, await deviceOf(env, first), other.client_id)).toBeNull();
    const rows = await auditEvents({ type: "signin.success" });
    expect(rows.some((r) => r.detail!.includes('"automatic"'))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(HONG.phone);
  });

  it("a planted device cookie is never promoted: the victim's opt-in gets a fresh id, and the planted one logs nobody in", async () => {
    // The attacker holds a device id (here one of their own grants) and plants it in the victim's browser.
    const attacker = new Browser({ ip: "203.0.113.66" });
    await optIn(attacker, KIM);
    const planted = attacker.cookies.get("__Host-pl_auto")!;
    const victim = new Browser();
    victim.cookies.set("__Host-pl_auto", planted);
    await optIn(victim, HONG, { prompt: "login" });
    expect(victim.cookies.get("__Host-pl_auto")).not.toBe(planted);
    const grant = await findAutoLoginGrant(env, await deviceOf(env, planted), DEMO.clientId);
    expect(grant?.subscriberId ?? null).not.toBe(
      (await findAutoLoginGrant(env, await device(victim), DEMO.clientId))!.subscriberId,
    );
    // with the planted id the attacker is never logged in as the victim
    const p = await attacker.authorize();
    if (p.status === 302) {
      const user = await readUser(codeOf(new URL(p.res.headers.get("Location")!)));
      const victimUser = await readUser(codeOf(await instant(victim)));
      expect(user.plid).not.toBe(victimUser.plid);
    } else {
      expect(p.form?.step).toBe("identify");
    }
  });
});

describe("a shared browser: once a person proves their number on it, no automatic login of another subscriber answers from it, for any app", () => {
  let nextPerson = 0;
  /** A new directory entry (a test number with a fixed code): no consent, no grant anywhere yet. */
  async function person(telco: "S" | "K" | "L"): Promise<Who> {
    const k = nextPerson++;
    const phone = `0107${String(k).padStart(7, "0")}`;
    const code = String(100000 + ((k * 7919) % 900000));
    await insertSubscriber({ telco, phone, name: `공용${k}`, birth: "1994-04-04", ci: `CI-shared-${k}`, code });
    return { telco, name: `공용${k}`, phone, code };
  }

  interface App {
    params: Record<string, string>;
    client: { clientId: string; secret: string };
  }
  const demo: App = { params: {}, client: DEMO };
  const limited: App = {
    params: { client_id: LIMITED.clientId, redirect_uri: LIMITED.redirectUris[0]! },
    client: LIMITED,
  };
  let second: App;
  beforeAll(async () => {
    const c = await createClient({
      name: "Second Shop",
      redirect_uris: ["https://second.example/cb"],
      auto_login: true,
    });
    second = {
      params: { client_id: c.client_id, redirect_uri: "https://second.example/cb" },
      client: { clientId: c.client_id, secret: c.client_secret },
    };
  });

  async function plidOf(loc: URL, app: App): Promise<string> {
    const tok = await exchange(codeOf(loc), app.client);
    expect(tok.status).toBe(200);
    const me = await userMe(((await tok.json()) as { access_token: string }).access_token);
    return ((await me.json()) as { user: User }).user.plid!;
  }

  /** Who the browser's automatic login at each of the two apps logs in now (prompt=none: never a page). */
  async function automaticAs(b: Browser): Promise<(string | null)[]> {
    const out: (string | null)[] = [];
    for (const app of [demo, second]) {
      const loc = await instant(b, { ...app.params, prompt: "none" });
      out.push(loc.searchParams.has("code") ? await plidOf(loc, app) : null);
    }
    return out;
  }

  /** A browser of its own network (the per-network limit on step 1 stays out of the way). */
  const browser = () => new Browser({ ip: `198.51.${100 + (nextPerson >> 8)}.${nextPerson & 255}` });

  /** A browser where `first` ticked automatic login at both apps: their plids and the device ids it held. */
  async function sharedBrowser(first: Who): Promise<{ b: Browser; plids: string[]; devices: string[] }> {
    const b = browser();
    await optIn(b, first, second.params);
    await optIn(b, first, demo.params);
    const plids = await automaticAs(b);
    expect(plids.every((p) => p !== null)).toBe(true);
    return { b, plids: plids as string[], devices: [await deviceHash(b)] };
  }

  async function grantsOf(who: Who, devices: string[]): Promise<number> {
    const rows = await shardRows<{ n: number }>(
      `SELECT count(*) AS n FROM grants WHERE subscriber_id IN (SELECT id FROM people WHERE phone = ?)
       AND device_hash IN (${devices.map(() => "?").join(",")})`,
      who.phone,
      ...devices,
    );
    return rows.reduce((n, r) => n + r.n, 0);
  }

  it(
    "whatever the prompt, the box, the carrier, the app and its settings, and whether the consent is given (random combinations)",
    { timeout: 180_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom<"S" | "K" | "L">("S", "K", "L"),
          fc.constantFrom("demo", "second", "limited"),
          fc.constantFrom("login", "select_account", "N"),
          fc.boolean(),
          fc.boolean(),
          async (telco, appName, prompt, box, agree) => {
            const first = await person("S");
            const { b, plids, devices } = await sharedBrowser(first);
            // the next person, at the same browser, proves their own number through the pages
            const next = await person(telco);
            const app = { demo, second, limited }[appName];
            const p = await throughCode(b, next, { ...app.params, prompt }, box ? { autoLogin: "Y" } : {});
            expect(p.form?.step).toBe("consent");
            const done = await b.submit(p, { agree: agree ? "Y" : "N" });
            expect(done.status).toBe(302);
            if (b.cookies.has("__Host-pl_auto")) devices.push(await deviceHash(b));
            const now = await automaticAs(b);
            // before the fix: the first person's grants at the other app (or at every app, prompt=N) answered
            expect(now.filter((plid) => plid !== null && plids.includes(plid))).toEqual([]);
            // ended, not merely out of reach: none stays on a device id this browser ever held
            expect(await grantsOf(first, devices)).toBe(0);
          },
        ),
        { numRuns: 16 },
      );
    },
  );

  it("box unticked: signing in to one app ends the previous person's grant at another app too, not only the signed-in app's", async () => {
    const first = await person("S");
    const { b, devices } = await sharedBrowser(first);
    // the next person signs in to the demo app (box left unticked), then opens app B
    await signInAll(b, await person("K"), { prompt: "login" });
    // before the fix: app B logged the browser in as the first person, no page
    expect(await automaticAs(b)).toEqual([null, null]);
    expect((await b.authorize(second.params)).form?.step).toBe("identify");
    expect(await grantsOf(first, devices)).toBe(0);
  });

  it("box ticked: the previous person's grants end, not only fall out of reach behind the new device id", async () => {
    const first = await person("S");
    const { b, devices } = await sharedBrowser(first);
    await optIn(b, await person("K"), { prompt: "login" });
    expect(await deviceHash(b)).not.toBe(devices[0]);
    expect((await b.authorize(second.params)).form?.step).toBe("identify");
    // before the fix: they stayed on the old id, for anyone else holding it (a lost response, a copy)
    expect(await grantsOf(first, devices)).toBe(0);
  });

  it(
    "the same person's grants stay: an interactive sign-in of their own at one app (box unticked, any prompt) keeps automatic login at both",
    { timeout: 120_000 },
    async () => {
      for (const prompt of ["login", "select_account", "N"]) {
        const first = await person("K");
        const { b, plids } = await sharedBrowser(first);
        await signInAll(b, first, { prompt });
        expect(await automaticAs(b)).toEqual(plids);
      }
    },
  );

  it("interleaved: the first person ticks automatic login in another tab while the next person is on the consent page; the next person's agreement still ends it", async () => {
    const first = await person("S");
    const next = await person("K");
    const b = browser();
    // the next person proves their number and reaches the consent page (no grant on this browser yet)
    const consent = await throughCode(b, next, { prompt: "login" });
    expect(consent.form?.step).toBe("consent");
    // meanwhile, in another tab of the same browser, the first person opts in at app B
    await optIn(b, first, second.params);
    const firstAtB = await automaticAs(b);
    expect(firstAtB[1]).not.toBeNull();
    const device = await deviceHash(b);
    // the next person agrees (box unticked): they are the one at this browser now
    expect((await b.submit(consent, { agree: "Y" })).status).toBe(302);
    expect(await automaticAs(b)).toEqual([null, null]);
    expect(await grantsOf(first, [device])).toBe(0);
  });
});
