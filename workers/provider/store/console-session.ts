// The operations console's session (docs/console.md "Session"): after the person proves the number
// at /console, a random id in a `__Host-pl_console` cookie (SameSite=Strict; not the kit's cookie,
// not /account's) names a record in the one-time store. It ends after 30 minutes without a request
// (idle) and 12 hours after the proof (absolute). The record holds the person's directory id, the
// masked number, the time of the proof (admin actions ask for one not older than 10 minutes) and
// the hash of the CSRF token every console request carries (derived from the id: only the cookie's
// holder has it); the store holds only the hash of the id. The console's pages
// (workers/provider/console/) and the admin API (workers/admin/access.ts) both read it.

import { constantTimeEqual, randomToken, sha256 } from "../../core/crypto";
import { hostCookie, readHostCookie } from "../../core/cookies";
import { isRandomValue } from "../../core/spec";
import { storeFor, type OneTimeStore } from "./one-time/one-time-store";
import { consoleSessionKey } from "./one-time/keys";

type SessionEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

export const CONSOLE_COOKIE = "pl_console";
export const CONSOLE_IDLE_MS = 30 * 60_000;
export const CONSOLE_ABSOLUTE_MS = 12 * 3600_000;
/** The newest proof an admin action accepts. */
export const CONSOLE_FRESH_MS = 10 * 60_000;
/** A session's idle deadline moves on at most once a minute (one store write). */
const TOUCH_EVERY_MS = 60_000;

export interface ConsoleSession {
  subscriberId: number;
  /** `010-****-5678`. */
  masked: string;
  csrfHash: string;
  /** When the number was proven (the sign-in's code step). */
  provenAt: number;
  /** The absolute end: the proof plus 12 hours. */
  endsAt: number;
  /** The last request that moved the idle deadline. */
  seenAt: number;
}

export interface ConsoleHandle {
  key: string;
  stub: DurableObjectStub<OneTimeStore>;
  session: ConsoleSession;
  csrf: string;
}

const ttl = (s: ConsoleSession, now: number) => Math.min(CONSOLE_IDLE_MS, s.endsAt - now);

/** Opens a session for a proven number: the cookie to set. */
export async function openConsoleSession(
  env: SessionEnv,
  shards: number,
  subscriberId: number,
  masked: string,
): Promise<{ cookie: string }> {
  const id = randomToken(32);
  const now = Date.now();
  const session: ConsoleSession = {
    subscriberId,
    masked,
    csrfHash: await sha256(await csrfOf(id)),
    provenAt: now,
    endsAt: now + CONSOLE_ABSOLUTE_MS,
    seenAt: now,
  };
  await storeFor(env, id, shards).putEntry(await consoleSessionKey(id), JSON.stringify(session), ttl(session, now));
  return {
    cookie: hostCookie(CONSOLE_COOKIE, id, { maxAgeSeconds: CONSOLE_ABSOLUTE_MS / 1000, sameSite: "Strict" }),
  };
}

function csrfOf(id: string): Promise<string> {
  return sha256(`console-csrf:${id}`);
}

/** Whether the request carries a console cookie at all (a session or a stale one). */
export function hasConsoleCookie(req: Request): boolean {
  return readHostCookie(req, CONSOLE_COOKIE) !== undefined;
}

/**
 * The request's live session with its CSRF token, or null (no cookie, unknown, idle 30 minutes or
 * 12 hours old). A live one's idle deadline moves on: `touch` is that write, for `waitUntil`.
 */
export async function loadConsoleSession(
  req: Request,
  env: SessionEnv,
  shards: number,
): Promise<(ConsoleHandle & { touch?: Promise<void> }) | null> {
  const id = readHostCookie(req, CONSOLE_COOKIE);
  if (!isRandomValue(id)) return null;
  const key = await consoleSessionKey(id);
  const stub = storeFor(env, id, shards);
  const value = await stub.getEntry(key);
  if (value === null) return null;
  const session = JSON.parse(value) as ConsoleSession;
  const now = Date.now();
  if (session.endsAt <= now || session.seenAt + CONSOLE_IDLE_MS <= now) return null;
  const h: ConsoleHandle & { touch?: Promise<void> } = { key, stub, session, csrf: await csrfOf(id) };
  if (now - session.seenAt >= TOUCH_EVERY_MS) {
    session.seenAt = now;
    h.touch = Promise.resolve(stub.putEntry(key, JSON.stringify(session), ttl(session, now)));
  }
  return h;
}

/** True when the presented token is the session's. */
export async function consoleCsrfHolds(h: ConsoleHandle, presented: string | null | undefined): Promise<boolean> {
  return typeof presented === "string" && constantTimeEqual(await sha256(presented), h.session.csrfHash);
}

/** Ends the session (sign out); the cookie that clears it. */
export async function endConsoleSession(h: ConsoleHandle): Promise<string> {
  await h.stub.takeEntry(h.key);
  return clearConsoleCookie();
}

export function clearConsoleCookie(): string {
  return hostCookie(CONSOLE_COOKIE, "", { maxAgeSeconds: 0, sameSite: "Strict" });
}
