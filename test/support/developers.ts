// Helpers for the developer console's tests (docs/developers.md): people of the directory with
// ordinary numbers, signing in at /developers, the JSON API under the session, an app's sign-in.
import { expect } from "vitest";
import { env } from "./env";
import { importRows, lastCode } from "./directory";
import { alertText, Browser, type Page } from "./signin";

export interface Person {
  telco: string;
  name: string;
  phone: string;
}

let seq = 0;
/** A `ci` no one else has: Base64 of 64 random bytes (a ci seen at another number is that person moving). */
const randomCi = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(64))));
/** A new person of the directory with an ordinary number (codes go to the dev SMS outbox); `prefix` keeps files apart. */
export async function person(prefix = "0109"): Promise<Person> {
  seq++;
  const phone = `${prefix}${String(Date.now() % 10000).padStart(4, "0")}${String(seq).padStart(3, "0")}`.slice(0, 11);
  const p = { telco: "K", name: "개발자", phone };
  await importRows([
    {
      telcoCd: "K",
      phoneNo: phone,
      name: p.name,
      gender: "F",
      birth: "1991-04-05",
      foreign: "L",
      ci: randomCi(),
    },
  ]);
  return p;
}

export const csrfOf = (p: Page) => /<meta name="csrf" content="([^"]+)">/.exec(p.html)![1]!;

/** Proves `who`'s number at /developers[query]; the page the sign-in ends on (followed). */
export async function signIn(b: Browser, who: Person, query = ""): Promise<Page> {
  const p1 = await b.page(await b.fetch(`/developers${query}`));
  expect(p1.status).toBe(200);
  expect(p1.form).toMatchObject({ action: "/developers", step: "identify" });
  const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  expect(p2.form?.step, alertText(p2.html)).toBe("verify");
  const p3 = await b.submit(p2, { otp: await lastCode(who.phone) });
  expect(p3.status, alertText(p3.html)).toBe(303);
  return b.page(await b.fetch(p3.res.headers.get("Location")!));
}

export async function developer(prefix?: string): Promise<{ b: Browser; who: Person; home: Page; csrf: string }> {
  const who = await person(prefix);
  const b = new Browser();
  const home = await signIn(b, who);
  return { b, who, home, csrf: csrfOf(home) };
}

/** A JSON API call under the browser's developer session. */
export function api(
  b: Browser,
  csrf: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return b.fetch(path, {
    method,
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A form post under the browser's developer session. */
export function post(b: Browser, path: string, fields: Record<string, string>): Promise<Response> {
  return b.fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
}

export const SHOP = { name: "Demo Shop", redirect_uris: ["https://shop.example/callback"], items: ["name", "phoneNo"] };

export async function createApp(b: Browser, csrf: string, fields: Record<string, unknown> = SHOP) {
  const res = await api(b, csrf, "POST", "/developers/api/apps", fields);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { client_id: string; client_secret: string; stage: string; role: string; name: string };
}

/** The first page of an app's sign-in, its identify step posted with `who`. */
export async function identifyAt(
  clientId: string,
  who: Person,
  redirectUri = SHOP.redirect_uris[0]!,
  b = new Browser(),
): Promise<Page> {
  const q = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, state: "s1" });
  const p1 = await b.page(await b.fetch(`/oauth2/authorize?${q}`));
  expect(p1.form?.step, p1.html.slice(0, 300)).toBe("identify");
  return b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
}

/** Codes sent to a number so far (the dev outbox). */
export async function outboxCount(phone: string): Promise<number> {
  const r = await env.DB.prepare("SELECT COUNT(*) AS n FROM sms_outbox WHERE phone = ?")
    .bind(phone)
    .first<{ n: number }>();
  return r!.n;
}
