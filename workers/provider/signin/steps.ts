// The sign-in's two entries (form contract and state machine in docs/signin.md): an app's first
// page (`beginSignIn`), and a step submission of either purpose (`continueSignIn`), read, checked
// and handed to its step: identify.ts, verify.ts, consent.ts, or first gated.ts. Every POST carries
// the transaction id and CSRF token, and the browser cookie bound to the transaction. Each step is
// one call on the store object holding the sign-in (workers/provider/store/one-time/signin-store.ts);
// a submission that loses a race changes nothing and is answered with the page of the state that
// won. A wrong entry re-renders the step (200), a limit answers 429 with Retry-After, an unknown or
// expired transaction 403; only the purpose's end and its cancel redirect.

import { challengeFirst } from "./guard";
import { challengeOf } from "./guard-gate";
import { isRandomValue } from "../../core/spec";
import type { Params } from "../../core/http";
import { cspNonce } from "../../core/html";
import type { RequestContext } from "../../core/router";
import { providerConfig, type ProviderEnv } from "../config";
import { shardOf } from "../store/one-time/index";
import { tally, timing } from "../store/metrics/index";
import { signinConfig, type SigninConfig } from "./config";
import { consent } from "./consent";
import { at, cancel, conflict, flowOf, minutes, pageContext, render, type Flow } from "./flow";
import { gatedStep } from "./gated";
import { identify } from "./identify";
import { pickLang, t, type Lang } from "./i18n";
import { ipCounter, ipKey, type IpHit } from "./limits";
import { bareContext, formActionOf, identifyPage, stopPage, type PageContext } from "./pages";
import type { SigninPurpose, Submission } from "./purpose";
import {
  bindingHolds,
  browserBinding,
  createTransaction,
  handleOf,
  loadTransaction,
  pageToken,
  sameBrowser,
  type SigninRequest,
  type TxHandle,
} from "./transaction";
import { verify } from "./verify";
import { passkeySignIn } from "./passkey/signin";
import { textInLanguage, textStep } from "./text";
import { textOffered } from "./text-config";

/**
 * The first page of an app's sign-in (docs/signin.md "The first page"): its `tx` is the request
 * signed, so nothing is stored until a number is posted (`createTransaction`).
 */
export async function beginSignIn(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  cfg: SigninConfig,
  ar: SigninRequest,
): Promise<Response> {
  const lang = pickLang(req.headers.get("Accept-Language"), ar.lang);
  const browser = browserBinding(req);
  const { id, csrf } = await createTransaction(
    env,
    providerConfig(env).oneTimeShards,
    ar,
    lang,
    browser.value,
    cfg.txTtlMs,
    () => ipKey(req),
  );
  rc.log.event = "signin.start";
  tally(env, rc, "signin.start", ar.client.clientId);
  const ctx: PageContext = {
    operator: cfg.operator,
    lang,
    hybrid: ar.isHybrid,
    appName: ar.client.name,
    txId: id,
    csrf,
    nonce: cspNonce(),
    formAction: formActionOf(ar.redirectUri),
    cookies: browser.setCookie ? [browser.setCookie] : [],
  };
  // a network or an app the SMS-abuse guard holds suspect: the challenge is on the first page already
  // (not where a text would be asked for instead: the challenge would lead to no code)
  const first =
    !textOffered(env) && (await challengeFirst(env, rc, req, ar.client.clientId)) ? challengeOf({ env }) : undefined;
  return identifyPage(ctx, {}, undefined, undefined, first);
}

/** `restart=Y` from a stop page: the sign-in ends, and its purpose answers (an app: `login_required`). */
async function restarted(h: TxHandle, rc: RequestContext, purpose: SigninPurpose): Promise<Response> {
  if (!h.page) await h.stub.signinFinish(h.key, ["identify", "verify", "consent"]);
  rc.log.event = "signin.restart";
  return purpose.restarted(h.tx);
}

async function switchLanguage(f: Flow, lang: Lang): Promise<Response> {
  let g: Flow;
  if (f.h.page) {
    // A first page is signed again in the other language (the record it carries, `lang` changed).
    const tx = { ...f.h.tx, lang };
    g = at(f, { ...f.h, tx, page: await pageToken(f.env, f.h.id, tx) });
  } else {
    const tx = await f.h.stub.signinSetLang(f.h.key, lang);
    if (tx === null || tx.step === "moved") return conflict(f, tx);
    g = at(f, handleOf(f.h, tx));
  }
  // the text page's switch carries its ticket: the same page in the other language
  return f.params.has("text") ? textInLanguage(g) : render(g);
}

/**
 * A step submission (a POST carrying `tx`) of a sign-in for `purpose`: to /oauth2/authorize for an
 * app's sign-in (workers/provider/authorize/purpose.ts), to /account for the person's own page
 * (workers/provider/account/purpose.ts).
 */
