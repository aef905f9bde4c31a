// Passkeys through HTTP (docs/passkeys.md): a person imported with an ordinary number (codes from
// the dev outbox), proving it on /account or at an app, making a passkey with the software
// authenticator (test/support/authenticator.ts) and signing in with it from an identify page.
import { expect } from "vitest";
import { ciOf, importRows, lastCode } from "./directory";
import { SoftAuthenticator, pageChallenge, type SoftCredential } from "./authenticator";
import { alertText, Browser, parseForms, type Page, type StepForm } from "./signin";
import { BASE, form } from "./helpers";

export const RP_ID = new URL(BASE).hostname;
export const ORIGIN = new URL(BASE).origin;

export interface Person {
  telco: string;
  name: string;
  phone: string;
  ci: string;
}

let next = 0;

/** A new person with an ordinary number (a real code is sent), imported now. */
export async function newPerson(): Promise<Person> {
  const n = 100 + (next++ % 150);
  const phone = `0107${String(Date.now() % 1000).padStart(3, "0")}${String(n).padStart(4, "0")}`.slice(0, 11);
  const p = { telco: "K", name: `패스키${n}`, phone, ci: ciOf(n) };
  await importRows([
    { telcoCd: p.telco, phoneNo: p.phone, name: p.name, gender: "F", birth: "1990-01-01", foreign: "L", ci: p.ci },
  ]);
  return p;
}

/** Proves `who`'s number on /account by SMS; the dashboard. */
export async function smsOnAccount(b: Browser, who: Person): Promise<Page> {
  const p1 = await b.page(await b.fetch("/account"));
  const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  expect(p2.form?.step, alertText(p2.html)).toBe("verify");
  const p3 = await b.submit(p2, { otp: await lastCode(who.phone) });
  expect(p3.status, alertText(p3.html)).toBe(303);
  return b.page(await b.fetch(p3.res.headers.get("Location")!));
}

/** The enrolment form of a page and its creation options, or undefined. */
export function enrolFormOf(
  p: Page,
): { form: StepForm; options: { challenge: string; user: { id: string } } } | undefined {
  const f = parseForms(p.html).find((x) => "enrol" in x.hidden);
  const m = /<script type="application\/json" id="enrol-options">([\s\S]*?)<\/script>/.exec(p.html);
  return f && m ? { form: f, options: JSON.parse(m[1]!) } : undefined;
}

/** Posts an enrolment form with `credential` (or its other fields). */
export async function postForm(b: Browser, f: StepForm, fields: Record<string, string>): Promise<Page> {
  return b.page(
    await b.fetch(f.action, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: form({ ...f.hidden, ...fields }),
    }),
  );
}

/** Makes a passkey from an enrolment page with `auth`; the page answered, and the credential. */
export async function makePasskey(
  b: Browser,
  p: Page,
  auth: SoftAuthenticator,
  o: { rpId?: string; origin?: string } = {},
): Promise<{ page: Page; credential: SoftCredential }> {
  const e = enrolFormOf(p);
  if (!e) throw new Error(`no enrolment form: ${p.status} ${alertText(p.html)} ${p.html.slice(0, 400)}`);
  const { json, credential } = await auth.create({
    rpId: o.rpId ?? RP_ID,
    origin: o.origin ?? ORIGIN,
    challenge: e.options.challenge,
    userHandle: e.options.user.id,
  });
  return { page: await postForm(b, e.form, { credential: json }), credential };
}

/** The identify page's passkey form. */
export function passkeyFormOf(p: Page): StepForm {
  const f = parseForms(p.html).find((x) => x.names.has("passkey"));
  if (!f) throw new Error(`no passkey form (status ${p.status})`);
  return f;
}

/** The assertion an identify page's script would post for `credential`. */
export async function assertionFor(
  auth: SoftAuthenticator,
  credential: SoftCredential,
  p: Page,
  o: { rpId?: string; origin?: string; noUserVerification?: boolean } = {},
): Promise<string> {
  const f = passkeyFormOf(p);
  return auth.assert(credential, {
    rpId: o.rpId ?? RP_ID,
    origin: o.origin ?? ORIGIN,
    challenge: await pageChallenge(f.hidden.tx!),
    noUserVerification: o.noUserVerification,
  });
}

/** Signs in from identify page `p` with `credential`: the page answered. */
export async function passkeySignIn(
  b: Browser,
  p: Page,
  auth: SoftAuthenticator,
  credential: SoftCredential,
  fields: Record<string, string> = {},
): Promise<Page> {
  const assertion = await assertionFor(auth, credential, p);
  return postForm(b, passkeyFormOf(p), { passkey: assertion, ...fields });
}
