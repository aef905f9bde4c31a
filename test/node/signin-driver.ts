// Drives the sign-in pages over plain HTTP through their documented form contract
// (docs/signin.md): step 1 telcoCd/name/phoneNo/carrierTerms, step 2 otp, consent agree=Y, hidden fields
// posted back. What another tool would do; used by host-side tests.

export interface Subscriber {
  telco: string;
  name: string;
  phone: string;
  /** The fixed code of a test number; "" reads the code the dev SMS outbox received. */
  code: string;
}

interface Form {
  action: string;
  fields: Map<string, string>;
  names: Set<string>;
}

const decodeEntities = (s: string) =>
  s
    .replace(/&#(\d+);/g, (_m, d: string) => String.fromCharCode(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(tag);
  const v = m?.[1] ?? m?.[2] ?? m?.[3];
  return v === undefined ? undefined : decodeEntities(v);
}

/** The first POST form of a page: its action, hidden fields and every field name. */
export function parseForm(html: string, base: string): Form {
  const open = /<form\b[^>]*>/i.exec(html);
  if (!open) throw new Error(`no form on page:\n${html.slice(0, 500)}`);
  const end = html.indexOf("</form>", open.index);
  const body = html.slice(open.index, end < 0 ? undefined : end);
  const fields = new Map<string, string>();
  const names = new Set<string>();
  for (const m of body.matchAll(/<(input|button|select|textarea)\b[^>]*>/gi)) {
    const tag = m[0];
    const name = attr(tag, "name");
    if (!name) continue;
    names.add(name);
    if ((attr(tag, "type") ?? "").toLowerCase() === "hidden") fields.set(name, attr(tag, "value") ?? "");
  }
  return { action: new URL(attr(open[0], "action") ?? "", base).toString(), fields, names };
}

export class CookieJar {
  private readonly jar = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      this.jar.set(pair!.slice(0, i).trim(), pair!.slice(i + 1).trim());
    }
  }
  header(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

/** The latest one-time code the dev SMS outbox holds for `phone` (a number without a fixed code). */
export async function outboxCode(origin: string, phone: string): Promise<string> {
  const res = await fetch(`${origin}/dev/outbox`, { headers: { Accept: "application/json" } });
  const { messages } = (await res.json()) as { messages: { to: string; text: string }[] };
  const m = messages.find((x) => x.to === phone);
  if (!m) throw new Error(`no SMS to ${phone} in the dev outbox`);
  return /\d{6}/.exec(m.text)![0];
}

export interface SignInResult {
  /** The final redirect (Location) back to the app. */
  location: URL;
  code: string | null;
  /** Pages seen, by the step's distinguishing field. */
  steps: string[];
}

type SignInOptions = { autoLogin?: boolean; jar?: CookieJar; lang?: string };

/**
 * wrangler dev's proxy's own answer when it loses the worker's answer on its hop to the worker (an
 * open wrangler bug, docs/testing.md): the worker never writes it. A POST so answered may
 * or may not have reached the worker, so it is never sent again; the sign-in starts over.
 */
const PROXY_LOST = "Your worker restarted mid-request.";

class ProxyLost extends Error {}

/**
 * Runs a whole sign-in from an authorize URL: identify, verify, consent (agree), optionally opting
 * in to automatic login. Returns at the redirect back to the app. A step that wrangler dev's proxy
 * lost (`PROXY_LOST`) starts the sign-in over from the authorize URL, at most twice, saying so on
 * stderr; any other answer is the answer.
 */
export async function signIn(authorizeUrl: string, who: Subscriber, opts: SignInOptions = {}): Promise<SignInResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await signInOnce(authorizeUrl, who, opts);
    } catch (e) {
      if (!(e instanceof ProxyLost) || attempt >= 3) throw e;
      console.error(`(sign-in driver) ${e.message}; starting the sign-in over`);
    }
  }
}

async function signInOnce(authorizeUrl: string, who: Subscriber, opts: SignInOptions): Promise<SignInResult> {
  const jar = opts.jar ?? new CookieJar();
  const steps: string[] = [];
  const headers = () => ({ Cookie: jar.header(), "Accept-Language": opts.lang ?? "ko-KR" });
  let res = await fetch(authorizeUrl, { redirect: "manual", headers: headers() });
  jar.take(res);
  for (let i = 0; i < 6; i++) {
    if (res.status === 302 || res.status === 303) {
      const location = new URL(res.headers.get("Location")!, authorizeUrl);
      return { location, code: location.searchParams.get("code"), steps };
    }
    const html = await res.text();
    if (res.status === 503 && html.startsWith(PROXY_LOST))
      throw new ProxyLost(`wrangler dev's proxy lost a step's answer (${steps.at(-1) ?? "first page"})`);
    if (res.status !== 200) throw new Error(`sign-in page answered ${res.status}: ${html.slice(0, 300)}`);
    const form = parseForm(html, res.url || authorizeUrl);
    const body = new URLSearchParams([...form.fields]);
    if (form.names.has("phoneNo")) {
      steps.push("identify");
      body.set("telcoCd", who.telco);
      body.set("name", who.name);
      body.set("phoneNo", who.phone);
      // the agreements' box, ticked as the person does (docs/signin.md "The agreements")
      body.set("carrierTerms", "Y");
    } else if (form.names.has("otp")) {
      steps.push("verify");
      body.set("otp", who.code || (await outboxCode(new URL(authorizeUrl).origin, who.phone)));
      if (opts.autoLogin && form.names.has("autoLogin")) body.set("autoLogin", "Y");
    } else if (form.names.has("agree")) {
      steps.push("consent");
      body.set("agree", "Y");
      if (opts.autoLogin && form.names.has("autoLogin")) body.set("autoLogin", "Y");
    } else {
      throw new Error(`unknown step; fields: ${[...form.names].join(", ")}`);
    }
    res = await fetch(form.action, {
      method: "POST",
      redirect: "manual",
      headers: {
        ...headers(),
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: new URL(form.action).origin,
      },
      body,
    });
    jar.take(res);
  }
  throw new Error(`sign-in did not finish; steps ${steps.join(" → ")}`);
}