export async function continueSignIn(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  params: Params,
  purpose: SigninPurpose,
): Promise<Response> {
  const started = Date.now();
  const cfg = signinConfig(env);
  const shards = providerConfig(env).oneTimeShards;
  const submission: Submission = { req, env, rc, cfg, shards, params };
  if (purpose.gated) {
    const done = await gatedStep(submission, purpose);
    if (done) return done;
  }
  // A step-1 submission is counted against its network's limit in the call that reads its
  // transaction, when that is a first page's, made in the network's object (`createTransaction`).
  const txId = params.get("tx");
  const ip = (params.has("phoneNo") || params.has("passkey")) && isRandomValue(txId) ? await ipKey(req) : undefined;
  let ipHit: IpHit | undefined;
  const h = await loadTransaction(
    env,
    shards,
    txId,
    ip !== undefined && shardOf(ip, shards) === shardOf(txId!, shards)
      ? async (stub, key) => {
          const r = await stub.signinGetHit(key, ipCounter(ip), cfg.ipWindowMs);
          ipHit = r.hit;
          return r.record;
        }
      : undefined,
  );
  if (!h) {
    rc.log.event = "signin.unknown_tx";
    const lang = pickLang(req.headers.get("Accept-Language"));
    return stopPage(bareContext(signinConfig(env).operator, lang), t(lang, "unknownTitle"), t(lang, "unknownText"));
  }
  const tx = h.tx;
  rc.log.clientId = tx.clientId;
  // A transaction serves the purpose it was made for: an app's step cannot be posted to /account.
  if (tx.purpose !== purpose.mark) {
    const lang = tx.lang;
    return stopPage(pageContext(env, tx, ""), t(lang, "unknownTitle"), t(lang, "unknownText"));
  }
  if (params.get("restart") === "Y") {
    // The way back from a stop page, which may lack the CSRF token; the browser's cookie is still
    // needed: from anywhere else it would end someone's sign-in and hand out their app's state.
    if (!(await sameBrowser(req, tx))) {
      rc.log.event = "signin.restart_refused";
      const ctx = pageContext(env, tx, "", undefined, undefined, purpose.words);
      return stopPage(ctx, t(tx.lang, "unknownTitle"), t(tx.lang, "unknownText"));
    }
    // Back only while the sign-in could still end there (an app active, with the redirect URI):
    // else the page a cancel gets in the same case (nothing goes to that address).
    const flow = await flowOf(submission, purpose, h, undefined);
    if (flow instanceof Response) return flow;
    return restarted(h, rc, purpose);
  }
  const client = await purpose.client(env, tx);
  const stopCtx = pageContext(env, tx, client?.name ?? "", undefined, undefined, purpose.words);
  if (Date.now() >= tx.expiresAt) {
    rc.log.event = "signin.expired";
    return stopPage(
      stopCtx,
      t(tx.lang, "expiredTitle"),
      t(tx.lang, "expiredText", { minutes: minutes(cfg.txTtlMs) }),
      purpose.restart(h),
    );
  }
  const csrf = params.get("csrf");
  if (!(await bindingHolds(req, tx, csrf))) {
    rc.log.event = "signin.csrf_refused";
    return stopPage(stopCtx, t(tx.lang, "forbiddenTitle"), t(tx.lang, "forbiddenText"), purpose.restart(h));
  }
  // A client disabled, or the sign-in's redirect URI removed, since the sign-in began: no code goes there.
  const flow = await flowOf(submission, purpose, h, csrf, client);
  if (flow instanceof Response) return flow;
  const f: Flow = ipHit ? { ...flow, ipHit } : flow;

  const lang = params.get("lang");
  if (lang === "ko" || lang === "en") return switchLanguage(f, lang);
  if (params.get("cancel") === "Y" && tx.step !== "consent") return cancel(f);
  // The identify form posted again (back button, a corrected number): step 1 starts over. The
  // identify page's passkey form proves the number with a passkey instead (passkey/signin.ts).
  // The text page posts its ticket (`text`): the number is proven by a text the person sent (text.ts).
  const step = params.has("passkey")
    ? "passkey"
    : params.has("text")
      ? "text"
      : params.has("phoneNo") || tx.step === "moved"
        ? "identify"
        : tx.step;
  const res =
    step === "passkey"
      ? await passkeySignIn(f)
      : step === "text"
        ? await textStep(f)
        : step === "identify"
          ? await identify(f)
          : step === "verify"
            ? await verify(f)
            : params.get("cancel") === "Y"
              ? await cancel(f)
              : await consent(f);
  // the step's time in the service (its store calls, the carrier, the SMS gateway), not the person's
  timing(env, rc, `step.${step}`, Date.now() - started);
  return res;
}
