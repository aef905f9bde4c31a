// A text the person sends (docs/signin.md "A text the person sends"): where the SMS-abuse guard
// would challenge, slow or pause a sign-in (SIGNIN_MO=guard), or for every sign-in (all), the
// identify step sends no code. It asks the person to text a one-time phrase from the typed number
// to the service's receiving number instead. The operator's SMS gateway hands the text to
// POST /sms/inbound (workers/provider/inbound/), which marks the phrase arrived; the page, polling
// or posted by "I sent it", then takes it once and only then asks the carrier directory whether the
// name and number match. Everything before the text arrives is decided from the request alone, so
// the page is the same for a name and number that match and ones that do not, and no SMS is sent.
//
// Invariants (test/provider/signin/text/text.test.ts):
// - a phrase is the typed number's and this sign-in's: its entry is keyed by the number's key and
//   its digits, in the number's object, and the ticket that names them is signed and bound to the
//   sign-in's id;
// - a phrase goes waiting → arrived → taken, each step one swap in one object: of two texts, or two
//   submissions, exactly one moves it on; nothing moves it back but a carrier that could not be
//   asked (taken → arrived, so "I sent it" can be tried again);
// - nobody is looked up before the text arrived; a text from another number, an unknown, used or
//   expired phrase, or one sent from abroad marks nothing.

import { commonConfig } from "../../core/config";
import { randomDigits } from "../../core/crypto";
import { normalizePhone, type Telco } from "../../core/spec";
import { audit, shardOf, storeAt, textKey, type OneTimeEnv } from "../store/one-time/index";
import { tally } from "../store/metrics/index";
import { carrierDirectory, CarrierUnavailable } from "./carrier";
import { failure, limited, refusalAlert, render, type Flow } from "./flow";
import { t } from "./i18n";
import { riskOf } from "./risk";
import { numberLimits, phoneKey } from "./limits";
import { identifyPage, type IdentifyValues } from "./pages";
import { numberProven } from "./proven";
import { openJson, signJson } from "./signed-json";
import { textConfig, type TextVars } from "./text-config";
import { phraseOf, textPage, tt } from "./text-page";

const TICKET_PREFIX = "mo1.";
const TICKET_PURPOSE = "signin-text-v1";
/** A ticket is a few hundred characters; a longer `text` is not one. */
const MAX_TICKET_CHARS = 2048;

/** A phrase's states, the value of its entry. */
const WAITING = "waiting";
const ARRIVED = "arrived";
/**
 * Taken by a request asking the carrier directory, until `taken:<ms>`: a request killed meanwhile
 * (an evicted isolate, a lost connection) leaves it so, and "I sent it" takes it again once that
 * time is past. Longer than the carrier call's longest timeout (30 s) and the directory's answer.
 */
const TAKEN = "taken:";
const TAKEN_HOLD_MS = 60_000;

/** What the text page carries back: whose number, which phrase, for which sign-in, until when. */
interface Ticket {
  /** The sign-in's id (the first page's, or its record's). */
  id: string;
  telco: Telco;
  telcoCd: string;
  name: string;
  phone: string;
  digits: string;
  until: number;
}

const objectOf = (env: OneTimeEnv, pk: string, shards: number) => storeAt(env, shardOf(pk, shards));

/**
 * The identify step's answer when the text is offered: a new phrase for the typed number, waiting
 * in the number's object until the phrase's life or the sign-in's ends, and its page.
 */
export async function offerText(
  f: Flow,
  values: IdentifyValues,
  telco: Telco,
  name: string,
  phone: string,
): Promise<Response> {
  const cfg = textConfig(f.env);
  const digits = randomDigits(8);
  const pk = await phoneKey(phone);
  const now = Date.now();
  const until = Math.min(now + cfg.ttlMs, f.h.tx.expiresAt);
  const refused = await objectOf(f.env, pk, f.shards).offerText(
    await textKey(pk, digits),
    WAITING,
    Math.max(1, until - now),
    pk,
    numberLimits(f.cfg),
  );
  if (refused) {
    // the number's sends of the window are spent, by its codes or its texts: said so, with when
    return identifyPage(f.ctx, values, refusalAlert(f.ctx.lang, refused, undefined, "text"), limited(refused));
  }
  const ticket: Ticket = { id: f.h.id, telco, telcoCd: values.telcoCd!, name, phone, digits, until };
  f.rc.log.event = "signin.text_offered";
  if (f.client.clientId) tally(f.env, f.rc, "text.offered", f.client.clientId);
  return textPage(f.ctx, {
    phrase: phraseOf(f.client.name || t("ko", "serviceName"), digits),
    number: cfg.number!,
    ticket: await signJson(f.env, TICKET_PREFIX, TICKET_PURPOSE, ticket),
    until,
    devPhone: commonConfig(f.env).devMode,
  });
}

/** The text page again, for the same phrase (a notice, an alert). */
async function again(f: Flow, k: Ticket, ticket: string, notice?: string, unavailable = false): Promise<Response> {
  return textPage(
    f.ctx,
    {
      phrase: phraseOf(f.client.name || t("ko", "serviceName"), k.digits),
      number: textConfig(f.env).number!,
      ticket,
      until: k.until,
      notice,
      devPhone: commonConfig(f.env).devMode,
    },
    unavailable ? { text: t(f.ctx.lang, "errCarrierUnavailable") } : undefined,
    unavailable ? { status: 503, retryAfterSeconds: 5 } : {},
  );
}

function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" },
  });
}

/** The posted ticket, opened, when it is this sign-in's; else null. */
async function ticketOf(f: Flow, posted: string | undefined): Promise<Ticket | null> {
  const k = await openJson<Ticket>(f.env, TICKET_PREFIX, TICKET_PURPOSE, posted, MAX_TICKET_CHARS);
  return k && k.id === f.h.id ? k : null;
}

