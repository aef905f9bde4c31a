// Step 1, identify (docs/signin.md "State machine"): the carrier, name and number checked against
// the carrier directory, then the sign-in opened in the number's store object in one call, the
// previous record marked moved, and the code sent by the winner only.

import { isTelco, normalizePhone } from "../../core/spec";
import { storeFor, audit } from "../store/one-time/index";
import { tally, timing } from "../store/metrics/index";
import { carrierDirectory, CarrierUnavailable, maskPhone, type ConfirmedSubscriber } from "./carrier";
import { newCode, sendCode, sendFailed } from "./code";
import { consentDue } from "./consent";
import { autoLoginEligible } from "./device";
import { at, conflict, current, ended, failure, limited, refusalAlert, render, type Flow } from "./flow";
import { t } from "./i18n";
import { hitIp, ipRefusal, networkKey, numberLimits, phoneKey } from "./limits";
import { identifyPage, type IdentifyValues } from "./pages";
import { budgetOf, guardGate } from "./guard-gate";
import { guardCount } from "./guard";
import { suspended } from "./review";
import { testingGate } from "./testing";
import { offerText } from "./text";
import { provedFor, stillHolds } from "./proved-browser";
import { riskOf } from "./risk";
import { textConfig, textOffered } from "./text-config";
import { challengeHash, handleOf, maskMove, nextTxId, txKey, type Transaction, type TxHandle } from "./transaction";

/** Seconds a person is asked to wait when the carrier could not be asked. */
const CARRIER_RETRY_SECONDS = 5;

/**
 * The carrier gave no answer to trust (docs/carrier-api.md): the same step with "try again
 * shortly", the person's entries kept. No failure is counted against the person or the number
 * (nothing was learned of them); the fault is logged and audited by its reason alone.
 */
function carrierUnavailable(f: Flow, values: IdentifyValues, err: CarrierUnavailable): Response {
  f.rc.log.cause = err.message;
  f.rc.log.event = "signin.carrier_unavailable";
  f.rc.waitUntil(audit(f.env, "carrier.unavailable", f.client.clientId || null, "refused", { reason: err.reason }));
  return identifyPage(
    f.ctx,
    values,
    { text: t(f.ctx.lang, "errCarrierUnavailable") },
    { status: 503, retryAfterSeconds: CARRIER_RETRY_SECONDS },
  );
}

/** An identify submission's outcome, counted per app (docs/operations.md "Metrics"). */
function outcome(f: Flow, what: "matched" | "unconfirmed" | "invalid" | "refused" | "unavailable"): void {
  // an app's sign-ins only: the funnel from its first page (the console's and /account's are not apps')
  if (f.client.clientId) tally(f.env, f.rc, `identify.${what}`, f.client.clientId);
}

/** The carrier check's outcome and time (the carrier API's when configured, else the directory's). */
function carrierAnswered(f: Flow, result: "ok" | "failed", asked: number): void {
  tally(f.env, f.rc, `carrier.${result}`, null);
  timing(f.env, f.rc, "carrier", Date.now() - asked);
}

/**
 * Step 1: the number is confirmed, then the sign-in moves to the number's store object in one
 * call there (lock, send limits, the new record with its code), and the previous record is marked
 * moved unless another submission moved it first; then the loser's record is withdrawn, and only
 * the winner sends its code.
 */
