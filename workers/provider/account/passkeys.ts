// The person's passkeys on /account (docs/passkeys.md "On /account"): the list, making one, and
// removing or cancelling one, each under the session's proof. Making one with an SMS proof waits the
// activation delay; with a passkey proof (a session opened by a passkey sign-in) it is usable at
// once. Removing an active passkey while another active one exists needs a passkey proof; a pending
// one can always be cancelled (the owner's answer to a notice SMS). Every change is audited.

import type { Params } from "../../core/http";
import type { RequestContext } from "../../core/router";
import type { ProviderEnv } from "../config";
import {
  type Lang,
  enrol,
  enrolmentOf,
  enrolPage,
  isActive,
  refusalText,
  pt,
  waitText,
  signinConfig,
  openTicket,
} from "../signin/index";
import { passkeysOf, removePasskey, type PasskeyRow } from "../store/directory/index";
import { audit } from "../store/one-time/index";
import type { AccountSession } from "./session";
import { formatKst } from "../dates";
import { tellStreams } from "../store/flows/end-plids";
import { passkeyReason } from "../store/flows/ssf-events";

/** What the dashboard shows of the person's passkeys. */
export interface PasskeysView {
  rows: PasskeyRow[];
  /** Making one now, when the person may: its ticket, creation options and what the page says of it. */
  enrol: { token: string; options: Awaited<ReturnType<typeof enrolPage>>["options"]; hint: string } | null;
}

export async function passkeysView(
  req: Request,
  env: ProviderEnv,
  session: AccountSession,
  lang: Lang,
): Promise<PasskeysView> {
  const e = await enrolmentOf(env, session.subscriberId, session.passkey);
  const rows = e ? e.passkeys : await passkeysOf(env, session.subscriberId);
  if (!e) return { rows, enrol: null };
  const page = await enrolPage(
    req,
    env,
    e,
    {
      s: session.subscriberId,
      w: session.passkey ? "passkey" : "sms",
      ...(session.passkey ? { k: session.passkey } : {}),
      l: lang,
    },
    session.masked,
  );
  const after = waitText(lang, signinConfig(env).passkeyActivationMs);
  const hint = session.passkey ? pt(lang, "addHintPasskey") : pt(lang, "addHintSms", { after });
  return { rows, enrol: { ...page, hint } };
}

/** A dashboard answer: a notice, or an alert with its status. */
export type Outcome = { notice: string } | { alert: string; status: number };

/** The enrolment form posted: the passkey made under the ticket's proof, or why not. */
export async function enrolOnAccount(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  session: AccountSession,
  params: Params,
  lang: Lang,
): Promise<Outcome> {
  const ticket = await openTicket(env, params.get("enrol"));
  if (!ticket || ticket.s !== session.subscriberId || ticket.r !== undefined)
    return { alert: pt(lang, "errExpired"), status: 400 };
  const made = await enrol(req, env, rc, ticket, params.get("credential"));
  rc.log.event = made.ok ? "account.passkey_created" : "account.passkey_refused";
  if (made.ok)
    return {
      notice:
        made.usableAt > Date.now()
          ? pt(lang, "createdPending", { until: formatKst(made.usableAt, lang) })
          : pt(lang, "created"),
    };
  return { alert: refusalText(lang, made.reason), status: 400 };
}

/** `action=passkey_remove` with `credential_id`: removed (or cancelled, when pending) under the proof's rules. */
export async function removeOnAccount(
  env: ProviderEnv,
  rc: RequestContext,
  session: AccountSession,
  params: Params,
  lang: Lang,
): Promise<Outcome> {
  const id = params.get("credential_id") ?? "";
  const mine = await passkeysOf(env, session.subscriberId);
  const target = mine.find((k) => k.credentialId === id);
  if (!target) return { alert: pt(lang, "errNotYours"), status: 404 };
  const now = Date.now();
  const pending = !isActive(target, now);
  const provenByPasskey =
    session.passkey !== undefined && mine.some((k) => k.credentialId === session.passkey && isActive(k, now));
  const othersActive = mine.some((k) => k.credentialId !== id && isActive(k, now));
  if (!pending && othersActive && !provenByPasskey) {
    rc.waitUntil(audit(env, "passkey.refused", null, "refused", { reason: "needs_passkey", action: "remove" }));
    return { alert: pt(lang, "errRemoveNeedsPasskey"), status: 403 };
  }
  if (!(await removePasskey(env, session.subscriberId, id))) return { alert: pt(lang, "errNotYours"), status: 404 };
  // the person's apps with a Shared Signals stream hear of it (a CAEP credential-change, delete)
  const reason = passkeyReason("deleted", target.device, target.transports);
  await tellStreams(env, session.subscriberId, null, reason, now);
  const proof = session.passkey ? "passkey" : "sms";
  rc.log.event = pending ? "account.passkey_cancelled" : "account.passkey_removed";
  rc.waitUntil(audit(env, pending ? "passkey.cancelled" : "passkey.removed", null, "ok", { proof }));
  return { notice: pt(lang, pending ? "cancelled" : "removed") };
}
