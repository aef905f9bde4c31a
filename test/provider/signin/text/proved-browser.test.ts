// A browser that proved its number (docs/abuse.md "A browser that proved its number"), in workerd
// through the pages with the SMS-abuse guard on and the text offered where it would challenge: once
// a browser signed in with a right code, a sign-in of that number from it gets its code by SMS even
// from a suspect network; another number, another browser, a forged or expired proof, and a number
// passed to another person since get the text, as any browser does. The check reads no directory.
import { describe, expect, it } from "vitest";
import { env } from "../../../support/env";
import { ciOf, importRows, lastCode } from "../../../support/directory";
import { aroundCalls } from "../../../support/shards";
import { alertText, Browser, type Page } from "../../../support/signin";

let T = Date.UTC(2027, 1, 3, 3, 0, 0);
const VARS = {
  SIGNIN_MO: "guard",
  SMS_INBOUND_NUMBER: "1544-1234",
  SMS_INBOUND_SECRET: "inbound-test-secret-0123456789abcdef",
  SMS_GUARD: "on",
  GUARD_MIN_SENDS: "3",
  GUARD_SETTLE_SECONDS: "0",
  GUARD_CACHE_SECONDS: "0",
  GUARD_FLUSH_MS: "0",
  SIGNIN_IP_LIMIT: "100000",
  SIGNIN_RESEND_COOLDOWN_SECONDS: "0",
};

let net = 0;
let n = 0;
/** A person imported with a real number (codes by SMS). */
async function person(): Promise<{ telco: string; name: string; phone: string }> {
  const i = n++;
  // a prefix of the current network's own: a prefix the guard held suspect stays so across tests
  const phone = `010${7700 + net}${String(i).padStart(4, "0")}`;
  const name = `확인${i}`;
  await importRows([
    { telcoCd: "S", phoneNo: phone, name, gender: "F", birth: "1990-01-01", foreign: "L", ci: ciOf(200 + i) },
  ]);
  return { telco: "S", name, phone };
}

/** A fresh network block (its own ASN) whose clock the test moves. */
function network() {
  const k = ++net;
  const clock = { now: (T += 86_400_000) };
  const browser = (vars: Record<string, string> = {}, bindings?: Partial<typeof env>) => {
    const headers: Record<string, string> = { "X-Dev-Asn": String(65_000 + k), "X-Dev-Country": "QP" };
    const b = new Browser({ ip: `10.99.${k}.9`, vars: { ...VARS, ...vars }, bindings, headers });
    const fetch = b.fetch.bind(b);
    b.fetch = (path, init) => {
      headers["X-Dev-Clock"] = String(clock.now);
      return fetch(path, init);
    };
    return b;
  };
  return { clock, browser };
}

async function identify(b: Browser, who: { telco: string; name: string; phone: string }): Promise<Page> {
  const p1 = await b.authorize();
  return b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
}

/** A whole sign-in by code (consent given): the browser now holds the proof. */
async function signIn(b: Browser, who: { telco: string; name: string; phone: string }): Promise<void> {
  const p = await identify(b, who);
  expect(p.form?.step).toBe("verify");
  let q = await b.submit(p, { otp: await lastCode(who.phone) });
  if (q.form?.step === "consent") q = await b.submit(q, { agree: "Y" });
  expect(q.status, alertText(q.html)).toBe(302);
  expect([...b.cookies.keys()]).toContain("__Host-pl_nb");
}

/** Three untyped codes from the network: its block turns suspect a minute later. */
async function attack(net: ReturnType<typeof network>): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await identify(net.browser(), await person())).form?.step).toBe("verify");
  net.clock.now += 60_000;
}

describe("a browser that proved its number", () => {
  it("gets its code by SMS from a suspect network; another browser, or another number from it, gets the text", async () => {
    const net = network();
    const who = await person();
    const mine = net.browser();
    await signIn(mine, who);
    await attack(net);
    expect((await identify(net.browser(), who)).form?.step).toBe("text");
    const p = await identify(mine, who);
    expect(p.form?.step).toBe("verify");
    expect(await lastCode(who.phone)).toMatch(/^\d{6}$/);
    expect((await identify(mine, await person())).form?.step).toBe("text");
  });

  it("is checked before anyone is looked up: a proof for another number, and no directory call, until the text", async () => {
    const net = network();
    const who = await person();
    const mine = net.browser();
    await signIn(mine, who);
    await attack(net);
    const calls: string[] = [];
    const watched = net.browser({}, { DIRECTORY: aroundCalls(env.DIRECTORY, (m) => void calls.push(m)) });
    for (const [k, v] of mine.cookies) watched.cookies.set(k, v);
    const first = await watched.authorize();
    calls.length = 0;
    const page = await watched.submit(first, { telcoCd: "S", name: "아무개", phoneNo: `${who.phone.slice(0, 7)}9999` });
    expect(page.form?.step, alertText(page.html)).toBe("text");
    expect(calls).toEqual([]);
  });

  it("a forged or expired proof is none", async () => {
    const net = network();
    const who = await person();
    const short = net.browser({ SIGNIN_PROVED_BROWSER_SECONDS: "1" });
    await signIn(short, who);
    await attack(net);
    // forged: one character of a MAC changed
    const forged = net.browser();
    const v = short.cookies.get("__Host-pl_nb")!;
    forged.cookies.set("__Host-pl_nb", v.slice(0, -1) + (v.endsWith("A") ? "B" : "A"));
    expect((await identify(forged, who)).form?.step).toBe("text");
    await new Promise((r) => setTimeout(r, 1100));
    expect((await identify(short, who)).form?.step).toBe("text");
  });

  it("a number passed to another person since no longer holds: the new person's sign-in from that browser gets the text", async () => {
    const net = network();
    const who = await person();
    const mine = net.browser();
    await signIn(mine, who);
    await attack(net);
    const report = await importRows([
      {
        telcoCd: "S",
        phoneNo: who.phone,
        name: "새주인",
        gender: "M",
        birth: "2001-01-01",
        foreign: "L",
        ci: ciOf(250),
      },
    ]);
    expect(report).toMatchObject({ reassigned: 1 });
    expect((await identify(mine, { ...who, name: "새주인" })).form?.step).toBe("text");
  });
});
