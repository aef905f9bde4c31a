// Step 2, the code (docs/signin.md "State machine"): a code entry is one store call (lock, code,
// counters), a resend one more; a right code ends other subscribers' automatic login on this
// browser, then the consent page or the purpose's end.

import { tally } from "../store/metrics/index";
import { audit } from "../store/one-time/index";
import { sha256 } from "../../core/crypto";
import { subscriberById, findLink } from "../store/directory/index";
import type { VerifyResult } from "../store/one-time/index";
import { newCode, sendCode, sendFailed } from "./code";
import { covers, sharedBy } from "./consent";
import { endOtherSubscribersOnDevice } from "./device";
import { at, conflict, failure, goneMeanwhile, limited, refusalAlert, render, type Flow } from "./flow";
import { t } from "./i18n";
import { hitIp, networkKey, numberLimits } from "./limits";
import { stopPage } from "./pages";
import { reviewAllows, suspended, unconfirmed } from "./review";
import { challengeHash, handleOf } from "./transaction";
import { guardCount } from "./guard";
import { budgetOf } from "./guard-gate";
import { withProof } from "./proved-browser";

/** `resend=Y`: a new code for the number, under the per-network limit and the number's send limits. */
export async function resend(f: Flow): Promise<Response> {
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
  const mark = r.record.guard;
  if (code !== null && mark) guardCount(f.env, f.rc, f.req, f.client.clientId, "sent", mark, budgetOf(f));
  f.rc.log.event = "signin.code_resent";
  return render(g, undefined, undefined, { notice: t(L, code !== null ? "noticeResent" : "noticeResentTest") });
}

/** The code page answered: a resend, or a code entry checked in one store call. */
export async function verify(f: Flow): Promise<Response> {
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
    return withProof(render(g), f.req, f.env, sub.phoneKey, sub.id);
  }
  const done = await f.purpose.end(f, {
    tx: r.record,
    client: f.client,
    subscriberId: sub.id,
    optIn,
    shared: link ? sharedBy(link, f.client) : undefined,
  });
  return done ? withProof(done, f.req, f.env, sub.phoneKey, sub.id) : goneMeanwhile(f);
}

/** The page of a code entry that did not prove the number (`g` at the record it left); null for a right code. */
export function codeRefused(g: Flow, r: Exclude<VerifyResult, { result: "conflict" }>): Response | null {
  const L = g.ctx.lang;
  // each entry's outcome, counted for an app's sign-in: verify.ok is the funnel's "code proven"
  if (g.client.clientId) tally(g.env, g.rc, `verify.${r.result}`, g.client.clientId);
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
    case "passkey":
      // the number proven in its risk window by a person who has a passkey: the SMS signs nothing in,
      // and step 1 says why and offers the passkey (only the line's holder gets this far)
      failure(g, "risk_passkey_required");
      g.rc.waitUntil(
        audit(g.env, "risk.refused", g.client.clientId || null, "refused", { reason: "passkey_required" }),
      );
      return render(g, { text: t(L, "errRiskPasskey") }, { status: 403 });
    case "ok": {
      // the code answers its send: credited to that send's scopes (docs/abuse.md)
      const mark = g.h.tx.guard;
      if (mark) guardCount(g.env, g.rc, g.req, g.client.clientId, "verified", mark, budgetOf(g));
      return null;
    }
  }
}

/**
 * A right code taken by the gated call (`gatedStep`), which always moves the sign-in to consent:
 * the consent page, or, when the person consented before to everything the app asks, the end.
 */
export async function codeProven(f: Flow): Promise<Response> {
  const sub = f.h.tx.subscriber!;
  await endOtherSubscribersOnDevice(f.req, f.env, sub.id);
  const link = f.h.tx.consentDue ? null : await findLink(f.env, f.client.clientId, sub.id);
  if (!link || !covers(link, f.client)) {
    f.rc.log.event = "signin.consent";
    return withProof(render(f), f.req, f.env, sub.phoneKey, sub.id);
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
  return done ? withProof(done, f.req, f.env, sub.phoneKey, sub.id) : goneMeanwhile(f);
}
