// The carrier verification API as the directory (CARRIER_DIRECTORY=http; docs/carrier-api.md,
// docs/signin.md "Carrier directory interface"): the sign-in pages against a fake carrier API that
// checks our signatures and signs its answers (test/support/fixtures/fake-carrier.js), driven
// through the HTTP interface as a browser and an app do.
import { runInDurableObject } from "cloudflare:test";
import { env } from "../../../support/env";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { bodyText, DEMO, exchange, HONG, userMe } from "../../../support/helpers";
import { alertText, Browser, signInAll, type Page } from "../../../support/signin";
import { ciOf, lastCode } from "../../../support/directory";
import { auditEvents } from "../../../support/audit";
import { beforeShardCall, shardRows } from "../../../support/shards";
import { decryptField } from "../../../../workers/core/crypto";
import { ConfigError } from "../../../../workers/core/config";
import { subscriberByPhone } from "../../../../workers/provider/store/directory/directory";
import { storeAt, storeFor } from "../../../../workers/provider/store/one-time/one-time-store";
import { txKey } from "../../../../workers/provider/signin/transaction";
import { providerConfig } from "../../../../workers/provider/config";
import { admin } from "../../../support/admin";
import { configProblems, MAX_SHARDS } from "../../../../workers/provider/store/config";
import { dirAt } from "../../../../workers/provider/store/directory/directory-shard";
import { ciShard, dirShards, numberShard } from "../../../../workers/provider/store/directory/keys";
import { carrierDirectory } from "../../../../workers/provider/signin/carrier";
import { signinConfig } from "../../../../workers/provider/signin/config";
import { askCarrier } from "../../../../workers/provider/signin/carrier-api";
import { phoneKey } from "../../../../workers/provider/signin/limits";
import { CARRIER, CARRIER_SECRET, CARRIER_VARS, carrierControl } from "../../../support/fake-carrier";

const SECRET = CARRIER_SECRET;
const HTTP = {
  ...CARRIER_VARS,
  // a person signs in several times in a row here: each gets a fresh code by SMS
  SIGNIN_RESEND_COOLDOWN_SECONDS: "0",
};
const UNCONFIRMED_KO = "입력하신 이름과 휴대폰번호는 통신 3사에서 확인되지 않습니다.";

interface CarrierSubscriber {
  telcoCd: string;
  name: string;
  ci: string;
  gender: string;
  birth: string;
  foreign: string;
}

const control = carrierControl;

const carrierHas = (people: Record<string, CarrierSubscriber | null>) => control("/_carrier/people", people);
const carrierMode = (mode: string, extra: Record<string, unknown> = {}) =>
  control("/_carrier/mode", { mode, ...extra });
/** The secret the fake checks requests with, and the one it signs answers with (default: the same). */
const carrierSecret = (secret: string, answerSecret?: string) => control("/_carrier/secret", { secret, answerSecret });
const carrierLog = () =>
  control("/_carrier/log") as Promise<
    {
      verdict: string;
      problem?: string;
      signedBy?: string;
      telcoCd?: string;
      name?: string;
      phoneNo?: string;
      requestId?: string;
    }[]
  >;

