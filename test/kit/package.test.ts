// The package's API (packages/kit/README.md): createPhoneLogin's fetch under a base path,
// getSession in the app's own route, the hooks for an app's user table, the events switch, the
// options named in configuration errors, and the Hono adapter (a Hono app as an app writes it).
import { env } from "../support/env";
import { exports } from "cloudflare:workers";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPhoneLogin, type KitUser, type PhoneLoginOptions } from "../../packages/kit/src/index";
import { phoneLogin, phoneLoginApp, withSession } from "../../packages/kit/src/hono";
import { HONG, KIM, mintFor } from "../support/helpers";
import { setCookies, storeWith } from "../support/kit";
import { signedEvent } from "./scripted-provider";

afterEach(() => {
  vi.restoreAllMocks();
});

const ORIGIN = "http://localhost:8787";

/** The app's own env, with its own binding names (not the kit's RP_* variables). */
interface AppEnv {
  LOGIN_KV: KVNamespace;
  PHONE_LOGIN_CLIENT_SECRET: string;
  PHONE_LOGIN_SEAL_KEY: string;
}

const appEnv: AppEnv = {
  LOGIN_KV: env.RP_KV,
  PHONE_LOGIN_CLIENT_SECRET: env.RP_CLIENT_SECRET as string,
  PHONE_LOGIN_SEAL_KEY: env.RP_SEAL_KEY as string,
};

/** The kit against our provider, in process (the all-in-one worker), for the seed's demo-client. */
function options(over: Partial<PhoneLoginOptions<AppEnv>> = {}): PhoneLoginOptions<AppEnv> {
  return {
    providerUrl: ORIGIN,
    clientId: "demo-client",
    redirectUri: `${ORIGIN}${over.basePath ?? "/auth"}/callback`,
    kv: (e) => e.LOGIN_KV,
    provider: () => ({ fetch: (input, init) => exports.default.fetch(new Request(input, init)) }),
    logRequests: false,
    ...over,
  };
}

type Handler = (req: Request) => Promise<Response> | Response;

