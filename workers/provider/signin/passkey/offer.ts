// The passkey offer (docs/passkeys.md "The offer"): at the end of an app's sign-in proven by SMS,
// where the code and consent pages' probe found a platform authenticator, a page that offers to
// make a passkey before the person goes on to the app. The code is not minted yet: the page's one
// form posts a signed ticket back to the authorization endpoint, with the browser's registration
// or "not now", and that answer mints the code (workers/provider/authorize/offer.ts), once (the
// ticket is taken once). Showing the offer sets a cookie that keeps it away from this browser for
// OFFER_QUIET_DAYS, whatever the answer. The same page, posting to /account, makes a passkey there.

import { readHostCookie, hostCookie } from "../../../core/cookies";
import { cspNonce, html, raw, type SafeHtml } from "../../../core/html";
import type { RequestContext } from "../../../core/router";
import type { ProviderEnv } from "../../config";
import { auditAll } from "../../store/one-time/index";
import { signinConfig } from "../config";
import { t, type Lang } from "../i18n";
import { formActionOf, page } from "../pages";
import type { SigninEnd } from "../purpose";
import { enrolmentOf, enrolPage, type CreationOptions } from "./enrol";
import { pt, waitText } from "./i18n";

/** The cookie that keeps the offer away from a browser that was shown it. */
export const OFFER_COOKIE = "pl_pk_later";
export const OFFER_QUIET_DAYS = 30;
/** A ticket longer than this (an app's state of kilobytes) is not offered: the sign-in ends as before. */
const MAX_TICKET_CHARS = 12_000;

/** The registration script of an enrolment page: the options from the page's JSON, the result posted back. */
const CREATE_SCRIPT = raw(`(function(){
var f=document.getElementById("enrol-form"),o=document.getElementById("enrol-options"),btn=document.getElementById("enrol-create");
if(!f||!o||!btn||!window.PublicKeyCredential||!navigator.credentials)return;
o=JSON.parse(o.textContent);btn.hidden=false;
function b(x){var s="",a=new Uint8Array(x);for(var i=0;i<a.length;i++)s+=String.fromCharCode(a[i]);return btoa(s).replace(/\\+/g,"-").replace(/\\//g,"_").replace(/=+$/,"")}
function u(s){s=s.replace(/-/g,"+").replace(/_/g,"/");var r=atob(s+"===".slice((s.length+3)%4)),a=new Uint8Array(r.length);for(var i=0;i<r.length;i++)a[i]=r.charCodeAt(i);return a}
btn.addEventListener("click",function(){
document.getElementById("enrol-error").hidden=true;
navigator.credentials.create({publicKey:{challenge:u(o.challenge),rp:o.rp,user:{id:u(o.user.id),name:o.user.name,displayName:o.user.displayName},
pubKeyCredParams:[{type:"public-key",alg:-7},{type:"public-key",alg:-8},{type:"public-key",alg:-257}],
authenticatorSelection:{residentKey:"required",requireResidentKey:true,userVerification:"required"},
excludeCredentials:o.exclude.map(function(id){return{type:"public-key",id:u(id)}}),attestation:"none",timeout:120000}}).then(function(c){
var r=c.response;f.elements.namedItem("credential").value=JSON.stringify({id:c.id,rawId:b(c.rawId),type:c.type,authenticatorAttachment:c.authenticatorAttachment||undefined,
clientExtensionResults:c.getClientExtensionResults?c.getClientExtensionResults():{},response:{clientDataJSON:b(r.clientDataJSON),attestationObject:b(r.attestationObject),transports:r.getTransports?r.getTransports():[]}});
f.submit()},function(){document.getElementById("enrol-error").hidden=false});
});
})();`);