beforeEach(async () => {
  await control("/_carrier/reset", {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The signed events sent to apps from now on (delivered as usual). */
function eventsToApps(): string[] {
  const sent: string[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (new URL(req.url).pathname === "/auth/events") sent.push(await bodyText(req.clone()));
    return real(req);
  });
  return sent;
}

/** A browser of the dev worker with the carrier API as its directory (and `more` variables). */
const httpBrowser = (more: Record<string, string> = {}, lang?: string) =>
  new Browser({ vars: { ...HTTP, ...more }, ...(lang ? { lang } : {}) });

async function identify(b: Browser, telco: string, name: string, phone: string): Promise<Page> {
  return b.submit(await b.authorize(), { telcoCd: telco, name, phoneNo: phone });
}

/** Through the code page with the code the dev outbox received; the page after it. */
async function throughSms(b: Browser, telco: string, name: string, phone: string): Promise<Page> {
  const p = await identify(b, telco, name, phone);
  expect(p.form?.step, alertText(p.html)).toBe("verify");
  return b.submit(p, { otp: await lastCode(phone) });
}

/** An app's code → token → /v1/user/me: the token and the user record, decrypted. */
async function appReads(location: URL): Promise<Record<string, string>> {
  const tok = await exchange(location.searchParams.get("code")!);
  expect(tok.status).toBe(200);
  const { access_token } = (await tok.json()) as { access_token: string };
  const me = await userMe(access_token);
  expect(me.status).toBe(200);
  const { user } = (await me.json()) as { user: Record<string, string> };
  const out: Record<string, string> = { ...user };
  for (const k of ["ci", "phoneNo", "name", "birthdate"]) out[k] = await decryptField(DEMO.secret, user[k]!);
  return out;
}

/** The code an app gets at the end of a sign-in that may ask for consent. */
async function finish(b: Browser, p: Page): Promise<{ location: URL; consented: boolean }> {
  const consented = p.form?.step === "consent";
  if (consented) p = await b.submit(p, { agree: "Y" });
  expect(p.status, alertText(p.html)).toBe(302);
  return { location: new URL(p.res.headers.get("Location")!), consented };
}

const SKY: CarrierSubscriber = {
  telcoCd: "K",
  name: "최하늘",
  ci: ciOf(201),
  gender: "F",
  birth: "1992-04-05",
  foreign: "L",
};
const SKY_PHONE = "01090001111";

describe("CARRIER_DIRECTORY=http: a person unknown to the D1 directory", () => {
  it("signs in through the pages, gets a plid, and the app reads the carrier's person; a second sign-in keeps the plid and writes nothing", async () => {
    expect(await subscriberByPhone(env, SKY_PHONE)).toBeNull();
    await carrierHas({ [SKY_PHONE]: SKY });

    const b = httpBrowser();
    const first = await finish(b, await throughSms(b, "K", "최하늘", SKY_PHONE));
    expect(first.consented).toBe(true);
    const user = await appReads(first.location);
    expect(user).toMatchObject({
      name: "최하늘",
      ci: SKY.ci,
      phoneNo: SKY_PHONE,
      gender: "F",
      birthdate: "920405",
      foreign: "L",
      telcoCd: "K",
    });
    expect(user.plid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    // the carrier was asked once, with the request of docs/carrier-api.md
    const log = await carrierLog();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ verdict: "ok", telcoCd: "K", phoneNo: SKY_PHONE });
    expect(log[0]!.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // the person is in the directory as an import row would be: indexed by ci, at home by number
    const row = (await subscriberByPhone(env, SKY_PHONE))!;
    expect(row).toMatchObject({ ci: SKY.ci, name: "최하늘", telco: "K", birth: "1992-04-05", testOtpHash: null });
    expect(await shardRows("SELECT id FROM by_ci WHERE ci = ?", SKY.ci)).toEqual([{ id: row.id }]);

    // Again, on another browser: the carrier is asked again (it decides), the directory is read
    // and, holding exactly this person, not written.
    const watched = beforeShardCall(
      env.DIRECTORY,
      () => false,
      async () => {},
    );
    const b2 = new Browser({ vars: { ...HTTP, DIRECTORY: watched } as unknown as Record<string, string> });
    const second = await finish(b2, await throughSms(b2, "K", " 최하늘 ", SKY_PHONE));
    expect(second.consented).toBe(false);
    expect((await appReads(second.location)).plid).toBe(user.plid);
    expect(await carrierLog()).toHaveLength(2);
    const writes = ["importAtNumbers", "claim", "updateSubscriber", "leaseCis", "indexCi", "indexCis", "startRemoval"];
    expect(watched.calls.filter((c) => writes.includes(c))).toEqual([]);
    expect((await subscriberByPhone(env, SKY_PHONE))!.id).toBe(row.id);
  });

  it("a number now answering with another ci has passed to another person: the previous person's tokens stop, number_reassigned is sent, and the new person gets a new plid", async () => {
    const phone = "01090002222";
    const before: CarrierSubscriber = { ...SKY, name: "한가람", ci: ciOf(211) };
    await carrierHas({ [phone]: before });
    const b = httpBrowser();
    const first = await finish(b, await throughSms(b, "K", "한가람", phone));
    const firstUser = await appReads(first.location);
    // a second login's token, not yet read by the app
    const again = await finish(b, await throughSms(b, "K", "한가람", phone));
    const tok = await exchange(again.location.searchParams.get("code")!);
    const { access_token: unread } = (await tok.json()) as { access_token: string };
    const since = Date.now();
    const events = eventsToApps();

    // the carrier now says the number is someone else's
    const after: CarrierSubscriber = {
      telcoCd: "S",
      name: "정바다",
      ci: ciOf(212),
      gender: "M",
      birth: "1988-08-08",
      foreign: "L",
    };
    await carrierHas({ [phone]: after });
    const b3 = httpBrowser();
    // the previous person is no longer confirmed at this number, exactly as an unknown one
    const refused = await identify(b3, "K", "한가람", phone);
    expect(refused.status).toBe(200);
    expect(alertText(refused.html)).toBe(UNCONFIRMED_KO);
    const now = await finish(b3, await throughSms(b3, "S", "정바다", phone));
    expect(now.consented).toBe(true);
    const newUser = await appReads(now.location);
    expect(newUser).toMatchObject({ name: "정바다", ci: after.ci, phoneNo: phone, telcoCd: "S", gender: "M" });
    expect(newUser.plid).not.toBe(firstUser.plid);

    expect((await userMe(unread)).status).toBe(401);
    expect(await shardRows("SELECT 1 FROM links WHERE plid = ?", firstUser.plid)).toEqual([]);
    expect(await shardRows("SELECT 1 FROM by_ci WHERE ci = ?", before.ci)).toEqual([]);
    const ended = await auditEvents({ type: "plid.ended", since });
    expect(ended.map((e) => JSON.parse(e.detail!))).toEqual([{ reason: "number_reassigned", event: true }]);
    // the app is told (its signed event reaches the demo app's /auth/events)
    await vi.waitFor(() => expect(events).toHaveLength(1), { timeout: 5000, interval: 25 });
    const claims = JSON.parse(atob(events[0]!.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")));
    expect(claims.events).toEqual({
      "urn:phone-login:event:plid-deleted": { plid: firstUser.plid, reason: "number_reassigned" },
    });
  });

  it("the same ci at a new number is the person who moved: their plid is kept and the old number is freed", async () => {
    const [oldPhone, newPhone] = ["01090003331", "01090003332"];
    const mover: CarrierSubscriber = { ...SKY, name: "김우주", ci: ciOf(221) };
    await carrierHas({ [oldPhone]: mover });
    const b = httpBrowser();
    const first = await finish(b, await throughSms(b, "K", "김우주", oldPhone));
    const plid = (await appReads(first.location)).plid;
    const id = (await subscriberByPhone(env, oldPhone))!.id;

    await carrierHas({ [oldPhone]: null, [newPhone]: { ...mover, telcoCd: "L" } });
    const b2 = httpBrowser();
    const moved = await finish(b2, await throughSms(b2, "L", "김우주", newPhone));
    expect(moved.consented).toBe(false);
    expect(await appReads(moved.location)).toMatchObject({ plid, phoneNo: newPhone, telcoCd: "L" });
    expect((await subscriberByPhone(env, newPhone))!.id).toBe(id);
    expect(await subscriberByPhone(env, oldPhone)).toBeNull();
  });

  it("a test number of the directory is answered by the directory without asking the carrier (app review)", async () => {
    const url = await signInAll(httpBrowser(), {
      telco: HONG.telco,
      name: HONG.name,
      phone: HONG.phone,
      code: HONG.code,
    });
    expect(url.searchParams.get("code")).toBeTruthy();
    expect(await carrierLog()).toEqual([]);
  });
});

describe("the name as docs/carrier-api.md promises it, to a carrier that compares it as it comes (the fake does not normalise)", () => {
  it("decomposed Hangul (NFD) is sent in NFC: the carrier confirms it, and the directory stores the name the carrier was sent", async () => {
    const phone = "01090001212";
    await carrierHas({ [phone]: { ...SKY, name: "홍길동", ci: ciOf(241) } });
    const typed = "홍길동".normalize("NFD");
    expect(typed).not.toBe("홍길동");
    const b = httpBrowser();
    const { location } = await finish(b, await throughSms(b, "K", typed, phone));
    const log = await carrierLog();
    expect(log).toEqual([expect.objectContaining({ verdict: "ok", name: "홍길동" })]);
    expect((await subscriberByPhone(env, phone))!.name).toBe(log[0]!.name);
    expect((await appReads(location)).name).toBe("홍길동");
  });

  it("a double space (and any run of white space inside, or around) is sent as one space", async () => {
    const phone = "01090001313";
    await carrierHas({ [phone]: { ...SKY, name: "John Smith", ci: ciOf(242), foreign: "F" } });
    for (const typed of ["John  Smith", " john\u00a0\tsmith "]) {
      const p = await identify(httpBrowser(), "K", typed, phone);
      expect(p.form?.step, alertText(p.html)).toBe("verify");
    }
    expect((await carrierLog()).map((e) => [e.verdict, e.name])).toEqual([
      ["ok", "John Smith"],
      ["ok", "john smith"],
    ]);
    expect((await subscriberByPhone(env, phone))!.name).toBe("John Smith");
  });
});

describe('rotating the shared secret (CARRIER_API_SECRET_NEXT, docs/carrier-api.md "Rotating the secret")', () => {
  const NEXT = "carrier-next-secret-0123456789abcdefGHIJKL";
  const NEITHER = "carrier-third-secret-0123456789abcdefMNOPQR";
  const person: CarrierSubscriber = { ...SKY, name: "이새봄", ci: ciOf(251) };
  const during = { CARRIER_API_SECRET_NEXT: NEXT };

  /** Step 1 at `phone` from a fresh browser with `vars`: the page's step (verify when confirmed) or its status. */
  async function outcome(vars: Record<string, string>, phone = "01090001414"): Promise<string> {
    const p = await identify(httpBrowser({ SIGNIN_SENDS_PER_WINDOW: "100", ...vars }), "K", "이새봄", phone);
    return p.form?.step === "verify" ? "verify" : String(p.status);
  }

  it("during the change each request carries a signature under each secret, and an answer signed with either is accepted: the carrier may switch at any moment", async () => {
    await carrierHas({ "01090001414": person });
    // the carrier still on the current secret: checks X-Signature, answers with it
    expect(await outcome(during)).toBe("verify");
    // a carrier instance part way: checks with the current secret, answers with the next
    await carrierSecret(SECRET, NEXT);
    expect(await outcome(during)).toBe("verify");
    // the carrier switched first: X-Signature-Next is the signature it knows
    await carrierSecret(NEXT);
    expect(await outcome(during)).toBe("verify");
    // the service switched first (the two swapped), the carrier still on the old one
    await carrierSecret(SECRET);
    expect(await outcome({ CARRIER_API_SECRET: NEXT, CARRIER_API_SECRET_NEXT: SECRET })).toBe("verify");
    // the change done: the next secret alone
    await carrierSecret(NEXT);
    expect(await outcome({ CARRIER_API_SECRET: NEXT })).toBe("verify");
    expect((await carrierLog()).map((e) => [e.verdict, e.signedBy])).toEqual([
      ["ok", "X-Signature"],
      ["ok", "X-Signature"],
      ["ok", "X-Signature-Next"],
      ["ok", "X-Signature-Next"],
      ["ok", "X-Signature"],
    ]);
  });

  it("a CARRIER_API_SECRET_NEXT shorter than 32 characters is left unused: sign-ins go on under the current secret, and /healthz?deep=1 names it", async () => {
    const phone = "01090001616";
    await carrierHas({ [phone]: person });
    await carrierSecret(SECRET);
    const vars = { CARRIER_API_SECRET_NEXT: "short-next-secret" };
    expect(await outcome(vars, phone)).toBe("verify");
    expect((await carrierLog()).at(-1)).toMatchObject({ verdict: "ok", signedBy: "X-Signature" });
    const res = await httpBrowser({ ...vars }).fetch("/healthz?deep=1");
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ status: "misconfigured", problems: ["CARRIER_API_SECRET_NEXT"] });
    expect(text).not.toContain("short-next-secret");
  });

  it("an answer signed with the next secret is accepted only while CARRIER_API_SECRET_NEXT is set, one signed with neither never: 503, audited bad_signature, nothing written", async () => {
    const phone = "01090001515";
    await carrierHas({ [phone]: person });
    const since = Date.now();
    await carrierSecret(SECRET, NEITHER);
    expect(await outcome(during, phone)).toBe("503");
    await carrierSecret(SECRET, NEXT);
    expect(await outcome({}, phone)).toBe("503");
    // a carrier holding neither secret refuses the request
    await carrierSecret(NEITHER);
    expect(await outcome(during, phone)).toBe("503");
    expect((await carrierLog()).map((e) => e.verdict)).toEqual(["ok", "ok", "bad_signature"]);
    expect((await auditEvents({ type: "carrier.unavailable", since })).map((e) => JSON.parse(e.detail!))).toEqual([
      { reason: "bad_signature" },
      { reason: "bad_signature" },
      { reason: "status" },
    ]);
    expect(await subscriberByPhone(env, phone)).toBeNull();
    // the same answer as the second, with the next secret set: accepted
    await carrierSecret(SECRET, NEXT);
    expect(await outcome(during, phone)).toBe("verify");
  });

  it("no second signature is sent outside a change", async () => {
    const phone = "01090001616";
    const sent: Headers[] = [];
    const real = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      if (req.url === `${CARRIER}/verify`) sent.push(req.headers);
      return real(req);
    });
    await carrierHas({ [phone]: person });
    expect(await outcome({}, phone)).toBe("verify");
    expect(await outcome(during, phone)).toBe("verify");
    expect(sent.map((h) => [h.get("X-Signature")?.length, h.get("X-Signature-Next")?.length ?? null])).toEqual([
      [71, null],
      [71, 71],
    ]);
  });
});

/** A page with what changes per request (CSP nonce, transaction id, CSRF token) masked. */
function masked(html: string): string {
  return html
    .replace(/nonce-[A-Za-z0-9+/=_-]+/g, "nonce-X")
    .replace(/nonce="[^"]*"/g, 'nonce="X"')
    .replace(/name="(tx|csrf)" value="[^"]*"/g, 'name="$1" value="X"');
}

describe("CARRIER_DIRECTORY=http: the person's link read with the number (docs/signin.md)", () => {
  it("a held person's link to the app comes with the carrier's confirmation: a new app's sign-in is marked consentDue, a covering link's is not", async () => {
    const RIVER = { ...SKY, name: "김강물", ci: ciOf(202) };
    const phone = "01090003333";
    await carrierHas({ [phone]: RIVER });
    const b = httpBrowser({ SIGNIN_IP_LIMIT: "1000", SIGNIN_SENDS_PER_WINDOW: "100" });
    // the first sign-in writes the person (nothing was read with the number: the code step reads)
    expect((await finish(b, await throughSms(b, "K", "김강물", phone))).consented).toBe(true);
    const res = await admin("POST", "/admin/clients", {
      json: { name: "새 앱", redirect_uris: ["https://new.example/cb"], items: ["gender"] },
    });
    const { client_id: fresh } = (await res.json()) as { client_id: string };
    const markOf = async (p: Page) => {
      const id = p.form!.hidden.tx!;
      const key = await txKey(id);
      return (await storeFor(env, id, providerConfig(env).oneTimeShards).signinGet(key))!.consentDue;
    };
    const toFresh = httpBrowser({ SIGNIN_IP_LIMIT: "1000", SIGNIN_SENDS_PER_WINDOW: "100" });
    const page = await toFresh.submit(
      await toFresh.authorize({ client_id: fresh, redirect_uri: "https://new.example/cb" }),
      {
        telcoCd: "K",
        name: "김강물",
        phoneNo: phone,
      },
    );
    expect(page.form?.step, alertText(page.html)).toBe("verify");
    expect(await markOf(page)).toBe(true);
    const toDemo = httpBrowser({ SIGNIN_IP_LIMIT: "1000", SIGNIN_SENDS_PER_WINDOW: "100" });
    const again = await identify(toDemo, "K", "김강물", phone);
    expect(again.form?.step, `${again.status} ${alertText(again.html)}`).toBe("verify");
    expect(await markOf(again)).toBeUndefined();
    expect((await finish(toDemo, await toDemo.submit(again, { otp: await lastCode(phone) }))).consented).toBe(false);
  });
});

describe("a no-match", () => {
  it("is byte for byte today's no-match page (the D1 directory's, for an unknown number)", async () => {
    const phone = "01090004444";
    await carrierHas({ [phone]: { ...SKY, name: "다른이름" } });
    const viaHttp = await identify(httpBrowser(), "K", "최하늘", phone);
    const viaD1 = await identify(new Browser(), "K", "최하늘", phone);
    expect(viaHttp.status).toBe(200);
    expect(alertText(viaHttp.html)).toBe(UNCONFIRMED_KO);
    expect(masked(viaHttp.html)).toBe(masked(viaD1.html));
    const headers = (p: Page) =>
      [...p.res.headers].filter(([k]) => !["content-security-policy", "set-cookie"].includes(k)).sort();
    expect(headers(viaHttp)).toEqual(headers(viaD1));
    expect((await carrierLog()).map((e) => e.verdict)).toEqual(["ok"]);
    expect(await subscriberByPhone(env, phone)).toBeNull();
  });
});

/** The number's failure and lock counters in every one-time-store object (docs/signin.md "Storage"). */
async function failureCounters(phone: string): Promise<unknown[]> {
  const p = await phoneKey(phone);
  const rows = await Promise.all(
    Array.from({ length: MAX_SHARDS }, (_, i) =>
      runInDurableObject(storeAt(env, i), (_o, s: DurableObjectState) =>
        s.storage.sql
          .exec("SELECT key FROM counters WHERE key LIKE ? OR key LIKE ?", `fail:${p}%`, `lock:${p}%`)
          .toArray(),
      ),
    ),
  );
  return rows.flat();
}

describe('a carrier that cannot be trusted: "try again shortly", no failed attempt counted, nothing written', () => {
  const phone = "01090005555";
  const person: CarrierSubscriber = { ...SKY, name: "오구름", ci: ciOf(231) };

  it("a timeout ends within CARRIER_API_TIMEOUT_MS: 503 with Retry-After, the entries kept; the number is not locked even at a lock threshold of 1", async () => {
    await carrierHas({ [phone]: person });
    await carrierMode("hang", { ms: 5000 });
    const strict = { SIGNIN_LOCK_AFTER_FAILURES: "1", SIGNIN_NUMBER_LOCK_AFTER_FAILURES: "1" };
    const since = Date.now();
    for (let i = 0; i < 3; i++) {
      const b = httpBrowser(strict, "en-US,en;q=0.9");
      const p1 = await b.authorize();
      const t0 = Date.now();
      const p = await b.submit(p1, { telcoCd: "K", name: "오구름", phoneNo: phone });
      const took = Date.now() - t0;
      expect(took).toBeGreaterThanOrEqual(350);
      expect(took).toBeLessThan(2000);
      expect(p.status).toBe(503);
      expect(p.res.headers.get("Retry-After")).toBe("5");
      expect(alertText(p.html)).toContain("Try again shortly");
      expect(p.form?.step).toBe("identify");
      expect(p.html).toContain('value="오구름"');
    }
    expect(await failureCounters(phone)).toEqual([]);
    expect(await auditEvents({ type: "signin.failure", since })).toEqual([]);
    const faults = await auditEvents({ type: "carrier.unavailable", since });
    expect(faults.map((e) => JSON.parse(e.detail!))).toEqual([
      { reason: "timeout" },
      { reason: "timeout" },
      { reason: "timeout" },
    ]);
    expect(await subscriberByPhone(env, phone)).toBeNull();

    // the carrier is back: the person signs in at once
    await carrierMode("ok");
    const b = httpBrowser(strict);
    const { location } = await finish(b, await throughSms(b, "K", "오구름", phone));
    expect((await appReads(location)).name).toBe("오구름");
  });

  it("our signature made with another secret is refused by the carrier (401): try again shortly, in Korean by default", async () => {
    const other = "00000000-carrier-test-secret-that-is-wrong";
    await carrierHas({ "01090006666": person });
    const p = await identify(httpBrowser({ CARRIER_API_SECRET: other }), "K", "오구름", "01090006666");
    expect(p.status).toBe(503);
    expect(alertText(p.html)).toBe("지금은 통신사에서 본인 확인을 할 수 없습니다. 잠시 뒤에 다시 시도하세요.");
    expect((await carrierLog()).map((e) => e.verdict)).toEqual(["bad_signature"]);
    expect(await subscriberByPhone(env, "01090006666")).toBeNull();
  });

  it.each([
    ["bad_signature", "an answer signed with another secret"],
    ["stale", "an answer signed more than 300 s ago"],
    ["wrong_request_id", "an answer to another request"],
    ["status500", "a 5xx"],
    ["extra_field", "an answer with a field the format does not have"],
    ["signal_on_no_match", "a no-match carrying a risk signal, which only the match shape may"],
  ])("%s (%s) is never a match: 503, nothing written, audited by its reason", async (mode) => {
    const modes = ["bad_signature", "stale", "wrong_request_id", "status500", "extra_field", "signal_on_no_match"];
    const number = `0109000${7000 + modes.indexOf(mode)}`;
    await carrierHas({ [number]: person });
    await carrierMode(mode);
    const since = Date.now();
    const p = await identify(httpBrowser(), "K", "오구름", number);
    expect(p.status).toBe(503);
    expect(p.form?.step).toBe("identify");
    expect(await subscriberByPhone(env, number)).toBeNull();
    const reason = {
      bad_signature: "bad_signature",
      stale: "stale",
      wrong_request_id: "request_id",
      status500: "status",
      extra_field: "malformed",
      signal_on_no_match: "malformed",
    }[mode];
    expect((await auditEvents({ type: "carrier.unavailable", since })).map((e) => JSON.parse(e.detail!))).toEqual([
      { reason },
    ]);
    expect(await failureCounters(number)).toEqual([]);
  });

  it("each fault is one log line naming its reason, and no line holds the name, number or ci", async () => {
    const lines: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const)
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        lines.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
      });
    const number = "01090009991";
    await carrierHas({ [number]: person });
    await carrierMode("bad_signature");
    expect((await identify(httpBrowser({ LOG_REQUESTS: "true" }), "K", "오구름", number)).status).toBe(503);
    await carrierMode("hang", { ms: 2000 });
    expect((await identify(httpBrowser({ LOG_REQUESTS: "true" }), "K", "오구름", number)).status).toBe(503);
    const faults = lines.filter((l) => l.includes("signin.carrier_unavailable")).map((l) => JSON.parse(l).cause);
    expect(faults).toEqual(["carrier api: bad_signature", "carrier api: timeout (400 ms)"]);
    for (const secretish of [number, "010-9000-9991", "오구름", person.ci, SECRET])
      expect(lines.filter((l) => l.includes(secretish))).toEqual([]);
  });

  it("an answer whose person breaks the import's ci rules is the carrier's fault, never written", async () => {
    await carrierHas({ "01090008888": { ...person, ci: "not-a-ci" } });
    const since = Date.now();
    const p = await identify(httpBrowser(), "K", "오구름", "01090008888");
    expect(p.status).toBe(503);
    expect(await subscriberByPhone(env, "01090008888")).toBeNull();
    expect((await auditEvents({ type: "carrier.unavailable", since })).map((e) => JSON.parse(e.detail!))).toEqual([
      { reason: "invalid_person" },
    ]);
  });
});

