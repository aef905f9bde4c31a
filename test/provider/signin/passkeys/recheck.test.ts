// A passkey proves the device, not the line (docs/passkeys.md "Still the person's number"): with
// the carrier's API as the directory, a passkey sign-in asks the carrier again once the number's last
// confirmation is older than PASSKEY_RECHECK_SECONDS, and a number the carrier no longer confirms for
// that person ends their passkeys. Against the fake carrier (test/support/fixtures/fake-carrier.js).
import { beforeEach, describe, expect, it } from "vitest";
import { alertText, Browser } from "../../../support/signin";
import { ciOf, lastCode } from "../../../support/directory";
import { SoftAuthenticator } from "../../../support/authenticator";
import { makePasskey, passkeySignIn } from "../../../support/passkeys";
import { CARRIER_VARS, carrierControl } from "../../../support/fake-carrier";

const HTTP = {
  ...CARRIER_VARS,
  SIGNIN_RESEND_COOLDOWN_SECONDS: "0",
  PASSKEY_ACTIVATION_SECONDS: "0",
};

const control = carrierControl;
const carrierLog = async () => ((await control("/_carrier/log")) as unknown[]).length;

beforeEach(async () => {
  await control("/_carrier/reset", {});
});

let people = 0;

/** The carrier confirms the person; they prove the number on /account by SMS and make a passkey there. */
async function enrolled(vars: Record<string, string>) {
  const n = people++;
  // a person of their own for each test (a person with an active passkey adds no other by SMS)
  const PHONE = `0109000222${n}`;
  const PERSON = { telcoCd: "S", name: "한결", ci: ciOf(231 + n), gender: "M", birth: "1988-08-08", foreign: "L" };
  await control("/_carrier/people", { [PHONE]: PERSON });
  const b = new Browser({ vars: { ...HTTP, ...vars } });
  const p1 = await b.page(await b.fetch("/account"));
  const p2 = await b.submit(p1, { telcoCd: "S", name: PERSON.name, phoneNo: PHONE });
  expect(p2.form?.step, alertText(p2.html)).toBe("verify");
  const p3 = await b.submit(p2, { otp: await lastCode(PHONE) });
  const dash = await b.page(await b.fetch(p3.res.headers.get("Location")!));
  const auth = new SoftAuthenticator();
  const { credential } = await makePasskey(b, dash, auth);
  return { auth, credential, PHONE, PERSON };
}

describe("passkeys: the carrier's re-check", () => {
  it("within PASSKEY_RECHECK_SECONDS a passkey sign-in asks the carrier nothing", async () => {
    const vars = { PASSKEY_RECHECK_SECONDS: "3600" };
    const { auth, credential } = await enrolled(vars);
    const asked = await carrierLog();
    const app = new Browser({ vars: { ...HTTP, ...vars } });
    const r = await passkeySignIn(app, await app.authorize(), auth, credential);
    expect(r.form?.step, alertText(r.html)).toBe("consent");
    expect(await carrierLog()).toBe(asked);
  });

  it("past it, one carrier call confirms the number and the sign-in goes on; a number it no longer confirms ends the passkey", async () => {
    const vars = { PASSKEY_RECHECK_SECONDS: "0" };
    const { auth, credential, PHONE, PERSON } = await enrolled(vars);
    const app = new Browser({ vars: { ...HTTP, ...vars } });
    const asked = await carrierLog();
    const ok = await passkeySignIn(app, await app.authorize(), auth, credential);
    expect(ok.form?.step, alertText(ok.html)).toBe("consent");
    expect(await carrierLog()).toBe(asked + 1);
    // the line left the person (the carrier confirms nobody there now)
    await control("/_carrier/people", { [PHONE]: null });
    const ended = await passkeySignIn(app, await app.authorize(), auth, credential);
    expect(ended.status).toBe(403);
    expect(alertText(ended.html)).toContain("통신사가 이 번호를 더 이상 확인해 주지 않아");
    // ended for good: the carrier confirming the number again does not bring it back
    await control("/_carrier/people", { [PHONE]: PERSON });
    const again = await passkeySignIn(app, await app.authorize(), auth, credential);
    expect(again.status).toBe(403);
    expect(alertText(again.html)).toContain("등록되어 있지 않거나");
  });

  it("a carrier that cannot be asked is a 503 'try again', and the passkey stays", async () => {
    const vars = { PASSKEY_RECHECK_SECONDS: "0" };
    const { auth, credential } = await enrolled(vars);
    await control("/_carrier/mode", { mode: "hang", ms: 2000 });
    const app = new Browser({ vars: { ...HTTP, ...vars } });
    const r = await passkeySignIn(app, await app.authorize(), auth, credential);
    expect(r.status).toBe(503);
    expect(r.res.headers.get("Retry-After")).toBeTruthy();
    await control("/_carrier/mode", { mode: "ok" });
    const later = await passkeySignIn(app, await app.authorize(), auth, credential);
    expect(later.form?.step, alertText(later.html)).toBe("consent");
  });
});
