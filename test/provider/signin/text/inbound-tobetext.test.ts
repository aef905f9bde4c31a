// ToBeText's inbound format (docs/signin.md "ToBeText's format"), in workerd through the pages and
// POST /sms/inbound/tobetext/<token>, as ToBeText's Inbound SMS API delivers a text
// (https://tobetext.com/api-docs/api-references/inbound-sms): a form of `SendNum`, `RecvNum` and
// `Body` (the operator's prefix number, then the text). The page document names the parameters but
// gives no values; the values here are the test's. A text from the typed number marks its phrase
// arrived once and the sign-in goes on as after the generic webhook; a wrong or missing token,
// a malformed or oversized body, a replay, another sender or a receiving number abroad can text
// mark nothing.
import { describe, expect, it } from "vitest";
import { insertSubscriber } from "../../../support/shards";
import { alertText, Browser } from "../../../support/signin";
import { phraseOf, poll, textPage, textPeople } from "../../../support/texts";

const TOKEN = "tobetext-token-0123456789abcdef";
const PREFIX = "7001";
const VARS = { SIGNIN_MO: "all", SMS_INBOUND_NUMBER: "1544-1234", SMS_INBOUND_TOBETEXT_TOKEN: TOKEN };
const person = textPeople("719", "투비");

/** POST as ToBeText does: its three parameters, form-encoded, to the registered URL. */
function deliver(
  b: Browser,
  fields: Record<string, string>,
  token: string | null = TOKEN,
  type = "application/x-www-form-urlencoded",
): Promise<Response> {
  return b.fetch(token === null ? "/sms/inbound/tobetext" : `/sms/inbound/tobetext/${token}`, {
    method: "POST",
    headers: { "Content-Type": type },
    body: new URLSearchParams(fields).toString(),
  });
}

const form = (from: string, body: string, to = "15441234") => ({ SendNum: from, RecvNum: to, Body: body });
const answer = async (res: Response) => {
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: string }).result;
};

describe("a text in ToBeText's format", () => {
  it("from the typed number with the prefix before the phrase: accepted, the poll says so, and the sign-in goes on to the app's code", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    expect(p.form?.step).toBe("text");
    expect((await poll(b, p)).arrived).toBe(false);
    expect(await answer(await deliver(b, form(who.phone, `${PREFIX}${phraseOf(p)}`)))).toBe("accepted");
    expect((await poll(b, p)).arrived).toBe(true);
    let q = await b.submit(p, { sent: "Y" });
    if (q.form?.step === "consent") q = await b.submit(q, { agree: "Y" });
    expect(q.status).toBe(302);
    expect(new URL(q.res.headers.get("Location")!).searchParams.get("code")).toMatch(/.+/);
  });

  it("from the number in its international form (+8210…): accepted", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    const intl = `+82${who.phone.slice(1)}`;
    expect(await answer(await deliver(b, form(intl, `${PREFIX} ${phraseOf(p)}`)))).toBe("accepted");
  });
});

describe("ToBeText texts that mark nothing", () => {
  it("a wrong token or none: 401, and the phrase still waits", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    const f = form(who.phone, phraseOf(p));
    for (const token of ["tobetext-token-0123456789abcdeX", "short", null]) {
      const res = await deliver(b, f, token);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toBe("authentication_failed");
    }
    expect((await poll(b, p)).arrived).toBe(false);
    expect(await answer(await deliver(b, f))).toBe("accepted");
  });

  it("a replayed text is used; one from another number is unknown and marks nothing", async () => {
    const b = new Browser({ vars: VARS });
    const who = await person();
    const p = await textPage(b, who);
    const body = `${PREFIX}${phraseOf(p)}`;
    expect(await answer(await deliver(b, form("01077199999", body)))).toBe("unknown");
    expect(await answer(await deliver(b, form(who.phone, body, "15880000")))).toBe("not_our_number");
    expect((await poll(b, p)).arrived).toBe(false);
    expect(await answer(await deliver(b, form(who.phone, body)))).toBe("accepted");
    expect(await answer(await deliver(b, form(who.phone, body)))).toBe("used");
  });

  it("on a receiving number that is not a representative number (an 050 number), a text proves nothing: international", async () => {
    const b = new Browser({ vars: { ...VARS, SMS_INBOUND_NUMBER: "0501-234-5678" } });
    const who = await person();
    const p = await textPage(b, who);
    const res = await deliver(b, form(who.phone, phraseOf(p), "05012345678"));
    expect(await answer(res)).toBe("international");
    expect((await poll(b, p)).arrived).toBe(false);
  });

  it("malformed, oversized or mistyped bodies get a clear 400/413/415 naming the problem, never a 500", async () => {
    const b = new Browser({ vars: VARS });
    const described = async (res: Response, status: number) => {
      expect(res.status).toBe(status);
      return ((await res.json()) as { error_description: string }).error_description;
    };
    expect(await described(await deliver(b, { SendNum: "01000000000", RecvNum: "15441234" }), 400)).toContain("Body");
    expect(await described(await deliver(b, { RecvNum: "15441234", Body: "x" }), 400)).toContain("SendNum");
    // a name twice
    const twice = await b.fetch(`/sms/inbound/tobetext/${TOKEN}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "SendNum=01000000000&SendNum=01000000001&RecvNum=15441234&Body=x",
    });
    expect(twice.status).toBe(400);
    // EUC-KR bytes (로그인), not UTF-8
    const euckr = await b.fetch(`/sms/inbound/tobetext/${TOKEN}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "SendNum=01000000000&RecvNum=15441234&Body=%B7%CE%B1%D7%C0%CE%2012345678",
    });
    expect(await described(euckr, 400)).toContain("Body");
    expect(await described(await deliver(b, form("01000000000", "x"), TOKEN, "application/json"), 415)).toContain(
      "x-www-form-urlencoded",
    );
    expect((await deliver(b, form("01000000000", "x".repeat(5000)))).status).toBe(413);
  });

  it("without SMS_INBOUND_TOBETEXT_TOKEN the route is 404, whatever the token", async () => {
    const b = new Browser({ vars: { SIGNIN_MO: "all", SMS_INBOUND_NUMBER: "1544-1234" } });
    expect((await deliver(b, form("01000000000", "x"))).status).toBe(404);
  });
});
