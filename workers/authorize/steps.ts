// The sign-in steps after the first page (issue 3; form contract in docs/signin.md): every POST
// carries the transaction id and CSRF token, and the browser cookie bound to the transaction.
// A wrong entry re-renders the step (200), a limit answers 429 with Retry-After, an unknown or
// expired transaction 403; only the last step redirects.

import { carrierDirectory, isTelco, maskPhone, normalizePhone } from "../core/carrier";
import { ConfigError, providerConfig, type Env } from "../core/config";
import { randomDigits, sha256 } from "../core/crypto";
import { clientNetwork, type Params } from "../core/http";
import { cspNonce, cspSourceFor } from "../core/html";
import { pickLang, t, type Lang } from "../core/i18n";
import { audit, findClient, findLink, recordConsent, subscriberById, type Client } from "../core/registry";
import type { RequestContext } from "../core/router";
import { signinConfig, type SigninConfig } from "../core/signin-config";
import { smsSender } from "../core/sms";
import { autoLoginEligible, complete, DENIED_MESSAGE, errorRedirect } from "./finish";
import { hitIp, lockOf, phoneKey, recordFailure, recordSuccess, takeSend, type Refusal } from "./limits";
import { consentPage, identifyPage, stopPage, verifyPage, type Alert, type IdentifyValues, type PageContext, type PageResult } from "./pages";
import { advance, bindingHolds, challengeKey, end, loadTransaction, restartUrl, type Transaction, type TxHandle } from "./transaction";

/** One step submission: the transaction, its client and what rendering needs. */
interface Flow {
  req: Request;
  env: Env;
  rc: RequestContext;
  cfg: SigninConfig;
  shards: number;
  params: Params;
  client: Client;
  h: TxHandle;
  ctx: PageContext;
}

function pageContext(tx: Transaction, appName: string, txId?: string, csrf?: string): PageContext {
  const target = cspSourceFor(tx.redirectUri);
  return { lang: tx.lang, hybrid: tx.isHybrid, appName, txId, csrf, nonce: cspNonce(), formAction: target ? [target] : [] };
}

function minutes(ms: number): number {
  return Math.max(1, Math.ceil(ms / 60_000));
}

function refusalAlert(lang: Lang, r: Refusal, field?: Alert["field"]): Alert {
  switch (r.limit) {
    case "ip":
      return { text: t(lang, "errIpLimit", { minutes: minutes(r.retryAfterMs) }) };
    case "locked":
      return { text: t(lang, "errLocked", { minutes: minutes(r.retryAfterMs) }), field };
    case "cooldown":
      return { text: t(lang, "errCooldown", { seconds: Math.max(1, Math.ceil(r.retryAfterMs / 1000)) }), field };
    case "sends":
      return { text: t(lang, "errSendLimit", { minutes: minutes(r.retryAfterMs) }), field };
  }
}

function limited(r: Refusal): PageResult {
  return { status: 429, retryAfterSeconds: r.retryAfterMs / 1000 };
}

function failure(f: Flow, reason: string): void {
  f.rc.waitUntil(audit(f.env, "signin.failure", f.client.clientId, "refused", { reason, step: f.h.tx.step }));
}

/** The page of the transaction's current step. */
function render(f: Flow, alert?: Alert, result?: PageResult, extra: { notice?: string } = {}): Response {
  const tx = f.h.tx;
  switch (tx.step) {
    case "identify":
      return identifyPage(f.ctx, {}, alert, result);
    case "verify":
      return verifyPage(
        f.ctx,
        {
          masked: tx.subscriber!.masked,
          test: tx.subscriber!.testOtpHash !== null,
          minutes: Math.max(1, Math.round(f.cfg.otpTtlMs / 60_000)),
          autoLogin: tx.autoLoginEligible
            ? { days: Math.round(f.cfg.autoLoginTtlMs / 86_400_000), checked: f.params.get("autoLogin") === "Y" }
            : null,
          notice: extra.notice,
        },
        alert,
        result,
      );
    case "consent":
      return consentPage(f.ctx, f.client.items, alert, result);
  }
}

