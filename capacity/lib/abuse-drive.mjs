// The abuse run's driver (docs/benchmarks.md "Abuse: leaked numbers against the SMS guard"): one
// phase serves the service on plain workerd (bench/lib/server.mjs) with SMS_GUARD off or on, the
// `webhook` SMS gateway pointed at the run's receiver (capacity/lib/sms-receiver.mjs), loads the
// directory and the apps through the admin API, then plays every session of the plan
// (capacity/lib/abuse-model.mjs) on a simulated clock: sessions wake in the order of their
// simulated time, at most `concurrency` at once, and each request carries that time
// (X-Dev-Clock) with the session's address, ASN and country (X-Dev-Address, X-Dev-Asn,
// X-Dev-Country: DEV_MODE only), so twenty minutes of traffic take as long as the machine needs.

import { join } from "node:path";
import { firstForm } from "../../bench/lib/scenarios.mjs";
import { control } from "../../bench/lib/scenarios.mjs";
import { cpuMicros, startServers } from "../../bench/lib/server.mjs";
import { ACTION, COUNTRY } from "./abuse-model.mjs";
import { assertion, enrolOptionsOf, makePasskey } from "./abuse-passkeys.mjs";
import { inboundGateway } from "./sms-receiver.mjs";

const FORM = "application/x-www-form-urlencoded";
/** The admin token of the test vars (.dev.vars.example): the run's workerd is local only. */
const ADMIN_TOKEN = "devAdminToken-local-only-0123456789abcdef";
/** Rows per import request: the admin API's ADMIN_MAX_IMPORT_ROWS default. */
const FILE_ROWS = 10_000;
const REQUEST_MS = 60_000;
/** The form field the Turnstile widget fills (workers/provider/signin/turnstile.ts TOKEN_FIELD). */
const TOKEN_FIELD = "cf-turnstile-response";
/** The DEV_MODE Turnstile fake's token endpoint on the all-in-one worker: a solved challenge's token. */
const TOKEN_PATH = "/_dev/turnstile/_fake/token";
/** Challenges one attempt of a session may meet before it gives up (a token refused, then another). */
const MAX_TOKENS = 2;

/**
 * A clock of simulated time over tasks: a task waits for a moment (`until`), and the waiting task
 * of the earliest moment runs next, while fewer than `concurrency` run and its moment is at most
 * `lag` ms past that of the earliest task running. Simulated time only moves forward (a task asking
 * for a moment already passed runs at the present one), and what the service is sent moves forward
 * too, give or take `lag`: a task running at a moment holds back tasks of much later moments until
 * it waits again or ends, where the heap is sparse (the span's end, long waits) as where it is
 * dense.
 */
export class SimClock {
  /** @type {{ t: number; seq: number; run: (slot: { t: number }) => void }[]} */
  #heap = [];
  #seq = 0;
  /** @type {Set<{ t: number }>} the moments of the tasks running */
  #running = new Set();
  #live = 0;
  #concurrency;
  #lag;
  /** @type {(v?: unknown) => void} */
  #done = () => {};
  /** the present moment: the latest any task woke at (ms of simulated time) */
  now = 0;
  /** @type {unknown} the first error a task threw (a task should catch its own) */
  error = null;

