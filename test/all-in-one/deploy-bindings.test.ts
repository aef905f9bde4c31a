// Least-privilege deployment ("a worker gets only the bindings it uses"): each route
// worker of wrangler.toml runs its success path with exactly the bindings its [env.<route>]
// declares (the others removed), and fails when any one of those is taken away, so the lists
// are neither short (a production 500) nor long (a binding the worker never touches).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { env } from "../support/env";
import { afterEach, describe, expect, it, vi } from "vitest";
import toml from "../../wrangler.toml?raw";
import adminWorker from "../../workers/admin/index";
import consoleWorker from "../../workers/consoles/index";
import developersWorker from "../../workers/consoles/developers";
import authorizeWorker from "../../workers/provider/authorize/index";
import disconnectWorker from "../../workers/provider/disconnect/index";
import rpCallbackWorker from "../../workers/kit/callback/index";
import rpLoginWorker from "../../workers/kit/login/index";
import rpSessionWorker from "../../workers/kit/session/index";
import tokenWorker from "../../workers/provider/token/index";
import userMeWorker from "../../workers/provider/user-me/index";
import { createPkce } from "../../packages/kit/src/client";
import { subscriberByPhone } from "../../workers/provider/store/directory/directory";
import { recordConsent } from "../support/store";
import { admin, ADMIN_TOKEN } from "../support/admin";
import { ciOf, importRows, lastCode } from "../support/directory";
import { basic, BASE, DEMO, FORM, form, HONG, KIM, LEE, mintFor, tokenFor } from "../support/helpers";
import { setCookies } from "../support/kit";
import { forgetClient } from "../../workers/provider/store/clients";
import { metricsStore } from "../../workers/provider/store/metrics/reach";

type Bindings = Record<string, unknown>;
type Worker = { fetch?: (req: never, env: never, ctx: ExecutionContext) => Response | Promise<Response> };