describe("the service's own directory busy, the carrier quick: audited directory_busy, never the carrier's timeout", () => {
  const held: Promise<unknown>[] = [];
  /** Holds a directory shard busy for `ms` (its input gate closed: every call to it waits), as an import's chunks do. */
  const holdShard = async (shard: number, ms: number) => {
    let started!: () => void;
    const on = new Promise<void>((r) => (started = r));
    held.push(
      runInDurableObject(dirAt(env, shard), (_o, state) =>
        state.blockConcurrencyWhile(async () => {
          started();
          await new Promise((r) => setTimeout(r, ms));
        }),
      ),
    );
    await on;
  };
  afterEach(async () => {
    await Promise.all(held.splice(0));
  });

  it("held busy when the person the carrier confirmed in a few ms is written: directory_busy, not timeout", async () => {
    const phone = "01090004442";
    const n = dirShards(env);
    // a ci whose shard is not the number's: the number is read at once, the carrier answers, the write waits
    let k = 242;
    while (ciShard(ciOf(k), n) === numberShard(phone, n)) k++;
    const ci = ciOf(k);
    await carrierHas({ [phone]: { ...SKY, name: "바쁜이", ci } });
    await holdShard(ciShard(ci, n), 4000);
    const since = Date.now();
    const p = await identify(httpBrowser(), "K", "바쁜이", phone);
    expect(p.status, alertText(p.html)).toBe(503);
    // the carrier answered, and its answer was checked: the wait was the service's
    expect((await carrierLog()).map((l) => l.verdict)).toEqual(["ok"]);
    expect((await auditEvents({ type: "carrier.unavailable", since })).map((e) => JSON.parse(e.detail!))).toEqual([
      { reason: "directory_busy" },
    ]);
  });
});

