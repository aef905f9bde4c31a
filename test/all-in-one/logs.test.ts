// Observability: one structured JSON log line per request, and no secrets, tokens, codes,
// phone numbers, names, ci or plids in any log line. The leak scan captures every console line of
// full runs with logging on (the sign-in pages through their form contract, docs/signin.md; the
// API: token, user/me, disconnect; the admin API) and fails if any seed or generated value appears.
import { env } from "../support/env";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import devWorker from "../../workers/all-in-one/index";
import { SEED_CLIENTS, SEED_SUBSCRIBERS } from "../../workers/all-in-one/seed";
import { ADMIN_TOKEN } from "../support/admin";
import { BASE, basic, DEMO, FORM, form, HONG, KIM, LEE, LIMITED, mintFor, SMITH } from "../support/helpers";
import { alertText, Browser, DEMO_CB, signInAll, throughCode, type Page } from "../support/signin";
import { Browser as KitBrowser, kit, ORIGIN as KIT_ORIGIN, send as kitSend, type Kit } from "../support/kit";
import { exports } from "cloudflare:workers";
import { createPkce, type ProviderFetcher } from "../../packages/kit/src/client";

const pending: Promise<unknown>[] = [];
const ctx = {
  waitUntil: (p: Promise<unknown>) => void pending.push(p),
  passThroughOnException() {},
  props: {},
} as unknown as ExecutionContext;
const logEnv = { ...env, LOG_REQUESTS: "true" };

let lines: string[] = [];
let sent = 0;

beforeEach(() => {
  lines = [];
  sent = 0;
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push(args.map((a) => (typeof a === "string" ? a : (JSON.stringify(a) ?? String(a)))).join(" "));
    });
  }
});

afterEach(async () => {
  await Promise.allSettled(pending.splice(0));
  vi.restoreAllMocks();
});

/** A request to the all-in-one worker with request logging on. */
async function send(path: string, init: RequestInit = {}): Promise<Response> {
  sent++;
  const res = await devWorker.fetch!(new Request(new URL(path, BASE), init) as never, logEnv as never, ctx);
  await Promise.allSettled(pending.splice(0));
  return res;
}

