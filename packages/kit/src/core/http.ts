// Request parsing that trusts nothing (docs/architecture.md §7) and the tolerance rules of
// docs/architecture.md §4.2 and §4.7.

import { E, jsonHeaders } from "./errors.js";
import { fromUtf8 } from "./crypto.js";

/** Request parameters: query and body merged; a name twice in one, or differing in both, is refused. */
export class Params {
  constructor(private readonly values: Map<string, string>) {}

  /** The value, or undefined when absent or empty (an empty value counts as missing). */
  get(name: string): string | undefined {
    const v = this.values.get(name);
    return v === undefined || v === "" ? undefined : v;
  }

  /** The value, or throws the spec's "required item is missing" error. */
  require(name: string): string {
    const v = this.get(name);
    if (v === undefined) throw E.missing(name);
    return v;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }
}

/**
 * The pairs of an `application/x-www-form-urlencoded` text as `URLSearchParams` reads it (WHATWG
 * URL §5.1), into `into`; a name twice is refused. In JavaScript: a third of what crossing into
 * the runtime and iterating its entries costs for a small form (docs/benchmarks.md).
 */
export function formPairs(text: string, into = new Map<string, string>()): Map<string, string> {
  for (let start = 0; start <= text.length;) {
    let end = text.indexOf("&", start);
    if (end < 0) end = text.length;
    if (end > start) {
      const eq = text.indexOf("=", start);
      const name = formComponent(text.slice(start, eq < 0 || eq > end ? end : eq));
      const value = eq < 0 || eq > end ? "" : formComponent(text.slice(eq + 1, end));
      if (into.has(name)) throw E.duplicated(name);
      into.set(name, value);
    }
    start = end + 1;
  }
  return into;
}

/** One form component: `+` a space, `%XX` a UTF-8 byte; a stray % or bad UTF-8 as the standard reads them. */
function formComponent(s: string): string {
  if (!s.includes("%")) return s.includes("+") ? s.replaceAll("+", " ") : s;
  try {
    return decodeURIComponent(s.replaceAll("+", " "));
  } catch {
    return new URLSearchParams(`a=${s}`).get("a")!;
  }
}

/** The body's declared length when it is a plain number, refused above `maxBytes`; undefined when absent. */
function declaredLength(req: Request, maxBytes: number): number | undefined {
  const declared = req.headers.get("Content-Length");
  const length = declared !== null && /^\d+$/.test(declared) ? Number(declared) : undefined;
  if (length !== undefined && length > maxBytes) throw E.tooLarge();
  return length;
}

/**
 * Reads the body as text, refusing more than `maxBytes` whatever Content-Length claims, and bytes that are not
 * UTF-8, and U+FFFD (no form, JSON or JWT encoder sends it raw). A leading byte-order mark is dropped. The bytes
 * are decoded here rather than by `Request.text()`, which on a form or JWT body also writes a console warning
 * each time: that warning cost more CPU than the read.
 */
export const readBodyText = async (req: Request, max: number): Promise<string> =>
  bodyText(await readBodyBytes(req, max));

/** `readBodyText`'s checks on bytes already read (`readParams` reads them itself: one await less). */
function bodyText(bytes: Uint8Array): string {
  const text = utf8Text(bytes);
  if (text.includes("\uFFFD")) throw E.invalid("body", "body is not UTF-8");
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Reads the body's bytes, refusing more than `maxBytes` whatever Content-Length claims. */
export async function readBodyBytes(req: Request, maxBytes: number): Promise<Uint8Array> {
  const length = declaredLength(req, maxBytes);
  if (length !== undefined) {
    // A declared length within the limit: one read, without touching `req.body` (its stream object
    // costs more than the read). The chunk loop below costs several times the CPU for a small form
    // (docs/benchmarks.md); the actual size is still checked.
    const buffer = await req.arrayBuffer().catch(aborted);
    if (buffer.byteLength > maxBytes) throw E.tooLarge();
    return new Uint8Array(buffer);
  }
  if (!req.body) return new Uint8Array(0);
  const all = await readStreamCapped(req.body, maxBytes, DRAIN_BYTES).catch(aborted);
  if (all === null) throw E.tooLarge();
  return all;
}

/** A body read that fails is the client's doing (an aborted upload): a 400 and a client-abort log cause. */
const aborted = (): never => {
  throw E.aborted();
};

/** After a body passes its limit, up to this much more is read and dropped before giving up. */
const DRAIN_BYTES = 1024 * 1024;

/**
 * A stream's bytes, chunk by chunk; null past maxBytes, after reading and dropping up to `drainBytes`
 * more (a request: the client still sending sees the 413, not a reset), then cancelling the stream.
 */
export async function readStreamCapped(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  drainBytes = 0,
): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      while (total <= maxBytes + drainBytes) {
        const next = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (next.done) return null;
        total += next.value!.byteLength;
      }
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.byteLength;
  }
  return all;
}

