// The sign-in steps after the first page (form contract and state machine in docs/signin.md):
// every POST carries the transaction id and CSRF token, and the browser cookie bound to the
// transaction. Each step is one call on the store object holding the sign-in
// (workers/provider/store/signin-store.ts); a submission that loses a race changes nothing and is answered
// with the page of the state that won. A wrong entry re-renders the step (200), a limit answers
// 429 with Retry-After, an unknown or expired transaction 403; only the last step redirects.

import { isRandomValue, isTelco, normalizePhone } from "../../core/spec";
import { readHostCookie } from "../../core/cookies";
import { carrierDirectory, CarrierUnavailable, maskPhone, type ConfirmedSubscriber } from "./carrier";
import { ConfigError } from "../../core/config";
import { providerConfig, type ProviderEnv } from "../config";
import { randomDigits, sha256 } from "../../core/crypto";
import type { Params } from "../../core/http";
import { cspNonce } from "../../core/html";
import { formatKstTime } from "../dates";
import { pickLang, t, type Lang } from "./i18n";
import { shardOf, storeFor } from "../store/one-time/one-time-store";
import type { RequestContext } from "../../core/router";
import { signinConfig } from "./config";
import { smsSender } from "./sms/configured";
import { smsText } from "./sms/text";
import type { SmsAttempt } from "./sms/failover";
import { autoLoginEligible, endOtherSubscribersOnDevice } from "./finish";
import type { Shared, SigninPurpose, Submission } from "./signin-purpose";
import {
  hitIp,
  ipCounter,
  ipKey,
  ipRefusal,
  networkKey,
  numberLimits,
  phoneKey,
  type IpHit,
  type Refusal,
} from "./limits";
import {
  bareContext,
  consentPage,
  formActionOf,
  identifyPage,
  stopPage,
  termsVersion,
  verifyPage,
  type Alert,
  type ConsentTerms,
  type IdentifyValues,
  type PageContext,
  type PageResult,
} from "./pages";
import {
  bindingHolds,
  sameBrowser,
  challengeHash,
  handleOf,
  loadTransaction,
  maskMove,
  nextTxId,
  pageToken,
  stepGate,
  TX_COOKIE,
  txKey,
  type Transaction,
  type TxHandle,
} from "./transaction";
import { type Client, findClient } from "../store/clients";
import { reviewEntryById, subscriberById } from "../store/directory/directory";
import { raiseNotice, suspendedText } from "../store/notices";
import { consentForLogin, findLink, type Link } from "../store/directory/links";
import { audit, auditAll, auditRecord, type AuditRecord } from "../store/one-time/audit";
import type { SigninRecord, VerifyResult } from "../store/one-time/signin-store";

/** One step submission: the transaction, its client and what rendering needs. */
interface Flow extends Submission {
  purpose: SigninPurpose;
  client: Client;
  h: TxHandle;
  ctx: PageContext;
  /** This submission's count in its network's step-1 limit, when it was taken with the read. */
  ipHit?: IpHit;
}

function pageContext(env: ProviderEnv, tx: Transaction, appName: string, txId?: string, csrf?: string): PageContext {
  return {
    operator: signinConfig(env).operator,
    lang: tx.lang,
    hybrid: tx.isHybrid,
    appName,
    txId,
    csrf,
    nonce: cspNonce(),
    formAction: formActionOf(tx.redirectUri),
    purpose: tx.purpose,
  };
}

/** The flow continuing on another handle (the record the store returned, or a moved-to one). */
function at(f: Flow, h: TxHandle): Flow {
  return { ...f, h, ctx: { ...f.ctx, txId: h.page ?? h.id, lang: h.tx.lang } };
}

function minutes(ms: number): number {
  return Math.max(1, Math.ceil(ms / 60_000));
}

function refusalAlert(lang: Lang, r: Refusal, field?: Alert["field"]): Alert {
  const left = r.until - Date.now();
  switch (r.limit) {
    case "ip":
      return { text: t(lang, "errIpLimit", { minutes: minutes(left) }) };
    case "locked":
      return { text: t(lang, "errLocked", { minutes: minutes(left), until: formatKstTime(r.until, lang) }), field };
    case "cooldown":
      return { text: t(lang, "errCooldown", { seconds: Math.max(1, Math.ceil(left / 1000)) }), field };
    case "sends":
      return { text: t(lang, "errSendLimit", { minutes: minutes(left) }), field };
  }
}