describe("the example exchange of docs/carrier-api.md", () => {
  const secret = "example-carrier-secret-0123456789abcdef";
  const requestId = "3f1c2a9e-5b7d-4e21-9c3a-8d6f0b1e2a47";
  const match =
    '{"requestId":"3f1c2a9e-5b7d-4e21-9c3a-8d6f0b1e2a47","match":true,"ci":"nfcL9oLsk2LIvJ91w6793nPDexqM2v9Ld+dwpwr6fgiE0ZR8+ks4VLdZnGE7MUB2ki0rNr84HA39rRUjq5O+Sw==","gender":"F","birth":"2001-12-01","foreign":"L"}';
  const noMatch = '{"requestId":"3f1c2a9e-5b7d-4e21-9c3a-8d6f0b1e2a47","match":false}';

  afterEach(() => {
    vi.useRealTimers();
  });

  /** The carrier of the page's example: checks the request's exact bytes and headers, answers `body` signed as shown. */
  function examplesCarrier(body: string, signature: string): typeof fetch {
    return async (input, init) => {
      const req = new Request(input, init);
      expect(req.method).toBe("POST");
      expect(req.headers.get("Content-Type")).toBe("application/json");
      expect(req.headers.get("X-Signature-Timestamp")).toBe("1767225600");
      expect(req.headers.get("X-Signature")).toBe(
        "sha256=afb28f700f7f117ebe8f064b7d858918b8cd166716e54bb830fb5e8a2037f954",
      );
      expect(await req.text()).toBe(
        '{"telcoCd":"K","name":"김영희","phoneNo":"01023456789","requestId":"3f1c2a9e-5b7d-4e21-9c3a-8d6f0b1e2a47"}',
      );
      return new Response(body, {
        headers: {
          "Content-Type": "application/json",
          "X-Signature-Timestamp": "1767225601",
          "X-Signature": signature,
        },
      });
    };
  }

  it("the request is sent byte for byte as shown, and both answers shown are accepted", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1767225600_000);
    vi.spyOn(crypto, "randomUUID").mockReturnValue(requestId);
    const q = { telco: "K" as const, name: "김영희", phone: "01023456789" };
    const opts = { url: "https://carrier.example/verify", secret, timeoutMs: 3000 };
    const yes = examplesCarrier(match, "sha256=461aff81c7216e93e22a4a9528122829a8bd91dc8e808d36488a42eff1bf61fd");
    expect(await askCarrier({ ...opts, fetcher: yes }, q)).toEqual({
      match: true,
      person: {
        ci: "nfcL9oLsk2LIvJ91w6793nPDexqM2v9Ld+dwpwr6fgiE0ZR8+ks4VLdZnGE7MUB2ki0rNr84HA39rRUjq5O+Sw==",
        gender: "F",
        birth: "2001-12-01",
        foreign: "L",
      },
    });
    const no = examplesCarrier(noMatch, "sha256=a7f4d6ea018aa6f39965d172e859e312dc815eabfb1e6c67e54e896cbceb5af4");
    expect(await askCarrier({ ...opts, fetcher: no }, q)).toEqual({ match: false });
    // the match with the risk signals shown (docs/carrier-api.md "The answer")
    const withSignals =
      '{"requestId":"3f1c2a9e-5b7d-4e21-9c3a-8d6f0b1e2a47","match":true,"ci":"nfcL9oLsk2LIvJ91w6793nPDexqM2v9Ld+dwpwr6fgiE0ZR8+ks4VLdZnGE7MUB2ki0rNr84HA39rRUjq5O+Sw==","gender":"F","birth":"2001-12-01","foreign":"L","simChangedAt":"2025-12-31T22:10:00+09:00","simChangeKind":"person"}';
    const risky = examplesCarrier(
      withSignals,
      "sha256=2f716398e56c8cf534a44cf96cd8e5434a2738b0223db0589d16dbc4b30b8e6f",
    );
    expect(await askCarrier({ ...opts, fetcher: risky }, q)).toEqual({
      match: true,
      person: {
        ci: "nfcL9oLsk2LIvJ91w6793nPDexqM2v9Ld+dwpwr6fgiE0ZR8+ks4VLdZnGE7MUB2ki0rNr84HA39rRUjq5O+Sw==",
        gender: "F",
        birth: "2001-12-01",
        foreign: "L",
      },
      sim: { simChangedAt: Date.UTC(2025, 11, 31, 13, 10), simChangeKind: "person" },
    });
    // one byte of the body changed after signing: refused
    const tampered = examplesCarrier(
      noMatch.replace("false", "true "),
      "sha256=a7f4d6ea018aa6f39965d172e859e312dc815eabfb1e6c67e54e896cbceb5af4",
    );
    await expect(askCarrier({ ...opts, fetcher: tampered }, q)).rejects.toMatchObject({ reason: "bad_signature" });
    // the signature in upper-case hex (a Java or .NET helper's) is refused
    const upper = examplesCarrier(noMatch, "sha256=A7F4D6EA018AA6F39965D172E859E312DC815EABFB1E6C67E54E896CBCEB5AF4");
    await expect(askCarrier({ ...opts, fetcher: upper }, q)).rejects.toMatchObject({ reason: "bad_signature" });
  });

  it("the name typed decomposed, or with spaces around and inside, is sent as the example's bytes", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1767225600_000);
    vi.spyOn(crypto, "randomUUID").mockReturnValue(requestId);
    const opts = { url: "https://carrier.example/verify", secret, timeoutMs: 3000 };
    const no = examplesCarrier(noMatch, "sha256=a7f4d6ea018aa6f39965d172e859e312dc815eabfb1e6c67e54e896cbceb5af4");
    for (const name of ["김영희".normalize("NFD"), " 김영희\u3000"])
      expect(await askCarrier({ ...opts, fetcher: no }, { telco: "K", name, phone: "01023456789" })).toEqual({
        match: false,
      });
  });
});