/** The text of an [env.X] section of wrangler.toml. */
function section(name: string): string {
  const start = toml.indexOf(`[env.${name}]`);
  expect(start, `[env.${name}] in wrangler.toml`).toBeGreaterThanOrEqual(0);
  const rest = toml.slice(start + 1);
  const end = rest.search(/^\[env\./m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The binding names an [env.X] section of wrangler.toml declares (D1, KV, R2, services, Durable Objects). */
function declaredBindings(name: string): string[] {
  const section_ = section(name);
  const names = [...section_.matchAll(/\bbinding\s*=\s*"([A-Z_][A-Z0-9_]*)"/g)].map((m) => m[1]!);
  for (const block of section_.matchAll(/durable_objects\.bindings\s*=\s*\[([^\]]*)\]/g)) {
    names.push(...[...block[1]!.matchAll(/\bname\s*=\s*"([A-Z_][A-Z0-9_]*)"/g)].map((m) => m[1]!));
  }
  return names.sort();
}

/**
 * Bindings only the one-time store's object uses, in the worker that hosts it (its flush writes the
 * audit trail to R2): that worker declares them though its own routes never touch them.
 */
const STORE_OBJECT_BINDINGS = ["AUDIT", "METRICS"];

/**
 * The WebAuthn verifier's binding: only a passkey ceremony reaches it (test/provider/signin/passkeys/ runs
 * them through it), not a success path here; every worker that runs the sign-in steps declares it.
 */
const PASSKEY_BINDINGS = ["WEBAUTHN"];

/** Whether the env hosts the one-time store (its ONE_TIME binding names no other worker's script). */
function hostsStore(name: string): boolean {
  const block = /durable_objects\.bindings\s*=\s*\[([^\]]*)\]/.exec(section(name))?.[1] ?? "";
  return /name\s*=\s*"ONE_TIME"/.test(block) && !block.includes("script_name");
}

/** Every binding of the test env (objects: D1, KV, R2, Durable Object namespaces, services). */
const ALL_BINDINGS = Object.keys(env).filter((k) => {
  const v = (env as unknown as Bindings)[k];
  return typeof v === "object" && v !== null && !Array.isArray(v);
});

/** The test env's variables and secrets, with only `keep` of its bindings. */
function envWith(keep: string[]): Bindings {
  const e: Bindings = { ...(env as unknown as Bindings) };
  for (const b of ALL_BINDINGS) if (!keep.includes(b)) delete e[b];
  return e;
}

async function run(worker: Worker, bindings: Bindings, url: string, init?: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch!(
    new Request(new URL(url, BASE), { redirect: "manual", ...init }) as never,
    bindings as never,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

/** The kit reaches the provider by global fetch to PROVIDER_BASE_URL (no service binding in these envs). */
function providerByFetch(): void {
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (new URL(req.url).origin !== BASE) throw new Error(`unexpected outbound fetch to ${req.url}`);
    return exports.default.fetch(req);
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

let consoleRuns = 0;

/** Per route env: the worker and one success path, true when it succeeded with `bindings`. */
const ROUTES: Record<string, (bindings: Bindings) => Promise<boolean>> = {
  authorize: async (b) => {
    forgetClient(DEMO.clientId);
    const q = form({
      response_type: "code",
      client_id: DEMO.clientId,
      redirect_uri: DEMO.redirectUris[0]!,
      state: "s",
    });
    // with a device cookie: the automatic-login grant is looked up (the directory), none is found,
    // and the first page is drawn; its number opens the sign-in (the directory, the one-time store)
    const device = `__Host-pl_auto=${"A".repeat(43)}`;
    // with the SMS-abuse guard on: the identify step reads the app's guard object
    b = { ...b, SMS_GUARD: "on", GUARD_CACHE_SECONDS: "0" };
    const page = await run(authorizeWorker, b, `/oauth2/authorize?${q}`, { headers: { Cookie: device } });
    if (page.status !== 200) return false;
    const html = await page.text();
    const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? "";
    const binding = (page.headers.get("Set-Cookie") ?? "").split(";")[0]!;
    const step = await run(authorizeWorker, b, "/oauth2/authorize", {
      method: "POST",
      headers: { ...FORM, Cookie: `${device}; ${binding}` },
      body: form({
        tx: hidden("tx"),
        csrf: hidden("csrf"),
        telcoCd: HONG.telco,
        name: HONG.name,
        phoneNo: HONG.phone,
        carrierTerms: "Y",
      }),
    });
    return step.status === 200 && (await step.text()).includes('data-step="verify"');
  },
  console: async (b) => {
    // an admin operator (a new person each run: a number's next code waits) signs in with the
    // service's steps (the one-time store, the directory, D1's SMS outbox) and reads the audit page (R2)
    const phone = `0108${String(++consoleRuns).padStart(7, "0")}`;
    await importRows([
      {
        telcoCd: "K",
        phoneNo: phone,
        name: "운영",
        gender: "F",
        birth: "1980-01-01",
        foreign: "L",
        ci: ciOf(consoleRuns),
      },
    ]);
    await admin("POST", "/admin/operators", { json: { phone, role: "admin" } });
    const first = await run(consoleWorker, b, "/console");
    if (first.status !== 200) return false;
    let html = await first.text();
    const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? "";
    const browser = (first.headers.get("Set-Cookie") ?? "").split(";")[0]!;
    const step = await run(consoleWorker, b, "/console", {
      method: "POST",
      headers: { ...FORM, Cookie: browser },
      body: form({
        tx: hidden("tx"),
        csrf: hidden("csrf"),
        telcoCd: "K",
        name: "운영",
        phoneNo: phone,
        carrierTerms: "Y",
      }),
    });
    html = await step.text();
    const code = await run(consoleWorker, b, "/console", {
      method: "POST",
      headers: { ...FORM, Cookie: browser },
      body: form({ tx: hidden("tx"), csrf: hidden("csrf"), otp: await lastCode(phone) }),
    });
    const session = setCookies(code).find((c) => c.name === "__Host-pl_console");
    if (code.status !== 303 || !session) return false;
    const cookie = { Cookie: `__Host-pl_console=${session.value}` };
    const audit = await run(consoleWorker, b, "/console/audit", { headers: cookie });
    // the overview reads the metrics; an app's page its guard scopes
    const overview = await run(consoleWorker, b, "/console", { headers: cookie });
    const app = await run(consoleWorker, b, `/console/apps/${DEMO.clientId}`, { headers: cookie });
    return (
      app.status === 200 &&
      audit.status === 200 &&
      (await audit.text()).includes('action="/console/audit/export"') &&
      overview.status === 200 &&
      (await overview.text()).includes('id="metrics-charts"')
    );
  },
  developers: async (b) => {
    // a developer (a new person each run) signs in with the service's steps and reads their apps
    const phone = `0107${String(++consoleRuns).padStart(7, "0")}`;
    await importRows([
      {
        telcoCd: "K",
        phoneNo: phone,
        name: "개발",
        gender: "F",
        birth: "1990-01-01",
        foreign: "L",
        ci: ciOf(1000 + consoleRuns),
      },
    ]);
    const first = await run(developersWorker, b, "/developers");
    if (first.status !== 200) return false;
    let html = await first.text();
    const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? "";
    const browser = (first.headers.get("Set-Cookie") ?? "").split(";")[0]!;
    const step = await run(developersWorker, b, "/developers", {
      method: "POST",
      headers: { ...FORM, Cookie: browser },
      body: form({
        tx: hidden("tx"),
        csrf: hidden("csrf"),
        telcoCd: "K",
        name: "개발",
        phoneNo: phone,
        carrierTerms: "Y",
      }),
    });
    html = await step.text();
    const code = await run(developersWorker, b, "/developers", {
      method: "POST",
      headers: { ...FORM, Cookie: browser },
      body: form({ tx: hidden("tx"), csrf: hidden("csrf"), otp: await lastCode(phone) }),
    });
    const session = setCookies(code).find((c) => c.name === "__Host-pl_developer");
    if (code.status !== 303 || !session) return false;
    const cookie = `__Host-pl_developer=${session.value}`;
    const home = await run(developersWorker, b, "/developers", { headers: { Cookie: cookie } });
    const csrf = /<meta name="csrf" content="([^"]+)">/.exec(await home.text())?.[1] ?? "";
    // an app registered (D1), and its figures read (the metrics)
    const made = await run(developersWorker, b, "/developers/api/apps", {
      method: "POST",
      headers: { Cookie: cookie, "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ name: "Shop", redirect_uris: ["https://shop.example/callback"], items: ["name"] }),
    });
    if (made.status !== 201) return false;
    const { client_id } = (await made.json()) as { client_id: string };
    const stats = await run(developersWorker, b, `/developers/apps/${client_id}/stats`, {
      headers: { Cookie: cookie },
    });
    return home.status === 200 && stats.status === 200;
  },
  token: async (b) => {
    forgetClient(DEMO.clientId);
    const { code } = await mintFor(HONG.phone);
    const res = await run(tokenWorker, b, "/oauth2/token", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
      body: form({ grant_type: "authorization_code", code }),
    });
    return res.status === 200;
  },
  "user-me": async (b) => {
    const { token } = await tokenFor(KIM.phone);
    forgetClient(DEMO.clientId);
    // the read is answered, and counted in the metrics (docs/operations.md "Metrics")
    const reads = async () => {
      const rows = (await metricsStore(env).read("1h", 0, Date.now() + 3_600_000, DEMO.clientId, ["userme.ok"])) as [
        number,
        string,
        number,
      ][];
      return rows.reduce((a, r) => a + r[2], 0);
    };
    const before = await reads();
    const res = await run(userMeWorker, { ...b, METRICS_FLUSH_SECONDS: "0" }, "/v1/user/me", {
      headers: { Authorization: `Bearer ${token}` },
    });
    return res.status === 200 && (await reads()) === before + 1;
  },
  disconnect: async (b) => {
    const { plid } = await mintFor(LEE.phone);
    forgetClient(DEMO.clientId);
    const res = await run(disconnectWorker, b, "/v1/user/disconnect", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
      body: form({ plid }),
    });
    return res.status === 200;
  },
  admin: async (b) => {
    const auth = { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" };
    const created = await run(adminWorker, b, "/admin/clients", {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "Least", redirect_uris: ["https://least.example/cb"] }),
    });
    const audit = await run(adminWorker, b, "/admin/audit?limit=1", { headers: auth });
    const metrics = await run(adminWorker, b, "/admin/metrics?step=1h", { headers: auth });
    if (created.status !== 201 || audit.status !== 200 || metrics.status !== 200) return false;
    // deleting a client with a user ends that user's plid in the one-time store
    const { client_id } = (await created.json()) as { client_id: string };
    const guard = await run(adminWorker, b, `/admin/clients/${client_id}/guard`, { headers: auth });
    if (guard.status !== 200) return false;
    const sub = await subscriberByPhone(env, KIM.phone);
    await recordConsent(env, client_id, sub!.id, ["gender"]);
    const removed = await run(adminWorker, b, `/admin/clients/${client_id}`, { method: "DELETE", headers: auth });
    return removed.status === 200;
  },
  "rp-login": async (b) => (await run(rpLoginWorker, b, "/auth/login")).status === 302,
  "rp-callback": async (b) => {
    providerByFetch();
    // the login starts at rp-login with its own bindings, as deployed
    const login = await run(rpLoginWorker, envWith(declaredBindings("rp-login")), "/auth/login");
    const location = new URL(login.headers.get("Location")!);
    const { code } = await mintFor(HONG.phone, { codeChallenge: location.searchParams.get("code_challenge")! });
    const cookie = setCookies(login)
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
    const res = await run(
      rpCallbackWorker,
      b,
      `/auth/callback?code=${code}&state=${location.searchParams.get("state")}`,
      { headers: { Cookie: cookie } },
    );
    return res.status === 303 && setCookies(res).some((c) => c.name === "__Host-rp_session");
  },
  "rp-session": async (b) => {
    providerByFetch();
    const pkce = await createPkce();
    const { code } = await mintFor(KIM.phone, { codeChallenge: pkce.challenge });
    const token = await run(rpSessionWorker, b, "/auth/token", {
      method: "POST",
      headers: FORM,
      body: form({ code, code_verifier: pkce.verifier }),
    });
    if (token.status !== 200) return false;
    const { session_token } = (await token.json()) as { session_token: string };
    return (
      (await run(rpSessionWorker, b, "/auth/me", { headers: { Authorization: `Bearer ${session_token}` } })).status ===
      200
    );
  },
};