function limited(r: Refusal): PageResult {
  return { status: 429, retryAfterSeconds: Math.max(0, r.until - Date.now()) / 1000 };
}

function failure(f: Flow, reason: string): void {
  f.rc.waitUntil(
    audit(f.env, "signin.failure", f.client.clientId || null, "refused", {
      reason,
      step: f.h.tx.step,
      ...f.purpose.audit,
    }),
  );
}

/** `restart=Y` from a stop page: the sign-in ends, and its purpose answers (an app: `login_required`). */
async function restarted(h: TxHandle, rc: RequestContext, purpose: SigninPurpose): Promise<Response> {
  if (!h.page) await h.stub.signinFinish(h.key, ["identify", "verify", "consent"]);
  rc.log.event = "signin.restart";
  return purpose.restarted(h.tx);
}

/** The page of the transaction's current step. */
function render(
  f: Flow,
  alert?: Alert,
  result?: PageResult,
  extra: { notice?: string; locked?: boolean } = {},
): Response {
  const tx = f.h.tx;
  const c = tx.challenge;
  const usable = c && c.attempts < f.cfg.otpMaxAttempts && c.expiresAt > Date.now();
  switch (tx.step) {
    case "identify":
    case "moved":
      return identifyPage(f.ctx, {}, alert, result);
    case "verify":
      return verifyPage(
        f.ctx,
        {
          masked: tx.subscriber!.masked,
          test: tx.subscriber!.testOtpHash !== null,
          minutes: Math.max(1, Math.round(f.cfg.otpTtlMs / 60_000)),
          state: extra.locked ? "locked" : usable ? "enter" : "newCode",
          until: c ? formatKstTime(c.expiresAt, f.ctx.lang) : undefined,
          autoLogin: tx.autoLoginEligible
            ? {
                days: Math.round(f.cfg.autoLoginTtlMs / 86_400_000),
                // The person's choice once the verify form was posted; before, unticked for everyone:
                // whether the number has automatic login with this app is not shown to whoever typed it.
                checked: f.params.get("autoLogin") === "Y",
              }
            : null,
          notice: extra.notice,
        },
        alert,
        result,
      );
    case "consent":
      return consentPage(f.ctx, consentTerms(f.client), alert, result);
  }
}

/** Another submission changed the transaction first: show where it is now (following a move). */
async function conflict(f: Flow, now: Transaction | null): Promise<Response> {
  if (now === null) return ended(f);
  return now.step === "moved" ? current(f) : render(at(f, handleOf(f.h, now)));
}

/** The page of where the sign-in is now, read again from the submitted transaction (moves followed). */
async function current(f: Flow, id = f.h.id): Promise<Response> {
  const h = await loadTransaction(f.env, f.shards, id);
  return h ? render(at(f, h)) : ended(f);
}

/** The sign-in has ended (or is unknown): nothing continues it from here. */
function ended(f: Flow): Response {
  return stopPage(f.ctx, t(f.ctx.lang, "unknownTitle"), t(f.ctx.lang, "unknownText"));
}

/**
 * Sends a code by SMS; false when no gateway took it (a configuration error still throws). Every
 * attempt is audited with its gateway, result and latency, never the number, text or code.
 */
async function sendCode(f: Flow, phone: string, code: string): Promise<boolean> {
  const attempts: SmsAttempt[] = [];
  try {
    const lang = f.h.tx.lang;
    const minutes = Math.max(1, Math.round(f.cfg.otpTtlMs / 60_000));
    // The WebOTP line names the host of the code page, the origin the phone offers the code to.
    const text = smsText(lang, code, minutes, new URL(f.req.url).hostname);
    await smsSender(f.env, (a) => attempts.push(a)).send({ to: phone, code, lang, text });
    return true;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    f.rc.log.cause = "sms delivery failed";
    return false;
  } finally {
    if (attempts.length > 0)
      f.rc.waitUntil(
        auditAll(
          f.env,
          attempts.map((a) => smsAttemptRecord(f, a)),
        ),
      );
  }
}