function adminSend(method: string, path: string, body?: unknown, type = "application/json"): Promise<Response> {
  return send(path, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": type },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The values that must never be logged, with a label saying what each is. */
function forbiddenValues(extra: Record<string, string>): Map<string, string> {
  const m = new Map<string, string>();
  for (const c of SEED_CLIENTS) m.set(c.secret, `secret of ${c.clientId}`);
  for (const s of SEED_SUBSCRIBERS) {
    m.set(s.phone, `phone of ${s.name}`);
    m.set(`${s.phone.slice(0, 3)}-${s.phone.slice(3, 7)}-${s.phone.slice(7)}`, `hyphenated phone of ${s.name}`);
    m.set(s.name, "a subscriber name");
    m.set(encodeURIComponent(s.name), "a URL-encoded subscriber name");
    m.set(s.ci, `ci of ${s.name}`);
    m.set(s.code, `one-time code of ${s.name}`);
    m.set(s.birth, `birth date of ${s.name}`);
  }
  m.set(ADMIN_TOKEN, "the admin token");
  m.set(env.SEAL_KEY, "the seal key");
  for (const [label, v] of Object.entries(extra)) m.set(v, label);
  return m;
}

function leaks(captured: string[], forbidden: Map<string, string>): string[] {
  const found: string[] = [];
  for (const line of captured) {
    for (const [value, label] of forbidden)
      if (value.length >= 4 && line.includes(value)) found.push(`${label} in: ${line.slice(0, 200)}`);
  }
  return found;
}

describe("the leak scan itself", () => {
  it("finds a planted value (so a clean result means something)", () => {
    const f = forbiddenValues({ "a token": "tok_abcdef" });
    const found = leaks([`{"route":"/x","cause":"saw ${HONG.phone}"}`, '{"t":"tok_abcdef"}', '{"ok":1}'], f);
    expect(found.some((l) => l.startsWith(`phone of ${HONG.name} in:`))).toBe(true);
    expect(found.some((l) => l.startsWith("a token in:"))).toBe(true);
    expect(found.some((l) => l.includes('{"ok":1}'))).toBe(false);
  });
});

describe("request log lines", () => {
  it("one JSON line per request: time, worker, route template, method, status, duration, request id (the caller's, echoed; else Cloudflare's cf-ray; else generated), client id", async () => {
    const { code } = await mintFor(HONG.phone);
    lines = [];
    const res = await send("/oauth2/token", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret), "X-Request-Id": "req-test-123" },
      body: form({ grant_type: "authorization_code", code }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Request-Id")).toBe("req-test-123");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      worker: "dev",
      route: "/oauth2/token",
      method: "POST",
      status: 200,
      requestId: "req-test-123",
      clientId: DEMO.clientId,
    });
    expect(Date.parse(line.time as string)).not.toBeNaN();
    expect(typeof line.durationMs).toBe("number");

    lines = [];
    const ray = await send("/v1/user/me", {
      headers: { Authorization: "Bearer nope", "X-Request-Id": "bad id with spaces", "cf-ray": "8f1e2d3c4b5a6978-ICN" },
    });
    expect(ray.headers.get("X-Request-Id")).toBeNull(); // not reflected; deployed, cf-ray names the answer
    expect(JSON.parse(lines[0]!)).toMatchObject({
      route: "/v1/user/me",
      status: 401,
      requestId: "8f1e2d3c4b5a6978-ICN",
      cause: "malformed token",
    });

    lines = [];
    await send("/v1/user/me", { headers: { Authorization: "Bearer nope" } });
    expect((JSON.parse(lines[0]!) as { requestId: string }).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("path parameters and query strings are logged as the route template only", async () => {
    const gone = {
      telcoCd: "S",
      phoneNo: "01011112222",
      name: "지울사람",
      gender: "M",
      birth: "1980-01-01",
      foreign: "L",
      ci: "CIgone" + "G".repeat(79) + "A==",
    };
    expect((await adminSend("POST", "/admin/directory/import", [gone])).status).toBe(200);
    lines = [];
    await adminSend("DELETE", `/admin/directory/${gone.phoneNo}?note=${encodeURIComponent(gone.name)}`);
    await adminSend("GET", `/admin/clients/${LIMITED.clientId}`);
    const [del, get] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(del).toMatchObject({ route: "/admin/directory/:phone", status: 200 });
    expect(get).toMatchObject({ route: "/admin/clients/:id", clientId: LIMITED.clientId });
    expect(lines.join("\n")).not.toContain(gone.phoneNo);
    expect(lines.join("\n")).not.toContain(encodeURIComponent(gone.name));
  });

  it("a path value that names no client is not logged as a client id (a number or a name typed there by mistake)", async () => {
    lines = [];
    for (const typed of ["01012345678", encodeURIComponent("홍길동")])
      for (const method of ["GET", "PATCH", "DELETE"])
        await adminSend(method, `/admin/clients/${typed}`, method === "PATCH" ? {} : undefined);
    await adminSend("POST", `/admin/clients/01012345678/disable`);
    expect(lines).toHaveLength(7);
    for (const l of lines) {
      const line = JSON.parse(l) as Record<string, unknown>;
      expect(line).toMatchObject({ route: expect.stringMatching(/^\/admin\/clients\/:id/) });
      expect([400, 404]).toContain(line.status);
      expect(line.clientId).toBeUndefined();
    }
    expect(lines.join("\n")).not.toContain("01012345678");
    expect(lines.join("\n")).not.toContain("홍길동");
    expect(lines.join("\n")).not.toContain(encodeURIComponent("홍길동"));
  });
});

describe("a client that goes away mid-upload", () => {
  /** A body that sends part of a form, then fails as a dropped connection does. */
  function abortedBody(): ReadableStream<Uint8Array> {
    return new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode("grant_type=authorization_code&code="));
        c.error(new Error("Network connection lost."));
      },
    });
  }

  it("is answered 400 invalid_request and logged as a client abort, never 500 server_error", async () => {
    for (const path of ["/oauth2/token", "/v1/user/disconnect", "/oauth2/authorize"]) {
      lines = [];
      const res = await send(path, {
        method: "POST",
        headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
        body: abortedBody(),
        duplex: "half",
      } as RequestInit);
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
      const line = JSON.parse(lines.find((l) => l.startsWith("{"))!) as Record<string, unknown>;
      expect(line).toMatchObject({ status: 400, cause: "client abort: body not received" });
    }
  });
});

