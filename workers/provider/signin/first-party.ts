// What the service's own pages that prove a number share: the person's /account, and any other
// page of the service's (a console) that names itself. Each page describes itself (its mark, its
// words, where a sign-in starts again, its end), and `firstParty` makes of that its purpose and its
// two routes: the first page (a new sign-in record of the page's mark, shown as the identify step)
// and a step submission. The sign-in names no page: the page names itself.

import { redirect, type Params } from "../../core/http";
import { cspNonce } from "../../core/html";
import type { RequestContext } from "../../core/router";
import { providerConfig, type ProviderEnv } from "../config";
import type { Client } from "../store/clients";
import { signinConfig } from "./config";
import type { Lang } from "./i18n";
import { ipKey } from "./limits";
import { identifyPage, type FirstPartyWords, type PageContext } from "./pages";
import type { SigninPurpose } from "./purpose";
import { continueSignIn } from "./steps";
import { browserBinding, createFirstPartyTransaction, type Transaction } from "./transaction";

/** The stand-in client of a first-party sign-in: named as the page, no items, never automatic login. */
function standInClient(name: string): Client {
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

/** A first-party page that proves a number, as it describes itself. */
export interface FirstPartyPage extends FirstPartyWords {
  /**
   * The mark its sign-in records carry (`SigninRecord.purpose`), chosen by the page: its path
   * without the slash (`/${mark}`, where the sign-in's forms post and a cancel goes). Records in
   * the store carry it: a page keeps its mark.
   */
  mark: string;
  /** The pages a sign-in may go on to once the number is proven (`next`); none when absent. */
  next?: RegExp;
  /** Where a sign-in of the page starts again (the way back from a stop page, `restart=Y`). */
  url(tx: Transaction): string;
  /** The sign-in's end once the number is proven: the page's own session. */
  end: SigninPurpose["end"];
}

/** How a first-party page's sign-in starts. */
export interface FirstPartyStart {
  lang: Lang;
  /** Whether the language was asked for (kept in a "start again" link). */
  langGiven: boolean;
  /** Where the page goes on to once the number is proven: kept when the page's `next` allows it. */
  next?: string;
  alert?: string;
  cookies?: string[];
}

/** A first-party page's sign-in: its purpose, and its two routes. */
export interface FirstParty {
  readonly purpose: SigninPurpose;
  /** The identify page of a new sign-in of the page. */
  start(req: Request, env: ProviderEnv, s: FirstPartyStart): Promise<Response>;
  /** A step submission (a POST carrying `tx`) of a sign-in of the page. */
  step(req: Request, env: ProviderEnv, rc: RequestContext, params: Params): Promise<Response>;
}

/**
 * The purpose and routes of a first-party page's sign-in: the same identify and code steps, limits
 * and counters as an app's, with no app behind it: no consent, no gated calls (the store settles
 * those for apps' sign-ins only), never automatic login; a cancel goes back to the page.
 */
export function firstParty(page: FirstPartyPage): FirstParty {
  const purpose: SigninPurpose = {
    mark: page.mark,
    words: page,
    audit: { purpose: page.mark },
    consent: false,
    gated: false,
    client: (_env, tx) => standInClient(page.title(tx.lang)),
    reaches: () => true,
    restart: (h) => ({ href: page.url(h.tx) }),
    restarted: (tx) => redirect(303, page.url(tx)),
    cancelled: () => redirect(303, `/${page.mark}`),
    end: page.end,
  };
  return {
    purpose,
    start: (req, env, s) =>
      start(req, env, page, s.next !== undefined && page.next?.test(s.next) ? s : { ...s, next: "" }),
    step: (req, env, rc, params) => continueSignIn(req, env, rc, params, purpose),
  };
}

/** The identify page of a new first-party sign-in. */
async function start(req: Request, env: ProviderEnv, page: FirstPartyPage, s: FirstPartyStart): Promise<Response> {
  const browser = browserBinding(req);
  const cookies = s.cookies ?? [];
  const { id, csrf } = await createFirstPartyTransaction(
    env,
    providerConfig(env).oneTimeShards,
    s.lang,
    s.langGiven,
    browser.value,
    signinConfig(env).txTtlMs,
    await ipKey(req),
    page.mark,
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
    purpose: page.mark,
    words: page,
  };
  return identifyPage(ctx, {}, s.alert ? { text: s.alert } : undefined);
}
