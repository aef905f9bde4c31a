// A browser that proved its number (docs/abuse.md "A browser that proved its number"): after a
// right code, a text or a passkey, the browser keeps `__Host-pl_nb`, HttpOnly, for
// SIGNIN_PROVED_BROWSER_SECONDS (180 days). It holds a random browser id and, for each of up to four
// numbers proven on it, an expiry and two MACs under a key derived from SEAL_KEY: one over the
// number's key (SHA-256 of the number), the browser id and the expiry; one over the same and the
// person's id. Nothing is stored, and nothing in it names a number or a person.
//
// At the identify step the first MAC is checked against the typed number before anyone is looked
// up, so it says nothing of who is registered: a browser that proved this number is never
// challenged, slowed or told to wait by the SMS-abuse guard (its code is still sent by SMS). Once
// the carrier directory answered, the second MAC is checked against the person it names: a number
// that passed to another person since (reassigned) no longer holds, and the guard decides as for
// any browser.

import { hostCookie, readHostCookie } from "../../core/cookies";
import { intVar } from "../../core/config";
import { derivedToken, randomToken } from "../../core/crypto";
import { sealKeyVar } from "../store/clients";
import { checkConfig } from "../store/config";
import { sameHash } from "../store/one-time/index";

export const PROVED_COOKIE = "pl_nb";
const PURPOSE = "proved-browser-v1";
/** Numbers kept per browser: a family's shared tablet, a person with two lines. */
const MAX_NUMBERS = 4;
/** Each MAC is cut to 128 bits (22 base64url characters). */
const MAC_CHARS = 22;

type Env = { SEAL_KEY: string; SIGNIN_PROVED_BROWSER_SECONDS?: string };

interface Entry {
  /** Expiry, Unix seconds. */
  exp: number;
  number: string;
  person: string;
}

interface Held {
  browser: string;
  entries: Entry[];
}

/** How long a proof is kept, in seconds (0: no cookie is set or read; at most 400 days). */
export function provedSeconds(env: Env): number {
  return intVar(env, "SIGNIN_PROVED_BROWSER_SECONDS", 180 * 86_400, 0, 400 * 86_400);
}

function parse(v: string | undefined): Held | null {
  if (!v || v.length > 600) return null;
  const [browser, ...rest] = v.split("~");
  if (!browser || !/^[A-Za-z0-9_-]{22,43}$/.test(browser)) return null;
  const entries: Entry[] = [];
  for (const r of rest.slice(0, MAX_NUMBERS)) {
    const m = /^([0-9a-z]{1,8})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/.exec(r);
    if (m) entries.push({ exp: parseInt(m[1]!, 36), number: m[2]!, person: m[3]! });
  }
  return { browser, entries };
}

const mac = async (env: Env, input: string) =>
  (await derivedToken(sealKeyVar(env), PURPOSE, input)).slice(0, MAC_CHARS);
const numberMac = (env: Env, browser: string, phoneKey: string, exp: number) =>
  mac(env, `number:${browser}:${phoneKey}:${exp}`);
const subscriberMac = (env: Env, browser: string, phoneKey: string, subscriberId: number, exp: number) =>
  mac(env, `person:${browser}:${phoneKey}:${subscriberId}:${exp}`);

/** What a request holds for the typed number: its live entry, checked without a directory read. */
export interface Proved {
  browser: string;
  entry: Entry;
}

export async function provedFor(req: Request, env: Env, phoneKey: string): Promise<Proved | null> {
  if (provedSeconds(env) === 0) return null;
  const held = parse(readHostCookie(req, PROVED_COOKIE));
  if (!held) return null;
  const now = Date.now() / 1000;
  let found: Proved | null = null;
  // every live entry is checked, so the time does not say which one matched
  for (const e of held.entries) {
    if (e.exp <= now) continue;
    if (sameHash(await numberMac(env, held.browser, phoneKey, e.exp), e.number))
      found = { browser: held.browser, entry: e };
  }
  return found;
}

/** Whether the proof still names the person the directory now gives for the number. */
export async function stillHolds(env: Env, p: Proved, phoneKey: string, subscriberId: number): Promise<boolean> {
  return sameHash(await subscriberMac(env, p.browser, phoneKey, subscriberId, p.entry.exp), p.entry.person);
}

/**
 * The cookie that records a proof of the number (its key) by the person on this browser, newest
 * first, replacing an older proof of the same number; null when proofs are not kept.
 */
export async function provedCookie(
  req: Request,
  env: Env,
  phoneKey: string,
  subscriberId: number,
): Promise<string | null> {
  const seconds = provedSeconds(env);
  if (seconds === 0) return null;
  const held = parse(readHostCookie(req, PROVED_COOKIE));
  const browser = held?.browser ?? randomToken(16);
  const now = Math.floor(Date.now() / 1000);
  const exp = now + seconds;
  const kept: Entry[] = [];
  for (const e of held?.entries ?? []) {
    if (e.exp <= now) continue;
    if (sameHash(await numberMac(env, browser, phoneKey, e.exp), e.number)) continue;
    kept.push(e);
  }
  const fresh: Entry = {
    exp,
    number: await numberMac(env, browser, phoneKey, exp),
    person: await subscriberMac(env, browser, phoneKey, subscriberId, exp),
  };
  const value = [
    browser,
    ...[fresh, ...kept].slice(0, MAX_NUMBERS).map((e) => `${e.exp.toString(36)}.${e.number}.${e.person}`),
  ].join("~");
  return hostCookie(PROVED_COOKIE, value, { maxAgeSeconds: seconds });
}

/** `res` with the proof's cookie added (a response whose headers are fixed is copied first). */
export async function withProof(
  res: Response,
  req: Request,
  env: Env,
  phoneKey: string,
  subscriberId: number,
): Promise<Response> {
  const cookie = await provedCookie(req, env, phoneKey, subscriberId);
  if (cookie === null) return res;
  try {
    res.headers.append("Set-Cookie", cookie);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    copy.headers.append("Set-Cookie", cookie);
    return copy;
  }
}

checkConfig(provedSeconds);