/** An `sms.attempt` audit event: the gateway, how it ended, its latency and the provider's status. */
function smsAttemptRecord(f: Flow, a: SmsAttempt): AuditRecord {
  const detail: Record<string, string | number> = { provider: a.gateway, result: a.result, ms: a.ms };
  if (a.status !== undefined) detail.status = a.status;
  if (a.code !== undefined) detail.code = a.code;
  Object.assign(detail, f.purpose.audit);
  return auditRecord("sms.attempt", f.client.clientId || null, a.result === "delivered" ? "ok" : "refused", detail);
}

/** A one-time code and its digest: test numbers have their fixed code (nothing is sent). */
async function newCode(testOtpHash: string | null): Promise<{ code: string | null; digest: string }> {
  if (testOtpHash !== null) return { code: null, digest: testOtpHash };
  const code = randomDigits(6);
  return { code, digest: await sha256(code) };
}

/** A code that could not be sent: withdrawn (its send given back) and the verify page says so. */
async function sendFailed(f: Flow): Promise<Response> {
  const tx = await f.h.stub.signinUnsend(f.h.key, f.h.tx.subscriber!.phoneKey, numberLimits(f.cfg));
  if (tx === null || tx.step !== "verify") return conflict(f, tx);
  return render(at(f, handleOf(f.h, tx)), { text: t(f.ctx.lang, "errSendFailed") }, { status: 503 });
}

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

/**
 * The number cannot be confirmed: step 1's page with the answer it gives any number the carriers do
 * not know (nothing says why), whatever step the sign-in is at; posting it starts step 1 again.
 */
function unconfirmed(f: Flow, reason: string, values: IdentifyValues = {}): Response {
  failure(f, reason);
  return identifyPage(f.ctx, values, { text: t(f.ctx.lang, "errUnconfirmed") }, {});
}

/**
 * A review test number at its cap of wrong codes (TEST_NUMBER_MAX_FAILURES): answered as a number
 * the carriers do not know. The entry that reached the cap audits the suspension; every refusal
 * raises the operator's notice again (kept once), so a notice lost with a request comes back.
 */
function suspended(f: Flow, sub: NonNullable<SigninRecord["subscriber"]>, crossed: boolean, values?: IdentifyValues) {
  const max = f.cfg.testNumberMaxFailures;
  if (crossed)
    f.rc.waitUntil(audit(f.env, "test_number.suspended", f.client.clientId || null, "refused", { failures: max }));
  f.rc.waitUntil(raiseNotice(f.env, "test_number.suspended", sub.phoneKey, suspendedText(sub.masked, max)));
  f.rc.log.event = "signin.test_number_suspended";
  return unconfirmed(f, "test_number_suspended", values);
}

/**
 * Whether a review test number's registration, read again, still lets this sign-in go on: not
 * removed or expired, the same code and person at the same number, the app still listed. True for
 * every other number (nothing read).
 */
async function reviewAllows(f: Flow): Promise<boolean> {
  const sub = f.h.tx.subscriber!;
  if (!sub.review) return true;
  const e = await reviewEntryById(f.env, sub.id);
  return (
    e !== null &&
    e.review !== null &&
    e.review.clients.includes(f.client.clientId) &&
    Date.now() < e.review.expiresAt &&
    e.testOtpHash === sub.testOtpHash &&
    (await phoneKey(e.phone)) === sub.phoneKey
  );
}

/**
 * Step 1: the number is confirmed, then the sign-in moves to the number's store object in one
 * call there (lock, send limits, the new record with its code), and the previous record is marked
 * moved unless another submission moved it first; then the loser's record is withdrawn, and only
 * the winner sends its code.
 */