/** A browser: a cookie jar, same-origin `Origin` on POSTs, redirects not followed. */
class Jar {
  readonly cookies = new Map<string, string>();
  constructor(private readonly handler: Handler) {}

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("Cookie", [...this.cookies].map(([n, v]) => `${n}=${v}`).join("; "));
    if (init.method === "POST") headers.set("Origin", ORIGIN);
    const res = await this.handler(new Request(new URL(path, ORIGIN), { redirect: "manual", ...init, headers }));
    for (const c of setCookies(res)) {
      if (c.attrs.includes("Max-Age=0")) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  /** A whole login: {basePath}/login, a code minted as the sign-in pages would, the callback. */
  async login(basePath: string, phone: string, returnTo = "/"): Promise<{ res: Response; plid: string }> {
    const start = await this.request(`${basePath}/login?return_to=${encodeURIComponent(returnTo)}`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get("Location")!);
    const { code, plid } = await mintFor(phone, { codeChallenge: authorize.searchParams.get("code_challenge")! });
    const state = authorize.searchParams.get("state")!;
    const res = await this.request(`${basePath}/callback?${new URLSearchParams({ code, state })}`);
    return { res, plid };
  }
}

/** A plain-fetch app as the package README writes it: the kit's routes, then the app's own. */
function plainApp(kit: ReturnType<typeof createPhoneLogin<AppEnv>>): Handler {
  return async (req) => {
    if (kit.handles(req)) return kit.fetch(req, appEnv);
    if (new URL(req.url).pathname === "/account") {
      const user = await kit.getSession(req, appEnv);
      return user
        ? Response.json({ hello: user.name, plid: user.plid })
        : new Response("log in first", { status: 401 });
    }
    return new Response("app home");
  };
}

describe("createPhoneLogin", () => {
  it("answers the kit's routes under its base path; getSession reads the person in the app's own route", async () => {
    const kit = createPhoneLogin(options({ basePath: "/login/phone" }));
    const b = new Jar(plainApp(kit));
    expect((await b.request("/account")).status).toBe(401);
    const start = await b.request("/login/phone/login");
    const authorize = new URL(start.headers.get("Location")!);
    expect(authorize.origin + authorize.pathname).toBe(`${ORIGIN}/oauth2/authorize`);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${ORIGIN}/login/phone/callback`);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    const { res, plid } = await b.login("/login/phone", HONG.phone, "/account");
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/account");
    const account = await b.request("/account");
    expect(await account.json()).toEqual({ hello: HONG.name, plid });
    const me = (await (await b.request("/login/phone/me")).json()) as KitUser;
    expect(me).toMatchObject({ plid, name: HONG.name, phoneNo: HONG.phone });
    // the default base path is not the kit's here: the app's own route answers it
    expect(await (await b.request("/auth/login")).text()).toBe("app home");
  });

  it("keeps its logins in the store when the Worker binds one as PHONE_LOGIN_STORE (the default of `store`): one call checks and claims the state", async () => {
    const calls: string[] = [];
    const PHONE_LOGIN_STORE = storeWith((method) => void calls.push(method));
    const kit = createPhoneLogin(options());
    const withStore = { ...appEnv, PHONE_LOGIN_STORE };
    const app: Handler = async (req) => {
      if (kit.handles(req)) return kit.fetch(req, withStore);
      const user = await kit.getSession(req, withStore);
      return user ? Response.json({ hello: user.name }) : new Response("log in first", { status: 401 });
    };
    const b = new Jar(app);
    const { res } = await b.login("/auth", KIM.phone, "/account");
    expect(res.status).toBe(303);
    expect(await (await b.request("/account")).json()).toEqual({ hello: KIM.name });
    expect(calls).toEqual(["putState", "claimState", "indexSession", "settle"]);
  });

  it("answers anything else under the base path as the kit does: 404, 405 with Allow", async () => {
    const kit = createPhoneLogin(options());
    const notFound = await kit.fetch(new Request(`${ORIGIN}/auth/nope`), appEnv);
    expect(notFound.status).toBe(404);
    expect(((await notFound.json()) as { error: string }).error).toBe("not_found");
    const wrongMethod = await kit.fetch(new Request(`${ORIGIN}/auth/logout`), appEnv);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("Allow")).toBe("POST");
  });

  it("keeps only the items the app asked for", async () => {
    const kit = createPhoneLogin(options({ items: ["name", "ci"] }));
    const b = new Jar(plainApp(kit));
    await b.login("/auth", KIM.phone);
    const user = await kit.getSession(new Request(ORIGIN, { headers: { Cookie: cookieHeader(b) } }), appEnv);
    expect(Object.keys(user!).sort()).toEqual(["autoLoginYn", "autoStatusCheck", "ci", "loginAt", "name", "plid"]);
  });

  it("calls onLogin with the person after the session is made, and onLogout when it ends", async () => {
    const seen: string[] = [];
    const kit = createPhoneLogin(
      options({
        onLogin: (user, { via, env: e, request }) => {
          expect(e).toBe(appEnv);
          expect(new URL(request.url).pathname).toBe("/auth/callback");
          seen.push(`login ${via} ${user.name} ${user.plid}`);
        },
        onLogout: ({ plid, reason }) => void seen.push(`${reason} ${plid}`),
      }),
    );
    const b = new Jar(plainApp(kit));
    const { plid } = await b.login("/auth", HONG.phone);
    expect((await b.request("/auth/logout", { method: "POST" })).status).toBe(200);
    await b.login("/auth", HONG.phone);
    expect((await b.request("/auth/disconnect", { method: "POST" })).status).toBe(200);
    expect(seen).toEqual([
      `login callback ${HONG.name} ${plid}`,
      `logout ${plid}`,
      `login callback ${HONG.name} ${plid}`,
      `disconnect ${plid}`,
    ]);
  });

  it("an onLogin that throws fails the login and leaves no session", async () => {
    const kit = createPhoneLogin(
      options({
        onLogin: () => {
          throw new Error("user table unavailable");
        },
      }),
    );
    const b = new Jar(plainApp(kit));
    const { res } = await b.login("/auth", HONG.phone);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toBe("server_error");
    expect((await b.request("/account")).status).toBe(401);
  });

  it("takes the service's signed events, or answers 404 with the receiver off", async () => {
    const ended: string[] = [];
    const on = createPhoneLogin(options({ onLogout: ({ plid, reason }) => void ended.push(`${reason} ${plid}`) }));
    const b = new Jar(plainApp(on));
    const { plid } = await b.login("/auth", HONG.phone);
    const event = await signedEvent(plid);
    const post = (kit: typeof on) =>
      kit.fetch(new Request(`${ORIGIN}/auth/events`, { method: "POST", body: event }), appEnv);
    const off = createPhoneLogin(options({ events: false }));
    const refused = await post(off);
    expect(refused.status).toBe(404);
    expect((await off.fetch(new Request(`${ORIGIN}/auth/events`), appEnv)).status).toBe(404);
    expect((await b.request("/account")).status).toBe(200); // nothing ended
    expect((await post(on)).status).toBe(202);
    expect(ended).toEqual([`deleted ${plid}`]);
    expect((await b.request("/account")).status).toBe(401);
  });

  it("names the option, not a variable, when one is missing or malformed (500 server_error on the wire)", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const cases: [Partial<PhoneLoginOptions<AppEnv>>, string][] = [
      [{ providerUrl: "http://login.example.com" }, "providerUrl"],
      [{ ttl: { session: 10 } }, "ttl.session"],
      [{ sealKey: "short" }, "sealKey"],
      [{ kv: () => undefined as unknown as KVNamespace }, "kv"],
      [{ store: () => ({}) as never }, "store"],
    ];
    for (const [over, option] of cases) {
      const res = await createPhoneLogin(options(over)).fetch(new Request(`${ORIGIN}/auth/login`), appEnv);
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: string }).error).toBe("server_error");
      expect(String(log.mock.lastCall?.[0])).toContain(`configuration: ${option}`);
    }
    const noSecret = createPhoneLogin(options());
    const res = await noSecret.fetch(new Request(`${ORIGIN}/auth/login`), { ...appEnv, PHONE_LOGIN_CLIENT_SECRET: "" });
    expect(res.status).toBe(500);
    expect(String(log.mock.lastCall?.[0])).toContain("clientSecret (default env.PHONE_LOGIN_CLIENT_SECRET)");
    expect(() => createPhoneLogin(options({ basePath: "/auth/" }))).toThrow(/basePath/);
  });

  it("refuses plain http unless the app itself is configured on http://localhost", async () => {
    const kit = createPhoneLogin({ ...options(), redirectUri: "https://app.example/auth/callback" });
    const page = await kit.fetch(new Request("http://app.example/auth/login"), appEnv);
    expect(page.status).toBe(308);
    expect(page.headers.get("Location")).toBe("https://app.example/auth/login");
  });
});

describe("phone-login-kit/hono", () => {
  /** A Hono app as the package README writes it. */
  function honoApp(mount: "middleware" | "sub-app") {
    const kit = createPhoneLogin(options());
    const app = new Hono<{ Bindings: AppEnv }>();
    if (mount === "middleware") app.use(phoneLogin(kit));
    else app.route(kit.basePath, phoneLoginApp(kit));
    app.get("/account", withSession(kit), (c) => {
      const user = c.var.session;
      return user ? c.json({ hello: user.name, plid: user.plid }) : c.text("log in first", 401);
    });
    return (req: Request) => app.fetch(req, appEnv);
  }

  for (const mount of ["middleware", "sub-app"] as const) {
    it(`logs in through the kit mounted as a ${mount}, and withSession gives the app's route the person`, async () => {
      const b = new Jar(honoApp(mount));
      expect((await b.request("/account")).status).toBe(401);
      const { res, plid } = await b.login("/auth", HONG.phone, "/account");
      expect(res.status).toBe(303);
      expect(res.headers.get("Set-Cookie")).toContain("__Host-rp_session=");
      expect(await (await b.request("/account")).json()).toEqual({ hello: HONG.name, plid });
      expect((await b.request("/auth/logout", { method: "POST" })).status).toBe(200);
      expect((await b.request("/account")).status).toBe(401);
    });
  }
});

function cookieHeader(b: Jar): string {
  return [...b.cookies].map(([n, v]) => `${n}=${v}`).join("; ");
}
