// The one-time code of a step: made (a test number's is fixed), sent by SMS with every attempt
// audited, and withdrawn when no gateway took it (docs/signin.md "SMS interface").

import { ConfigError } from "../../core/config";
import { randomDigits, sha256 } from "../../core/crypto";
import { auditAll, auditRecord, type AuditRecord } from "../store/one-time/index";
import { at, conflict, render, type Flow } from "./flow";
import { t } from "./i18n";
import { numberLimits } from "./limits";
import { smsSender, type SmsAttempt } from "../store/sms/index";
import { smsText } from "./sms/text";
import { handleOf } from "./transaction";

/** A one-time code and its digest: test numbers have their fixed code (nothing is sent). */
export async function newCode(testOtpHash: string | null): Promise<{ code: string | null; digest: string }> {
  if (testOtpHash !== null) return { code: null, digest: testOtpHash };
  const code = randomDigits(6);
  return { code, digest: await sha256(code) };
}

/**
 * Sends a code by SMS; false when no gateway took it (a configuration error still throws). Every
 * attempt is audited with its gateway, result and latency, never the number, text or code.
 */
export async function sendCode(f: Flow, phone: string, code: string): Promise<boolean> {
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

/** A code that could not be sent: withdrawn (its send given back) and the verify page says so. */
export async function sendFailed(f: Flow): Promise<Response> {
  const tx = await f.h.stub.signinUnsend(f.h.key, f.h.tx.subscriber!.phoneKey, numberLimits(f.cfg));
  if (tx === null || tx.step !== "verify") return conflict(f, tx);
  return render(at(f, handleOf(f.h, tx)), { text: t(f.ctx.lang, "errSendFailed") }, { status: 503 });
}
