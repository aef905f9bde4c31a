// A small browser for the workerd sign-in tests: keeps cookies, sends Accept-Language and the
// client IP, parses the step form of each page (docs/signin.md form contract) and posts it back.
// With `vars` (or `bindings`), requests go to the dev worker with those variables (or bindings)
// added: short windows, limits, a namespace whose calls a test watches.

import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { env } from "./env";
import worker from "../../workers/all-in-one/index";
import { BASE, form } from "./helpers";

export const DEMO_CB = "https://demo.example/callback";

export interface StepForm {
  action: string;
  step: string | undefined;
  hidden: Record<string, string>;
  names: Set<string>;
}

export interface Page {
  res: Response;
  status: number;
  html: string;
  form: StepForm | undefined;
}

const decode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}="([^"]*)"`, "i").exec(tag);
  return m ? decode(m[1]!) : undefined;
}

/** Every form of a page, in document order. */
export function parseForms(html: string): StepForm[] {
  const out: StepForm[] = [];
  for (const m of html.matchAll(/<form\b[^>]*>[\s\S]*?<\/form>/gi)) {
    const open = /<form\b[^>]*>/i.exec(m[0])![0];
    const hidden: Record<string, string> = {};
    const names = new Set<string>();
    for (const f of m[0].matchAll(/<(input|button|select|textarea)\b[^>]*>/gi)) {
      const name = attr(f[0], "name");
      if (!name) continue;
      names.add(name);
      if (attr(f[0], "type") === "hidden") hidden[name] = attr(f[0], "value") ?? "";
    }
    out.push({ action: attr(open, "action") ?? "", step: attr(open, "data-step"), hidden, names });
  }
  return out;
}

/**
 * The page's markup without its own inline scripts (the passkey parts and the WebOTP call, each an
 * enhancement the page works without), after checking that each carries the response's nonce and
 * that the CSP allows scripts by that nonce alone (a page showing the Turnstile widget adds its
 * origin). A page with none has no script-src. What is left holds no script at all.
 */