describe("configuration (docs/signin.md)", () => {
  const base = { ...env, DEV_MODE: "true" } as typeof env;
  const with_ = (vars: Record<string, string | undefined>) => ({ ...base, ...vars }) as typeof env;
  const problem = (vars: Record<string, string | undefined>): string | null => {
    try {
      carrierDirectory(with_(vars));
      return null;
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).variable;
    }
  };

  it("npm start's worker (wrangler.toml's top level) keeps the D1 directory", () => {
    expect(env.CARRIER_DIRECTORY).toBeUndefined();
    expect(signinConfig(env).carrierDirectory).toBe("d1");
  });

  it("CARRIER_DIRECTORY defaults to d1; http needs CARRIER_API_URL and CARRIER_API_SECRET, each named when missing", () => {
    expect(problem({})).toBeNull();
    expect(problem({ ...HTTP })).toBeNull();
    expect(problem({ ...HTTP, CARRIER_API_URL: undefined })).toBe("CARRIER_API_URL");
    expect(problem({ ...HTTP, CARRIER_API_SECRET: undefined })).toBe("CARRIER_API_SECRET");
    expect(problem({ CARRIER_DIRECTORY: "soap" })).toBe("CARRIER_DIRECTORY");
  });

  it("the URL is https, or http on loopback with DEV_MODE=true only; the secret has at least 32 characters; the timeout is bounded", () => {
    expect(problem({ ...HTTP, CARRIER_API_URL: "https://carrier.example/verify" })).toBeNull();
    expect(problem({ ...HTTP, CARRIER_API_URL: "http://carrier.example/verify" })).toBe("CARRIER_API_URL");
    expect(problem({ ...HTTP, DEV_MODE: "false" })).toBe("CARRIER_API_URL");
    expect(problem({ ...HTTP, CARRIER_API_URL: "https://user:pw@carrier.example/" })).toBe("CARRIER_API_URL");
    expect(problem({ ...HTTP, CARRIER_API_SECRET: "short" })).toBe("CARRIER_API_SECRET");
    // a short next secret is left unused and reported (the current one still works): not thrown
    expect(problem({ ...HTTP, CARRIER_API_SECRET_NEXT: "short" })).toBeNull();
    expect(configProblems(with_({ ...HTTP, CARRIER_API_SECRET_NEXT: "short" }))).toContain("CARRIER_API_SECRET_NEXT");
    expect(problem({ ...HTTP, CARRIER_API_SECRET_NEXT: "carrier-next-secret-0123456789abcdefGHIJKL" })).toBeNull();
    expect(problem({ ...HTTP, CARRIER_API_TIMEOUT_MS: "50" })).toBe("CARRIER_API_TIMEOUT_MS");
    expect(problem({ ...HTTP, CARRIER_API_TIMEOUT_MS: "30001" })).toBe("CARRIER_API_TIMEOUT_MS");
  });
});
