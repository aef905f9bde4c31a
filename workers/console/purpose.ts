// The operations console's sign-in as a first-party page of the sign-in (docs/console.md "Signing
// in"): the same identify and code steps, limits and counters as an app's sign-in and /account's,
// with no app behind it: no consent, no plid, nothing listed on /account, never automatic login. The end
// takes an open invitation of the number (the person who proves it takes the role, a fixed-code
// test number never does) and opens the console's own session.

import { redirect } from "../core/http";
import { providerConfig, type ProviderEnv } from "../provider/config";
import { proofDetail } from "../provider/signin/index";
import { sealKeyVar } from "../provider/store/clients";
import { openConsoleSession } from "../provider/store/console-session";
import { dirAt, homeOfId } from "../provider/store/directory/index";
import { audit } from "../provider/store/one-time/index";
import { inviteKey, takeInvite } from "../provider/store/operators";
import { consoleUrl, type ConsolePage } from "../frame/signin";
import { c } from "./i18n";

/** The operations console as its sign-in names it: /console, going on to a page under it. */
export const consoleSigninPage: ConsolePage = {
  mark: "console",
  title: (lang) => c(lang, "console"),
  lead: (lang) => c(lang, "identifyLead"),
  /** A console path a sign-in may go on to: /console or a page under it, nothing else. */
  next: /^\/console(?:\/[A-Za-z0-9_-]+)*$/,
  async end(s, e) {
    const { env, rc } = s;
    const masked = e.tx.subscriber!.masked;
    // a fixed-code test number never takes a role: anyone who knows its code could sign in with it
    if (e.tx.subscriber!.testOtpHash === null) {
      const person = await dirAt(env, homeOfId(e.subscriberId)).subscriber(e.subscriberId);
      if (person) {
        const key = await inviteKey(sealKeyVar(env), person.phone);
        const taken = await takeInvite(env, key, e.subscriberId, masked);
        if (taken === "kept_last_admin")
          rc.waitUntil(audit(env, "operator.taken", null, "refused", { reason: "last_admin" }));
        else if (taken)
          rc.waitUntil(audit(env, "operator.taken", null, "ok", { operator: taken.id, role: taken.role }));
      }
    }
    const { cookie } = await openConsoleSession(
      env as ProviderEnv,
      providerConfig(env).oneTimeShards,
      e.subscriberId,
      masked,
    );
    rc.log.event = "console.signin";
    rc.waitUntil(audit(env, "console.signin", null, "ok", proofDetail(e.tx)));
    return redirect(303, consoleUrl(consoleSigninPage, e.tx), { cookies: [cookie], referrer: "same-origin" });
  },
};
