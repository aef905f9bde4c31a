// What both consoles' doors share (docs/console.md, docs/developers.md "Signing in"): a console's
// sign-in as a first-party page of the service's sign-in (workers/provider/signin/first-party.ts),
// named by the console, and the routes around it: the console's root (a step of the sign-in, the
// sign-in itself, else the console's first page), its sign-out, and the 303 from an action's
// address opened as a page back to the page it belongs to.

import { E } from "../core/errors";
import { readParams, redirect, type Params } from "../core/http";
import type { Handler, RequestContext } from "../core/router";
import { fromThisSite } from "../admin/access";
import { providerConfig, type ProviderEnv } from "../provider/config";
import { firstParty, type FirstParty, type FirstPartyPage, type Transaction } from "../provider/signin/index";
import {
  clearConsoleCookie,
  consoleCsrfHolds,
  endConsoleSession,
  loadConsoleSession,
  type SessionKind,
} from "../provider/store/console-session";
import type { Lang } from "./i18n";

/** A console as its sign-in names it: its mark (its path without the slash), words, pages and end. */
export type ConsolePage = Omit<FirstPartyPage, "url"> & { next: RegExp };

/** Where a console's sign-in goes on to: the page it was asked for, in its language. */
export function consoleUrl(page: ConsolePage, tx: Pick<Transaction, "redirectUri" | "lang">): string {
  const path = page.next.test(tx.redirectUri) ? tx.redirectUri : `/${page.mark}`;
  return tx.lang === "en" ? `${path}?lang=en` : path;
}

/** The language a console request asks for: `lang=en`, else Korean. */
export function langOf(params: Params): Lang {
  return params.get("lang") === "en" ? "en" : "ko";
}

/** A console's identify page: a new sign-in going on to the `next` the request names once proven. */
export type SignIn = (
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  lang: Lang,
  alert?: string,
  cookies?: string[],
) => Promise<Response>;

/** What a console gives its door. */
export interface Door<Env extends ProviderEnv> {
  /** The console's page as its sign-in names it. */
  page: ConsolePage;
  /** The console's session kind (`loadConsoleSession`); the operations console's when absent. */
  session?: SessionKind;
  /** Whether the console exists in this deployment; 404 for every door route when not. */
  open?: (env: Env) => boolean;
  /** Largest sign-out form. */
  signOutBytes: (env: Env) => number;
  /** The console's first page for a live session. */
  first: Handler<Env>;
  /** "You signed out." in the console's words. */
  signedOut: (lang: Lang) => string;
}

/** A console's door: its sign-in, its identify page, root, sign-out and the way back from an action's address. */
export function door<Env extends ProviderEnv>(d: Door<Env>) {
  const { mark, next: pages } = d.page;
  const home = `/${mark}`;
  /** The console's sign-in: the service's first-party sign-in of the console's page. */
  const signin: FirstParty = firstParty({ ...d.page, url: (tx) => consoleUrl(d.page, tx) });
  const shut = (env: Env) => {
    if (d.open && !d.open(env)) throw E.notFound();
  };

  const signIn: SignIn = (req, env, rc, lang, alert, cookies = []) => {
    const next = new URLSearchParams(rc.search).get("next") ?? "";
    rc.log.event = `${mark}.start`;
    return signin.start(req, env, { lang, langGiven: lang === "en", next, alert, cookies });
  };

  /**
   * GET|POST /<console>: a step of the console's sign-in (a POST with `tx`), the sign-in itself (no
   * session, or `reauth=1`: a fresh proof), else the console's first page.
   */
  async function root(req: Request, env: Env, rc: RequestContext): Promise<Response | void> {
    shut(env);
    const params = await readParams(req, rc.search, providerConfig(env).maxBodyBytes);
    if (req.method === "POST" && params.has("tx")) return signin.step(req, env, rc, params);
    const lang = langOf(params);
    if (req.method === "POST") throw E.missing("tx");
    if (params.get("reauth") === "1") return signIn(req, env, rc, lang);
    const h = await loadConsoleSession(req, env, providerConfig(env).oneTimeShards, d.session);
    if (!h) return signIn(req, env, rc, lang);
    return d.first(req, env, rc);
  }

  /** POST /<console>/sign-out: the session ends, and the sign-in shows again. */
  async function signOut(req: Request, env: Env, rc: RequestContext): Promise<Response> {
    shut(env);
    const params = await readParams(req, rc.search, d.signOutBytes(env));
    const lang = langOf(params);
    const h = await loadConsoleSession(req, env, providerConfig(env).oneTimeShards, d.session);
    // a sign-out needs the session's own form (a cross-site POST cannot end it: SameSite=Strict as well)
    if (h) {
      if (!fromThisSite(req) || !(await consoleCsrfHolds(h, params.get("csrf")))) return redirect(303, home);
      const cookie = await endConsoleSession(h);
      rc.log.event = `${mark}.sign_out`;
      return signIn(req, env, rc, lang, d.signedOut(lang), [cookie]);
    }
    return signIn(req, env, rc, lang, undefined, [clearConsoleCookie(d.session)]);
  }

  /** A 303 to the page an action belongs to, in the asked language (nothing is read or changed). */
  function back(to: (rc: RequestContext) => string) {
    return (_req: Request, _env: Env, rc: RequestContext): Response => {
      const path = to(rc);
      if (!pages.test(path)) throw E.notFound();
      return redirect(303, new URLSearchParams(rc.search).get("lang") === "en" ? `${path}?lang=en` : path);
    };
  }

  return { signin, signIn, root, signOut, back };
}