  constructor(concurrency, lag = 1000) {
    this.#concurrency = Math.max(1, concurrency);
    this.#lag = lag;
    this.finished = new Promise((r) => (this.#done = r));
  }

  /**
   * Runs `task(timeline)` once simulated time reaches `t`: `timeline.t` is the moment it woke at,
   * `timeline.until(t2)` waits for a later one (and resolves with the moment it woke at). `finished`
   * resolves when every task has ended.
   * @param {number} t
   * @param {(timeline: { t: number; until: (t: number) => Promise<number> }) => Promise<void>} task
   */
  spawn(t, task) {
    this.#live++;
    this.#push(t, (slot) => {
      const timeline = {
        t: slot.t,
        until: (/** @type {number} */ later) =>
          new Promise((resolve) => {
            this.#running.delete(slot);
            this.#push(later, (next) => {
              slot = next;
              timeline.t = next.t;
              resolve(next.t);
            });
            this.#pump();
          }),
      };
      Promise.resolve()
        .then(() => task(timeline))
        .catch((err) => (this.error ??= err))
        .finally(() => {
          this.#running.delete(slot);
          if (--this.#live === 0) this.#done();
          this.#pump();
        });
    });
  }

  /** Starts the clock (after every first task is spawned). */
  start() {
    if (this.#live === 0) this.#done();
    this.#pump();
  }

  #pump() {
    while (this.#running.size < this.#concurrency && this.#heap.length > 0) {
      const top = this.#heap[0];
      let earliest = Infinity;
      for (const r of this.#running) earliest = Math.min(earliest, r.t);
      if (top.t > earliest + this.#lag) return;
      const e = /** @type {typeof top} */ (this.#pop());
      this.now = Math.max(this.now, e.t);
      const slot = { t: this.now };
      this.#running.add(slot);
      e.run(slot);
    }
  }

  #push(t, run) {
    const h = this.#heap;
    h.push({ t, seq: this.#seq++, run });
    for (let i = h.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!before(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  #pop() {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l], h[m])) m = l;
        if (r < h.length && before(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

const before = (a, b) => a.t < b.t || (a.t === b.t && a.seq < b.seq);

/** The authorize request of `client` (docs/interface.md), as an app sends a person. */
function authorizePath(client, state) {
  return (
    "/oauth2/authorize?" +
    new URLSearchParams({
      response_type: "code",
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      state,
      lang: "ko",
    })
  );
}

/** The Turnstile widget on a page (the guard's challenge), or null. */
export function widgetOf(html) {
  const div = /<div\b[^>]*\bclass="cf-turnstile"[^>]*>/i.exec(html)?.[0];
  if (!div) return null;
  const attr = (name) => new RegExp(`\\s${name}="([^"]*)"`, "i").exec(div)?.[1] ?? "";
  return { sitekey: attr("data-sitekey"), action: attr("data-action") || ACTION };
}

/** The phrase the text page asks for (entities decoded), or null on another page. */
export function phraseOf(html) {
  const m = /id="text-phrase"[^>]*>([^<]*)</.exec(html);
  return m
    ? m[1]
        .replace(/&amp;/g, "&")
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"')
    : null;
}

/** The page's alert, for a failure's reason. */
const alertOf = (html) =>
  (/role="alert"[^>]*>([\s\S]*?)<\/(?:p|div)>/.exec(html)?.[1] ?? "")
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 120);

class Jar {
  /** @type {Map<string, string>} */
  c = new Map();
  keep(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const i = pair.indexOf("=");
      this.c.set(pair.slice(0, i), pair.slice(i + 1));
    }
  }
  header() {
    return [...this.c].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

/**
 * @typedef {import("./abuse-model.mjs").Session} Session
 * @typedef {import("./abuse-model.mjs").Outcome} Outcome
 * @typedef {{ clientId: string; redirectUri: string }} Client
 * @typedef {{ t: number; until: (t: number) => Promise<number> }} Timeline
 * @typedef {{
 *   url: string; host: string; clients: Client[]; clock: SimClock; clockStart: number;
 *   receiver: Awaited<ReturnType<typeof import("./sms-receiver.mjs").startSmsReceiver>>;
 *   maxWaitMs: number; requests: number; tokenRequests: number;
 *   inbound: ReturnType<typeof import("./sms-receiver.mjs").inboundGateway>;
 * }} Ctx
 */

/**
 * One session: its attempts (the next, after waiting Retry-After, only when the one before was
 * refused with a Retry-After of at most `ctx.maxWaitMs`: nobody waits for the app's budget to come
 * back at midnight), each from the first page on. Never throws: a fault is its outcome's reason.
 * @param {Ctx} ctx
 * @param {Session} s
 * @param {Timeline} tl its moments on the simulated clock (it starts at `tl.t`)
 * @returns {Promise<Outcome>}
 */
export async function runSession(ctx, s, tl) {
  let t = tl.t;
  /** @type {Outcome} */
  const out = {
    kind: s.kind,
    app: s.app,
    inBotBlock: s.inBotBlock,
    solves: s.solves,
    holdsNumber: s.holdsNumber,
    typesCode: s.typesCode,
    device: s.device,
    result: "failed",
    challenged: 0,
    tokens: 0,
    textsAsked: 0,
    texted: 0,
    sends: 0,
    sentAt: [],
    refusals: [],
    retried: false,
    reason: null,
  };
  const jar = /** @type {Jar} */ (s.jar ?? new Jar());
  try {
    for (let i = 0; i < s.addresses.length; i++) {
      out.retried = i > 0;
      const a = await attempt(ctx, tl, s, s.addresses[i], t, jar, out, i);
      if (a.result !== "refused") return { ...out, result: a.result, reason: a.reason ?? null };
      out.refusals.push(a.status ?? 0);
      out.result = "refused";
      // a person told to come back later mostly gives up; the rest come back after a while of
      // their own; the bot waits as told, then starts again from the app's first page
      if (!s.returns) break;
      const wait = s.kind === "real" ? s.returnDelay : (a.retryAfter ?? 0) * 1000;
      if (wait > ctx.maxWaitMs) break;
      if (i + 1 < s.addresses.length) t = await tl.until(a.t + wait);
    }
    return out;
  } catch (err) {
    return { ...out, result: "failed", reason: String(/** @type {Error} */ (err)?.message ?? err).slice(0, 300) };
  }
}

/**
 * One attempt from the app's first page: identify (with a challenge's token when the page asks
 * for one and the session can get one), the code when one was sent and the session types it,
 * consent, up to the redirect to the app with the authorization code.
 * @param {Ctx} ctx
 * @param {Timeline} tl
 * @param {Session} s
 * @param {string} address
 * @param {number} t
 * @param {Jar} jar
 * @param {Outcome} out
 * @param {number} n the attempt's number (0 first)
 * @returns {Promise<{ result: Outcome["result"]; reason?: string; status?: number; retryAfter?: number; t: number }>}
 */
async function attempt(ctx, tl, s, address, t, jar, out, n) {
  const client = ctx.clients[s.app];
  if (!client) throw new Error(`no app ${s.app}`);
  const phone = s.person.phoneNo;
  const send = async (path, body) => {
    ctx.requests++;
    const res = await fetch(new URL(path, ctx.url), {
      method: body ? "POST" : "GET",
      redirect: "manual",
      signal: AbortSignal.timeout(REQUEST_MS),
      headers: {
        "Accept-Language": "ko-KR",
        Cookie: jar.header(),
        "X-Dev-Address": address,
        "X-Dev-Asn": String(s.asn),
        "X-Dev-Country": COUNTRY,
        "X-Dev-Clock": String(ctx.clockStart + t),
        ...(body ? { "Content-Type": FORM, Origin: ctx.url } : {}),
      },
      body: body ? body.toString() : undefined,
    });
    jar.keep(res);
    return res;
  };
  let res = await send(authorizePath(client, `${s.kind}-${s.index}-${n}`));
  let posted = false;
  let tokens = 0;
  let sentBefore = 0;
  for (let step = 0; step < 10; step++) {
    const retryAfter = Number(res.headers.get("Retry-After"));
    if ((res.status === 429 || res.status === 503) && retryAfter > 0) {
      await res.arrayBuffer();
      return { result: "refused", status: res.status, retryAfter, t };
    }
    if (res.status === 302) {
      const location = res.headers.get("Location") ?? "";
      await res.arrayBuffer();
      const ok = location.startsWith(client.redirectUri + "?") && new URL(location).searchParams.has("code");
      return ok
        ? { result: "completed", t }
        : { result: "failed", reason: `redirected to ${location.slice(0, 120)}`, t };
    }
    const html = await res.text();
    // a token refused (forged, replayed, expired) is a 403 with the widget again
    if (res.status !== 200 && !(res.status === 403 && widgetOf(html)))
      return { result: "failed", reason: `${res.status}: ${alertOf(html) || html.slice(0, 120)}`, t };
    const phrase = phraseOf(html);
    if (phrase !== null) {
      // the text page: the person texts the phrase from their phone (the bot only from a SIM it holds)
      out.textsAsked++;
      if (!s.texts) return { result: "abandoned", t };
      t = await tl.until(t + s.textDelay);
      await ctx.inbound.text(phone, phrase);
      out.texted++;
      const form = firstForm(html.slice(html.indexOf('<form id="text-form"')));
      form.fields.set("sent", "Y");
      res = await send(form.action, form.fields);
      continue;
    }
    if (html.includes('<form id="enrol-form"')) {
      // the end's passkey offer: made on a device that can (the probe's pk=Y), else not offered
      const options = enrolOptionsOf(html);
      if (!s.enrolPasskey || !options) return { result: "failed", reason: "a passkey offered unasked", t };
      const made = makePasskey(options, ctx.url);
      out.passkey = made.passkey;
      const enrol = firstForm(html.slice(html.indexOf('<form id="enrol-form"')));
      enrol.fields.set("credential", made.credential);
      res = await send(enrol.action, enrol.fields);
      continue;
    }
    if (s.passkeyKey && !posted && html.includes('<form id="passkey-form"')) {
      // a person with a passkey on this phone signs in with it: no number typed, no code
      t = await tl.until(t + s.pace.fill);
      const pf = firstForm(html.slice(html.indexOf('<form id="passkey-form"')));
      pf.fields.set("passkey", assertion(s.passkeyKey, pf.fields.get("tx") ?? "", ctx.url));
      out.passkeyUsed = true;
      posted = true;
      res = await send(pf.action, pf.fields);
      continue;
    }
    const form = firstForm(html);
    const body = form.fields;
    // the code and consent pages' probe: a device that can make a passkey says so
    if (s.enrolPasskey && form.names.has("pk")) body.set("pk", "Y");
    if (form.names.has("phoneNo")) {
      const widget = widgetOf(html);
      if (posted && !widget) return { result: "failed", reason: `identify answered again: ${alertOf(html)}`, t };
      if (!posted) t = await tl.until(t + s.pace.fill);
      if (widget) {
        out.challenged++;
        // a person who cannot pass it (JavaScript off, or fails) gives up
        if (s.kind === "real" && !s.solves) return { result: "abandoned", t };
        // a bot that cannot solve posts once as if there were none; asked again, it gives up
        if (!s.solves && posted) return { result: "abandoned", t };
        if (s.solves) {
          if (tokens >= MAX_TOKENS) return { result: "failed", reason: "challenged again after a solved token", t };
          t = await tl.until(t + s.pace.solve);
          body.set(TOKEN_FIELD, await solve(ctx, widget));
          tokens++;
          out.tokens++;
        }
      }
      body.set("telcoCd", s.person.telcoCd);
      body.set("name", s.person.name);
      body.set("phoneNo", phone);
      body.set("carrierTerms", "Y"); // the agreements' box (docs/signin.md "The agreements")
      sentBefore = ctx.receiver.codes.get(phone)?.count ?? 0;
      posted = true;
      res = await send(form.action, body);
    } else if (form.names.has("otp")) {
      const sms = ctx.receiver.codes.get(phone);
      if ((sms?.count ?? 0) <= sentBefore) return { result: "failed", reason: "the code page, and no SMS was sent", t };
      out.sends++;
      out.sentAt.push(t);
      if (!s.typesCode) return { result: "sent", t };
      t = await tl.until(t + s.pace.type);
      body.set("otp", /** @type {{ code: string }} */ (ctx.receiver.codes.get(phone)).code);
      res = await send(form.action, body);
    } else if (form.names.has("agree")) {
      t = await tl.until(t + s.pace.consent);
      body.set("agree", "Y");
      res = await send(form.action, body);
    } else if (form.names.has("resend")) {
      // the code page without a code to type: the number's codes are spent for now
      // (SIGNIN_SENDS_PER_WINDOW; the bot's SIMs reach it), and the session gives up
      return { result: "abandoned", t };
    } else return { result: "failed", reason: `unknown step: ${[...form.names].join(",")}`, t };
  }
  return { result: "failed", reason: "more than 10 steps", t };
}

/** A solved challenge's token from the Turnstile fake, for the widget's site key and action on this host. */
async function solve(ctx, widget) {
  ctx.tokenRequests++;
  const res = await control(ctx.url + TOKEN_PATH, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ sitekey: widget.sitekey, action: widget.action, hostname: ctx.host }),
    signal: AbortSignal.timeout(REQUEST_MS),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`Turnstile fake: ${res.status} ${text.slice(0, 200)}`);
  const { token } = JSON.parse(text);
  if (typeof token !== "string" || !token) throw new Error(`Turnstile fake: no token in ${text.slice(0, 200)}`);
  return token;
}

async function admin(url, method, path, body) {
  const res = await control(url + path, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Imports the directory rows through `POST /admin/directory/import`, a file of FILE_ROWS at a time. */
async function importDirectory(url, rows) {
  let inserted = 0;
  for (let i = 0; i < rows.length; i += FILE_ROWS) {
    const file = rows.slice(i, i + FILE_ROWS);
    const r = await admin(url, "POST", "/admin/directory/import", file);
    if (r.inserted !== file.length || r.rejected_count !== 0)
      throw new Error(`import: ${JSON.stringify({ ...r, rejected: r.rejected?.slice(0, 3) })}`);
    inserted += r.inserted;
  }
  return inserted;
}

/**
 * Registers `n` apps (the first is the one the bot targets, with its own daily SMS budget when
 * `budget` is set; else the service's default applies); each asks consent on a first sign-in.
 * Returns them, and the targeted app's `sms_daily_budget` as the service holds it (null: none).
 * @param {string} url
 * @param {number} n
 * @param {number | null} budget
 */
async function registerApps(url, n, budget) {
  /** @type {Client[]} */
  const out = [];
  let targetedBudget = null;
  for (let i = 0; i < n; i++) {
    const redirectUri = `https://app${i}.example/cb`;
    const c = await admin(url, "POST", "/admin/clients", {
      name: i === 0 ? "Targeted App" : `App ${i}`,
      redirect_uris: [redirectUri],
      items: ["name", "phoneNo"],
      ...(i === 0 && budget !== null ? { sms_daily_budget: budget } : {}),
    });
    if (i === 0) targetedBudget = typeof c.sms_daily_budget === "number" ? c.sms_daily_budget : null;
    out.push({ clientId: c.client_id, redirectUri });
  }
  return { clients: out, targetedBudget };
}

/** The cookie in which a browser keeps its proof of a number (docs/abuse.md "A browser that proved its number"). */
const PROOF_COOKIE = "__Host-pl_nb";
/** How long before the run the returning people proved their numbers (outside the guard's window). */
const PROVED_BEFORE_MS = 2 * 86_400_000;

/**
 * The returning people's and the passkey holders' earlier sign-ins: each signed in to its app once,
 * from its own address, a minute apart, two days before the run, typing its code; a returning
 * person's browser keeps what the service gave it (the proof of the number, `__Host-pl_nb`), a
 * passkey holder's phone makes the passkey the end offers it (and keeps no cookie: the passkey
 * alone is measured). By the session's index: its cookie jar and its passkey. A sign-in that does
 * not complete, or makes no passkey where it should, is a harness fault.
 * @param {Ctx} ctx
 * @param {Session[]} sessions
 * @param {(...a: unknown[]) => void} log
 * @param {string} guard
 * @param {number} cooldownMs the service's SIGNIN_RESEND_COOLDOWN_SECONDS
 * @returns {Promise<Map<number, { jar: Jar; passkeyKey?: import("./abuse-passkeys.mjs").Passkey }>>}
 */
async function provedBefore(ctx, sessions, log, guard, cooldownMs) {
  const kept = new Map();
  const earlier = sessions.flatMap((s, i) => (s.returning || s.passkeyHolder ? [i] : []));
  if (earlier.length === 0) return kept;
  let next = 0;
  const one = async () => {
    while (next < earlier.length) {
      const k = next++;
      const i = earlier[k];
      const s = sessions[i];
      const jar = new Jar();
      // the clock stands still but for the person's own pace: a minute apart, two days before
      let at = k * 60_000 - PROVED_BEFORE_MS;
      const tl = { t: at, until: async (/** @type {number} */ x) => (at = x) };
      const warm = {
        ...s,
        jar,
        typesCode: true,
        texts: true,
        solves: true,
        returns: false,
        enrolPasskey: s.passkeyHolder,
      };
      const out = await runSession(
        ctx,
        /** @type {Session} */ (warm),
        /** @type {Timeline} */ (/** @type {unknown} */ (tl)),
      );
      if (out.result !== "completed")
        throw new Error(`a person's earlier sign-in: ${out.result} (${out.reason ?? "no reason"})`);
      const mine = new Jar();
      if (s.returning) {
        const proof = jar.c.get(PROOF_COOKIE);
        if (!proof) throw new Error("a returning person's browser kept no proof of the number");
        // the proof alone: not the app's automatic login, which would sign them in with no code at all
        mine.c.set(PROOF_COOKIE, proof);
      }
      if (s.passkeyHolder && !out.passkey) throw new Error("a passkey holder's earlier sign-in made no passkey");
      kept.set(i, { jar: mine, ...(out.passkey && { passkeyKey: out.passkey }) });
    }
  };
  await Promise.all(Array.from({ length: 8 }, one));
  // the number's resend cooldown runs on the service's real clock, not the simulated one: the run
  // starts once it has passed for every earlier code (else a returning person's code would wait)
  await new Promise((r) => setTimeout(r, cooldownMs + 1000));
  const holders = [...kept.values()].filter((v) => v.passkeyKey).length;
  log(
    `  guard ${guard}: ${kept.size - holders} returning people proved their numbers, ${holders} made a passkey, two days before`,
  );
  return kept;
}

/**
 * One phase: a fresh service with SMS_GUARD=`guard`, its directory and apps, then every session
 * of the plan on the simulated clock. Returns each session's outcome (in the plan's order), the
 * SMS the receiver took for the bot's numbers and for real people's, and what the phase cost.
 * @param {string} root
 * @param {ReturnType<typeof import("./abuse-model.mjs").parseAbuseArgs>} o
 * @param {{ sessions: Session[]; rows: object[]; vars: Record<string, string> }} p
 * @param {"off" | "on"} guard
 * @param {Ctx["receiver"]} receiver
 * @param {(...a: unknown[]) => void} log
 */
export async function runPhase(root, o, p, guard, receiver, log) {
  receiver.reset();
  const srv = await startServers(
    root,
    join(root, "bench", "results", "build"),
    [{ name: "app", vars: { ...p.vars, SMS_GUARD: guard } }],
    {
      peers: false,
    },
  );
  try {
    const url = srv.urls.app;
    await control(url + "/healthz");
    const imported = await importDirectory(url, p.rows);
    const { clients, targetedBudget } = await registerApps(url, o.apps, o.appBudget);
    log(`  guard ${guard}: service up, ${imported.toLocaleString("en-US")} subscribers and ${clients.length} apps`);
    const clock = new SimClock(o.concurrency);
    /** @type {Ctx} */
    const ctx = {
      url,
      host: new URL(url).hostname,
      clients,
      clock,
      clockStart: o.clockStart,
      receiver,
      maxWaitMs: o.maxWait * 1000,
      requests: 0,
      tokenRequests: 0,
      inbound: inboundGateway(url, p.vars.SMS_INBOUND_NUMBER ?? "", p.vars.SMS_INBOUND_SECRET ?? ""),
    };
    const earlier = await provedBefore(
      ctx,
      p.sessions,
      log,
      guard,
      Number(p.vars.SIGNIN_RESEND_COOLDOWN_SECONDS ?? 30) * 1000,
    );
    // what the returning people's earlier sign-ins sent and asked is not the run's
    const warmCodes = new Map([...receiver.codes].map(([phone, m]) => [phone, m.count]));
    ctx.requests = 0;
    /** @type {Outcome[]} */
    const outcomes = new Array(p.sessions.length);
    let ended = 0;
    p.sessions.forEach((s, i) =>
      clock.spawn(s.start, async (tl) => {
        outcomes[i] = await runSession(ctx, earlier.has(i) ? { ...s, ...earlier.get(i) } : s, tl);
        ended++;
      }),
    );
    const cpu0 = cpuMicros(srv.pid);
    const t0 = performance.now();
    const span = o.minutes * 60_000;
    let shown = 0;
    const progress = setInterval(() => {
      const minute = Math.floor(clock.now / 60_000);
      if (minute <= shown) return;
      shown = minute;
      log(
        `    ${minute}/${Math.round(span / 60_000)} simulated minutes in ${Math.round((performance.now() - t0) / 1000)} s: ${ended} of ${p.sessions.length} sessions ended, ${ctx.requests} requests, ${receiver.tally.sent} SMS`,
      );
    }, 1000);
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`guard ${guard}: not done in ${o.maxMinutes} minutes`)),
        o.maxMinutes * 60_000,
      );
    });
    try {
      clock.start();
      await Promise.race([clock.finished, timeout]);
    } finally {
      clearInterval(progress);
      clearTimeout(timer);
    }
    if (clock.error) throw clock.error;
    const wallSeconds = (performance.now() - t0) / 1000;
    const cpu1 = cpuMicros(srv.pid);
    const botPhones = new Set(
      p.sessions.filter((s) => s.kind === "bot" && !s.holdsNumber).map((s) => s.person.phoneNo),
    );
    const simPhones = new Set(p.sessions.filter((s) => s.kind === "bot" && s.holdsNumber).map((s) => s.person.phoneNo));
    let attackSms = 0;
    let simSms = 0;
    let realSms = 0;
    for (const [phone, m] of receiver.codes) {
      if (botPhones.has(phone)) attackSms += m.count;
      else if (simPhones.has(phone)) simSms += m.count;
      else realSms += m.count - (warmCodes.get(phone) ?? 0);
    }
    return {
      outcomes,
      sms: { attackSms, simSms, realSms },
      inbound: { ...ctx.inbound.tally },
      receiver: { ...receiver.tally },
      wallSeconds,
      cpuSeconds: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / 1e6,
      requests: ctx.requests,
      tokenRequests: ctx.tokenRequests,
      simulatedMinutes: clock.now / 60_000,
      targetedBudget,
      // what workerd last said, for a phase in which sessions failed (the service's logged causes)
      workerdOutput: outcomes.some((x) => x.result === "failed") ? srv.stderr.join("").slice(-3000) : "",
    };
  } catch (err) {
    if (srv.stderr.length) log(`workerd output (last lines):\n${srv.stderr.join("").slice(-3000)}`);
    throw err;
  } finally {
    await srv.dispose();
  }
}
