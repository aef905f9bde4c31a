// The benchmark's scenarios. Each names the worker it loads, how one request looks, and
// how to prepare single-use values (codes, tokens) so that every request spends a distinct one.

import { Pool } from "./load.mjs";
import { assertion, benchPasskey } from "./passkey.mjs";

export const DEMO = {
  clientId: "demo-client",
  secret: "demoSecret0123456789abcdefABCDEF",
  redirectUri: "https://demo.example/callback",
};
const BASIC = "Basic " + Buffer.from(`${DEMO.clientId}:${DEMO.secret}`).toString("base64");
/** The dev seed's client with OpenID Connect on (workers/all-in-one/seed.ts): its codes are answered with an id_token. */
export const OIDC = { clientId: "oidc-client", secret: "oidcSecret0123456789abcdefABCDEF" };
const OIDC_BASIC = "Basic " + Buffer.from(`${OIDC.clientId}:${OIDC.secret}`).toString("base64");
const FORM = "application/x-www-form-urlencoded";

export const AUTHORIZE_PATH =
  "/oauth2/authorize?" +
  new URLSearchParams({
    response_type: "code",
    client_id: DEMO.clientId,
    redirect_uri: DEMO.redirectUri,
    state: "bench-state-0123456789",
    lang: "ko",
  });

/**
 * fetch for the harness's own calls, retried (twice) when a pooled keep-alive connection turns out
 * to have been closed by workerd while idle (undici: "other side closed", or a reset). A retried
 * mint only mints more than needed.
 */
