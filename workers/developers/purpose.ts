// The developer console's sign-in as a purpose of the sign-in (docs/developers.md "Signing in"): the
// same identify and code steps, limits and counters as an app's sign-in and /console's, with no app
// behind it: no consent, no plid, nothing listed on /account, never automatic login. The end opens
// the developer console's own session; a fixed-code test number never does (anyone who knows its
// code could sign in with it).

import { redirect } from "../core/http";
import { providerConfig, type ProviderEnv } from "../provider/config";
import {
  standInClient,
  t,
  pageContext,
  stopPage,
  proofDetail,
  type SigninPurpose,
  type Transaction,
} from "../provider/signin/index";
import { DEVELOPER_SESSION, openConsoleSession } from "../provider/store/console-session";
import { audit } from "../provider/store/one-time/index";
import { d } from "./i18n";

/** A developer console path a sign-in may go on to: /developers or a page under it, nothing else. */
export const NEXT_PATH = /^\/developers(?:\/[A-Za-z0-9_-]+)*$/;

/** Where a sign-in goes on to: the page it was asked for, in its language. */
export function developersUrl(tx: Pick<Transaction, "redirectUri" | "lang">): string {
  const path = NEXT_PATH.test(tx.redirectUri) ? tx.redirectUri : "/developers";
  return tx.lang === "en" ? `${path}?lang=en` : path;
}

export const developerSignin: SigninPurpose = {
  mark: "developers",
  audit: { purpose: "developers" },
  consent: false,
  gated: false,
  client: (_env, tx) => standInClient(t(tx.lang, "developersTitle")),
  reaches: () => true,
  restart: (h) => ({ href: developersUrl(h.tx) }),
  restarted: (tx) => redirect(303, developersUrl(tx)),
  cancelled: () => redirect(303, "/developers"),
  async end(s, e) {
    const { env, rc } = s;
    const L = e.tx.lang;
    if (e.tx.subscriber!.testOtpHash !== null) {
      rc.log.event = "developers.test_number_refused";
      rc.waitUntil(audit(env, "developer.refused", null, "refused", { reason: "test_number" }));
      return stopPage(
        pageContext(env, e.tx, t(L, "developersTitle")),
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
