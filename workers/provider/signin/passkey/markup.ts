// The sign-in pages' scripts and the passkey parts (docs/passkeys.md): the code page's WebOTP call,
// the identify page's "sign in with a passkey" form and its script, and the probe the code and
// consent pages carry. Each is an
// enhancement: with scripts off, or where the browser has no WebAuthn (many apps' WebViews), the
// passkey form stays hidden and the SMS path is the page as it was; a WebView that says so
// (`isHybrid=Y`) is offered nothing at all.

import { html, raw, type SafeHtml } from "../../../core/html";
import { t, type Lang } from "../i18n";
import { pt } from "./i18n";

/**
 * The code page's WebOTP call (docs/signin.md "The SMS text"): where the browser has the API, the
 * code of the SMS whose last line names this origin fills the field and submits the form; a
 * submission by hand (or a resend, or cancel) aborts the wait. Without it the page is unchanged.
 */
export const WEB_OTP = raw(`(function(){
if(!("OTPCredential" in window))return;
var input=document.getElementById("otp"),form=input&&input.form;
if(!form)return;
var ac=new AbortController();
form.addEventListener("submit",function(){ac.abort()});
navigator.credentials.get({otp:{transport:["sms"]},signal:ac.signal}).then(function(otp){
if(!otp||!/^[0-9]{6}$/.test(otp.code)||ac.signal.aborted)return;
input.value=otp.code;
if(form.requestSubmit)form.requestSubmit();else form.submit();
},function(){});
})();`);

/**
 * The code page's countdown (docs/signin.md "Pages"): from the seconds the code had left when the
 * page was sent (`data-seconds`, so the person's clock does not matter), "남은 시간 2:59" each second,
 * then that the code has expired. With scripts off the lead's clock time says the same.
 */
export const COUNTDOWN = raw(`(function(){
var el=document.getElementById("countdown");if(!el)return;
var left=Number(el.getAttribute("data-seconds"));if(!(left>0))return;
var end=Date.now()+left*1000;
function tick(){var s=Math.max(0,Math.ceil((end-Date.now())/1000));
el.textContent=s>0?el.getAttribute("data-left")+" "+Math.floor(s/60)+":"+(s%60<10?"0":"")+(s%60):el.getAttribute("data-over");
el.hidden=false;var r=(end-Date.now())%1000;if(s>0)setTimeout(tick,r>0?r:1000);}
tick();
})();`);

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
 * The identify page's passkey form: hidden until its script finds WebAuthn; `autoLoginDays` when
 * the app offers automatic login (the box, as on the code page, for SKT and KT subscribers).
 */
export function passkeyForm(
  L: Lang,
  action: string,
  hidden: SafeHtml,
  app: string,
  autoLoginDays: number | undefined,
): SafeHtml {
  return html`<form id="passkey-form" class="passkey" method="post" action="${action}" hidden>
${hidden}<input type="hidden" name="passkey" value="">
<p class="hint">${pt(L, "signInHint")}</p>
${
  autoLoginDays !== undefined
    ? html`<div class="check"><input type="checkbox" id="pk-autoLogin" name="autoLogin" value="Y" aria-describedby="pk-autoLogin-hint">
<label for="pk-autoLogin">${t(L, "autoLogin", { days: autoLoginDays, app })}<span class="hint" id="pk-autoLogin-hint"> ${t(L, "autoLoginHint")}</span></label></div>`
    : ""
}
<div class="actions"><button type="submit" class="primary" id="passkey-button">${pt(L, "signIn")}</button></div>
</form>`;
}