export async function control(url, init) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (err) {
      const code = /** @type {{ cause?: { code?: string } }} */ (err)?.cause?.code;
      if (attempt >= 2 || (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET" && code !== "EPIPE")) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * BENCH_SMS=true (with the worker's variable of that name): the bench subscribers are ordinary
 * numbers, and a sign-in's code is read from the dev outbox (`GET /dev/outbox`, a request the
 * measured worker answers too), for figures of a sign-in that sends an SMS.
 */
const SMS = process.env.BENCH_SMS === "true";

/** The latest code the dev outbox holds for `phone`. */
async function outboxCode(url, phone) {
  const res = await control(`${url}/dev/outbox`, { headers: { Accept: "application/json" } });
  const { messages } = await res.json();
  const text = messages.find((m) => m.to === phone)?.text ?? "";
  const code = /\d{6}/.exec(text)?.[0];
  if (!code) throw new Error(`no code in the outbox for ${phone}`);
  return code;
}

/** Asks the bench entry for `n` fresh codes or tokens, in parallel chunks. */
export async function mint(appUrl, kind, n) {
  const CHUNK = 1000;
  const chunks = [];
  for (let left = n; left > 0; left -= CHUNK) chunks.push(Math.min(CHUNK, left));
  const out = [];
  // two chunks at a time: enough to keep workerd busy without starving it
  for (let i = 0; i < chunks.length; i += 2) {
    const got = await Promise.all(
      chunks.slice(i, i + 2).map(async (c) => {
        const res = await control(`${appUrl}/__bench/mint?kind=${kind}&n=${c}`);
        if (res.status !== 200) throw new Error(`mint ${kind}: ${res.status} ${(await res.text()).slice(0, 300)}`);
        return res.json();
      }),
    );
    for (const g of got) out.push(...g);
  }
  return out;
}

/** The base URL a scenario loads: the hello worker, a peer, or the project's app worker. */
export function urlFor(ctx, s) {
  if (s.worker === "hello") return ctx.helloUrl;
  return s.worker && s.worker !== "app" && ctx.urls?.[s.worker] ? ctx.urls[s.worker] : ctx.url;
}

/** A pool-fed scenario: before each run, mint enough values for the expected request count. */
function pooled(kind, worker = "app") {
  const pool = new Pool();
  return {
    pool,
    async prepare(ctx, expected) {
      pool.refill(await mint(urlFor(ctx, { worker }), kind, expected));
    },
  };
}

const tokenPool = pooled("code");
const userMePool = pooled("token");
const callbackPool = pooled("rp-callback");
const floorCallbackPool = pooled("floor-rp-callback");
const floorCodePool = pooled("floor-code");
const floorTokenPool = pooled("floor-token");
const floorShardCodePool = pooled("floor-code-shard");
const floorShardTokenPool = pooled("floor-token-shard");
const oidcCodePool = pooled("oidc-code");
const floorOidcCodePool = pooled("floor-code-oidc");

/**
 * An authorization-code exchange with the demo client's Basic credentials (or `basic`), one pooled
 * code each; `checks`, its answers' body checks (`Scenario` `request.check`, `request.checkFirst`).
 * @param {string} path
 * @param {{ pool: Pool; prepare: any }} pooledValues
 * @param {{ check?: (body: string) => boolean; checkFirst?: (body: string) => void }} [checks]
 */
function codeExchange(path, { pool, prepare }, basic = BASIC, checks = {}) {
  return {
    pool,
    prepare,
    request: {
      method: "POST",
      path,
      ...checks,
      headers: { Authorization: basic, "Content-Type": FORM },
      setup(r) {
        r.body = `grant_type=authorization_code&code=${pool.next()}`;
        return r;
      },
    },
  };
}

/** A bearer read, one pooled access token each. */
function bearerRead(path, { pool, prepare }) {
  return {
    pool,
    prepare,
    request: {
      method: "GET",
      path,
      setup(r) {
        r.headers = { ...r.headers, Authorization: `Bearer ${pool.next()}` };
        return r;
      },
    },
  };
}

/**
 * The claims of every id_token of the two OpenID Connect scenarios: the service's for the seed's
 * `oidc-client` (workers/provider/token/id-token.ts, its items' claims workers/provider/store/one-time/tables/grant.ts).
 */
export const ID_TOKEN_CLAIMS = [
  "name",
  "phone_number",
  "phone_number_verified",
  "gender",
  "birthdate",
  "auth_time",
  "amr",
  "nonce",
  "iss",
  "sub",
  "aud",
  "iat",
  "exp",
];

/**
 * Each answer of an OpenID Connect exchange, as the load sees it (autocannon's `verifyBody`, no
 * status at hand): false for a token answer without an id_token of three parts, whose signature is
 * ES256's 64 bytes. Error answers pass here: their status fails them already.
 * @param {string} body
 */
export function hasIdToken(body) {
  if (!body.includes('"access_token"')) return true;
  try {
    const t = JSON.parse(body).id_token;
    if (typeof t !== "string") return false;
    const parts = t.split(".");
    return parts.length === 3 && parts[2]?.length === 86;
  } catch {
    return false;
  }
}

/**
 * The first answer of an OpenID Connect scenario (`checkOnce`), read whole: its id_token's header
 * is ES256's with a kid, and its claims are exactly `ID_TOKEN_CLAIMS`, so the service and its floor
 * sign the same token. Throws with what differs.
 * @param {string} body
 */
export function checkIdToken(body) {
  const t = JSON.parse(body).id_token;
  if (typeof t !== "string" || !hasIdToken(body)) throw new Error(`no ES256 id_token in ${body.slice(0, 200)}`);
  const [h, p] = t
    .split(".")
    .slice(0, 2)
    .map((x) => JSON.parse(Buffer.from(x, "base64url").toString("utf8")));
  if (h.alg !== "ES256" || h.typ !== "JWT" || typeof h.kid !== "string" || Object.keys(h).length !== 3)
    throw new Error(`id_token header ${JSON.stringify(h)}`);
  const keys = Object.keys(p).sort().join(",");
  if (keys !== [...ID_TOKEN_CLAIMS].sort().join(",")) throw new Error(`id_token claims ${keys}`);
  if (p.aud !== OIDC.clientId || JSON.stringify(p.amr) !== '["sms"]' || !(p.exp > p.iat))
    throw new Error(`id_token claims ${JSON.stringify(p)}`);
}

/** The answers of the OpenID Connect scenarios: each with its id_token, the first one read whole. */
const WITH_ID_TOKEN = { check: hasIdToken, checkFirst: checkIdToken };

/**
 * A peer's token exchange (bench/workers/peer-*.ts), each request from a minted `{ auth?, body }`
 * (a dry pool sends an unknown code).
 * @returns {Scenario}
 */
function peer(worker, library) {
  const { pool, prepare } = pooled("code", worker);
  return {
    id: `peer-${worker}`,
    title: `peer: ${library} token exchange`,
    label: `${library} token`,
    worker,
    kind: "peer",
    pool,
    prepare,
    request: {
      method: "POST",
      path: "/token",
      headers: { "Content-Type": FORM },
      setup(r) {
        const v = pool.next();
        const entry = typeof v === "string" ? { body: "grant_type=authorization_code&code=exhausted" } : v;
        r.body = entry.body;
        r.headers = entry.auth ? { ...r.headers, Authorization: entry.auth } : r.headers;
        return r;
      },
    },
  };
}

/**
 * A unit of platform work (bench/workers/floor.ts), one GET each, nothing single-use.
 * @param {string} id
 * @param {string} title
 * @returns {Scenario}
 */
const unit = (id, title) => ({
  id: `unit-${id}`,
  title,
  worker: "app",
  kind: "unit",
  request: { method: "GET", path: `/__floor/unit/${id}` },
});

// ---- a whole sign-in, as a browser and then the app's back end do it ----

/** The name of the bench subscribers (bench-entry.ts `makeSubscribers`: carrier S, fixed code 000000). */
export const SUBSCRIBER_NAME = "벤치사용자";

/** The hidden fields and action of the page's first form (docs/signin.md form contract). */
export function firstForm(html) {
  const open = /<form\b[^>]*>/i.exec(html);
  if (!open) throw new Error(`no form on page: ${html.slice(0, 200)}`);
  const body = html.slice(open.index, html.indexOf("</form>", open.index));
  const attr = (tag, name) => new RegExp(`\\s${name}="([^"]*)"`, "i").exec(tag)?.[1];
  const fields = new URLSearchParams();
  const names = new Set();
  for (const m of body.matchAll(/<(?:input|button|select|textarea)\b[^>]*>/gi)) {
    const name = attr(m[0], "name");
    if (!name) continue;
    names.add(name);
    if ((attr(m[0], "type") ?? "").toLowerCase() === "hidden")
      fields.set(
        name,
        (attr(m[0], "value") ?? "")
          .replace(/&amp;/g, "&")
          .replace(/&#(\d+);/g, (_, d) => String.fromCharCode(Number(d))),
      );
  }
  return { action: attr(open[0], "action") ?? "/oauth2/authorize", fields, names };
}

/** A browser's cookies across one flow's requests: `keep` each answer's, send them as `cookie()`. */
function cookieJar() {
  const cookies = new Map();
  return {
    /** @param {Response} res */
    keep(res) {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const i = pair.indexOf("=");
        cookies.set(pair.slice(0, i), pair.slice(i + 1));
      }
    },
    cookie: () => [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
  };
}

/**
 * The app's back end after a sign-in's last answer `res` (the 302 with the code): the code
 * exchanged at `tokenPath`, the user read at `mePath`; yields "token" and "user/me".
 * @param {any} ctx @param {Response} res @param {string} tokenPath @param {string} mePath
 */
async function* appBackEnd(ctx, res, tokenPath, mePath) {
  if (res.status !== 302) throw new Error(`sign-in ended with ${res.status}: ${(await res.text()).slice(0, 200)}`);
  const code = new URL(res.headers.get("Location") ?? "").searchParams.get("code");
  if (!code) throw new Error(`no code in ${res.headers.get("Location")}`);
  res = await fetch(ctx.url + tokenPath, {
    method: "POST",
    headers: { Authorization: BASIC, "Content-Type": FORM },
    body: `grant_type=authorization_code&code=${code}`,
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
  const { access_token: token } = await res.json();
  yield "token";
  res = await fetch(ctx.url + mePath, { headers: { Authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`user/me: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
  yield "user/me";
}

/**
 * A flow of `steps` as the bench runs it: every request in turn; the request count.
 * @param {(ctx: any) => AsyncGenerator<string>} steps
 */
function flowOf(steps) {
  /** @param {any} ctx @returns {Promise<number>} */
  return async (ctx) => {
    let requests = 0;
    for await (const _ of steps(ctx)) requests++;
    return requests;
  };
}

/**
 * A whole sign-in as a browser and then the app's back end do it: the first page, its form steps
 * (identify, the code, consent) until the 302 with the code, then the token exchange and the user
 * read. `start`, `token` and `me` are the paths (the project's, or its floor's); `people` is the
 * bench entry's mint kind of fresh people (a first sign-in each).
 * @param {{ start: string; token: string; me: string; people: string }} at
 */
function signInFlow(at) {
  const phones = new Pool();
  let next = 0;
  /**
   * One sign-in request by request: yields each request's step as it is answered (`page`,
   * `identify`, `code`, `consent`, `token`, `user/me`), so investigations/steps.mjs can advance many in
   * lockstep and charge each step its CPU.
   * @param {any} ctx
   */
  async function* steps(ctx) {
    const phone = phones.next();
    if (phone === "exhausted") throw new Error("no fresh subscriber left");
    const { keep, cookie } = cookieJar();
    let res = await control(ctx.url + at.start, { redirect: "manual", headers: { "Accept-Language": "ko-KR" } });
    keep(res);
    yield "page";
    for (let step = 0; step < 4 && res.status === 200; step++) {
      const form = firstForm(await res.text());
      const body = form.fields;
      let name;
      if (form.names.has("phoneNo")) {
        body.set("telcoCd", "S");
        body.set("name", SUBSCRIBER_NAME);
        body.set("phoneNo", phone);
        // the agreements' box, ticked (docs/signin.md "The agreements")
        body.set("carrierTerms", "Y");
        name = "identify";
      } else if (form.names.has("otp")) {
        body.set("otp", SMS ? await outboxCode(ctx.url, phone) : "000000");
        name = "code";
      } else if (form.names.has("agree")) {
        body.set("agree", "Y");
        name = "consent";
      } else throw new Error(`unknown step: ${[...form.names].join(",")}`);
      res = await fetch(new URL(form.action, ctx.url), {
        method: "POST",
        redirect: "manual",
        headers: { "Content-Type": FORM, Cookie: cookie(), Origin: ctx.url, "Accept-Language": "ko-KR" },
        body: body.toString(),
      });
      keep(res);
      yield name;
    }
    yield* appBackEnd(ctx, res, at.token, at.me);
  }
  /** @param {any} ctx @param {number} expected */
  async function prepare(ctx, expected) {
    const out = [];
    for (let left = expected; left > 0; left -= 4000) {
      const n = Math.min(4000, left);
      const res = await control(`${ctx.url}/__bench/mint?kind=${at.people}&from=${next}&n=${n}`);
      if (res.status !== 200) throw new Error(`${at.people}: ${res.status} ${(await res.text()).slice(0, 200)}`);
      out.push(...(await res.json()));
      next += n;
    }
    phones.refill(out);
  }
  return { pool: phones, flow: flowOf(steps), prepare, steps };
}

const signIn = signInFlow({ start: AUTHORIZE_PATH, token: "/oauth2/token", me: "/v1/user/me", people: "subscribers" });
const floorSignIn = signInFlow({
  start: AUTHORIZE_PATH.replace("/oauth2/authorize", "/__floor/signin"),
  token: "/__floor/token",
  me: "/__floor/me",
  people: "floor-people",
});

/**
 * A whole sign-in with a passkey (docs/passkeys.md): the first page, its passkey form posted with
 * an assertion the harness signs (bench/lib/passkey.mjs), consent (each person's first sign-in to
 * the app, as in `signInFlow`), then the token exchange and the user read. No SMS, no carrier.
 */
function passkeySignInFlow() {
  const people = new Pool();
  let next = 6_000_000;
  /** @type {{ key: CryptoKeyPair; cose: string } | undefined} */
  let held;
  async function* steps(ctx) {
    const person = people.next();
    if (person === "exhausted") throw new Error("no passkey person left");
    const { keep, cookie } = cookieJar();
    let res = await control(ctx.url + AUTHORIZE_PATH, { redirect: "manual", headers: { "Accept-Language": "ko-KR" } });
    keep(res);
    yield "page";
    const html = await res.text();
    const at = html.indexOf('<form id="passkey-form"');
    if (at < 0) throw new Error("no passkey form on the first page");
    const form = firstForm(html.slice(at));
    const { hostname, origin } = new URL(ctx.url);
    if (!held) throw new Error("no passkey prepared");
    form.fields.set("passkey", await assertion(held.key, person, form.fields.get("tx"), hostname, origin, 1));
    const post = async (f) => {
      res = await fetch(new URL(f.action, ctx.url), {
        method: "POST",
        redirect: "manual",
        headers: { "Content-Type": FORM, Cookie: cookie(), Origin: ctx.url, "Accept-Language": "ko-KR" },
        body: f.fields.toString(),
      });
      keep(res);
    };
    await post(form);
    yield "passkey";
    if (res.status === 200) {
      const consent = firstForm(await res.text());
      if (!consent.names.has("agree")) throw new Error(`unknown step: ${[...consent.names].join(",")}`);
      consent.fields.set("agree", "Y");
      await post(consent);
      yield "consent";
    }
    yield* appBackEnd(ctx, res, "/oauth2/token", "/v1/user/me");
  }
  async function prepare(ctx, expected) {
    held ??= await benchPasskey();
    const out = [];
    for (let left = expected; left > 0; left -= 1000) {
      const n = Math.min(1000, left);
      const res = await control(`${ctx.url}/__bench/mint?kind=passkey-people&from=${next}&n=${n}&cose=${held.cose}`);
      if (res.status !== 200) throw new Error(`passkey-people: ${res.status} ${(await res.text()).slice(0, 200)}`);
      out.push(...(await res.json()));
      next += n;
    }
    people.refill(out);
  }
  return { pool: people, flow: flowOf(steps), prepare, steps };
}

const passkeySignIn = passkeySignInFlow();

// ---- the relying-party kit ----

const SESSION_COOKIE = "__Host-rp_session";
const BINDING_COOKIE = "__Host-rp_state";
/** @type {{ list: string[]; i: number }} */
/** Sessions made through the callback, each with the login binding cookie its browser holds. */
const sessions = { list: /** @type {{ session: string; binding: string }[]} */ ([]), i: 0 };

function callbackRequest(entry) {
  const [state, code, binding] = entry.split(" ");
  return { path: `/auth/callback?code=${code}&state=${state}`, cookie: `${BINDING_COOKIE}=${binding}` };
}

/** Signs `n` browsers in through the kit's callback (as the rp-callback scenario does) and keeps their sessions. */
async function prepareSessions(ctx, n = 200) {
  if (sessions.list.length >= n) return;
  const entries = await mint(ctx.url, "rp-callback", n);
  for (let i = 0; i < entries.length; i += 16) {
    const got = await Promise.all(
      entries.slice(i, i + 16).map(async (e) => {
        const c = callbackRequest(e);
        const res = await control(ctx.url + c.path, { redirect: "manual", headers: { Cookie: c.cookie } });
        await res.arrayBuffer();
        const set = res.headers.getSetCookie().find((h) => h.startsWith(SESSION_COOKIE + "="));
        if (res.status !== 303 || !set) throw new Error(`rp callback answered ${res.status}`);
        // a browser session works only with the binding cookie of its login (docs/rp-kit.md)
        return { session: set.split(";")[0].slice(SESSION_COOKIE.length + 1), binding: e.split(" ")[2] ?? "" };
      }),
    );
    sessions.list.push(...got);
  }
}

/** True when the dev worker mounts the route (anything but the router's JSON 404). */
async function routeExists(ctx, path, init) {
  const res = await control(ctx.url + path, { redirect: "manual", ...init });
  const text = await res.text();
  return !(res.status === 404 && text.includes('"not_found"'));
}

/**
 * A benchmark scenario: driven by autocannon (`request`) or by a closed loop (`flow`, returning the
 * number of HTTP requests it made); `prepare` fills single-use pools before a run, `available`
 * says why it cannot run (or null), `optional` lets a failing check skip it instead of failing.
 * @typedef {object} Scenario
 * @property {string} id
 * @property {string} title
 * @property {string} worker  "hello", "app" or a peer's name (bench/lib/server.mjs)
 * @property {"peer" | "unit"} [kind]  a peer's token exchange, or one unit of platform work
 * @property {string} [label]
 * @property {string} [unit]
 * @property {number} [goal]
 * @property {boolean} [optional]
 * @property {number} [concurrency]
 * @property {any} [pool]
 * @property {number} [guess]  requests per second expected, to size the first pool
 * @property {number} [shortShare]  in the short run (CI), the share of its warm-up and slices this scenario takes (default 1)
 * @property {{ method: string; path: string; headers?: Record<string, string>; body?: string; setup?: any; okStatus?: number; check?: (body: string) => boolean; checkFirst?: (body: string) => void }} [request]
 *   `check`: every answer's body must pass it (bench/lib/load.mjs `drive`: one that does not counts
 *   as failed); `checkFirst`: the check of the first answer (`checkOnce`), read whole, which throws
 * @property {(ctx: any) => Promise<number>} [flow]
 * @property {(ctx: any) => AsyncGenerator<string>} [steps] a sign-in request by request, each yielding its step (investigations/steps.mjs)
 * @property {(ctx: any, expectedRequests: number) => Promise<void>} [prepare]
 * @property {(ctx: any) => Promise<string | null>} [available]
 */

/** @type {Scenario} */
const TOKEN = {
  id: "token",
  title: "token exchange",
  worker: "app",
  goal: 0.35,
  ...codeExchange("/oauth2/token", tokenPool),
};

/** @type {Scenario} */
const USER_ME = {
  id: "user-me",
  title: "/v1/user/me",
  worker: "app",
  goal: 0.35,
  ...bearerRead("/v1/user/me", userMePool),
};

/** @type {Scenario} */
const FLOOR_TOKEN = {
  id: "floor-token",
  title: "floor: minimal atomic token exchange",
  worker: "app",
  ...codeExchange("/__floor/token", floorCodePool),
};

/** @type {Scenario} */
const FLOOR_ME = {
  id: "floor-me",
  title: "floor: one DO read + 5 AES fields",
  worker: "app",
  ...bearerRead("/__floor/me", floorTokenPool),
};

/**
 * The same requests served by a route worker of its own (bench/lib/server.mjs `routeOptions`): the
 * project's route workers as deployed, or the floors shaped like them. No goal of its own.
 * @param {Scenario} s
 * @param {Pick<Scenario, "id" | "title" | "label" | "worker">} as
 * @returns {Scenario}
 */
const asRouteWorker = ({ goal: _goal, ...s }, as) => ({ ...s, ...as });

/**
 * A hybrid (docs/benchmarks.md "Hybrids"): no goal; its label is its id.
 * @param {string} id
 * @param {string} what
 * @param {string} worker
 * @param {Pick<Scenario, "pool" | "prepare" | "request">} load
 * @returns {Scenario}
 */
const hybrid = (id, what, worker, load) => ({ id, title: `hybrid: ${what}`, label: id, worker, ...load });

/** @type {Scenario[]} */
export const SCENARIOS = [
  {
    id: "hello",
    title: "hello world (ceiling)",
    worker: "hello",
    request: { method: "GET", path: "/" },
  },
  TOKEN,
  USER_ME,
  asRouteWorker(TOKEN, {
    id: "token-route",
    title: "token exchange, route worker as deployed",
    label: "token (route worker)",
    worker: "route-token",
  }),
  asRouteWorker(USER_ME, {
    id: "user-me-route",
    title: "/v1/user/me, route worker as deployed",
    label: "user/me (route worker)",
    worker: "route-user-me",
  }),
  FLOOR_TOKEN,
  FLOOR_ME,
  asRouteWorker(FLOOR_TOKEN, {
    id: "floor-token-route",
    title: "floor: minimal atomic token exchange, as a route worker",
    label: "floor-token (route worker)",
    worker: "route-floor",
  }),
  asRouteWorker(FLOOR_ME, {
    id: "floor-me-route",
    title: "floor: one DO read + 5 AES fields, as a route worker",
    label: "floor-me (route worker)",
    worker: "route-floor",
  }),
  // OpenID Connect (docs/benchmarks.md "The token route with an id_token"): the token route worker
  // redeeming codes of the seed's client with it on, each answered with an ES256 id_token, against
  // floor-token-route plus the same signature (bench/workers/floor.ts `floorTokenOidc`)
  {
    id: "token-oidc-route",
    title: "token exchange with an id_token (OpenID Connect), route worker as deployed",
    label: "token + id_token (route worker)",
    worker: "route-token",
    shortShare: 0.4,
    ...codeExchange("/oauth2/token", oidcCodePool, OIDC_BASIC, WITH_ID_TOKEN),
  },
  {
    id: "floor-token-oidc-route",
    title: "floor: minimal atomic token exchange + ES256 id_token, as a route worker",
    label: "floor-token + id_token (route worker)",
    worker: "route-floor",
    shortShare: 0.4,
    ...codeExchange("/__floor/token-oidc", floorOidcCodePool, OIDC_BASIC, WITH_ID_TOKEN),
  },
  // The hybrids (docs/benchmarks.md "Hybrids"): a floor as a route worker with one part of the
  // project's route swapped in, and the project's routes with the floor's store.
  hybrid(
    "floor-token+store",
    "floor-token with the project's store",
    "route-floor",
    codeExchange("/__floor/token-store", tokenPool),
  ),
  hybrid(
    "floor-token+router",
    "floor-token inside the project's router",
    "route-floor",
    codeExchange("/__floor/token-routed", floorCodePool),
  ),
  hybrid(
    "token-route+floor-store",
    "token route worker with the floor's store",
    "route-token-floor-store",
    codeExchange("/oauth2/token", floorShardCodePool),
  ),
  hybrid(
    "floor-me+store",
    "floor-me with the project's store",
    "route-floor",
    bearerRead("/__floor/me-store", userMePool),
  ),
  hybrid(
    "user-me-route+floor-store",
    "user/me route worker with the floor's store",
    "route-user-me-floor-store",
    bearerRead("/v1/user/me", floorShardTokenPool),
  ),
  peer("wop", "workers-oauth-provider"),
  peer("openauth", "OpenAuth"),
  unit("do-rpc", "unit: one DO RPC doing no SQL"),
  unit("do-insert", "unit: one DO RPC + one SQLite INSERT"),
  unit("d1-select", "unit: one D1 point SELECT"),
  unit("kv-get", "unit: one KV get"),
  unit("aes9", "unit: AES-128-CBC of 9 fields + JSON"),
  {
    id: "authorize",
    title: "authorize: validation + first page",
    label: "authorize + first page",
    worker: "app",
    request: { method: "GET", path: AUTHORIZE_PATH, headers: { "Accept-Language": "ko-KR" } },
  },
  {
    id: "floor-authorize",
    title: "floor: the sign-in's first page (request checked, form sent)",
    label: "floor: first page",
    worker: "app",
    request: {
      method: "GET",
      path: AUTHORIZE_PATH.replace("/oauth2/authorize", "/__floor/signin"),
      headers: { "Accept-Language": "ko-KR" },
    },
  },
  {
    id: "signin",
    title: "full sign-in (authorize → code → consent → token → user/me)",
    label: "full sign-in (6 requests)",
    worker: "app",
    unit: "sign-ins/s",
    optional: true,
    concurrency: 16,
    async available(ctx) {
      const res = await control(ctx.url + AUTHORIZE_PATH, { headers: { "Accept-Language": "ko-KR" } });
      const html = await res.text();
      return res.status === 200 && html.includes('data-step="identify"')
        ? null
        : "the sign-in pages are not in the dev worker";
    },
    guess: 300,
    pool: signIn.pool,
    prepare: signIn.prepare,
    flow: signIn.flow,
    steps: signIn.steps,
  },
  {
    id: "passkey-signin",
    title: "full sign-in with a passkey (authorize → passkey → consent → token → user/me)",
    label: "passkey sign-in (5 requests)",
    worker: "app",
    unit: "sign-ins/s",
    optional: true,
    concurrency: 16,
    async available(ctx) {
      const res = await control(ctx.url + AUTHORIZE_PATH, { headers: { "Accept-Language": "ko-KR" } });
      return res.status === 200 && (await res.text()).includes('id="passkey-form"')
        ? null
        : "the sign-in pages offer no passkey";
    },
    guess: 300,
    pool: passkeySignIn.pool,
    prepare: passkeySignIn.prepare,
    flow: passkeySignIn.flow,
    steps: passkeySignIn.steps,
  },
  {
    id: "floor-signin",
    title: "floor: minimal correct sign-in (page, identify, code, consent, token, user read)",
    label: "floor: sign-in (6 requests)",
    worker: "app",
    unit: "sign-ins/s",
    concurrency: 16,
    guess: 600,
    pool: floorSignIn.pool,
    prepare: floorSignIn.prepare,
    flow: floorSignIn.flow,
    steps: floorSignIn.steps,
  },
  {
    id: "rp-callback",
    title: "RP kit: /auth/callback (exchange + user read + session)",
    label: "RP kit /auth/callback",
    worker: "app",
    optional: true,
    guess: 200,
    pool: callbackPool.pool,
    async available(ctx) {
      return (await routeExists(ctx, "/auth/callback")) ? null : "the RP kit is not in the dev worker";
    },
    prepare: callbackPool.prepare,
    request: {
      method: "GET",
      path: "/auth/callback",
      okStatus: 303,
      setup(r) {
        const c = callbackRequest(callbackPool.pool.next());
        r.path = c.path;
        r.headers = { ...r.headers, Cookie: c.cookie };
        return r;
      },
    },
  },
  {
    id: "floor-rp-callback",
    title: "floor: minimal correct relying-party callback (state, exchange, user read, session)",
    label: "floor: RP callback",
    worker: "app",
    guess: 400,
    pool: floorCallbackPool.pool,
    prepare: floorCallbackPool.prepare,
    request: {
      method: "GET",
      path: "/__floor/callback",
      okStatus: 303,
      setup(r) {
        const [state, code, binding] = floorCallbackPool.pool.next().split(" ");
        r.path = `/__floor/callback?code=${code}&state=${state}`;
        r.headers = { ...r.headers, Cookie: `__Host-floor_state=${binding}` };
        return r;
      },
    },
  },
  {
    id: "rp-me",
    title: "RP kit: /auth/me",
    label: "RP kit /auth/me",
    worker: "app",
    optional: true,
    async available(ctx) {
      return (await routeExists(ctx, "/auth/me")) ? null : "the RP kit is not in the dev worker";
    },
    prepare: (ctx) => prepareSessions(ctx),
    request: {
      method: "GET",
      path: "/auth/me",
      setup(r) {
        const s = sessions.list[sessions.i++ % sessions.list.length];
        r.headers = { ...r.headers, Cookie: `${SESSION_COOKIE}=${s?.session}; ${BINDING_COOKIE}=${s?.binding}` };
        return r;
      },
    },
  },
];

/** Sends one request of a scenario and checks the answer is the success it should be. */
export async function checkOnce(ctx, s) {
  if (s.flow) {
    if (s.prepare) await s.prepare(ctx, 4);
    return s.flow(ctx);
  }
  if (s.prepare) await s.prepare(ctx, 1);
  const r = {
    method: s.request.method,
    path: s.request.path,
    headers: { ...(s.request.headers ?? {}) },
    body: s.request.body,
  };
  if (s.request.setup) s.request.setup(r);
  const res = await control(urlFor(ctx, s) + r.path, {
    method: r.method,
    headers: r.headers,
    body: r.body,
    redirect: "manual",
  });
  const want = s.request.okStatus ?? 200;
  const text = await res.text();
  if (res.status !== want) throw new Error(`${s.id}: expected ${want}, got ${res.status}: ${text.slice(0, 300)}`);
  if (s.request.check && !s.request.check(text))
    throw new Error(`${s.id}: the answer fails its check: ${text.slice(0, 300)}`);
  s.request.checkFirst?.(text);
}
