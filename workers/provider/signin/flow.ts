// A step submission at its sign-in (`Flow`), and the pages every step answers with: the page of
// the record's current step, the page of the state that won a race, the stop pages, the answers to
// a cancel and to a sign-in whose ground went away. Each page carries the purpose's look from the
// record's purpose mark (`pageContext`).

import { cspNonce } from "../../core/html";
import type { ProviderEnv } from "../config";
import { formatKst, formatKstTime } from "../dates";
import type { Client } from "../store/clients";
import { audit } from "../store/one-time/index";
import { signinConfig } from "./config";
import { autoLoginEligible } from "./device";
import { t, type Lang } from "./i18n";
import type { IpHit, Refusal } from "./limits";
import {
  consentPage,
  formActionOf,
  identifyPage,
  stopPage,
  verifyPage,
  type Alert,
  type ConsentTerms,
  type FirstPartyWords,
  type PageContext,
  type PageResult,
} from "./pages";
import type { SigninPurpose, Submission } from "./purpose";
import { termsVersion } from "./terms-version";
import { handleOf, loadTransaction, type Transaction, type TxHandle } from "./transaction";

/** One step submission: the transaction, its client and what rendering needs. */
export interface Flow extends Submission {
  purpose: SigninPurpose;
  client: Client;
  h: TxHandle;
  ctx: PageContext;
  /** This submission's count in its network's step-1 limit, when it was taken with the read. */
  ipHit?: IpHit;
}

/**
 * The pages' context of a sign-in: language, look and purpose mark from its record, the app's
 * name, and a first-party purpose's words (`SigninPurpose.words`).
 */
export function pageContext(
  env: ProviderEnv,
  tx: Transaction,
  appName: string,
  txId?: string,
  csrf?: string,
  words?: FirstPartyWords,
): PageContext {
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
    words,
  };
}

/** The flow continuing on another handle (the record the store returned, or a moved-to one). */
export function at(f: Flow, h: TxHandle): Flow {
  return { ...f, h, ctx: { ...f.ctx, txId: h.page ?? h.id, lang: h.tx.lang } };
}

export function minutes(ms: number): number {
  return Math.max(1, Math.ceil(ms / 60_000));
}

/**
 * The alert of a refusal. `by`: what the person was offered, a code or a text; the number's sends
 * of the window are spent by either, and said so in the words of the one asked for.
 */
export function refusalAlert(lang: Lang, r: Refusal, field?: Alert["field"], by: "code" | "text" = "code"): Alert {
  const left = r.until - Date.now();
  switch (r.limit) {
    case "ip":
      return { text: t(lang, "errIpLimit", { minutes: minutes(left) }) };
    case "locked":
      return { text: t(lang, "errLocked", { minutes: minutes(left), until: formatKstTime(r.until, lang) }), field };
    case "cooldown":
      return { text: t(lang, "errCooldown", { seconds: Math.max(1, Math.ceil(left / 1000)) }), field };
    case "sends":
      return { text: t(lang, by === "text" ? "errTextLimit" : "errSendLimit", { minutes: minutes(left) }), field };
  }
}

export function limited(r: Refusal): PageResult {
  return { status: 429, retryAfterSeconds: Math.max(0, r.until - Date.now()) / 1000 };
}

export function failure(f: Flow, reason: string): void {
  f.rc.waitUntil(
    audit(f.env, "signin.failure", f.client.clientId || null, "refused", {
      reason,
      step: f.h.tx.step,
      ...f.purpose.audit,
    }),
  );
}

/** The page of the transaction's current step. */
export function render(
  f: Flow,
  alert?: Alert,
  result?: PageResult,
  extra: { notice?: string; locked?: boolean } = {},
): Response {
  const tx = f.h.tx;
  const c = tx.challenge;
  const usable = c && c.attempts < f.cfg.otpMaxAttempts && c.expiresAt > Date.now();
  // the code page's countdown starts from what the code has left as the page leaves
  if (usable) f.ctx.seconds = String(Math.max(0, Math.ceil((c.expiresAt - Date.now()) / 1000)));
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
          // the box as the app offers it, in the number's risk window too (ignored there, said after a proof)
          autoLogin:
            tx.autoLoginEligible || tx.autoLoginShown
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
    case "consent": {
      // proven in the number's risk window where the app offers automatic login: now it can be said why it is off
      const s = tx.subscriber;
      const risk =
        tx.riskUntil !== undefined && s && autoLoginEligible(f.client, s.telco, tx.prompt)
          ? t(f.ctx.lang, "riskAutoLoginOff", { until: formatKst(tx.riskUntil, f.ctx.lang) })
          : undefined;
      // proven by a passkey (whose form has no box): the box here, where the sign-in may opt in
      const days =
        tx.passkey && tx.autoLoginEligible && !tx.autoLoginOptIn
          ? Math.round(f.cfg.autoLoginTtlMs / 86_400_000)
          : undefined;
      return consentPage(f.ctx, consentTerms(f.client), alert, result, risk, days);
    }
  }
}

/** Another submission changed the transaction first: show where it is now (following a move). */
export async function conflict(f: Flow, now: Transaction | null): Promise<Response> {
  if (now === null) return ended(f);
  return now.step === "moved" ? current(f) : render(at(f, handleOf(f.h, now)));
}

/** The page of where the sign-in is now, read again from the submitted transaction (moves followed). */
export async function current(f: Flow, id = f.h.id): Promise<Response> {
  const h = await loadTransaction(f.env, f.shards, id);
  return h ? render(at(f, h)) : ended(f);
}

/** The sign-in has ended (or is unknown): nothing continues it from here. */
export function ended(f: Flow): Response {
  return stopPage(f.ctx, t(f.ctx.lang, "unknownTitle"), t(f.ctx.lang, "unknownText"));
}

/** What the consent page states, as the client is now. */
export function consentTerms(client: Client): ConsentTerms {
  const terms = { items: client.items, purpose: client.purpose, retention: client.retention };
  return { ...terms, app: client.clientId, version: termsVersion(client.name, terms) };
}

/**
 * What the sign-in stood on went away during it (its transaction has ended): the subscriber removed
 * or their number reassigned, the client deleted, or the plid ended by a disconnect. Nothing is
 * minted or linked, and the person starts again from the app.
 */
export function goneMeanwhile(f: Flow): Response {
  failure(f, "gone_meanwhile");
  f.rc.log.event = "signin.gone_meanwhile";
  return stopPage(
    pageContext(f.env, f.h.tx, f.client.name, undefined, undefined, f.purpose.words),
    t(f.ctx.lang, "unknownTitle"),
    t(f.ctx.lang, "unknownText"),
  );
}

export async function cancel(f: Flow): Promise<Response> {
  const done = f.h.page
    ? { ended: true, record: f.h.tx }
    : await f.h.stub.signinFinish(f.h.key, ["identify", "verify", "consent"]);
  if (!done.ended) return conflict(f, done.record);
  failure(f, "cancelled");
  f.rc.log.event = "signin.cancelled";
  return f.purpose.cancelled(done.record!);
}

/**
 * The flow of a submission at its record: the client read (unless given), and the stop page when
 * it is gone or disabled or the sign-in can no longer end there (an app without the sign-in's
 * redirect URI: no code goes there).
 */
export async function flowOf(
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
      pageContext(env, tx, client?.name ?? "", undefined, undefined, purpose.words),
      t(tx.lang, "clientGoneTitle"),
      t(tx.lang, "clientGoneText"),
    );
  const ctx = pageContext(env, tx, client.name, h.page ?? h.id, csrf, purpose.words);
  return { ...s, purpose, client, h, ctx };
}
