// A scripted stand-in for the login service: a test decides exactly what each code's
// /v1/user/me answers (spec §2.1 modes, the reference's shapes) and when that answer reaches the
// kit (`afterRead` runs once the answer is decided, before the kit receives it).
import { SignJWT } from "jose";
import { encryptField, randomToken } from "../../workers/core/crypto";
import type { ProviderFetcher } from "../../packages/kit/src/client";
import { Browser } from "../support/kit";
import { env } from "../support/env";

export const SECRET = "demoSecret0123456789abcdefABCDEF"; // vitest.config.ts RP_CLIENT_SECRET

export const PERSON = {
  ci: "CI-of-the-person-0001",
  phoneNo: "01012345678",
  name: "홍길동",
  gender: "M",
  agegroup: "30",
  birthday: "0315",
  birthdate: "900315",
  foreign: "L",
  telcoCd: "S",
};

const ENCRYPTED = new Set(["ci", "phoneNo", "name", "birthday", "birthdate"]);

/** A full record (spec §2.1 mode 1), encrypted items encrypted. */
export async function fullRecord(
  plid: string,
  flags: { autoLoginYn: string; autoStatusCheck: string },
): Promise<Record<string, string>> {
  const user: Record<string, string> = { plid };
  for (const [k, v] of Object.entries(PERSON)) user[k] = ENCRYPTED.has(k) ? await encryptField(SECRET, v) : v;
  return { ...user, ...flags };
}

/** A mode-2 record with every identity item present and empty (spec §2.1 mode 2). */
export function emptyRecord(plid: string): Record<string, string> {
  const user: Record<string, string> = { plid };
  for (const k of Object.keys(PERSON)) user[k] = "";
  return { ...user, autoLoginYn: "Y", autoStatusCheck: "N" };
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

interface Issued {
  user: Record<string, string>;
  used: boolean;
  afterRead?: () => Promise<void>;
}

export class ScriptedProvider {
  readonly codes = new Map<string, Issued>();
  readonly disconnected: string[] = [];
  readonly fetcher: ProviderFetcher = {
    fetch: async (input, init) => {
      const req = new Request(input, init);
      const url = new URL(req.url);
      if (url.pathname === "/oauth2/token") {
        const code = new URLSearchParams(new TextDecoder().decode(await req.arrayBuffer())).get("code") ?? "";
        const e = this.codes.get(code);
        if (!e || e.used) return json({ error: "invalid_grant", message: "Invalid authorization code" }, 400);
        e.used = true;
        return json({ access_token: `at.${code}`, token_type: "bearer", expires_in: 600 });
      }
      if (url.pathname === "/v1/user/me") {
        const code = (req.headers.get("Authorization") ?? "").replace(/^Bearer at\./, "");
        const e = this.codes.get(code);
        if (!e) return json({ error: "authentication_failed", message: "Authentication failed" }, 401);
        const body = { code: "0000", error: "success", message: "ok", user: e.user };
        if (e.afterRead) await e.afterRead();
        return json(body);
      }
      if (url.pathname === "/v1/user/disconnect") {
        this.disconnected.push(
          new URLSearchParams(new TextDecoder().decode(await req.arrayBuffer())).get("plid") ?? "",
        );
        return json({ code: "0000", error: "success", message: "ok" });
      }
      return json({ error: "not_found", message: "not found" }, 404);
    },
  };

  /** A code whose user record is `user`. */
  issue(user: Record<string, string>, afterRead?: () => Promise<void>): string {
    const code = randomToken(16);
    this.codes.set(code, { user, used: false, ...(afterRead ? { afterRead } : {}) });
    return code;
  }
}

/** /auth/login then /auth/callback with a code whose user record is `user`. */
export async function loginAs(
  b: Browser,
  p: ScriptedProvider,
  user: Record<string, string>,
  afterRead?: () => Promise<void>,
  query = "",
): Promise<Response> {
  const start = await b.startLogin(query);
  const code = p.issue(user, afterRead);
  return b.get(`/auth/callback?${new URLSearchParams({ code, state: start.state })}`);
}

/** A gate a scripted answer waits at: `reached` once it is there, `open()` lets it go on. */
export function gate(): { wait: () => Promise<void>; open: () => void; reached: Promise<void> } {
  let open!: () => void;
  let reach!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (reach = r));
  return {
    wait: async () => {
      reach();
      await opened;
    },
    open,
    reached,
  };
}

/** base64url without padding, and a JSON value as a JWS part. */
export const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
export const part = (v: unknown) => b64url(new TextEncoder().encode(JSON.stringify(v)));

/** The service's signed plid-deleted event for the dev kit (docs/events.md), HS256 under the client secret. */
export async function signedEvent(plid: string): Promise<string> {
  return new SignJWT({
    iss: "http://localhost:8787",
    aud: "demo-client",
    iat: Math.floor(Date.now() / 1000),
    jti: crypto.randomUUID(),
    events: { "urn:phone-login:event:plid-deleted": { plid, reason: "user_terminated" } },
  })
    .setProtectedHeader({ alg: "HS256", typ: "secevent+jwt" })
    .sign(new TextEncoder().encode(env.RP_CLIENT_SECRET as string));
}