/** Another submission advanced or ended the transaction first: show where it is now. */
async function conflict(f: Flow): Promise<Response> {
  const now = await loadTransaction(f.env, f.shards, f.h.id);
  if (!now) return stopPage(f.ctx, t(f.ctx.lang, "unknownTitle"), t(f.ctx.lang, "unknownText"));
  return render({ ...f, h: now });
}

/**
 * Issues a one-time code for the transaction: test numbers get their fixed code and nothing is
 * sent; real numbers take a send (cooldown, sends per window) and get a fresh CSPRNG code by SMS.
 */
async function issueCode(f: Flow, sub: NonNullable<Transaction["subscriber"]>, phone: string): Promise<Refusal | "send_failed" | null> {
  const store = f.h.stub;
  if (sub.testOtpHash !== null) {
    await store.putChallenge(challengeKey(f.h), sub.testOtpHash, f.cfg.otpTtlMs);
    return null;
  }
  const refused = await takeSend(f.env, f.shards, f.cfg, sub.phoneKey);
  if (refused) return refused;
  const code = randomDigits(6);
  await store.putChallenge(challengeKey(f.h), await sha256(`${f.h.id}:${code}`), f.cfg.otpTtlMs);
  try {
    const lang = f.h.tx.lang;
    await smsSender(f.env).send({ to: phone, code, lang, text: t(lang, "smsText", { code, minutes: Math.round(f.cfg.otpTtlMs / 60_000) }) });
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    f.rc.log.cause = "sms delivery failed";
    return "send_failed";
  }
  return null;
}

async function identify(f: Flow): Promise<Response> {
  const L = f.ctx.lang;
  const values: IdentifyValues = { telcoCd: f.params.get("telcoCd"), name: f.params.get("name"), phoneNo: f.params.get("phoneNo") };
  const ip = await hitIp(f.env, f.shards, f.cfg, clientNetwork(f.req));
  if (ip) {
    failure(f, "ip_limited");
    return identifyPage(f.ctx, values, refusalAlert(L, ip), limited(ip));
  }
  const telco = values.telcoCd;
  if (!isTelco(telco)) return identifyPage(f.ctx, values, { text: t(L, "errTelco"), field: "telcoCd" }, {});
  const name = values.name?.trim();
  if (!name || name.length > 50) return identifyPage(f.ctx, values, { text: t(L, "errName"), field: "name" }, {});
  if (!values.phoneNo) return identifyPage(f.ctx, values, { text: t(L, "errPhone"), field: "phoneNo" }, {});
  const phone = normalizePhone(values.phoneNo);
  if (!phone) return identifyPage(f.ctx, values, { text: t(L, "errPhoneFormat"), field: "phoneNo" }, {});

  const confirmed = await carrierDirectory(f.env).confirm(telco, name, phone);
  if (!confirmed) {
    failure(f, "unconfirmed");
    return identifyPage(f.ctx, values, { text: t(L, "errUnconfirmed") }, {});
  }
  const key = await phoneKey(phone);
  const locked = await lockOf(f.env, f.shards, key);
  if (locked) {
    failure(f, "locked");
    return identifyPage(f.ctx, values, refusalAlert(L, locked), limited(locked));
  }
  const sub = {
    id: confirmed.subscriber.id,
    telco,
    phoneKey: key,
    masked: maskPhone(phone),
    testOtpHash: confirmed.testOtpHash,
  };
  const issued = await issueCode(f, sub, phone);
  if (issued === "send_failed") return identifyPage(f.ctx, values, { text: t(L, "errSendFailed") }, { status: 503 });
  if (issued) return identifyPage(f.ctx, values, refusalAlert(L, issued), limited(issued));
  const next = await advance(f.h, {
    ...f.h.tx,
    step: "verify",
    subscriber: sub,
    otpExpiresAt: Date.now() + f.cfg.otpTtlMs,
    autoLoginEligible: autoLoginEligible(f.client, telco, f.h.tx.prompt),
    autoLoginOptIn: false,
  });
  if (!next) return conflict(f);
  f.rc.log.event = "signin.code_sent";
  return render({ ...f, h: next });
}