function utf8Text(bytes: Uint8Array): string {
  try {
    return fromUtf8(bytes);
  } catch {
    throw E.invalid("body", "body is not UTF-8");
  }
}

/** A media type: `Content-Type` without its parameters, lower case; "" when absent. */
const mediaTypeOf = (type: string | null): string => (type ?? "").split(";")[0]!.trim().toLowerCase();
export const mediaType = (req: Request): string => mediaTypeOf(req.headers.get("Content-Type"));

/**
 * Query and form body merged (docs/architecture.md §4.7): urlencoded, no content type, or multipart
 * text fields (PHP cURL's array body); anything else with a body, or a file part, is invalid_request;
 * over `maxBytes` 413. A name in both query and body must carry the same value. `search` is the
 * URL's query with its `?` (`RequestContext.search`, `URL.search`), or "".
 */
export async function readParams(req: Request, search: string, maxBytes: number): Promise<Params> {
  const values = search.length > 1 ? formPairs(search.slice(1)) : new Map<string, string>();
  if (req.method !== "GET" && req.method !== "HEAD") {
    const type = req.headers.get("Content-Type");
    const media = type === null ? "" : mediaTypeOf(type);
    const body = values.size ? new Map<string, string>() : values; // no query: nothing to merge
    if (media === "multipart/form-data") {
      const bytes = await readBodyBytes(req, maxBytes);
      if (bytes.byteLength > 0)
        for (const [k, v] of await multipartFields(type!, bytes)) {
          if (body.has(k)) throw E.duplicated(k);
          body.set(k, v);
        }
    } else {
      const text = bodyText(await readBodyBytes(req, maxBytes));
      if (text.length > 0) {
        if (type !== null && media !== "application/x-www-form-urlencoded")
          throw E.invalid("Content-Type", "body is not a form");
        formPairs(text, body);
      }
    }
    if (body !== values)
      for (const [k, v] of body) {
        if (values.has(k) && values.get(k) !== v) throw E.conflicting(k);
        values.set(k, v);
      }
  }
  return new Params(values);
}

/** The text fields of a multipart/form-data body (RFC 7578); a file part is refused. */
async function multipartFields(type: string, bytes: Uint8Array): Promise<[string, string][]> {
  let form: FormData;
  try {
    form = await new Response(bytes, { headers: { "Content-Type": type } }).formData();
  } catch {
    throw E.invalid("body", "malformed multipart body");
  }
  const out: [string, string][] = [];
  for (const [k, v] of form) {
    if (typeof v !== "string") throw E.invalid(k, "file part");
    out.push([k, v]);
  }
  return out;
}

/** RFC 6749 §2.3.1 / Appendix B: form-url-decode one Basic half, falling back to the raw text. */
function formDecode(s: string): string {
  if (!s.includes("%") && !s.includes("+")) return s;
  try {
    return decodeURIComponent(s.replace(/\+/g, "%20"));
  } catch {
    return s;
  }
}

export type BasicCredentials =
  { kind: "absent" } | { kind: "malformed"; reason: string } | { kind: "basic"; id: string; secret: string };