export function withoutOwnScripts(p: Page): string {
  const csp = p.res.headers.get("Content-Security-Policy") ?? "";
  const nonce = /style-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1];
  const scripts = [...p.html.matchAll(/<script\b([^>]*)>[\s\S]*?<\/script>/gi)];
  const src = /script-src ([^;]+)/.exec(csp)?.[1];
  for (const m of scripts) {
    // an enrolment page's options are data, never run
    if (m[1] === ' type="application/json" id="enrol-options"') continue;
    if (m[1] !== ` nonce="${nonce}"`) throw new Error(`a script without the page's nonce: ${m[0].slice(0, 80)}`);
  }
  if (scripts.some((m) => m[1] === ` nonce="${nonce}"`)) {
    if (!src?.startsWith(`'nonce-${nonce}'`)) throw new Error(`scripts not allowed by nonce alone: ${src}`);
  } else if (src !== undefined && !/^https?:\/\/[^\s']+$/.test(src))
    throw new Error(`script-src with no script: ${src}`);
  return p.html.replace(/<script\b[^>]*>[\s\S]*?<\/script>/gi, "");
}

/** The visible text of an element with role="alert", or undefined. */
export function alertText(html: string): string | undefined {
  const m = /<[^>]+role="alert"[^>]*>([\s\S]*?)<\/(p|div)>/.exec(html);
  return m ? decode(m[1]!.replace(/<[^>]+>/g, "").trim()) : undefined;
}

export interface BrowserOptions {
  lang?: string;
  ip?: string;
  vars?: Record<string, string>;
  /** Bindings in place of the dev worker's (a namespace whose calls a test watches). */
  bindings?: Partial<typeof env>;
  /** Headers sent with every request (DEV_MODE's X-Dev-* stand-ins); the test may change them between requests. */
  headers?: Record<string, string>;
}

export class Browser {
  readonly cookies = new Map<string, string>();
  private readonly env: typeof env | undefined;

  constructor(private readonly opts: BrowserOptions = {}) {
    this.env = opts.vars || opts.bindings ? ({ ...env, ...opts.vars, ...opts.bindings } as typeof env) : undefined;
  }

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("Cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    headers.set("Accept-Language", this.opts.lang ?? "ko-KR,ko;q=0.9");
    headers.set("CF-Connecting-IP", this.opts.ip ?? "198.51.100.7");
    for (const [k, v] of Object.entries(this.opts.headers ?? {})) headers.set(k, v);
    const req = new Request(new URL(path, BASE), { ...init, headers, redirect: "manual" });
    let res: Response;
    if (this.env) {
      const ctx = createExecutionContext();
      res = await worker.fetch!(req as never, this.env, ctx);
      await waitOnExecutionContext(ctx);
    } else {
      res = await exports.default.fetch(req);
    }
    for (const c of res.headers.getAll("Set-Cookie")) {
      const pair = c.split(";")[0]!;
      const i = pair.indexOf("=");
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  }

  async page(res: Response): Promise<Page> {
    const html = res.status >= 300 && res.status < 400 ? "" : await res.text();
    return { res, status: res.status, html, form: parseForms(html)[0] };
  }

  /** GET /oauth2/authorize with these parameters (demo-client and its https callback by default). */
  async authorize(params: Record<string, string> = {}): Promise<Page> {
    const q = { response_type: "code", client_id: "demo-client", redirect_uri: DEMO_CB, state: "st-1", ...params };
    return this.page(await this.fetch("/oauth2/authorize?" + form(q)));
  }

  /**
   * Posts the page's step form: its hidden fields plus `fields`. An identify form's agreements box
   * (`carrierTerms`, docs/signin.md) is posted ticked, as a person ticks it before asking for a
   * code, unless `fields` names it: `carrierTerms: ""` posts it unticked (a browser then omits it).
   */
  async submit(p: Page, fields: Record<string, string>, override: Record<string, string> = {}): Promise<Page> {
    if (!p.form) throw new Error(`no form on page (status ${p.status}): ${p.html.slice(0, 300)}`);
    // an identify submission: from an identify page, or one carrying a number (another tab's step 1)
    const identify = (p.form.step === "identify" && p.form.names.has("carrierTerms")) || "phoneNo" in fields;
    const ticks = identify && !("carrierTerms" in fields) && !("cancel" in fields);
    const all: Record<string, string> = {
      ...p.form.hidden,
      ...(ticks ? { carrierTerms: "Y" } : {}),
      ...fields,
      ...override,
    };
    if (all.carrierTerms === "") delete all.carrierTerms;
    const body = form(all);
    return this.page(
      await this.fetch(p.form.action, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body,
      }),
    );
  }
}

export interface Who {
  telco: string;
  name: string;
  phone: string;
  code: string;
}

/** Identify and verify; returns the page after the code step (consent page or redirect). */
export async function throughCode(
  b: Browser,
  who: Who,
  params: Record<string, string> = {},
  verifyFields: Record<string, string> = {},
): Promise<Page> {
  const p1 = await b.authorize(params);
  if (p1.form?.step !== "identify") throw new Error(`expected identify, got ${p1.status} ${p1.html.slice(0, 200)}`);
  const p2 = await b.submit(p1, { telcoCd: who.telco, name: who.name, phoneNo: who.phone });
  if (p2.form?.step !== "verify") throw new Error(`expected verify, got ${p2.status} ${alertText(p2.html)}`);
  return b.submit(p2, { otp: who.code, ...verifyFields });
}

/** A whole sign-in, agreeing to consent when asked; returns the final redirect's Location. */
export async function signInAll(
  b: Browser,
  who: Who,
  params: Record<string, string> = {},
  verifyFields: Record<string, string> = {},
): Promise<URL> {
  let p = await throughCode(b, who, params, verifyFields);
  if (p.form?.step === "consent") p = await b.submit(p, { agree: "Y" });
  if (p.status !== 302) throw new Error(`expected 302, got ${p.status} ${alertText(p.html)}`);
  return new URL(p.res.headers.get("Location")!);
}