async function identify(f: Flow): Promise<Response> {
  const L = f.ctx.lang;
  const values: IdentifyValues = {
    telcoCd: f.params.get("telcoCd"),
    name: f.params.get("name"),
    phoneNo: f.params.get("phoneNo"),
  };
  const ip = f.ipHit ? ipRefusal(f.ipHit, f.cfg) : await hitIp(f.env, f.shards, f.cfg, f.req);
  if (ip) {
    failure(f, "ip_limited");
    return identifyPage(f.ctx, values, refusalAlert(L, ip), limited(ip));
  }
  // 알뜰폰 lines are chosen by their host network (MS, MK, ML) and are that network's subscribers.
  const telco = values.telcoCd?.startsWith("M") ? values.telcoCd.slice(1) : values.telcoCd;
  if (!isTelco(telco) || (values.telcoCd!.length === 2 && !/^M[SKL]$/.test(values.telcoCd!)))
    return identifyPage(f.ctx, values, { text: t(L, "errTelco"), field: "telcoCd" }, {});
  const name = values.name?.trim();
  if (!name || name.length > 50) return identifyPage(f.ctx, values, { text: t(L, "errName"), field: "name" }, {});
  if (!values.phoneNo) return identifyPage(f.ctx, values, { text: t(L, "errPhone"), field: "phoneNo" }, {});
  const phone = normalizePhone(values.phoneNo);
  if (!phone) return identifyPage(f.ctx, values, { text: t(L, "errPhoneFormat"), field: "phoneNo" }, {});

  let confirmed: ConfirmedSubscriber | null;
  try {
    // The person's link to the app is read with the number, for a purpose that asks consent.
    const linkOf = f.purpose.consent ? f.client.clientId : undefined;
    confirmed = await carrierDirectory(f.env).confirm(telco, name, phone, linkOf);
  } catch (err) {
    if (!(err instanceof CarrierUnavailable)) throw err;
    return carrierUnavailable(f, values, err);
  }
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
  const key = await phoneKey(phone);
  const nextId = await nextTxId(f.h.id, key, f.shards);
  const { code, digest } = await newCode(confirmed.testOtpHash);
  // A review test number gets no automatic login: its access ends with its expiry, not a grant's.
  const eligible = !review && autoLoginEligible(f.client, telco, f.h.tx.prompt);
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
    consentDue: consentDue(f.client, confirmed.link),
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
  f.rc.log.event = "signin.code_sent";
  return render(g);
}

async function resend(f: Flow): Promise<Response> {
  const L = f.ctx.lang;
  const sub = f.h.tx.subscriber!;
  // A resend counts against its network's step-1 limit, as the identify step it repeats does.
  const ip = await hitIp(f.env, f.shards, f.cfg, f.req);
  if (ip) {
    failure(f, "ip_limited");
    return render(f, refusalAlert(L, ip, "otp"), limited(ip));
  }
  if (!(await reviewAllows(f))) return unconfirmed(f, "test_number_refused");
  let phone = "";
  if (sub.testOtpHash === null) {
    const s = await subscriberById(f.env, sub.id);
    if (!s) return stopPage(f.ctx, t(L, "unknownTitle"), t(L, "unknownText"), f.purpose.restart(f.h));
    phone = s.phone;
  }
  const { code, digest } = await newCode(sub.testOtpHash);
  const r = await f.h.stub.signinResend({
    key: f.h.key,
    phoneKey: sub.phoneKey,
    netKey: await networkKey(f.req),
    hash: await challengeHash(f.h.id, digest),
    otpTtlMs: f.cfg.otpTtlMs,
    send: code !== null,
    limits: numberLimits(f.cfg),
  });
  if (r.result === "conflict") return conflict(f, r.record);
  const g = at(f, handleOf(f.h, r.record));
  if (r.result === "suspended") return suspended(g, sub, false);
  if (r.result === "refused")
    return render(g, refusalAlert(L, r.refusal, "otp"), limited(r.refusal), { locked: r.refusal.limit === "locked" });
  if (code !== null && !(await sendCode(g, phone, code))) return sendFailed(g);
  f.rc.log.event = "signin.code_resent";
  return render(g, undefined, undefined, { notice: t(L, code !== null ? "noticeResent" : "noticeResentTest") });
}

