// An app's sign-in, the purpose the authorization endpoint hands the sign-in (spec §4.1): for the
// client of the authorization request, while it is active and holds the request's redirect URI;
// the person consents to what the app receives; the end is a code for the app (`complete`), a
// cancel `access_denied`, the way back from a stop page `login_required`, both redirected to the app.

import { providerConfig } from "../config";
import { findClient } from "../store/clients";
import { complete } from "./complete";
import { DENIED_MESSAGE, errorRedirect, RESTART_MESSAGE } from "./redirects";
import type { SigninPurpose } from "../signin/index";
import { registeredRedirect } from "./validate";

export const appSignin: SigninPurpose = {
  mark: undefined,
  audit: {},
  consent: true,
  gated: true,
  client: (env, tx) => findClient(env, tx.clientId, providerConfig(env).clientCacheMs),
  reaches: (env, client, tx) => registeredRedirect(client, tx.redirectUri, providerConfig(env).devMode) !== undefined,
  // A form posting `restart=Y`: the app gets login_required, so it starts a new login.
  restart: (h) => ({ returnTx: h.page ?? h.id }),
  restarted: (tx) => errorRedirect(tx.redirectUri, tx.state, "login_required", RESTART_MESSAGE),
  cancelled: (tx) => errorRedirect(tx.redirectUri, tx.state, "access_denied", DENIED_MESSAGE),
  end: (s, e) => complete(s.req, s.env, s.rc, s.cfg, e, s.params.get("pk") === "Y"),
};
