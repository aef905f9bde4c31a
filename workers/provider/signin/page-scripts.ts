// The code page's scripts, each an enhancement the page works without: the WebOTP call and the
// countdown (docs/signin.md). The passkey parts are passkey/markup.ts.

import { raw } from "../../core/html";

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
 * page was sent (`data-seconds`, so the person's clock does not matter), "남은 시간 2:59" each second
 * in the timer (not read out), and "남은 시간 2분" in the polite live region as each minute mark
 * passes. At zero the code field and 확인 are disabled, "get a new code" becomes the primary button,
 * and the expiry note (the text a late code gets) is an alert. With scripts off the lead's clock
 * time says the same.
 */
export const COUNTDOWN = raw(`(function(){
var el=document.getElementById("countdown");if(!el)return;
var left=Number(el.getAttribute("data-seconds"));if(!(left>0))return;
var say=document.getElementById("countdown-say"),end=Date.now()+left*1000,said=Math.ceil(left/60);
function over(){el.hidden=true;
var a=document.createElement("p");a.id="otp-expired";a.className="alert";a.setAttribute("role","alert");a.textContent=el.getAttribute("data-over");
el.parentNode.insertBefore(a,el);
var o=document.getElementById("otp");if(!o||!o.form)return;o.disabled=true;
var c=o.form.querySelector("button.primary:not([name])"),r=o.form.querySelector("button[name=resend]");
if(c){c.disabled=true;c.className="secondary"}if(r)r.className="primary";}
function tick(){var s=Math.max(0,Math.ceil((end-Date.now())/1000));
if(s<=0)return over();
var m=Math.ceil(s/60);
el.textContent=el.getAttribute("data-left")+" "+Math.floor(s/60)+":"+(s%60<10?"0":"")+(s%60);el.hidden=false;
if(say&&m<said){said=m;say.textContent=el.getAttribute("data-minutes").replace("{n}",m)}
var r=(end-Date.now())%1000;setTimeout(tick,r>0?r:1000);}
tick();
})();`);
