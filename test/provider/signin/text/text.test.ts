// A text the person sends (docs/signin.md "A text the person sends"), in workerd through the pages
// and the signed inbound webhook, as the operator's SMS gateway would deliver it: the page asks for
// a phrase and sends nothing; a text from the typed number with the phrase's digits, signed, sent on
// a domestic network and in time, marks it arrived once; "I sent it" then asks the directory and
// goes on to consent. Forged, stale, replayed, misaddressed, foreign and late texts mark nothing;
// two texts or two submissions at once: one wins. The page is the same for a name and number that
// match and ones that do not.
import { describe, expect, it } from "vitest";
import { env } from "../../../support/env";
import { insertSubscriber } from "../../../support/shards";
import { alertText, Browser, parseForms, type Page } from "../../../support/signin";
import { phraseOf, poll, textPage, textPeople } from "../../../support/texts";
import { hmacSha256Hex } from "../../../../workers/core/crypto";
import { phoneKey, shardOf, storeAt, textKey } from "../../../../workers/provider/store/one-time/index";
import { storeConfig } from "../../../../workers/provider/store/config";

const SECRET = "inbound-test-secret-0123456789abcdef";
const NEXT = "inbound-next-secret-0123456789abcdef";
const NUMBER = "15441234";
const VARS = { SIGNIN_MO: "all", SMS_INBOUND_NUMBER: "1544-1234", SMS_INBOUND_SECRET: SECRET };
/** A person with a real number (no fixed code: a code would go by SMS). */
const person = textPeople("717", "문자");

interface Text {
  from: string;
  body: string;
  to?: string;
  domestic?: boolean;
  receivedAt?: string;
}

/** POST /sms/inbound as the gateway signs it (`secret`, at `ts` seconds); the response. */
async function deliver(b: Browser, t: Text, secret = SECRET, ts = Math.floor(Date.now() / 1000)): Promise<Response> {
  const body = JSON.stringify({
    from: t.from,
    to: t.to ?? NUMBER,
    body: t.body,
    receivedAt: t.receivedAt ?? new Date().toISOString(),
    domestic: t.domestic ?? true,
  });
  return b.fetch("/sms/inbound", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Signature-Timestamp": String(ts),
      "X-Signature": `sha256=${await hmacSha256Hex(secret, `${ts}.${body}`)}`,
    },
    body,
  });
}

const result = async (res: Response) => ((await res.json()) as { result: string }).result;

async function sends(phone: string): Promise<number> {
  const r = await env.DB.prepare("SELECT count(*) AS n FROM sms_outbox WHERE phone = ?")
    .bind(phone)
    .first<{ n: number }>();
  return r!.n;
}

/** "I sent it", and consent when asked: the final page. */
async function sent(b: Browser, p: Page): Promise<Page> {
  let q = await b.submit(p, { sent: "Y" });
  if (q.form?.step === "consent") q = await b.submit(q, { agree: "Y" });
  return q;
}

