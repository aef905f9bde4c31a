// An app in its testing stage (docs/developers.md "Testing stage"): only its team and its test
// numbers sign in. The typed number is compared with theirs before the carrier or the directory is
// asked, so anyone else sees the same page whether or not their number exists, and no code is sent.
// A team number that passed to another person is let through this gate (it is the same number) and
// stopped at the end, where the proven person must be on the team.

import { sealKeyVar, type Client } from "../store/clients";
import { admitsNumber, memberKey, roleOn } from "../store/developers";
import type { ProviderEnv } from "../config";
import type { RequestContext } from "../../core/router";
import { failure, pageContext, type Flow } from "./flow";
import type { SigninEnd } from "./purpose";
import { audit } from "../store/one-time/index";
import { t } from "./i18n";
import { stopPage } from "./pages";

/** The page everyone outside a testing app's team sees (403), the way back to the app with it. */
export function testingPage(f: Flow): Response {
  failure(f, "app_testing");
  f.rc.log.event = "signin.app_testing";
  const L = f.ctx.lang;
  return stopPage(f.ctx, t(L, "testingTitle"), t(L, "testingText", { app: f.client.name }), f.purpose.restart(f.h));
}

/** Step 1 of a testing app's sign-in: the page when the number is neither a team's nor a test number. */
export async function testingGate(f: Flow, phone: string): Promise<Response | null> {
  if (f.client.stage !== "testing" || !f.purpose.consent) return null;
  const key = await memberKey(sealKeyVar(f.env), phone);
  return (await admitsNumber(f.env, f.client.clientId, key, phone)) ? null : testingPage(f);
}

/**
 * Whether the proven person may end a sign-in at the client: always for a live app; for a testing
 * app a member of its team, or its test number (a review test number listing it).
 */
export async function mayTest(env: ProviderEnv, client: Client, subscriberId: number, review: boolean) {
  if (client.stage !== "testing") return true;
  return review || (await roleOn(env, client.clientId, subscriberId)) !== null;
}

/** The end of a testing app's sign-in by someone off its team: nothing minted, the testing page. */
export function testingStop(env: ProviderEnv, rc: RequestContext, c: SigninEnd): Response {
  rc.log.event = "signin.app_testing";
  rc.waitUntil(audit(env, "signin.failure", c.client.clientId, "refused", { reason: "app_testing", step: "done" }));
  const L = c.tx.lang;
  return stopPage(
    pageContext(env, c.tx, c.client.name),
    t(L, "testingTitle"),
    t(L, "testingText", { app: c.client.name }),
  );
}
