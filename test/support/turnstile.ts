// Turnstile's fake as tests use it (workers/all-in-one/turnstile-fake.js, declared in
// vitest.config.ts, routed by test/support/setup.ts): its origin, the keys it knows, the service's
// configuration pointing at it, a solved challenge's token, and its control API.
import { env } from "./env";
import type { TurnstileConfig } from "../../workers/provider/signin/turnstile";

export const TURNSTILE_ORIGIN = "http://127.0.0.1:9810";
export const SITE_KEY = "1x0000000000000000FAKE";
export const SECRET = "fake-turnstile-secret-0123456789abcdef";

export const CONFIG: TurnstileConfig = {
  siteKey: SITE_KEY,
  secretKey: SECRET,
  scriptUrl: `${TURNSTILE_ORIGIN}/turnstile/v0/api.js`,
  siteverifyUrl: `${TURNSTILE_ORIGIN}/turnstile/v0/siteverify`,
  timeoutMs: 1000,
};

async function control<T>(path: string, body?: unknown): Promise<T> {
  const res = await env.TURNSTILE_FAKE.fetch(`${TURNSTILE_ORIGIN}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as T;
}

/** A solved challenge's token, as the widget hands it to the browser. */
export async function solve(action: string, hostname: string, sitekey = SITE_KEY): Promise<string> {
  return (await control<{ token: string }>("/_fake/token", { sitekey, action, hostname })).token;
}

/** How the next `times` siteverify calls answer (all, without `times`). */
export function siteverifyMode(mode: "ok" | "fail" | "hang" | "internal-error", times?: number): Promise<unknown> {
  return control("/_fake/mode", { mode, times });
}

/** The token as if solved `ms` ago (its expiry, without waiting). */
export function age(token: string, ms: number): Promise<unknown> {
  return control("/_fake/age", { token, ms });
}
