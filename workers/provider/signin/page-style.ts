// The sign-in pages' stylesheet (pages.ts splices it into every page as bytes, under the page's
// CSP nonce): mobile-first, readable at 320 px, the look the sign-in pages share.

export const PAGE_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Apple SD Gothic Neo","Malgun Gothic","Nanum Gothic","NanumGothic","Noto Sans KR",system-ui,sans-serif;font-size:16px;line-height:1.5;color:#191f28;background:#f2f4f6;word-break:keep-all;overflow-wrap:anywhere}
main{max-width:440px;margin:0 auto;padding:24px 20px 32px}
.web main{margin:24px auto;background:#fff;border-radius:16px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.hybrid{background:#fff}
.hybrid main{max-width:none;min-height:100vh;display:flex;flex-direction:column;padding:20px 20px 24px}
.brand{display:flex;align-items:center;gap:8px;margin:0 0 20px;font-size:14px;font-weight:700;color:#1b64da}
.brand b{display:inline-block;width:22px;height:22px;border-radius:6px;background:#1b64da;color:#fff;text-align:center;font-size:13px;line-height:22px}
h1{margin:0 0 8px;font-size:24px;line-height:1.35;letter-spacing:-.02em}
.lead{margin:0 0 20px;color:#4e5968}
.lead strong{color:#191f28}
form.step{display:flex;flex-direction:column;gap:16px;flex:1}
fieldset{margin:0;padding:0;border:0}
legend,label.field{display:block;margin:0 0 6px;font-size:14px;font-weight:600;color:#333d4b}
.carriers{display:grid;grid-template-columns:repeat(3,1fr);gap:8px}
.carriers input{position:absolute;opacity:0;width:1px;height:1px}
.carriers label{display:block;padding:12px 4px;border:1.5px solid #8b95a1;border-radius:10px;text-align:center;font-weight:600;background:#fff;cursor:pointer}
.carriers input:checked+label{border-color:#1b64da;background:#e8f3ff;color:#1b64da}
.carriers input:focus-visible+label{outline:3px solid #1b64da;outline-offset:2px}
input[type=text],input[type=tel]{width:100%;padding:13px 14px;font-size:17px;border:1.5px solid #8b95a1;border-radius:10px;background:#fff;color:#191f28}
input[type=text]:focus,input[type=tel]:focus{outline:3px solid #1b64da;outline-offset:1px;border-color:#1b64da}
input[aria-invalid=true]{border-color:#e5484d}
input.otp{letter-spacing:.4em;font-size:22px;text-align:center;font-variant-numeric:tabular-nums}
.alert{margin:0;padding:12px 14px;border-radius:10px;background:#fff0f0;color:#c0262d;font-weight:600}
.notice{margin:0;padding:12px 14px;border-radius:10px;background:#e8f3ff;color:#1b64da}
.hint{margin:6px 0 0;font-size:13px;color:#5f6b7a}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
input:disabled,button:disabled{opacity:.5;cursor:not-allowed}
.check{display:flex;gap:10px;align-items:flex-start;padding:12px 14px;border-radius:10px;background:#f9fafb}
.check input{width:20px;height:20px;margin:2px 0 0;flex:none;accent-color:#1b64da}
.check label{font-size:14px}
.check .hint{display:block;margin-top:2px}
.terms-list{list-style:none;margin:8px 0 0;padding:0 0 0 14px}
.terms-list li{margin:4px 0;font-size:14px}
.terms-list summary{cursor:pointer;padding:6px 0}
.terms-list .view{color:#1b64da;text-decoration:underline}
.term-text{white-space:pre-line;max-height:12em;overflow:auto;padding:10px 12px;border-radius:8px;background:#f9fafb;font-size:13px;color:#4e5968}
.items{margin:0;padding:14px 14px 14px 34px;border-radius:10px;background:#f9fafb}
.items li{margin:2px 0}
.challenge{display:flex;flex-direction:column;gap:8px}
.actions{display:flex;flex-direction:column;gap:8px;margin-top:8px}
.hybrid .actions{margin-top:auto;padding-top:16px}
button{width:100%;min-height:52px;padding:12px;font:inherit;font-size:17px;font-weight:700;border-radius:12px;border:0;cursor:pointer}
button.primary{background:#1b64da;color:#fff}
button.secondary{background:#f2f4f6;color:#4e5968}
button.link{min-height:44px;background:none;color:#1b64da;font-size:15px;font-weight:600}
button:focus-visible,a:focus-visible{outline:3px solid #1b64da;outline-offset:2px}
.hybrid .actions button{min-height:56px}
footer{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:8px 12px;margin-top:24px;font-size:13px;color:#5f6b7a}
footer p{margin:0}
footer nav{display:flex;flex-wrap:wrap;gap:4px 12px;width:100%}
footer a{color:#4e5968}
footer form{margin:0}
footer button{width:auto;min-height:36px;padding:4px 12px;font-size:13px;font-weight:600;background:#f2f4f6;color:#4e5968;border-radius:8px}
.stop p{color:#4e5968}
a.button{display:block;padding:14px;border-radius:12px;background:#1b64da;color:#fff;text-align:center;font-weight:700;text-decoration:none}
.app{margin:0 0 16px;padding:16px;border:1.5px solid #d1d6db;border-radius:12px}
.app h2{margin:0 0 8px;font-size:18px}
.app h3{margin:0 0 8px;font-size:17px}
.passkey-list{list-style:none;margin:0;padding:0}
.passkey{margin-top:24px;padding-top:16px;border-top:1px solid #e5e8eb}
.app dl{margin:0;font-size:14px}
.app dl div{display:flex;gap:8px}
.app dt{flex:none;min-width:6.5em;color:#4e5968}
.app dd{margin:0}
.app .auto{margin:8px 0 12px;font-size:14px;font-weight:600}
.app-actions{display:flex;flex-direction:column;gap:8px}
.app-actions button{min-height:44px;font-size:15px}
.carriers+.carriers{margin-top:8px}
.carriers.mvno label{font-size:14px;padding:10px 4px}
.consent{margin:0;padding:14px;border-radius:10px;background:#f9fafb;font-size:14px}
.consent div{margin:0 0 10px}
.consent dt{font-weight:700;color:#333d4b}
.consent dd{margin:2px 0 0}
.consent ul{margin:2px 0 0;padding-left:20px}
.refuse{margin:0;font-size:14px;color:#4e5968}
a.switch{align-self:center;color:#1b64da;font-size:14px;font-weight:600}
`;