async function resend(f: Flow): Promise<Response> {
  const L = f.ctx.lang;
  const sub = f.h.tx.subscriber!;
  const locked = await lockOf(f.env, f.shards, sub.phoneKey);
  if (locked) return render(f, refusalAlert(L, locked, "otp"), limited(locked));
  let phone = "";
  if (sub.testOtpHash === null) {
    const s = await subscriberById(f.env, sub.id);
    if (!s) return stopPage(f.ctx, t(L, "unknownTitle"), t(L, "unknownText"), restartUrl(f.h.tx));
    phone = s.phone;
  }
  const issued = await issueCode(f, sub, phone);
  if (issued === "send_failed") return render(f, { text: t(L, "errSendFailed") }, { status: 503 });
  if (issued) return render(f, refusalAlert(L, issued, "otp"), limited(issued));
  const next = await advance(f.h, { ...f.h.tx, otpExpiresAt: Date.now() + f.cfg.otpTtlMs });
  if (!next) return conflict(f);
  f.rc.log.event = "signin.code_resent";
  return render({ ...f, h: next }, undefined, undefined, { notice: t(L, sub.testOtpHash === null ? "noticeResent" : "noticeResentTest") });
}

async function verify(f: Flow): Promise<Response> {
  if (f.params.get("resend") === "Y") return resend(f);
  const L = f.ctx.lang;
  const tx = f.h.tx;
  const sub = tx.subscriber!;
  const otp = f.params.get("otp")?.replace(/\s/g, "");
  if (!otp || !/^\d{6}$/.test(otp)) return render(f, { text: t(L, "errOtp"), field: "otp" });
  const locked = await lockOf(f.env, f.shards, sub.phoneKey);
  if (locked) {
    failure(f, "locked");
    return render(f, refusalAlert(L, locked, "otp"), limited(locked));
  }
  if (Date.now() >= (tx.otpExpiresAt ?? 0)) {
    failure(f, "otp_expired");
    return render(f, { text: t(L, "errOtpExpired"), field: "otp" });
  }
  const presented = await sha256(sub.testOtpHash !== null ? otp : `${f.h.id}:${otp}`);
  const r = await f.h.stub.tryChallenge(challengeKey(f.h), presented, f.cfg.otpMaxAttempts);
  switch (r.result) {
    case "absent":
      return render(f, { text: t(L, "errOtpGone"), field: "otp" });
    case "exhausted":
      return render(f, { text: t(L, "errOtpExhausted"), field: "otp" }, { status: 429, retryAfterSeconds: 1 });
    case "wrong": {
      failure(f, "otp_wrong");
      const lock = await recordFailure(f.env, f.shards, f.cfg, sub.phoneKey);
      if (lock) return render(f, refusalAlert(L, lock, "otp"), limited(lock));
      const text = r.left > 0 ? t(L, "errOtpWrong", { left: r.left }) : t(L, "errOtpLast");
      return render(f, { text, field: "otp" });
    }
    case "ok":
      break;
  }
  await recordSuccess(f.env, f.shards, sub.phoneKey);
  const optIn = tx.autoLoginEligible === true && f.params.get("autoLogin") === "Y";
  const link = await findLink(f.env, f.client.clientId, sub.id);
  if (!link || f.client.items.some((i) => !link.items.includes(i))) {
    const next = await advance(f.h, { ...tx, step: "consent", autoLoginOptIn: optIn });
    if (!next) return conflict(f);
    f.rc.log.event = "signin.consent";
    return render({ ...f, h: next });
  }
  if (!(await end(f.h))) return conflict(f);
  return complete(f.req, f.env, f.rc, f.cfg, { tx, client: f.client, subscriberId: sub.id, plid: link.plid, optIn });
}