describe("no secrets, tokens, codes, phone numbers, names, ci or plids in any log line", () => {
  it("over a full run: client registration, import, code exchange, user/me, refusals, rotation, disconnect, deletes", async () => {
    const extra: Record<string, string> = {};
    const imported = {
      telcoCd: "K",
      phoneNo: "01090901234",
      name: "로그검사",
      gender: "F",
      birth: "1995-06-07",
      foreign: "L",
      ci: "CIlogscan" + "Z".repeat(76) + "A==",
    };
    Object.assign(extra, {
      "imported phone": imported.phoneNo,
      "imported name": imported.name,
      "imported ci": imported.ci,
    });

    // operator: register a client, import a subscriber (JSON and CSV, with rejected rows)
    const created = (await (
      await adminSend("POST", "/admin/clients", {
        name: "Log Shop",
        redirect_uris: ["https://log.example/cb"],
        items: ["ci", "phoneNo", "name", "birthdate"],
        auto_login: true,
      })
    ).json()) as { client_id: string; client_secret: string };
    extra["new client secret"] = created.client_secret;
    expect((await adminSend("POST", "/admin/directory/import", [imported])).status).toBe(200);
    const csv = `telcoCd,phoneNo,name,gender,birth,foreign,ci\nX,01090905678,거절될이름,M,1980-01-01,L,${"R".repeat(40)}\n`;
    extra["rejected row's phone"] = "01090905678";
    extra["rejected row's name"] = "거절될이름";
    expect((await adminSend("POST", "/admin/directory/import", csv, "text/csv")).status).toBe(200);

    // app: codes exchanged (Basic, and secret in the query), user/me read twice, refusals
    const client = {
      clientId: created.client_id,
      redirectUris: ["https://log.example/cb"],
      items: ["ci", "phoneNo", "name", "birthdate"] as never[],
    };
    for (const [who, secretVia] of [
      [imported.phoneNo, "basic"],
      [HONG.phone, "query"],
    ] as const) {
      const { code, plid } = await mintFor(who, { client });
      extra[`code for ${who}`] = code;
      extra[`plid for ${who}`] = plid;
      const res =
        secretVia === "basic"
          ? await send("/oauth2/token", {
              method: "POST",
              headers: { ...FORM, Authorization: basic(created.client_id, created.client_secret) },
              body: form({ grant_type: "authorization_code", code, state: "log-state-xyz" }),
            })
          : await send(
              `/oauth2/token?${form({ client_id: created.client_id, client_secret: created.client_secret, grant_type: "authorization_code", code })}`,
              { method: "POST" },
            );
      expect(res.status).toBe(200);
      const { access_token } = (await res.json()) as { access_token: string };
      extra[`access token for ${who}`] = access_token;
      const me = await send("/v1/user/me", { headers: { Authorization: `Bearer ${access_token}` } });
      expect(me.status).toBe(200);
      expect((await send("/v1/user/me", { headers: { Authorization: `Bearer ${access_token}` } })).status).toBe(401);
      expect(
        (
          await send("/oauth2/token", {
            method: "POST",
            headers: { ...FORM, Authorization: basic(created.client_id, created.client_secret) },
            body: form({ grant_type: "authorization_code", code }),
          })
        ).status,
      ).toBe(500); // replay: refused, token revoked
      expect(
        (
          await send("/v1/user/disconnect", {
            method: "POST",
            headers: { ...FORM, Authorization: basic(created.client_id, created.client_secret) },
            body: form({ plid }),
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await send("/v1/user/disconnect", {
            method: "POST",
            headers: { ...FORM, Authorization: basic(created.client_id, created.client_secret) },
            body: form({ plid }),
          })
        ).status,
      ).toBe(400);
    }
    const wrong = "wrongSecretwrongSecretwrongSecret";
    extra["a wrong secret"] = wrong;
    expect(
      (
        await send("/oauth2/token", {
          method: "POST",
          headers: { ...FORM, Authorization: basic(created.client_id, wrong) },
          body: form({ grant_type: "authorization_code", code: "x".repeat(43) }),
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await send("/v1/user/disconnect", {
          method: "POST",
          headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
          body: form({ plid: "not-a-plid" }),
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await send(
          "/oauth2/authorize?" +
            form({
              response_type: "code",
              client_id: created.client_id,
              redirect_uri: "https://log.example/cb",
              state: "s",
            }),
        )
      ).status,
    ).toBe(200);

    // operator: rotate, read, audit, delete subscriber and client
    const rotated = (await (
      await adminSend("POST", `/admin/clients/${created.client_id}/rotate-secret`, { grace_seconds: 60 })
    ).json()) as { client_secret: string };
    extra["rotated secret"] = rotated.client_secret;
    expect((await adminSend("GET", `/admin/clients/${created.client_id}`)).status).toBe(200);
    expect((await adminSend("GET", "/admin/audit?limit=100")).status).toBe(200);
    const from = new Date(Date.now() - 3600_000).toISOString();
    const exported = await adminSend("GET", `/admin/audit/export?from=${from}`);
    expect(exported.status).toBe(200);
    await exported.arrayBuffer(); // read to the end (the export's log line); NDJSON, not a text type to workerd
    expect((await send("/admin/clients", { headers: { Authorization: `Bearer ${ADMIN_TOKEN}x` } })).status).toBe(401);
    expect((await adminSend("DELETE", `/admin/directory/${imported.phoneNo}`)).status).toBe(200);
    expect((await adminSend("DELETE", `/admin/clients/${created.client_id}`)).status).toBe(200);

    expect(lines).toHaveLength(sent); // one line per request, nothing else
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(leaks(lines, forbiddenValues(extra))).toEqual([]);
  });
});

describe("no secrets, codes or personal data in the log lines of the sign-in pages", () => {
  /**
   * Every hidden field value and cookie value the pages handed out: transaction ids, CSRF tokens,
   * device ids; not the consent page's `app`, the client id, which every line names by design.
   */
  function pageSecrets(b: Browser, pages: Page[], into: Record<string, string>): void {
    for (const [k, v] of b.cookies) into[`cookie ${k}`] = v;
    for (const p of pages)
      for (const [k, v] of Object.entries(p.form?.hidden ?? {}))
        if (v.length >= 8 && k !== "app") into[`hidden ${k}`] = v;
  }

  it("over sign-ins (test numbers, a real number by SMS, automatic login, wrong entries, cancel) and the code exchange", async () => {
    const extra: Record<string, string> = {};
    const b = new Browser({ vars: { LOG_REQUESTS: "true" } });
    const pages: Page[] = [];

    // 1. a test number opting in to automatic login, then the API
    const first = await signInAll(b, HONG, { prompt: "login", state: "state-secret-1" }, { autoLogin: "Y" });
    const code = first.searchParams.get("code")!;
    extra["code from the pages"] = code;
    const tokenRes = await send("/oauth2/token", {
      method: "POST",
      headers: { ...FORM, Authorization: basic(DEMO.clientId, DEMO.secret) },
      body: form({ grant_type: "authorization_code", code }),
    });
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    extra["access token"] = access_token;
    const me = (await (await send("/v1/user/me", { headers: { Authorization: `Bearer ${access_token}` } })).json()) as {
      user: { plid: string };
    };
    extra.plid = me.user.plid;

    // 2. automatic login: no page, a code at once
    const auto = await b.authorize({ state: "state-secret-2" });
    expect(auto.status).toBe(302);
    extra["automatic-login code"] = new URL(auto.res.headers.get("Location")!).searchParams.get("code")!;

    // 3. wrong entries: a name the directory does not know, a wrong code, then cancel
    const w = new Browser({ vars: { LOG_REQUESTS: "true" } });
    const id1 = await w.authorize({ prompt: "login" });
    pages.push(id1);
    const miss = await w.submit(id1, { telcoCd: KIM.telco, name: "없는이름", phoneNo: KIM.phone });
    extra["a wrong name"] = "없는이름";
    expect(alertText(miss.html)).toContain("통신 3사");
    pages.push(miss);
    const verify = await w.submit(miss, { telcoCd: KIM.telco, name: KIM.name, phoneNo: KIM.phone });
    pages.push(verify);
    const wrong = await w.submit(verify, { otp: "987654" });
    extra["a wrong code"] = "987654";
    pages.push(wrong);
    const cancelled = await w.submit(wrong, { cancel: "Y" });
    expect(cancelled.status).toBe(302);
    pageSecrets(w, pages, extra);

    // 4. a real (non-test) number: the code goes by SMS (the dev outbox), never to the log
    const real = {
      telcoCd: "S",
      phoneNo: "01098761234",
      name: "실제번호",
      gender: "M",
      birth: "1988-08-08",
      foreign: "L",
      ci: "CIrealnumber" + "Y".repeat(73) + "A==",
    };
    Object.assign(extra, { "real number": real.phoneNo, "real name": real.name, "real ci": real.ci });
    expect((await adminSend("POST", "/admin/directory/import", [real])).status).toBe(200);
    const r = new Browser({ vars: { LOG_REQUESTS: "true" } });
    const p1 = await r.authorize({ prompt: "login" });
    const p2 = await r.submit(p1, { telcoCd: real.telcoCd, name: real.name, phoneNo: "010-9876-1234" });
    expect(p2.form?.step).toBe("verify");
    const sms = await env.DB.prepare("SELECT body FROM sms_outbox WHERE phone = ? ORDER BY id DESC LIMIT 1")
      .bind(real.phoneNo)
      .first<{ body: string }>();
    const otp = /\d{6}/.exec(sms!.body)![0];
    extra["the SMS code"] = otp;
    const done = await r.submit(p2, { otp });
    const last = done.form?.step === "consent" ? await r.submit(done, { agree: "Y" }) : done;
    expect(last.status).toBe(302);
    pageSecrets(r, [p1, p2, done], extra);
    pageSecrets(b, [], extra);

    // 5. the other seed numbers through the pages too (their names, numbers and codes are scanned)
    for (const who of [SMITH, LEE]) {
      const x = new Browser({ vars: { LOG_REQUESTS: "true" } });
      expect(
        (await signInAll(x, who, { prompt: "login", redirect_uri: DEMO_CB })).searchParams.get("code"),
      ).toBeTruthy();
    }
    expect(
      (await throughCode(new Browser({ vars: { LOG_REQUESTS: "true" } }), KIM, { prompt: "login" })).status,
    ).toBeLessThan(400);

    const routes = new Set(lines.map((l) => (JSON.parse(l) as { route?: string }).route));
    expect(routes.has("/oauth2/authorize")).toBe(true);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(leaks(lines, forbiddenValues(extra))).toEqual([]);
  });
});

describe("no secrets, session ids, codes or personal data in the relying-party kit's log lines", () => {
  it("over browser logins, a replayed and a cancelled callback, the token proxy, /auth/me, a refused POST, logout and disconnect", async () => {
    const extra: Record<string, string> = {};
    // the provider in process (its own lines are off); the access tokens it hands the kit are scanned for too
    const provider: ProviderFetcher = {
      fetch: async (input, init) => {
        const req = new Request(input, init);
        const path = new URL(req.url).pathname;
        const res = await exports.default.fetch(req);
        if (path === "/oauth2/token" && res.status === 200) {
          const body = (await res.clone().json()) as { access_token: string };
          extra[`access token ${Object.keys(extra).length}`] = body.access_token;
        }
        return res;
      },
    };
    const k: Kit = kit({ LOG_REQUESTS: "true" }, provider);
    extra["the kit's client secret"] = k.env.RP_CLIENT_SECRET as string;
    extra["the kit's seal key"] = k.env.RP_SEAL_KEY as string;
    let requests = 0;
    const b = new KitBrowser(k);
    const counted = <T>(p: Promise<T>): Promise<T> => {
      requests++;
      return p;
    };
    const keep = (label: string) => {
      for (const [name, value] of b.jar) extra[`${label} cookie ${name}`] = value;
    };

    // a browser login whose return_to carries personal data in its query
    const start = await counted(
      b.startLogin(`?return_to=${encodeURIComponent(`/orders?phone=${HONG.phone}&name=${HONG.name}`)}`),
    );
    extra["state 1"] = start.state;
    const first = await mintFor(HONG.phone, { codeChallenge: start.challenge! });
    Object.assign(extra, { "code 1": first.code, "plid 1": first.plid });
    const callback = `/auth/callback?code=${first.code}&state=${start.state}`;
    expect((await counted(b.get(callback))).status).toBe(303);
    keep("after login 1");
    expect((await counted(b.get("/auth/me"))).status).toBe(200);
    expect((await counted(b.get(callback))).status).toBe(303); // replayed by its browser: the same session
    expect((await counted(new KitBrowser(k).get(callback))).status).toBe(400); // replayed elsewhere
    const cancelled = await counted(b.startLogin());
    extra["state 2"] = cancelled.state;
    expect(
      (
        await counted(
          b.get(`/auth/callback?error=access_denied&message=${encodeURIComponent(HONG.name)}&state=${cancelled.state}`),
        )
      ).status,
    ).toBe(400);
    expect((await counted(b.post("/auth/logout", { origin: "https://evil.example" }))).status).toBe(403);
    expect((await counted(b.post("/auth/logout"))).status).toBe(200);

    // the token proxy: a native app's code, its session token on /auth/me, the code replayed
    const pkce = await createPkce();
    const native = await mintFor(KIM.phone, { codeChallenge: pkce.challenge });
    Object.assign(extra, { "native code": native.code, "native plid": native.plid, "native verifier": pkce.verifier });
    const tokenRes = await counted(
      kitSend(k, "/auth/token", {
        method: "POST",
        headers: FORM,
        body: form({ code: native.code, code_verifier: pkce.verifier }),
      }),
    );
    expect(tokenRes.status).toBe(200);
    const { session_token } = (await tokenRes.json()) as { session_token: string };
    extra["session token"] = session_token;
    expect(
      (await counted(kitSend(k, "/auth/me", { headers: { Authorization: `Bearer ${session_token}` } }))).status,
    ).toBe(200);
    expect(
      (
        await counted(
          kitSend(k, "/auth/token", {
            method: "POST",
            headers: FORM,
            body: form({ code: native.code, code_verifier: (await createPkce()).verifier }),
          }),
        )
      ).status,
    ).toBe(400);

    // a second login, then disconnect
    const again = await counted(b.startLogin());
    extra["state 3"] = again.state;
    const second = await mintFor(LEE.phone, { codeChallenge: again.challenge! });
    Object.assign(extra, { "code 2": second.code, "plid 2": second.plid });
    expect((await counted(b.get(`/auth/callback?code=${second.code}&state=${again.state}`))).status).toBe(303);
    keep("after login 2");
    expect((await counted(b.post("/auth/disconnect", { origin: KIT_ORIGIN }))).status).toBe(200);

    expect(lines).toHaveLength(requests); // one line per kit request
    const parsed = lines.map((l) => JSON.parse(l) as { worker: string; route: string });
    expect(new Set(parsed.map((l) => l.worker))).toEqual(new Set(["rp-login", "rp-callback", "rp-session"]));
    expect(leaks(lines, forbiddenValues(extra))).toEqual([]);
  });
});
