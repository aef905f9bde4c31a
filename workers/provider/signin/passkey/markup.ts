// The passkey parts of the sign-in pages (docs/passkeys.md): the identify page's "sign in with a
// passkey" form and its script, and the probe the code and consent pages carry. Each is an
// enhancement: with scripts off, or where the browser has no WebAuthn (many apps' WebViews), the
// passkey form stays hidden and the SMS path is the page as it was; a WebView that says so
// (`isHybrid=Y`) is offered nothing at all.

import { html, raw, type SafeHtml } from "../../../core/html";
import type { Lang } from "../i18n";
import { pt } from "./i18n";

/**
 * The identify page's passkey script. The challenge is SHA-256 of the `tx` the form posts (the
 * server computes the same, signin/passkey/webauthn.ts), so the page needs nothing from a store. A
 * click asks for any passkey of this host (discoverable: no list of credentials is sent); where the
 * browser offers passkeys in autofill (conditional mediation), the request waits there as well.
 */
export const PASSKEY_SIGNIN_SCRIPT = raw(`(function(){
var f=document.getElementById("passkey-form");
if(!f||!window.PublicKeyCredential||!window.crypto||!crypto.subtle||!navigator.credentials)return;
f.hidden=false;
function b(x){var s="",a=new Uint8Array(x);for(var i=0;i<a.length;i++)s+=String.fromCharCode(a[i]);return btoa(s).replace(/\\+/g,"-").replace(/\\//g,"_").replace(/=+$/,"")}
function j(c){var r=c.response;return JSON.stringify({id:c.id,rawId:b(c.rawId),type:c.type,authenticatorAttachment:c.authenticatorAttachment||undefined,clientExtensionResults:c.getClientExtensionResults?c.getClientExtensionResults():{},response:{clientDataJSON:b(r.clientDataJSON),authenticatorData:b(r.authenticatorData),signature:b(r.signature),userHandle:r.userHandle?b(r.userHandle):undefined}})}
var ac=null,out=f.elements.namedItem("passkey");
function get(m){
if(ac)ac.abort();var mine=ac=new AbortController();
return crypto.subtle.digest("SHA-256",new TextEncoder().encode(f.elements.namedItem("tx").value)).then(function(d){
var o={publicKey:{challenge:d,rpId:location.hostname,userVerification:"required",allowCredentials:[],timeout:120000},signal:mine.signal};
if(m)o.mediation=m;return navigator.credentials.get(o)}).then(function(c){if(c&&!mine.signal.aborted){out.value=j(c);f.submit()}},function(){});
}
f.addEventListener("submit",function(e){if(!out.value){e.preventDefault();get()}});
if(PublicKeyCredential.isConditionalMediationAvailable)PublicKeyCredential.isConditionalMediationAvailable().then(function(ok){if(ok)get("conditional")},function(){});
})();`);

/**
 * The code and consent pages' probe: a form field `pk` set to Y where the browser can make a passkey
 * on this device, so the end of the sign-in offers one only there (signin/passkey/offer.ts).
 */
export const PASSKEY_PROBE_SCRIPT = raw(`(function(){
if(!window.PublicKeyCredential||!PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable)return;
PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable().then(function(ok){
if(!ok)return;var l=document.querySelectorAll("input[name=pk]");for(var i=0;i<l.length;i++)l[i].value="Y"},function(){});
})();`);

/** The hidden field the probe sets (in an app's code and consent forms). */
export const PK_FIELD = raw(`<input type="hidden" name="pk" value="">`);

/**
 * The identify page's passkey form: hidden until its script finds WebAuthn. Its button is a
 * secondary one under the SMS form's (one primary action a page); automatic login, where the app
 * offers it, is asked on the consent page that follows a passkey (pages.ts `consentPage`).
 */
export function passkeyForm(L: Lang, action: string, hidden: SafeHtml): SafeHtml {
  return html`<form id="passkey-form" class="passkey" method="post" action="${action}" hidden>
${hidden}<input type="hidden" name="passkey" value="">
<p class="hint">${pt(L, "signInHint")}</p>
<div class="actions"><button type="submit" class="secondary" id="passkey-button">${pt(L, "signIn")}</button></div>
</form>`;
}