/** Parses `Authorization: Basic`. An empty header, or another scheme, counts as absent. */
export function parseBasic(header: string | null): BasicCredentials {
  if (header === null || header.trim() === "") return { kind: "absent" };
  const m = /^\s*basic(?:\s+(\S*))?\s*$/i.exec(header);
  if (!m) return /^\s*basic\b/i.test(header) ? { kind: "malformed", reason: "basic syntax" } : { kind: "absent" };
  const b64 = m[1] ?? "";
  if (b64 === "") return { kind: "malformed", reason: "empty basic credentials" };
  let text: string;
  try {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new Error();
    const bin = atob(b64);
    if (/^[\x00-\x7f]*$/.test(bin))
      text = bin; // ASCII is its own UTF-8 (every generated id and secret)
    else {
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      text = fromUtf8(bytes);
    }
  } catch {
    return { kind: "malformed", reason: "basic not base64 utf-8" };
  }
  const colon = text.indexOf(":");
  if (colon < 0) return { kind: "malformed", reason: "basic without colon" };
  return { kind: "basic", id: formDecode(text.slice(0, colon)), secret: formDecode(text.slice(colon + 1)) };
}

/** The Bearer token of `Authorization` (scheme case-insensitive), or undefined. */
export function parseBearer(header: string | null): string | undefined {
  if (header === null) return undefined;
  const m = /^\s*bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(header);
  return m?.[1];
}

/** A JSON response with the no-store headers every API answer carries (`jsonHeaders`). */
export function json(body: unknown, status = 200, headers?: Record<string, string>): Response {
  return jsonText(JSON.stringify(body), status, headers);
}

/** `json` for a body already written as JSON text. */
export function jsonText(text: string, status = 200, headers?: Record<string, string>): Response {
  const h = jsonHeaders(headers);
  return new Response(text, status === 200 ? { headers: h } : { status, headers: h });
}

/**
 * What a per-IP limit counts: an IPv4 address as is (also when written IPv4-mapped, ::ffff:a.b.c.d),
 * an IPv6 address by its /64, in one canonical spelling. One IPv6 host is routed a whole /64, so
 * a limit keyed on the full address could be passed by changing the interface id.
 */
export function rateLimitNetwork(ip: string): string {
  if (!ip.includes(":")) return ip;
  let host: string;
  try {
    host = new URL(`http://[${ip}]/`).hostname.slice(1, -1); // WHATWG: compressed, lower-case hex
  } catch {
    return ip;
  }
  const [head = "", tail] = host.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  if (groups.slice(0, 5).every((g) => g === "0") && groups[5] === "ffff") {
    const v4 = parseInt(groups[6]!, 16) * 65536 + parseInt(groups[7]!, 16);
    return [v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255].join(".");
  }
  return `${groups.slice(0, 4).join(":")}::/64`;
}

/**
 * The client's network for per-IP limits: `rateLimitNetwork` of the address Cloudflare's edge
 * reports (CF-Connecting-IP, which a client cannot set; loopback in local runs).
 */
export function clientNetwork(req: Request): string {
  return rateLimitNetwork(req.headers.get("CF-Connecting-IP") ?? "127.0.0.1");
}

/**
 * A redirect that is never cached (it may carry a code, a state or set a cookie). The provider's
 * redirects to apps send no Referer at all; the kit's stay same-origin (a `no-referrer` page makes
 * Chromium post `Origin: null`, which the kit's POST check refuses).
 */
export function redirect(
  status: 302 | 303 | 308,
  location: string,
  opts: { cookies?: readonly string[]; referrer?: "no-referrer" | "same-origin" } = {},
): Response {
  const headers = new Headers({
    Location: location,
    "Cache-Control": "no-store",
    Pragma: "no-cache",
    "Referrer-Policy": opts.referrer ?? "no-referrer",
    "X-Content-Type-Options": "nosniff",
  });
  for (const c of opts.cookies ?? []) headers.append("Set-Cookie", c);
  return new Response(null, { status, headers });
}