async function verify(f: Flow): Promise<Response> {
  if (f.params.get("resend") === "Y") return resend(f);
  const L = f.ctx.lang;
  const tx = f.h.tx;
  const sub = tx.subscriber!;
  const otp = f.params.get("otp")?.replace(/\s/g, "");
  if (!otp || !/^\d{6}$/.test(otp)) return render(f, { text: t(L, "errOtp"), field: "otp" });
  if (!(await reviewAllows(f))) return unconfirmed(f, "test_number_refused");
  const optIn = tx.autoLoginEligible === true && f.params.get("autoLogin") === "Y";
  const link = f.purpose.consent && !tx.consentDue ? await findLink(f.env, f.client.clientId, sub.id) : null;
  const needsConsent = f.purpose.consent && (!link || !covers(link, f.client));
  const r = await f.h.stub.signinVerify({
    key: f.h.key,
    phoneKey: sub.phoneKey,
    netKey: await networkKey(f.req),
    presented: await challengeHash(f.h.id, await sha256(otp), tx.challenge?.txBound ? undefined : sub.phoneKey),
    limits: numberLimits(f.cfg),
    next: needsConsent ? "consent" : "done",
    autoLoginOptIn: optIn,
  });
  if (r.result === "conflict") return conflict(f, r.record);
  const g = at(f, handleOf(f.h, r.record));
  const refused = codeRefused(g, r);
  if (refused) return refused;
  // The number is proven on this browser: from now on no other subscriber's automatic login answers
  // from it, whatever follows (the account page, a consent refused, a subscriber gone meanwhile).
  await endOtherSubscribersOnDevice(f.req, f.env, sub.id);
  if (needsConsent) {
    f.rc.log.event = "signin.consent";
    return render(g);
  }
  const done = await f.purpose.end(f, {
    tx: r.record,
    client: f.client,
    subscriberId: sub.id,
    optIn,
    shared: link ? sharedBy(link, f.client) : undefined,
  });
  return done ?? goneMeanwhile(f);
}

/** What a link shares with the client: its plid and the client's items it covers. */
function sharedBy(link: Link, client: Client): Shared {
  return { plid: link.plid, items: client.items.filter((i) => link.items.includes(i)) };
}

/** Whether a link holds consent to everything the client asks. */
function covers(link: Pick<Link, "items">, client: Client): boolean {
  return client.items.every((i) => link.items.includes(i));
}

/**
 * `consentDue` of the identify step's record: true when the person's link, read with the number,
 * does not cover the client's items; absent when it does or was not read (the code step reads it).
 */
function consentDue(client: Client, link: Pick<Link, "items"> | null | undefined): true | undefined {
  return link === null || (link !== undefined && !covers(link, client)) ? true : undefined;
}

/** The page of a code entry that did not prove the number (`g` at the record it left); null for a right code. */
function codeRefused(g: Flow, r: Exclude<VerifyResult, { result: "conflict" }>): Response | null {
  const L = g.ctx.lang;
  switch (r.result) {
    case "refused":
      failure(g, "locked");
      return render(g, refusalAlert(L, r.refusal, "otp"), limited(r.refusal), { locked: r.refusal.limit === "locked" });
    case "absent":
      return render(g, { text: t(L, "errOtpGone"), field: "otp" });
    case "expired":
      failure(g, "otp_expired");
      return render(g, { text: t(L, "errOtpExpired"), field: "otp" });
    case "exhausted":
      return render(g, { text: t(L, "errOtpExhausted"), field: "otp" }, { status: 429, retryAfterSeconds: 1 });
    case "suspended":
      return suspended(g, g.h.tx.subscriber!, r.crossed);
    case "wrong": {
      failure(g, "otp_wrong");
      if (r.refusal)
        return render(g, refusalAlert(L, r.refusal, "otp"), limited(r.refusal), {
          locked: r.refusal.limit === "locked",
        });
      return render(g, { text: r.left > 0 ? t(L, "errOtpWrong", { left: r.left }) : t(L, "errOtpLast"), field: "otp" });
    }
    case "ok":
      return null;
  }
}

/**
 * A right code taken by the gated call (`gatedStep`), which always moves the sign-in to consent:
 * the consent page, or, when the person consented before to everything the app asks, the end.
 */