/** JSON safe inside a <script type="application/json"> element. */
function scriptJson(v: unknown): SafeHtml {
  return raw(JSON.stringify(v).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026"));
}

/**
 * An enrolment form: the create button (shown by its script where WebAuthn is), the ticket and the
 * registration's field, `hidden` fields of the page it posts to, and `secondary` (a "not now" or
 * nothing).
 */
export function enrolForm(
  L: Lang,
  action: string,
  token: string,
  options: CreationOptions,
  hidden: SafeHtml | string,
  secondary: SafeHtml | string,
): SafeHtml {
  return html`<form id="enrol-form" method="post" action="${action}">
${hidden}<input type="hidden" name="enrol" value="${token}"><input type="hidden" name="credential" value="">
<script type="application/json" id="enrol-options">${scriptJson(options)}</script>
<p id="enrol-error" class="alert" role="alert" hidden>${pt(L, "errCreate")}</p>
<noscript><p class="hint">${pt(L, "noScript")}</p></noscript>
<div class="actions">
<button type="button" class="primary" id="enrol-create" hidden>${pt(L, "create")}</button>
${secondary}
</div>
</form>`;
}

export { CREATE_SCRIPT };

/**
 * The offer in place of the redirect to the app, when this sign-in may offer one: proven by SMS
 * (not by a passkey, not a test number), in a browser the probe found able (`pk`), not a WebView,
 * not offered on this browser lately, and the person free to make one with an SMS proof (no active
 * passkey, fewer than PASSKEY_MAX). Null: the sign-in ends as before.
 */
export async function passkeyOffer(
  req: Request,
  env: ProviderEnv,
  rc: RequestContext,
  c: SigninEnd,
  pk: boolean,
): Promise<Response | null> {
  const sub = c.tx.subscriber;
  if (!pk || c.tx.isHybrid || c.tx.passkey || !sub || sub.testOtpHash !== null || sub.review) return null;
  if (readHostCookie(req, OFFER_COOKIE) !== undefined) return null;
  const e = await enrolmentOf(env, c.subscriberId, undefined);
  if (!e) return null;
  const L = c.tx.lang;
  // what the answer needs to mint the code, and nothing of the person beyond their id (the ticket
  // is readable in the page: no hash of the number, no CSRF or browser hashes)
  const t = c.tx;
  const resume = {
    c: t.clientId,
    u: t.redirectUri,
    s: t.state,
    p: t.prompt ?? null,
    x: t.codeChallenge,
    o: c.optIn,
    pl: c.shared!.plid,
    i: c.shared!.items,
    // an OpenID Connect request: its nonce holder and when the number was proven (the id_token's)
    ...(t.oidc && { oi: t.oidc, pa: t.provenAt }),
  };
  const { token, options } = await enrolPage(req, env, e, { s: c.subscriberId, w: "sms", l: L, r: resume }, sub.masked);
  if (token.length > MAX_TICKET_CHARS) return null;
  // the consent's event goes now: the code it would have gone with is minted by the answer
  if (c.shared!.consented) rc.waitUntil(auditAll(env, [c.shared!.consented.audit]));
  rc.log.event = "signin.passkey_offer";
  const after = waitText(L, signinConfig(env).passkeyActivationMs);
  const cookie = hostCookie(OFFER_COOKIE, "1", { maxAgeSeconds: OFFER_QUIET_DAYS * 86400 });
  const ctx = {
    operator: signinConfig(env).operator,
    lang: L,
    hybrid: false,
    appName: c.client.name,
    nonce: cspNonce(),
    // the answer is redirected to the app
    formAction: formActionOf(c.tx.redirectUri),
    cookies: [cookie],
  };
  const body = html`<h1>${pt(L, "offerTitle")}</h1>
<p class="lead">${pt(L, "offerLead")}</p>
<p class="hint">${pt(L, "offerDelay", { after })}</p>
${enrolForm(L, "/oauth2/authorize", token, options, "", html`<button type="submit" class="secondary" name="later" value="Y">${pt(L, "later")}</button>`)}`;
  return page(ctx, pt(L, "offerTitle"), body, {}, CREATE_SCRIPT);
}

/** The page after an offer's answer that made nothing: why, and the way on to the app. */
export function offerFailed(env: ProviderEnv, L: Lang, app: string, text: string, location: string): Response {
  const ctx = {
    operator: signinConfig(env).operator,
    lang: L,
    hybrid: false,
    appName: app,
    nonce: cspNonce(),
    formAction: [],
  };
  const body = html`<h1>${pt(L, "offerTitle")}</h1>
<p class="alert" role="alert">${text}</p>
<p><a class="button" href="${location}">${pt(L, "continueApp", { app })}</a></p>`;
  return page(ctx, t(L, "serviceName"), body);
}