describe("the text page", () => {
  it("asks for the phrase (the service's name, 로그인, the app's name and 8 digits) to the receiving number, and sends no SMS", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    expect(p.status).toBe(200);
    expect(p.form?.step).toBe("text");
    const phrase = phraseOf(p);
    expect(phrase).toMatch(/^\[휴대폰번호 로그인\] Demo Shop 로그인 \d{8}$/);
    expect(p.html).toContain("1544-1234");
    // on a phone, the messages app opens with the number and the phrase
    expect(p.html).toContain(`href="sms:${NUMBER}?body=${encodeURIComponent(phrase).replace(/'/g, "&#39;")}"`);
    // without JavaScript: "I sent it" posts the form; with it, the page polls its own origin
    expect(p.form!.names.has("sent")).toBe(true);
    expect(p.res.headers.get("Content-Security-Policy")).toContain("connect-src 'self'");
    expect(await sends(who.phone)).toBe(0);
  });

  it("switches language in place: the same phrase's page in English, and the text still signs in", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    const phrase = phraseOf(p);
    const lang = parseForms(p.html).find((f) => f.names.has("lang"))!;
    const en = await b.submit({ ...p, form: lang }, { lang: "en" });
    expect(en.status).toBe(200);
    expect(en.html).toContain('<html lang="en"');
    expect(en.form?.step).toBe("text");
    expect(phraseOf(en)).toBe(phrase);
    // and back: the page's own switch carries the ticket again
    const ko = await b.submit({ ...en, form: parseForms(en.html).find((f) => f.names.has("lang"))! }, { lang: "ko" });
    expect(ko.html).toContain('<html lang="ko"');
    expect(phraseOf(ko)).toBe(phrase);
    expect(await result(await deliver(b, { from: who.phone, body: phrase }))).toBe("accepted");
    const done = await sent(b, ko);
    expect(done.status).toBe(302);
    expect(await sends(who.phone)).toBe(0);
  });

  it("is the same for a name and number that match and for ones that do not: nobody is looked up before the text", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const strip = (p: Page) =>
      p.html
        .replace(/data-until="\d+"/, "")
        .replace(/href="(?:sms:|\/dev\/outbox)[^"]*"/g, "")
        .replace(/\d{8}/g, "D")
        .replace(/(name="(?:tx|csrf|text)" value=")[^"]*/g, "$1")
        .replace(/nonce[-=]"?[A-Za-z0-9_-]+/g, "nonce")
        .replace(/data-until="\d+"/, "")
        .replace(/href="sms:[^"]*"/, "")
        .replace(/\d{1,2}:\d{2}/g, "T");
    const right = await textPage(b, who);
    const wrongName = await textPage(b, { ...who, name: "다른이름" });
    const nobody = await textPage(b, { ...who, phone: "01077189999" });
    for (const p of [wrongName, nobody]) {
      expect(p.status).toBe(right.status);
      expect(strip(p).replace(/문자\d+|다른이름/g, "N")).toBe(strip(right).replace(/문자\d+|다른이름/g, "N"));
    }
    // the number that is nobody's: its text arrives, and only then the answer is today's no-match
    expect(await result(await deliver(b, { from: "010-7718-9999", body: phraseOf(nobody) }))).toBe("accepted");
    const after = await b.submit(nobody, { sent: "Y" });
    expect(after.form?.step).toBe("identify");
    expect(alertText(after.html)).toContain("확인되지 않습니다");
  });
});

describe("a text that proves the number", () => {
  it("arrives signed from the typed number: the poll says so, and 'I sent it' signs the person in", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    expect((await poll(b, p)).arrived).toBe(false);
    // before the text: "not yet", the same phrase
    const early = await b.submit(p, { sent: "Y" });
    expect(early.form?.step).toBe("text");
    expect(phraseOf(early)).toBe(phraseOf(p));
    expect(await result(await deliver(b, { from: who.phone, body: phraseOf(p) }))).toBe("accepted");
    expect((await poll(b, p)).arrived).toBe(true);
    const end = await sent(b, p);
    expect(end.status).toBe(302);
    const to = new URL(end.res.headers.get("Location")!);
    expect(to.searchParams.get("code")).toMatch(/.+/);
    expect(to.searchParams.get("state")).toBe("st-1");
    expect(await sends(who.phone)).toBe(0);
  });

  it("is signed with the next secret while it rotates", async () => {
    const b = new Browser({ vars: { ...VARS, SMS_INBOUND_SECRET_NEXT: NEXT } });
    const who = await person();
    const p = await textPage(b, who);
    expect(await result(await deliver(b, { from: who.phone, body: phraseOf(p) }, NEXT))).toBe("accepted");
  });
});