async function codeProven(f: Flow): Promise<Response> {
  const sub = f.h.tx.subscriber!;
  await endOtherSubscribersOnDevice(f.req, f.env, sub.id);
  const link = f.h.tx.consentDue ? null : await findLink(f.env, f.client.clientId, sub.id);
  if (!link || !covers(link, f.client)) {
    f.rc.log.event = "signin.consent";
    return render(f);
  }
  const ended = await f.h.stub.signinFinish(f.h.key, ["consent"]);
  if (!ended.ended) return conflict(f, ended.record);
  const done = await f.purpose.end(f, {
    tx: ended.record!,
    client: f.client,
    subscriberId: sub.id,
    optIn: ended.record!.autoLoginOptIn === true,
    shared: sharedBy(link, f.client),
  });
  return done ?? goneMeanwhile(f);
}

/** What the consent page states, as the client is now. */
function consentTerms(client: Client): ConsentTerms {
  const terms = { items: client.items, purpose: client.purpose, retention: client.retention };
  return { ...terms, app: client.clientId, version: termsVersion(client.name, terms) };
}

async function consent(f: Flow): Promise<Response> {
  const agree = f.params.get("agree");
  if (agree === "N") return cancel(f);
  if (agree !== "Y") return render(f, { text: t(f.ctx.lang, "errAgree"), field: "agree" });
  // An agreement holds for the terms shown: changed since (or not posted back), the page again.
  if (f.params.get("terms") !== consentTerms(f.client).version) {
    f.rc.log.event = "signin.consent_terms_changed";
    return render(f, { text: t(f.ctx.lang, "errTermsChanged") });
  }
  const done = await f.h.stub.signinFinish(f.h.key, ["consent"]);
  if (!done.ended) return conflict(f, done.record);
  return consented(f, done.record!);
}

/** The consent agreed and the sign-in ended (`tx` as it was): the link written and the code minted. */
async function consented(f: Flow, tx: Transaction): Promise<Response> {
  const sub = tx.subscriber!;
  const consented = await consentForLogin(f.env, f.client.clientId, sub.id, f.client.items);
  if (consented === null) return goneMeanwhile(f);
  const consentEvent = auditRecord("consent", f.client.clientId, "ok", { items: f.client.items.length });
  const optIn = tx.autoLoginEligible === true && (tx.autoLoginOptIn === true || f.params.get("autoLogin") === "Y");
  // The consent is written: its event goes with the code (one write), or alone when nothing is
  // minted, whether the sign-in ended (gone meanwhile) or failed (a store down before the code).
  let completed: Response | null = null;
  try {
    completed = await f.purpose.end(f, {
      tx,
      client: f.client,
      subscriberId: sub.id,
      optIn,
      shared: {
        plid: consented.plid,
        items: f.client.items,
        consented: { subscriber: consented.subscriber, audit: consentEvent },
      },
    });
  } finally {
    if (!completed) f.rc.waitUntil(auditAll(f.env, [consentEvent]));
  }
  return completed ?? goneMeanwhile(f);
}

/**
 * What the sign-in stood on went away during it (its transaction has ended): the subscriber removed
 * or their number reassigned, the client deleted, or the plid ended by a disconnect. Nothing is
 * minted or linked, and the person starts again from the app.
 */
function goneMeanwhile(f: Flow): Response {
  failure(f, "gone_meanwhile");
  f.rc.log.event = "signin.gone_meanwhile";
  return stopPage(
    pageContext(f.env, f.h.tx, f.client.name),
    t(f.ctx.lang, "unknownTitle"),
    t(f.ctx.lang, "unknownText"),
  );
}

async function cancel(f: Flow): Promise<Response> {
  const done = f.h.page
    ? { ended: true, record: f.h.tx }
    : await f.h.stub.signinFinish(f.h.key, ["identify", "verify", "consent"]);
  if (!done.ended) return conflict(f, done.record);
  failure(f, "cancelled");
  f.rc.log.event = "signin.cancelled";
  return f.purpose.cancelled(done.record!);
}

