// The one-time code's SMS text (docs/signin.md "The SMS text"): one SMS is at most 90 bytes in
// EUC-KR (Korean gateways bill anything longer as an LMS), and its last line is the origin-bound
// line of the WebOTP format, `@<host> #<code>`, whenever it fits, so that the phone offers the code
// on the code page (Chrome's WebOTP API, Safari's autofill of `autocomplete="one-time-code"`).

import { t, type Lang, type MessageKey } from "../i18n";

/** One SMS: Naver Cloud SENS and NHN Cloud both take at most 90 bytes of EUC-KR in an SMS body. */
export const SMS_MAX_BYTES = 90;

let ksX1001: Set<string> | undefined;

/**
 * The characters of KS X 1001 (EUC-KR's two-byte set): every lead and trail byte 0xA1-0xFE,
 * decoded by the platform's EUC-KR decoder (WHATWG Encoding), unassigned pairs left out.
 */
function twoByteSet(): Set<string> {
  if (ksX1001) return ksX1001;
  const pairs = new Uint8Array(94 * 94 * 2);
  let i = 0;
  for (let lead = 0xa1; lead <= 0xfe; lead++)
    for (let trail = 0xa1; trail <= 0xfe; trail++) {
      pairs[i++] = lead;
      pairs[i++] = trail;
    }
  // Each pair decodes to one code point: its character, or U+FFFD where nothing is assigned.
  const chars = new TextDecoder("euc-kr").decode(pairs);
  ksX1001 = new Set([...chars].filter((c) => c !== "\ufffd"));
  return ksX1001;
}

/**
 * The length of `text` in EUC-KR: 1 byte for ASCII, 2 for Hangul syllables and the other KS X 1001
 * characters. Throws on a character EUC-KR cannot carry (the gateways refuse such a message).
 */
export function eucKrBytes(text: string): number {
  let n = 0;
  for (const c of text) {
    if (c.charCodeAt(0) < 0x80) n += 1;
    else if (twoByteSet().has(c)) n += 2;
    else throw new RangeError(`U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")} is not in EUC-KR`);
  }
  return n;
}

/**
 * The WebOTP origin-bound line for a host name (the WICG "Origin-bound one-time codes delivered
 * via SMS" format: `@` host, a space, `#` code; the origin is https on the default port). Only a
 * domain or IPv4 host name can be named; undefined otherwise.
 */
function originLine(host: string, code: string): string | undefined {
  return /^[a-z0-9.-]+$/i.test(host) ? `@${host.toLowerCase()} #${code}` : undefined;
}

/**
 * The texts tried in order: the first that fits one SMS with the origin-bound line is sent with
 * it; when none does (a host too long), the full text goes alone.
 */
const WITH_LINE: readonly MessageKey[] = ["smsShort", "smsCode"];

/** The SMS carrying `code`, for the code page on `host`: at most 90 bytes in EUC-KR. */
export function smsText(lang: Lang, code: string, minutes: number, host: string): string {
  const line = originLine(host, code);
  if (line !== undefined) {
    for (const key of WITH_LINE) {
      const text = `${t(lang, key, { code })}\n${line}`;
      if (eucKrBytes(text) <= SMS_MAX_BYTES) return text;
    }
  }
  return t(lang, "smsFull", { code, minutes });
}