describe("each route worker's bindings in wrangler.toml (least privilege)", () => {
  it("every [env.<route>] of wrangler.toml is covered here", () => {
    const envs = [...toml.matchAll(/^\[env\.([A-Za-z0-9_-]+)\]/gm)]
      .map((m) => m[1]!)
      .filter((n) => n !== "single" && n !== "webauthn");
    expect(envs.sort()).toEqual(Object.keys(ROUTES).sort());
  });

  it("the WebAuthn verifier declares no binding; every worker that runs the sign-in steps binds to it", () => {
    expect(declaredBindings("webauthn")).toEqual([]);
    const envs = [...toml.matchAll(/^\[env\.([A-Za-z0-9_-]+)\]/gm)].map((m) => m[1]!);
    const binding = envs.filter((n) => declaredBindings(n).includes("WEBAUTHN"));
    expect(binding.sort()).toEqual(["authorize", "console", "developers", "single"]);
  });

  it.each(Object.keys(ROUTES))("%s works with exactly its declared bindings, and needs each of them", async (name) => {
    const declared = declaredBindings(name);
    expect(declared.length).toBeGreaterThan(0);
    for (const b of declared) expect(ALL_BINDINGS, `${name} declares ${b}`).toContain(b);
    expect(await ROUTES[name]!(envWith(declared)), `${name} with ${declared.join(", ")}`).toBe(true);
    const quiet = vi.spyOn(console, "log").mockImplementation(() => {});
    const usedByRoutes = (
      hostsStore(name) ? declared.filter((b) => !STORE_OBJECT_BINDINGS.includes(b)) : declared
    ).filter((b) => !PASSKEY_BINDINGS.includes(b));
    for (const b of usedByRoutes) {
      const without = declared.filter((x) => x !== b);
      expect(await ROUTES[name]!(envWith(without)).catch(() => false), `${name} without ${b}`).toBe(false);
      vi.restoreAllMocks();
      vi.spyOn(console, "log").mockImplementation(() => {});
    }
    quiet.mockRestore();
  });

  it("every worker hosting the one-time store declares what its object uses (the audit bucket); no other route worker but the admin API binds it", () => {
    const envs = [...toml.matchAll(/^\[env\.([A-Za-z0-9_-]+)\]/gm)].map((m) => m[1]!);
    const hosts = envs.filter(hostsStore);
    expect(hosts.sort()).toEqual(["authorize", "single"]);
    for (const name of hosts) for (const b of STORE_OBJECT_BINDINGS) expect(declaredBindings(name), name).toContain(b);
    // the top level (npm start, tests) hosts it too
    const top = toml.slice(0, toml.search(/^\[env\./m));
    expect(top).toMatch(/\[\[r2_buckets\]\]\s*binding\s*=\s*"AUDIT"/);
    const binding = envs.filter((n) => declaredBindings(n).includes("AUDIT"));
    expect(binding.sort()).toEqual(["admin", "authorize", "console", "single"]);
  });
});
