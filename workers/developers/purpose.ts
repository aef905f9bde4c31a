// The developer console's sign-in as a first-party page of the sign-in (docs/developers.md
// "Signing in"): the same identify and code steps, limits and counters as an app's sign-in and
// /console's, with no app behind it: no consent, no plid, nothing listed on /account, never
// automatic login. The end opens the developer console's own session; a fixed-code test number
// never does (anyone who knows its code could sign in with it).

import { redirect } from "../core/http";
import { providerConfig, type ProviderEnv } from "../provider/config";
import { pageContext, stopPage, proofDetail, type Transaction } from "../provider/signin/index";
import { DEVELOPER_SESSION, openConsoleSession } from "../provider/store/console-session";
import { audit } from "../provider/store/one-time/index";
import { consoleUrl, type ConsolePage } from "../frame/signin";
import { d } from "./i18n";

/** Where a sign-in goes on to: the page it was asked for, in its language. */
function developersUrl(tx: Pick<Transaction, "redirectUri" | "lang">): string {
  return consoleUrl(developerSigninPage, tx);
}

/** The developer console as its sign-in names it: /developers, going on to a page under it. */
export const developerSigninPage: ConsolePage = {
  mark: "developers",
  title: (lang) => d(lang, "console"),
  lead: (lang) => d(lang, "identifyLead"),
  /** A developer console path a sign-in may go on to: /developers or a page under it, nothing else. */
  next: /^\/developers(?:\/[A-Za-z0-9_-]+)*$/,
  async end(s, e) {
    const { env, rc } = s;
    const L = e.tx.lang;
    if (e.tx.subscriber!.testOtpHash !== null) {
      rc.log.event = "developers.test_number_refused";
      rc.waitUntil(audit(env, "developer.refused", null, "refused", { reason: "test_number" }));
      return stopPage(
        pageContext(env, e.tx, d(L, "console")),
        d(L, "testNumberRefusedTitle"),
        d(L, "testNumberRefusedText"),
        { href: developersUrl(e.tx) },
      );
    }
    const { cookie } = await openConsoleSession(
      env as ProviderEnv,
      providerConfig(env).oneTimeShards,
      e.subscriberId,
      e.tx.subscriber!.masked,
      DEVELOPER_SESSION,
    );
    rc.log.event = "developers.signin";
    rc.waitUntil(audit(env, "developer.signin", null, "ok", proofDetail(e.tx)));
    return redirect(303, developersUrl(e.tx), { cookies: [cookie], referrer: "same-origin" });
  },
};
