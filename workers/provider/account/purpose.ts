// The person's own /account page as a first-party page of the sign-in (docs/account.md): the same
// identify and code steps, limits and counters as an app's sign-in, with no app behind it: nothing
// to consent to, a cancel or a "start again" back to /account, and the end a 10-minute session.

import { redirect } from "../../core/http";
import { providerConfig } from "../config";
import { firstParty, proofDetail, t, type Transaction } from "../signin/index";
import { audit } from "../store/one-time/index";
import { openSession } from "./session";

/** Where an /account sign-in starts again: the page, in the language it was asked for. */
function accountUrl(tx: Transaction): string {
  return tx.langGiven ? `/account?lang=${tx.lang}` : "/account";
}

export const accountSignin = firstParty({
  mark: "account",
  title: (lang) => t(lang, "accountTitle"),
  lead: (lang) => t(lang, "accountIdentifyLead"),
  url: accountUrl,
  // A proven number opens the session; the browser then GETs the dashboard (a reload posts nothing).
  async end(s, e) {
    const { env, rc } = s;
    const shards = providerConfig(env).oneTimeShards;
    const { cookie } = await openSession(env, shards, e.subscriberId, e.tx.subscriber!.masked, e.tx.passkey);
    rc.log.event = "account.signin";
    rc.waitUntil(audit(env, "account.signin", null, "ok", proofDetail(e.tx)));
    return redirect(303, `/account?lang=${e.tx.lang}`, { cookies: [cookie], referrer: "same-origin" });
  },
});