describe("a number's texts are capped as its codes are", () => {
  it("after SIGNIN_SENDS_PER_WINDOW sign-ins by text in the window, the number is offered no phrase: the page says when, as for a code; an offer alone takes nothing", async () => {
    const vars = { ...VARS, SIGNIN_SENDS_PER_WINDOW: "2", SIGNIN_SEND_WINDOW_SECONDS: "3600" };
    const who = await person();
    // offers that no text follows spend nothing: a bot with the number on a list cannot stop its holder
    for (let i = 0; i < 3; i++) phraseOf(await textPage(new Browser({ vars }), who));
    for (let i = 0; i < 2; i++) {
      const b = new Browser({ vars });
      const p = await textPage(b, who);
      expect(await result(await deliver(b, { from: who.phone, body: phraseOf(p) }))).toBe("accepted");
      expect((await sent(b, p)).status).toBe(302);
    }
    const b = new Browser({ vars });
    const third = await textPage(b, who);
    expect(third.html).not.toContain('id="text-phrase"');
    expect(third.form?.step).toBe("identify");
    // the window is the number's, spent by texts here: the page says so, not that codes were sent
    expect(alertText(third.html)).toBe("이 번호는 인증 횟수를 모두 썼습니다. 60분 뒤에 다시 시도하세요.");
    // another number is not held back
    phraseOf(await textPage(new Browser({ vars }), await person()));
  });
});

describe("texts that mark nothing", () => {
  it("a forged signature, a stale timestamp, another secret: 401, and the phrase still waits", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    const t = { from: who.phone, body: phraseOf(p) };
    expect((await deliver(b, t, "not-the-secret-0123456789abcdef")).status).toBe(401);
    expect((await deliver(b, t, SECRET, Math.floor(Date.now() / 1000) - 301)).status).toBe(401);
    const forged = await b.fetch("/sms/inbound", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Signature-Timestamp": "1", "X-Signature": "sha256=00" },
      body: JSON.stringify({ ...t, to: NUMBER, receivedAt: new Date().toISOString(), domestic: true }),
    });
    expect(forged.status).toBe(401);
    expect((await poll(b, p)).arrived).toBe(false);
    expect(await result(await deliver(b, t))).toBe("accepted");
  });

  it("a replayed text is used; a text from another number, to another number, from abroad, or received too long ago marks nothing", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    const body = phraseOf(p);
    expect(await result(await deliver(b, { from: "01077180001", body }))).toBe("unknown");
    expect(await result(await deliver(b, { from: who.phone, body, to: "15880000" }))).toBe("not_our_number");
    expect(await result(await deliver(b, { from: who.phone, body, domestic: false }))).toBe("international");
    expect(
      await result(
        await deliver(b, { from: who.phone, body, receivedAt: new Date(Date.now() - 3_600_000).toISOString() }),
      ),
    ).toBe("stale");
    expect(await result(await deliver(b, { from: who.phone, body: "안녕하세요" }))).toBe("no_phrase");
    expect((await poll(b, p)).arrived).toBe(false);
    expect(await result(await deliver(b, { from: who.phone, body }))).toBe("accepted");
    expect(await result(await deliver(b, { from: who.phone, body }))).toBe("used");
  });

  it("an expired phrase is unknown, and 'I sent it' asks for the number again", async () => {
    const b = new Browser({ vars: { ...VARS, SIGNIN_MO_TTL_SECONDS: "1" } });
    const who = await person();
    const p = await textPage(b, who);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await result(await deliver(b, { from: who.phone, body: phraseOf(p) }))).toBe("unknown");
    const after = await b.submit(p, { sent: "Y" });
    expect(after.form?.step).toBe("identify");
    expect(alertText(after.html)).toContain("시간이 지났습니다");
  });

  it("a used phrase signs nothing in twice: 'I sent it' again gets the page of where the sign-in is", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    expect(await result(await deliver(b, { from: who.phone, body: phraseOf(p) }))).toBe("accepted");
    const first = await b.submit(p, { sent: "Y" });
    expect(first.form?.step).toBe("consent");
    const again = await b.submit(p, { sent: "Y" });
    expect(again.status).not.toBe(302);
    expect(again.form?.step).not.toBe("text");
  });

  it("malformed, oversized or incomplete webhook bodies get a clear 400/413, never a 500", async () => {
    const b = new Browser({ vars: VARS });
    const ts = Math.floor(Date.now() / 1000);
    const post = async (body: string) =>
      b.fetch("/sms/inbound", {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-Signature-Timestamp": String(ts),
          "X-Signature": `sha256=${await hmacSha256Hex(SECRET, `${ts}.${body}`)}`,
        },
        body,
      });
    const bad = await post("{not json");
    expect(bad.status).toBe(400);
    const missing = await post(
      JSON.stringify({ from: "01000000000", to: NUMBER, receivedAt: new Date().toISOString(), domestic: true }),
    );
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error_description: string }).error_description).toContain("body");
    expect((await post("x".repeat(5000))).status).toBe(413);
  });
});

