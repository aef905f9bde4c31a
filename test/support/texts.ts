// The text a person sends, as the sign-in's tests drive it (docs/signin.md "A text the person
// sends"): a person with a real number, the text page for them, the phrase it asks for, and its
// poll. Each gateway's own delivery stays in its test.
import { expect } from "vitest";
import { insertSubscriber } from "./shards";
import { alertText, type Browser, type Page } from "./signin";

export interface TextPerson {
  telco: string;
  name: string;
  phone: string;
}

/**
 * A maker of people with real numbers (no fixed code: a code would go by SMS), one a call:
 * `0107` + `stem` (3 digits) + a sequence of 4, named `nameStem` + the sequence.
 */
export function textPeople(stem: string, nameStem: string): () => Promise<TextPerson> {
  let n = 0;
  return async () => {
    const i = n++;
    const phone = `0107${stem}${String(i).padStart(4, "0")}`;
    const name = `${nameStem}${i}`;
    await insertSubscriber({ telco: "K", phone, name, ci: `CI-${nameStem}-${phone}` });
    return { telco: "K", name, phone };
  };
}

/** The identify step for `who` on `client`: the text page where the text is offered. */
export async function textPage(b: Browser, who: TextPerson, client = "demo-client"): Promise<Page> {
  const p1 = await b.authorize({ client_id: client });
  return b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
}

/** The phrase the text page asks for (as shown, entities decoded). */
export function phraseOf(p: Page): string {
  const m = /id="text-phrase"[^>]*>([^<]*)</.exec(p.html);
  if (!m) throw new Error(`no phrase on page ${p.status}: ${alertText(p.html) ?? p.html.slice(0, 200)}`);
  return m[1]!
    .replace(/&amp;/g, "&")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');
}

/** The page's poll, as its script sends it: whether the text has arrived (JSON). */
export async function poll(b: Browser, p: Page): Promise<{ arrived: boolean }> {
  const res = await b.fetch(p.form!.action, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...p.form!.hidden, poll: "Y" }).toString(),
  });
  expect(res.headers.get("Content-Type")).toContain("application/json");
  return (await res.json()) as { arrived: boolean };
}
