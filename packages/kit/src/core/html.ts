// Safe HTML rendering for server pages (sign-in, dev pages, the kit's demo page): a tagged template
// that escapes every interpolation unless it is already SafeHtml, per-response CSP nonces, and
// the strict page headers of docs/signin.md "Security".

import { randomToken } from "./crypto.js";

/** HTML that is safe to insert as is (built by `html` or `raw`). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for element content and quoted attribute values (most has nothing to: a test first). */
export function escapeHtml(text: string): string {
  return /[&<>"']/.test(text) ? text.replace(/[&<>"']/g, (c) => ESCAPES[c]!) : text;
}

type Part = SafeHtml | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false || part === true) return "";
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

/**
 * Tagged template: `html\`<p>${userText}</p>\``. Interpolations are escaped (strings, numbers),
 * inserted as is (SafeHtml), joined (arrays) or dropped (null, undefined, booleans: handy for
 * `${cond && html\`...\`}`). Always quote attribute values in templates.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Marks trusted, already-safe markup (constants only: never input). */
export function raw(trusted: string): SafeHtml {
  return new SafeHtml(trusted);
}

/** A fresh CSP nonce (128 random bits) for one response. */
export function cspNonce(): string {
  return randomToken(16);
}

/**
 * A CSP source for a redirect target, for `form-action`: the origin of an http(s) URL, or the
 * scheme of a custom-scheme URL (`demoapp:`). Chromium checks form-action on the redirect after a
 * form POST, so the final redirect's target must be allowed. Undefined when not expressible.
 */
export function cspSourceFor(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol === "https:" || u.protocol === "http:") {
    return /^https?:\/\/[A-Za-z0-9.\-[\]:]+$/.test(u.origin) ? u.origin : undefined;
  }
  return /^[a-z][a-z0-9+.-]*:$/i.test(u.protocol) ? u.protocol : undefined;
}

export interface PageOptions {
  status?: number;
  /** The nonce the page's <style> carries, and its inline <script> when `script` is set. */
  nonce: string;
  /** The page has an inline script of its own (a progressive enhancement: the page works without it). */
  script?: boolean;
  /** Extra `form-action` sources beyond 'self'. */
  formAction?: readonly string[];
  headers?: Record<string, string>;
  cookies?: readonly string[];
}

/** The strict headers every server page carries. */
export function pageHeaders(opts: PageOptions): Headers {
  const formAction = ["'self'", ...(opts.formAction ?? [])].join(" ");
  const script = opts.script ? ` script-src 'nonce-${opts.nonce}';` : "";
  const h = new Headers({
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": `default-src 'none';${script} style-src 'nonce-${opts.nonce}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    Pragma: "no-cache",
    "X-Frame-Options": "DENY",
    // The pages are HTTPS only (their cookies are __Host-); a browser ignores this over plain http (dev).
    "Strict-Transport-Security": "max-age=31536000",
    ...opts.headers,
  });
  for (const c of opts.cookies ?? []) h.append("Set-Cookie", c);
  return h;
}

/** An HTML page response with the strict headers (a page given as UTF-8 bytes brings its own doctype). */
export function htmlResponse(body: SafeHtml | Uint8Array, opts: PageOptions): Response {
  const page = body instanceof Uint8Array ? body : "<!doctype html>\n" + body.value;
  return new Response(page, { status: opts.status ?? 200, headers: pageHeaders(opts) });
}
