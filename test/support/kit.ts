// Helpers for the relying-party kit's tests: the kit's per-route workers run with an env whose
// PROVIDER records every back-channel call and forwards it to our provider (the all-in-one worker),
// and a small browser (cookie jar) that routes /auth/* paths to those workers.

import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { env } from "./env";
import { expect, vi } from "vitest";
import type { ProviderFetcher } from "../../packages/kit/src/client";
import type { RpEnv } from "../../packages/kit/src/config";
import rpCallback from "../../workers/kit/callback/index";
import rpLogin from "../../workers/kit/login/index";
import rpSession from "../../workers/kit/session/index";
import { intercept, mintFor, type MintOptions } from "./helpers";
import { aroundCalls } from "./shards";

export const ORIGIN = "http://localhost:8787";

export interface Kit {
  env: RpEnv;
  /** The kit's public origin (RP_PUBLIC_ORIGIN), where the browser talks to it. */
  origin: string;
  /** Back-channel calls made, as "METHOD /path". */
  calls: string[];
}

/** The two places the kit can keep its logins: its Durable Object store (RP_STORE), or KV alone. */
export const STORAGES = [
  ["the kit's store", {}],
  ["KV alone", { RP_STORE: undefined }],
] as const;

/** The kit's store with `before` and `after` around each call (test/support/shards.ts `aroundCalls`). */
export function storeWith(
  before: (method: string, args: unknown[]) => Promise<void> | void,
  after: (method: string, args: unknown[]) => Promise<void> | void = () => {},
  ns = env.RP_STORE as NonNullable<RpEnv["RP_STORE"]>,
): NonNullable<RpEnv["RP_STORE"]> {
  return aroundCalls(ns, before, after);
}

/** The kit's env against our provider (in process), plus `vars` overrides. */
export function kit(vars: Record<string, unknown> = {}, provider?: ProviderFetcher): Kit {
  const calls: string[] = [];
  const target: ProviderFetcher = provider ?? {
    fetch: (input, init) => exports.default.fetch(new Request(input, init)),
  };
  const recording: ProviderFetcher = {
    fetch: (input, init) => {
      const req = new Request(input, init);
      calls.push(`${req.method} ${new URL(req.url).pathname}`);
      return target.fetch(req);
    },
  };
  const origin = typeof vars.RP_PUBLIC_ORIGIN === "string" ? vars.RP_PUBLIC_ORIGIN : ORIGIN;
  return { env: { ...(env as unknown as RpEnv), PROVIDER: recording, ...vars } as RpEnv, origin, calls };
}

/** The per-route worker that serves `path` in a split deployment. */
function workerFor(path: string): ExportedHandler<RpEnv> {
  if (path.startsWith("/auth/login")) return rpLogin as ExportedHandler<RpEnv>;
  if (path.startsWith("/auth/callback")) return rpCallback as ExportedHandler<RpEnv>;
  return rpSession as ExportedHandler<RpEnv>;
}

/**
 * Sends a request to the kit's per-route worker for its path, or with `k` null to the all-in-one
 * dev worker where the kit is mounted.
 */
export async function send(k: Kit | null, url: string, init?: RequestInit): Promise<Response> {
  // "manual": a Fetcher-style call follows redirects by default, a browser test wants to see them
  const req = new Request(new URL(url, k?.origin ?? ORIGIN), { redirect: "manual", ...init });
  if (k === null) return exports.default.fetch(req);
  const ctx = createExecutionContext();
  const res = await workerFor(new URL(req.url).pathname).fetch!(req as never, k.env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

export interface SetCookie {
  name: string;
  value: string;
  attrs: string[];
}

export function setCookies(res: Response): SetCookie[] {
  // workerd has Headers.getSetCookie(); this version of the types does not declare it.
  return (res.headers as unknown as { getSetCookie(): string[] }).getSetCookie().map((c) => {
    const [pair, ...attrs] = c.split(";").map((s) => s.trim());
    const i = pair!.indexOf("=");
    return { name: pair!.slice(0, i), value: pair!.slice(i + 1), attrs };
  });
}

/**
 * A browser: keeps cookies, sends same-origin `Origin` on POSTs unless told otherwise. With `k`
 * null it talks to the all-in-one dev worker instead of the per-route workers.
 */
export class Browser {
  readonly jar = new Map<string, string>();
  constructor(readonly k: Kit | null) {}

  cookieHeader(): string {
    return [...this.jar].map(([n, v]) => `${n}=${v}`).join("; ");
  }

  async request(url: string, init: RequestInit & { origin?: string | null } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.jar.size) headers.set("Cookie", this.cookieHeader());
    const method = init.method ?? "GET";
    if (method === "POST" && init.origin !== null) headers.set("Origin", init.origin ?? this.k?.origin ?? ORIGIN);
    const res = await send(this.k, url, { ...init, method, headers });
    for (const c of setCookies(res)) {
      if (c.attrs.includes("Max-Age=0")) this.jar.delete(c.name);
      else this.jar.set(c.name, c.value);
    }
    return res;
  }

  get(url: string, headers?: HeadersInit): Promise<Response> {
    return this.request(url, headers ? { headers } : {});
  }

  post(url: string, init: RequestInit & { origin?: string | null } = {}): Promise<Response> {
    return this.request(url, { ...init, method: "POST" });
  }

  /** GET /auth/login: the state and PKCE challenge the kit sent to the service. */
  async startLogin(
    query = "",
  ): Promise<{ res: Response; location: URL; state: string; challenge: string | undefined }> {
    const res = await this.get(`/auth/login${query}`);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("Location")!);
    return {
      res,
      location,
      state: location.searchParams.get("state")!,
      challenge: location.searchParams.get("code_challenge") ?? undefined,
    };
  }

  /**
   * A whole login against our provider: /auth/login, a code minted for `phone` as the sign-in
   * pages would (with the kit's PKCE challenge), then /auth/callback. Returns the callback answer.
   */
  async login(
    phone: string,
    opts: { query?: string; mint?: MintOptions } = {},
  ): Promise<{ res: Response; plid: string; state: string }> {
    const start = await this.startLogin(opts.query ?? "");
    const { code, plid } = await mintFor(phone, {
      ...(start.challenge ? { codeChallenge: start.challenge } : {}),
      ...opts.mint,
    });
    const res = await this.get(`/auth/callback?${new URLSearchParams({ code, state: start.state })}`);
    return { res, plid, state: start.state };
  }
}

/** Refuses every global fetch (outbound network) for the test; returns the spy to inspect. */
export function denyOutbound() {
  return vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    throw new Error(`unexpected outbound fetch to ${new Request(input).url}`);
  });
}

/**
 * The real KV namespace, with the limit deployed KV enforces and the local one does not: one write
 * to a key per second, a delete counting as a write; a second within the second fails as deployed
 * KV's does (429).
 */
export function withKeyWriteLimit(kv: KVNamespace): KVNamespace {
  const last = new Map<string, number>();
  const limited =
    (method: "put" | "delete") =>
    (key: string, ...rest: unknown[]) => {
      const now = Date.now();
      const before = last.get(key);
      if (before !== undefined && now - before < 1000)
        return Promise.reject(new Error(`KV ${method.toUpperCase()} failed: 429 Too Many Requests`));
      last.set(key, now);
      return (kv[method] as (...a: unknown[]) => Promise<void>).call(kv, key, ...rest);
    };
  return intercept(kv, { put: limited("put"), delete: limited("delete") });
}