async function switchLanguage(f: Flow, lang: Lang): Promise<Response> {
  if (f.h.page) {
    // A first page is signed again in the other language (the record it carries, `lang` changed).
    const tx = { ...f.h.tx, lang };
    return render(at(f, { ...f.h, tx, page: await pageToken(f.env, f.h.id, tx) }));
  }
  const tx = await f.h.stub.signinSetLang(f.h.key, lang);
  if (tx === null || tx.step === "moved") return conflict(f, tx);
  return render(at(f, handleOf(f.h, tx)));
}

/**
 * The code and the consent of an app's sign-in in one store call each, with no read of the record
 * before: the object checks the page's CSRF token and browser binding itself (`StepGate`), and the
 * client is read after, from the record (or, for the consent, first, from the page's `app`, since
 * the agreement must answer the app's terms as they are). Whatever the call leaves unsettled (the
 * sign-in elsewhere, ended or expired, another browser or token, an /account sign-in), and every
 * other submission, goes the full way: null.
 */
async function gatedStep(s: Submission, purpose: SigninPurpose): Promise<Response | null> {
  const { req, env, rc, cfg, shards, params } = s;
  const id = params.get("tx");
  const csrf = params.get("csrf");
  const browser = readHostCookie(req, TX_COOKIE);
  if (!isRandomValue(id) || csrf === undefined || browser === undefined) return null;
  if (["phoneNo", "lang", "cancel", "restart", "resend"].some((p) => params.has(p))) return null;
  const otp = params.get("otp")?.replace(/\s/g, "");
  const agree = params.get("agree");
  const stub = storeFor(env, id, shards);
  if (otp !== undefined && agree === undefined) {
    if (!/^\d{6}$/.test(otp)) return null;
    const [key, gate, presented, netKey] = await Promise.all([
      txKey(id),
      stepGate(csrf, browser),
      sha256(otp).then((digest) => challengeHash(id, digest)),
      networkKey(req),
    ]);
    const r = await stub.signinVerifyGated({
      key,
      gate,
      netKey,
      presented,
      limits: numberLimits(cfg),
      autoLoginOptIn: params.get("autoLogin") === "Y",
    });
    if (r.result === "unsettled" || r.result === "conflict") return null;
    rc.log.clientId = r.record.clientId;
    const f = await flowOf(s, purpose, { id, key, stub, tx: r.record }, csrf);
    if (f instanceof Response) return f;
    return codeRefused(f, r) ?? codeProven(f);
  }
  const app = params.get("app");
  if (agree !== "Y" || otp !== undefined || app === undefined) return null;
  const client = await findClient(env, app, providerConfig(env).clientCacheMs);
  if (!client || params.get("terms") !== consentTerms(client).version) return null;
  const [key, gate] = await Promise.all([txKey(id), stepGate(csrf, browser)]);
  const r = await stub.signinFinishGated(key, gate, app);
  if ("result" in r) return null;
  rc.log.clientId = app;
  const f = await flowOf(s, purpose, { id, key, stub, tx: r.record }, csrf, client);
  return f instanceof Response ? f : consented(f, r.record);
}

/**
 * The flow of a submission at its record: the client read (unless given), and the stop page when
 * it is gone or disabled or the sign-in can no longer end there (an app without the sign-in's
 * redirect URI: no code goes there).
 */
async function flowOf(
  s: Submission,
  purpose: SigninPurpose,
  h: TxHandle,
  csrf: string | undefined,
  given?: Client | null,
): Promise<Flow | Response> {
  const { env } = s;
  const tx = h.tx;
  const client = given !== undefined ? given : await purpose.client(env, tx);
  if (!client || !purpose.reaches(env, client, tx))
    return stopPage(
      pageContext(env, tx, client?.name ?? ""),
      t(tx.lang, "clientGoneTitle"),
      t(tx.lang, "clientGoneText"),
    );
  return { ...s, purpose, client, h, ctx: pageContext(env, tx, client.name, h.page ?? h.id, csrf) };
}

/**
 * A step submission (a POST carrying `tx`) of a sign-in for `purpose`: to /oauth2/authorize for an
 * app's sign-in (authorize/purpose.ts), to /account for the person's own page (account/purpose.ts).
 */