async function consent(f: Flow): Promise<Response> {
  const agree = f.params.get("agree");
  if (agree === "N") return cancel(f);
  if (agree !== "Y") return render(f, { text: t(f.ctx.lang, "errAgree"), field: "agree" });
  const tx = f.h.tx;
  const sub = tx.subscriber!;
  if (!(await end(f.h))) return conflict(f);
  const plid = await recordConsent(f.env, f.client.clientId, sub.id, f.client.items);
  f.rc.waitUntil(audit(f.env, "consent", f.client.clientId, "ok", { items: f.client.items.length }));
  const optIn = tx.autoLoginEligible === true && (tx.autoLoginOptIn === true || f.params.get("autoLogin") === "Y");
  return complete(f.req, f.env, f.rc, f.cfg, { tx, client: f.client, subscriberId: sub.id, plid, optIn });
}

async function cancel(f: Flow): Promise<Response> {
  if (!(await end(f.h))) return conflict(f);
  failure(f, "cancelled");
  f.rc.log.event = "signin.cancelled";
  return errorRedirect(f.h.tx.redirectUri, f.h.tx.state, "access_denied", DENIED_MESSAGE);
}

async function switchLanguage(f: Flow, lang: Lang): Promise<Response> {
  const next = await advance(f.h, { ...f.h.tx, lang });
  if (!next) return conflict(f);
  return render({ ...f, h: next, ctx: { ...f.ctx, lang } });
}

/** A step submission: a POST to /oauth2/authorize carrying `tx` (and no `client_id`). */
export async function continueSignIn(req: Request, env: Env, rc: RequestContext, params: Params): Promise<Response> {
  const cfg = signinConfig(env);
  const shards = providerConfig(env).oneTimeShards;
  const h = await loadTransaction(env, shards, params.get("tx"));
  if (!h) {
    rc.log.event = "signin.unknown_tx";
    const lang = pickLang(req.headers.get("Accept-Language"));
    const ctx: PageContext = { lang, hybrid: false, appName: "", nonce: cspNonce(), formAction: [] };
    return stopPage(ctx, t(lang, "unknownTitle"), t(lang, "unknownText"));
  }
  const tx = h.tx;
  rc.log.clientId = tx.clientId;
  const client = await findClient(env, tx.clientId, providerConfig(env).clientCacheMs);
  const stopCtx = pageContext(tx, client?.name ?? "");
  if (Date.now() >= tx.expiresAt) {
    rc.log.event = "signin.expired";
    return stopPage(stopCtx, t(tx.lang, "expiredTitle"), t(tx.lang, "expiredText", { minutes: minutes(cfg.txTtlMs) }), restartUrl(tx));
  }
  const csrf = params.get("csrf");
  if (!(await bindingHolds(req, h, csrf))) {
    rc.log.event = "signin.csrf_refused";
    return stopPage(stopCtx, t(tx.lang, "forbiddenTitle"), t(tx.lang, "forbiddenText"), restartUrl(tx));
  }
  if (!client) return stopPage(stopCtx, t(tx.lang, "clientGoneTitle"), t(tx.lang, "clientGoneText"));
  const f: Flow = { req, env, rc, cfg, shards, params, client, h, ctx: pageContext(tx, client.name, h.id, csrf) };

  const lang = params.get("lang");
  if (lang === "ko" || lang === "en") return switchLanguage(f, lang);
  if (params.get("cancel") === "Y" && tx.step !== "consent") return cancel(f);
  // The identify form posted again (back button, a corrected number): step 1 starts over.
  if (params.has("phoneNo") && tx.step !== "identify") return identify(f);
  switch (tx.step) {
    case "identify":
      return identify(f);
    case "verify":
      return verify(f);
    case "consent":
      return params.get("cancel") === "Y" ? cancel(f) : consent(f);
  }
}
