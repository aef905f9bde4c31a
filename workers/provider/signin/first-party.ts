// What the service's own pages that prove a number (/account, /console) share: the stand-in
// "client" of a sign-in with no app behind it, and its first page, a new sign-in record of the
// page's purpose mark shown as the identify step.

import { cspNonce } from "../../core/html";
import type { RequestContext } from "../../core/router";
import { providerConfig, type ProviderEnv } from "../config";
import type { Client } from "../store/clients";
import { signinConfig } from "./config";
import type { Lang } from "./i18n";
import { ipKey } from "./limits";
import { identifyPage, type PageContext } from "./pages";
import { browserBinding, createAccountTransaction } from "./transaction";
import type { FirstPartyMark } from "../store/one-time/index";

/** The stand-in client of a first-party sign-in: named as the page, no items, never automatic login. */
export function standInClient(name: string): Client {
  return {
    clientId: "",
    name,
    redirectUris: [],
    items: [],
    autoLogin: false,
    oidc: false,
    status: "active",
    stage: "live",
    eventsUri: null,
    purpose: null,
    retention: null,
    smsDailyBudget: null,
    createdAt: 0,
    updatedAt: 0,
  };
}

export interface FirstPartyStart {
  mark: FirstPartyMark;
  lang: Lang;
  /** Whether the language was asked for (kept in a "start again" link). */
  langGiven: boolean;
  /** Where the page goes on to once the number is proven (its own path, checked by the caller). */
  next?: string;
  alert?: string;
  cookies?: string[];
}

/** The identify page of a new first-party sign-in. */
export async function startFirstParty(req: Request, env: ProviderEnv, s: FirstPartyStart): Promise<Response> {
  const browser = browserBinding(req);
  const cookies = s.cookies ?? [];
  const { id, csrf } = await createAccountTransaction(
    env,
    providerConfig(env).oneTimeShards,
    s.lang,
    s.langGiven,
    browser.value,
    signinConfig(env).txTtlMs,
    await ipKey(req),
    s.mark,
    s.next ?? "",
  );
  const ctx: PageContext = {
    operator: signinConfig(env).operator,
    lang: s.lang,
    hybrid: false,
    appName: "",
    txId: id,
    csrf,
    nonce: cspNonce(),
    formAction: [],
    cookies: browser.setCookie ? [...cookies, browser.setCookie] : cookies,
    purpose: s.mark,
  };
  return identifyPage(ctx, {}, s.alert ? { text: s.alert } : undefined);
}

/**
 * The identify page of a first-party console's sign-in (/console, /developers): a new sign-in of
 * purpose `mark`, going on to the `next` the request names when `nextPath` allows it.
 */
export function consoleSignIn(mark: "console" | "developers", nextPath: RegExp) {
  return (
    req: Request,
    env: ProviderEnv,
    rc: RequestContext,
    lang: Lang,
    alert?: string,
    cookies: string[] = [],
  ): Promise<Response> => {
    const next = new URLSearchParams(rc.search).get("next") ?? "";
    rc.log.event = `${mark}.start`;
    return startFirstParty(req, env, {
      mark,
      lang,
      langGiven: lang === "en",
      next: nextPath.test(next) ? next : "",
      alert,
      cookies,
    });
  };
}