/**
 * The text page answered: `poll=Y` asks whether the text arrived (JSON); else "I sent it" takes the
 * arrived phrase once, asks the carrier directory, and proves the number, or says why not.
 */
export async function textStep(f: Flow): Promise<Response> {
  const L = f.ctx.lang;
  const posted = f.params.get("text");
  const k = await ticketOf(f, posted);
  const poll = f.params.get("poll") === "Y";
  if (!k) {
    if (poll) return json({ error: "unknown_text" }, 400);
    return render(f, { text: tt(L, "gone") }, { status: 400 });
  }
  // the sign-in went on meanwhile (a number typed again in another tab): its page
  if (f.h.tx.step !== "identify") return poll ? json({ arrived: false, moved: true }) : render(f);
  const values: IdentifyValues = { telcoCd: k.telcoCd, name: k.name, phoneNo: k.phone };
  const pk = await phoneKey(k.phone);
  const key = await textKey(pk, k.digits);
  const stub = objectOf(f.env, pk, f.shards);
  if (poll) return json({ arrived: Date.now() < k.until && (await stub.getEntry(key)) === ARRIVED });
  if (Date.now() >= k.until) return identifyPage(f.ctx, values, { text: tt(L, "gone") });
  const taken = `${TAKEN}${Date.now() + TAKEN_HOLD_MS}`;
  if (!(await stub.takeText(key, ARRIVED, taken, pk, numberLimits(f.cfg)))) {
    const now = await stub.getEntry(key);
    if (now === WAITING) return again(f, k, posted!, tt(L, "notYet"));
    const abandoned = now?.startsWith(TAKEN) && Number(now.slice(TAKEN.length)) <= Date.now();
    if (now?.startsWith(TAKEN) && !(abandoned && (await stub.swapEntry(key, now, taken)))) return render(f);
    if (!now?.startsWith(TAKEN)) return identifyPage(f.ctx, values, { text: tt(L, "gone") });
  }
  let confirmed;
  try {
    const linkOf = f.purpose.consent ? f.client.clientId : undefined;
    confirmed = await carrierDirectory(f.env).confirm(k.telco, k.name, k.phone, linkOf);
    tally(f.env, f.rc, "carrier.ok", null);
  } catch (err) {
    if (!(err instanceof CarrierUnavailable)) throw err;
    tally(f.env, f.rc, "carrier.failed", null);
    // nothing was learned: the text stays arrived, and "I sent it" can be tried again
    await stub.untakeText(key, taken, ARRIVED, pk, numberLimits(f.cfg));
    f.rc.waitUntil(audit(f.env, "carrier.unavailable", f.client.clientId || null, "refused", { reason: err.reason }));
    return again(f, k, posted!, undefined, true);
  }
  const review = confirmed?.review ?? null;
  if (!confirmed || (review && (!review.clients.includes(f.client.clientId) || Date.now() >= review.expiresAt))) {
    // today's answer to a name and number the carriers do not confirm
    failure(f, "unconfirmed");
    return identifyPage(f.ctx, values, { text: t(L, "errUnconfirmed") });
  }
  const risk = await riskOf(f, confirmed);
  if (risk?.passkey) {
    // proven in the number's risk window by a person who has a passkey: as after a right code
    failure(f, "risk_passkey_required");
    f.rc.waitUntil(audit(f.env, "risk.refused", f.client.clientId || null, "refused", { reason: "passkey_required" }));
    return identifyPage(f.ctx, {}, { text: t(L, "errRiskPasskey") }, { status: 403 });
  }
  if (f.client.clientId) tally(f.env, f.rc, "text.proven", f.client.clientId);
  return numberProven(f, {
    person: { id: confirmed.subscriber.id, telco: k.telco, phone: k.phone },
    link: confirmed.link ?? null,
    risk: risk?.until ?? null,
    by: "text",
    record: { texted: true },
  });
}

/**
 * The language switch of the text page (its form carries the ticket): the same phrase's page in
 * the sign-in's new language, as long as the ticket is this sign-in's and still waiting on the
 * identify step; else the sign-in's own page.
 */
export async function textInLanguage(f: Flow): Promise<Response> {
  const posted = f.params.get("text");
  const k = await ticketOf(f, posted);
  if (!k || f.h.tx.step !== "identify" || Date.now() >= k.until) return render(f);
  return again(f, k, posted!);
}

/** What an inbound text did: marked its phrase arrived, or why it marked nothing. */
export type Arrival = "accepted" | "unknown" | "used" | "no_phrase" | "not_a_number";

/**
 * An inbound text to the receiving number, its sender and body as the gateway reported them
 * (already checked to be signed, to this number and sent on a domestic network): the phrase of
 * the sender's number with the body's digits, marked arrived once.
 */
export async function textArrived(
  env: OneTimeEnv & TextVars,
  shards: number,
  from: string,
  body: string,
): Promise<Arrival> {
  const phone = normalizePhone(from.replace(/^\+82/, "0"));
  if (!phone) return "not_a_number";
  // the last group of exactly 8 digits: an app's name may hold digits of its own
  const digits = body.match(/(?<!\d)\d{8}(?!\d)/g)?.at(-1);
  if (!digits || !body.includes("로그인")) return "no_phrase";
  const pk = await phoneKey(phone);
  const stub = objectOf(env, pk, shards);
  const key = await textKey(pk, digits);
  if (await stub.swapEntry(key, WAITING, ARRIVED)) return "accepted";
  return (await stub.getEntry(key)) === null ? "unknown" : "used";
}