export async function continueSignIn(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  params: Params,
  purpose: SigninPurpose,
): Promise<Response> {
  const cfg = signinConfig(env);
  const shards = providerConfig(env).oneTimeShards;
  const submission: Submission = { req, env, rc, cfg, shards, params };
  if (purpose.gated) {
    const done = await gatedStep(submission, purpose);
    if (done) return done;
  }
  // A step-1 submission is counted against its network's limit in the call that reads its
  // transaction, when that is a first page's, made in the network's object (`createTransaction`).
  const txId = params.get("tx");
  const ip = params.has("phoneNo") && isRandomValue(txId) ? await ipKey(req) : undefined;
  let ipHit: IpHit | undefined;
  const h = await loadTransaction(
    env,
    shards,
    txId,
    ip !== undefined && shardOf(ip, shards) === shardOf(txId!, shards)
      ? async (stub, key) => {
          const r = await stub.signinGetHit(key, ipCounter(ip), cfg.ipWindowMs);
          ipHit = r.hit;
          return r.record;
        }
      : undefined,
  );
  if (!h) {
    rc.log.event = "signin.unknown_tx";
    const lang = pickLang(req.headers.get("Accept-Language"));
    return stopPage(bareContext(signinConfig(env).operator, lang), t(lang, "unknownTitle"), t(lang, "unknownText"));
  }
  const tx = h.tx;
  rc.log.clientId = tx.clientId;
  // A transaction serves the purpose it was made for: an app's step cannot be posted to /account.
  if (tx.purpose !== purpose.mark) {
    const lang = tx.lang;
    return stopPage(pageContext(env, tx, ""), t(lang, "unknownTitle"), t(lang, "unknownText"));
  }
  if (params.get("restart") === "Y") {
    // The way back from a stop page, which may lack the CSRF token; the browser's cookie is still
    // needed: from anywhere else it would end someone's sign-in and hand out their app's state.
    if (!(await sameBrowser(req, tx))) {
      rc.log.event = "signin.restart_refused";
      return stopPage(pageContext(env, tx, ""), t(tx.lang, "unknownTitle"), t(tx.lang, "unknownText"));
    }
    // Back only while the sign-in could still end there (an app active, with the redirect URI):
    // else the page a cancel gets in the same case (nothing goes to that address).
    const flow = await flowOf(submission, purpose, h, undefined);
    if (flow instanceof Response) return flow;
    return restarted(h, rc, purpose);
  }
  const client = await purpose.client(env, tx);
  const stopCtx = pageContext(env, tx, client?.name ?? "");
  if (Date.now() >= tx.expiresAt) {
    rc.log.event = "signin.expired";
    return stopPage(
      stopCtx,
      t(tx.lang, "expiredTitle"),
      t(tx.lang, "expiredText", { minutes: minutes(cfg.txTtlMs) }),
      purpose.restart(h),
    );
  }
  const csrf = params.get("csrf");
  if (!(await bindingHolds(req, tx, csrf))) {
    rc.log.event = "signin.csrf_refused";
    return stopPage(stopCtx, t(tx.lang, "forbiddenTitle"), t(tx.lang, "forbiddenText"), purpose.restart(h));
  }
  // A client disabled, or the sign-in's redirect URI removed, since the sign-in began: no code goes there.
  const flow = await flowOf(submission, purpose, h, csrf, client);
  if (flow instanceof Response) return flow;
  const f: Flow = ipHit ? { ...flow, ipHit } : flow;

  const lang = params.get("lang");
  if (lang === "ko" || lang === "en") return switchLanguage(f, lang);
  if (params.get("cancel") === "Y" && tx.step !== "consent") return cancel(f);
  // The identify form posted again (back button, a corrected number): step 1 starts over.
  if (params.has("phoneNo") && tx.step !== "identify") return identify(f);
  switch (tx.step) {
    case "identify":
    case "moved":
      return identify(f);
    case "verify":
      return verify(f);
    case "consent":
      return params.get("cancel") === "Y" ? cancel(f) : consent(f);
  }
}
