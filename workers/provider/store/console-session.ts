// The operations console's session (docs/console.md "Session"): after the person proves the number
// at /console, a random id in a `__Host-pl_console` cookie (SameSite=Strict; not the kit's cookie,
// not /account's) names a record in the one-time store. It ends after 30 minutes without a request
// (idle) and 12 hours after the proof (absolute). The record holds the person's directory id, the
// masked number, the time of the proof (admin actions ask for one not older than 10 minutes) and
// the hash of the CSRF token every console request carries (derived from the id: only the cookie's
// holder has it); the store holds only the hash of the id. The console's pages
// (workers/provider/console/) and the admin API (workers/admin/access.ts) both read it. The developer
// console's session (docs/developers.md "Session") is the same with its own cookie
// `__Host-pl_developer` and entries (`SessionKind`): neither opens the other.

import { constantTimeEqual, randomToken, sha256 } from "../../core/crypto";
import { hostCookie, readHostCookie } from "../../core/cookies";
import { isRandomValue } from "../../core/spec";
import { storeFor, type OneTimeStore, consoleSessionKey, developerSessionKey } from "./one-time/index";

type SessionEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

export const CONSOLE_COOKIE = "pl_console";
export const DEVELOPER_COOKIE = "pl_developer";

/** Which console a session is of: its cookie, its entry's key and its CSRF token's derivation. */
export interface SessionKind {
  cookie: string;
  key(id: string): Promise<string>;
  csrfLabel: string;
}
export const OPERATOR_SESSION: SessionKind = {
  cookie: CONSOLE_COOKIE,
  key: consoleSessionKey,
  csrfLabel: "console-csrf",
};
export const DEVELOPER_SESSION: SessionKind = {
  cookie: DEVELOPER_COOKIE,
  key: developerSessionKey,
  csrfLabel: "developer-csrf",
};
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
  kind: SessionKind;
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
  kind: SessionKind = OPERATOR_SESSION,
): Promise<{ cookie: string }> {
  const id = randomToken(32);
  const now = Date.now();
  const session: ConsoleSession = {
    subscriberId,
    masked,
    csrfHash: await sha256(await csrfOf(kind, id)),
    provenAt: now,
    endsAt: now + CONSOLE_ABSOLUTE_MS,
    seenAt: now,
  };
  await storeFor(env, id, shards).putEntry(await kind.key(id), JSON.stringify(session), ttl(session, now));
  return {
    cookie: hostCookie(kind.cookie, id, { maxAgeSeconds: CONSOLE_ABSOLUTE_MS / 1000, sameSite: "Strict" }),
  };
}

function csrfOf(kind: SessionKind, id: string): Promise<string> {
  return sha256(`${kind.csrfLabel}:${id}`);
}

/** Whether the request carries a console cookie at all (a session or a stale one). */
export function hasConsoleCookie(req: Request, kind: SessionKind = OPERATOR_SESSION): boolean {
  return readHostCookie(req, kind.cookie) !== undefined;
}

/**
 * The request's live session with its CSRF token, or null (no cookie, unknown, idle 30 minutes or
 * 12 hours old). A live one's idle deadline moves on: `touch` is that write, for `waitUntil`.
 */
export async function loadConsoleSession(
  req: Request,
  env: SessionEnv,
  shards: number,
  kind: SessionKind = OPERATOR_SESSION,
): Promise<(ConsoleHandle & { touch?: Promise<void> }) | null> {
  const id = readHostCookie(req, kind.cookie);
  if (!isRandomValue(id)) return null;
  const key = await kind.key(id);
  const stub = storeFor(env, id, shards);
  const value = await stub.getEntry(key);
  if (value === null) return null;
  const session = JSON.parse(value) as ConsoleSession;
  const now = Date.now();
  if (session.endsAt <= now || session.seenAt + CONSOLE_IDLE_MS <= now) return null;
  const h: ConsoleHandle & { touch?: Promise<void> } = { kind, key, stub, session, csrf: await csrfOf(kind, id) };
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
  return clearConsoleCookie(h.kind);
}

export function clearConsoleCookie(kind: SessionKind = OPERATOR_SESSION): string {
  return hostCookie(kind.cookie, "", { maxAgeSeconds: 0, sameSite: "Strict" });
}