describe("at once", () => {
  it("two texts of one phrase: one accepted, one used; two 'I sent it': one sign-in continues", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    const body = phraseOf(p);
    const results = await Promise.all([deliver(b, { from: who.phone, body }), deliver(b, { from: who.phone, body })]);
    expect((await Promise.all(results.map(result))).sort()).toEqual(["accepted", "used"]);
    const pages = await Promise.all([b.submit(p, { sent: "Y" }), b.submit(p, { sent: "Y" })]);
    expect(pages.filter((q) => q.form?.step === "consent")).toHaveLength(1);
  });
});

describe("a request killed after it took the phrase", () => {
  // What such a request leaves in the number's object (an isolate evicted or a connection lost
  // while the carrier directory answers): the phrase taken, with the time its hold ends.
  async function phraseEntry(who: { phone: string }, phrase: string) {
    const pk = await phoneKey(who.phone);
    const key = await textKey(pk, phrase.replace(/\D/g, "").slice(-8));
    return { stub: storeAt(env, shardOf(pk, storeConfig(env).oneTimeShards)), key };
  }

  it("holds the phrase while the hold runs, then 'I sent it' takes it again and signs the person in, once", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    expect(await result(await deliver(b, { from: who.phone, body: phraseOf(p) }))).toBe("accepted");
    const { stub, key } = await phraseEntry(who, phraseOf(p));
    const held = `taken:${Date.now() + 60_000}`;
    expect(await stub.swapEntry(key, "arrived", held)).toBe(true);

    // the killed request may still be answering: nobody else takes the phrase meanwhile
    const meanwhile = await b.submit(p, { sent: "Y" });
    expect(meanwhile.form?.step).not.toBe("consent");
    expect(await stub.getEntry(key)).toBe(held);

    // its hold has passed: the request is gone, and the person's "I sent it" goes on
    expect(await stub.swapEntry(key, held, `taken:${Date.now() - 1}`)).toBe(true);
    const pages = await Promise.all([b.submit(p, { sent: "Y" }), b.submit(p, { sent: "Y" })]);
    expect(pages.filter((q) => q.form?.step === "consent")).toHaveLength(1);
    expect(await sends(who.phone)).toBe(0);
  });
});

describe("where the guard decides", () => {
  it("SIGNIN_MO=guard: a suspect network gets the text, not the challenge, and no code is sent; SIGNIN_MO=off: the challenge", async () => {
    const vars = {
      ...VARS,
      SIGNIN_MO: "guard",
      SMS_GUARD: "on",
      GUARD_MIN_SENDS: "3",
      GUARD_SETTLE_SECONDS: "0",
      GUARD_CACHE_SECONDS: "0",
      GUARD_FLUSH_MS: "0",
      SIGNIN_IP_LIMIT: "100000",
    };
    const ip = "10.77.3.9";
    // the guard's clock (DEV_MODE's X-Dev-Clock): the codes are sent, then judged a minute later
    const t0 = Date.UTC(2027, 0, 5, 3, 0, 0);
    const headers = { "X-Dev-Asn": "64777", "X-Dev-Country": "QT", "X-Dev-Clock": String(t0) };
    // three codes from one network block, never typed: the block turns suspect
    for (let i = 0; i < 3; i++) {
      const b = new Browser({ vars, ip, headers });
      const p = await textPage(b, await person());
      expect(p.form?.step).toBe("verify");
    }
    headers["X-Dev-Clock"] = String(t0 + 60_000);
    const b = new Browser({ vars, ip, headers });
    const first = await b.authorize();
    expect(first.html).not.toMatch(/class="cf-turnstile"/);
    const who = await person();
    const p = await b.submit(first, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
    expect(p.form?.step).toBe("text");
    expect(await sends(who.phone)).toBe(0);
    const off = new Browser({ vars: { ...vars, SIGNIN_MO: "off" }, ip, headers });
    const q = await textPage(off, await person());
    expect(q.html).toMatch(/class="cf-turnstile"/);
  });
});