export async function identify(f: Flow): Promise<Response> {
  const L = f.ctx.lang;
  const values: IdentifyValues = {
    telcoCd: f.params.get("telcoCd"),
    name: f.params.get("name"),
    phoneNo: f.params.get("phoneNo"),
    carrierTerms: f.params.get("carrierTerms"),
  };
  const ip = f.ipHit ? ipRefusal(f.ipHit, f.cfg) : await hitIp(f.env, f.shards, f.cfg, f.req);
  if (ip) {
    outcome(f, "refused");
    failure(f, "ip_limited");
    return identifyPage(f.ctx, values, refusalAlert(L, ip), limited(ip));
  }
  // 알뜰폰 lines are chosen by their host network (MS, MK, ML) and are that network's subscribers.
  const telco = values.telcoCd?.startsWith("M") ? values.telcoCd.slice(1) : values.telcoCd;
  const invalid = (text: Parameters<typeof t>[1], field: keyof IdentifyValues) => {
    outcome(f, "invalid");
    return identifyPage(f.ctx, values, { text: t(L, text), field }, {});
  };
  if (!isTelco(telco) || (values.telcoCd!.length === 2 && !/^M[SKL]$/.test(values.telcoCd!)))
    return invalid("errTelco", "telcoCd");
  const name = values.name?.trim();
  if (!name) return invalid("errName", "name");
  if (name.length > 50) return invalid("errNameLong", "name");
  if (!values.phoneNo) return invalid("errPhone", "phoneNo");
  const phone = normalizePhone(values.phoneNo);
  if (!phone) return invalid("errPhoneFormat", "phoneNo");
  // the required agreements, before the carrier is asked (docs/signin.md "The agreements")
  if (values.carrierTerms !== "Y") return invalid("errTerms", "carrierTerms");
  // A testing app admits its team's and its test numbers only, decided before anyone is looked up.
  const testing = await testingGate(f, phone);
  if (testing) return testing;
  // A text from the person for every sign-in, or where the guard decides so from the request alone,
  // before anyone is looked up (docs/abuse.md).
  // A browser that proved this number before gets its code by SMS whatever the guard says.
  const key = await phoneKey(phone);
  const proved = await provedFor(f.req, f.env, key);
  if (!proved && textOffered(f.env) && textConfig(f.env).mode === "all")
    return offerText(f, values, telco, name, phone);
  let guarded = await guardGate(f, values, phone, proved !== null);
  if (guarded instanceof Response) return guarded;
  if (guarded === "text") return offerText(f, values, telco, name, phone);

  let confirmed: ConfirmedSubscriber | null;
  const asked = Date.now();
  try {
    // The person's link to the app is read with the number, for a purpose that asks consent.
    const linkOf = f.purpose.consent ? f.client.clientId : undefined;
    confirmed = await carrierDirectory(f.env).confirm(telco, name, phone, linkOf);
    carrierAnswered(f, "ok", asked);
  } catch (err) {
    if (!(err instanceof CarrierUnavailable)) throw err;
    carrierAnswered(f, "failed", asked);
    outcome(f, "unavailable");
    return carrierUnavailable(f, values, err);
  }
  outcome(f, confirmed ? "matched" : "unconfirmed");
  if (!confirmed) {
    failure(f, "unconfirmed");
    return identifyPage(f.ctx, values, { text: t(L, "errUnconfirmed") }, {});
  }
  // A review test number answers only for its listed apps, until its expiry: elsewhere it is
  // unknown, with the same answer as any number the carriers cannot confirm.
  const review = confirmed.review ?? null;
  if (review && (!review.clients.includes(f.client.clientId) || Date.now() >= review.expiresAt)) {
    failure(f, "test_number_refused");
    return identifyPage(f.ctx, values, { text: t(L, "errUnconfirmed") }, {});
  }
  // A SIM change or a port within the risk window (docs/security.md "SIM changes and ports"): no
  // automatic login, and a person with an active passkey must use it, which a right code tells them
  // (store/one-time/signin-store.ts). Until that proof the sign-in looks as any other: the code is
  // sent and the code page is the same, box and all, so whoever typed the number learns nothing.
  // The proof of this browser names the person the number had then: passed to another person
  // since, it no longer holds, and the guard decides as for any browser.
  if (proved && !(await stillHolds(f.env, proved, key, confirmed.subscriber.id))) {
    guarded = await guardGate(f, values, phone);
    if (guarded instanceof Response) return guarded;
    if (guarded === "text") return offerText(f, values, telco, name, phone);
  }
  const risk = await riskOf(f, confirmed);
  const nextId = await nextTxId(f.h.id, key, f.shards);
  const { code, digest } = await newCode(confirmed.testOtpHash);
  // A review test number gets no automatic login: its access ends with its expiry, not a grant's.
  const offered = !review && autoLoginEligible(f.client, telco, f.h.tx.prompt);
  const eligible = offered && risk === null;
  const record: Transaction = {
    ...f.h.tx,
    v: 0,
    step: "verify",
    movedTo: undefined,
    subscriber: {
      id: confirmed.subscriber.id,
      telco,
      phoneKey: key,
      masked: maskPhone(phone),
      testOtpHash: confirmed.testOtpHash,
      ...(review ? { review: true } : {}),
    },
    challenge: {
      hash: await challengeHash(nextId, digest),
      attempts: 0,
      expiresAt: Date.now() + f.cfg.otpTtlMs,
      txBound: true,
    },
    autoLoginEligible: eligible,
    autoLoginOptIn: false,
    autoLoginShown: offered && !eligible ? true : undefined,
    consentDue: consentDue(f.client, confirmed.link),
    riskUntil: risk?.until,
    passkeyRequired: risk?.passkey ? true : undefined,
    ...(guarded && code !== null ? { guard: guarded } : {}),
  };
  const next: TxHandle = { id: nextId, key: await txKey(nextId), stub: storeFor(f.env, nextId, f.shards), tx: record };
  const limits = numberLimits(f.cfg);
  const opened = await next.stub.signinOpen({
    key: next.key,
    record,
    netKey: await networkKey(f.req),
    send: code !== null,
    limits,
  });
  if (opened.result === "stale") {
    // The sign-in went on without this submission since it was read (it ended, or moved on to
    // another number): nothing was opened or sent; the page of where the sign-in is now. From a
    // first page, that is the sign-in this number opened from it.
    f.rc.log.event = "signin.stale_identify";
    return f.h.page ? current(f, nextId) : current(f);
  }
  if (opened.result === "refused") {
    if (opened.refusal.limit === "locked") failure(f, "locked");
    return identifyPage(f.ctx, values, refusalAlert(L, opened.refusal), limited(opened.refusal));
  }
  if (opened.result === "suspended") return suspended(f, record.subscriber!, false, values);
  const waiting = opened.result === "waiting" ? opened.until : null;
  // A first page has no record to move: each number posted from it opens its own sign-in.
  const movedTo = f.h.page ? "" : await maskMove(f.h.id, nextId);
  const moved = f.h.page ? { moved: true, record: null } : await f.h.stub.signinSupersede(f.h.key, f.h.tx.v, movedTo);
  const won = moved.moved || (moved.record?.step === "moved" && moved.record.movedTo === movedTo);
  if (!won) {
    if (opened.result === "opened" || waiting !== null)
      await next.stub.signinAbandon(next.key, key, opened.result === "opened" && code !== null, limits);
    return conflict(f, moved.record);
  }
  // The record this submission opened and itself moved the sign-in to is as it wrote it. Otherwise
  // a twin submission opened it, or moved the previous record to it first, and showed its page:
  // the sign-in may have gone on since (a code entered, a resend, a cancel), so it is read again.
  const now = opened.result === "opened" && moved.moved ? record : await next.stub.signinGet(next.key);
  if (now === null) return ended(f);
  if (now.step === "moved") return conflict(f, now);
  if (waiting !== null) {
    // A code went to this number moments ago (another sign-in): this one waits for the cooldown
    // on the code page, where getting a code is the next action.
    const g = at(f, handleOf(next, now));
    const seconds = Math.max(1, Math.ceil((waiting - Date.now()) / 1000));
    return render(g, undefined, undefined, { notice: t(L, "noticeWait", { seconds }) });
  }
  const g = at(f, handleOf(next, now));
  // Only the code this submission opened is sent, and only while it is still the one to enter.
  const ours = opened.result === "opened" && now.step === "verify" && now.challenge?.hash === record.challenge!.hash;
  if (ours && code !== null && !(await sendCode(g, phone, code))) return sendFailed(g);
  if (ours && record.guard) guardCount(f.env, f.rc, f.req, f.client.clientId, "sent", record.guard, budgetOf(f));
  f.rc.log.event = "signin.code_sent";
  return render(g);
}
