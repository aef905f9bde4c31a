// The agreements the identify step shows before the carrier is asked (docs/signin.md "The
// agreements"), as Korean identity checks show them: each required agreement with its full text
// behind 보기, and one 전체 동의 box whose `carrierTerms=Y` the step requires. The texts are the
// operator's (SIGNIN_TERMS, JSON); unset, these sample texts, which say they are samples.

import { ConfigError, optionalVar } from "../../core/config";
import { html, raw, type SafeHtml } from "../../core/html";
import { t, type Lang } from "./i18n";

/** One agreement: its title and full text, in both languages of the pages. */
export interface CarrierTerm {
  title: { ko: string; en: string };
  text: { ko: string; en: string };
}

/** The most agreements, and the longest title and text (characters). */
const MAX_TERMS = 10;
const MAX_TITLE = 100;
const MAX_TEXT = 20_000;

/** The dev defaults: the four agreements Korean identity checks ask for, with sample texts. */
export const SAMPLE_TERMS: readonly CarrierTerm[] = [
  {
    title: { ko: "개인정보 수집·이용 동의", en: "Collection and use of personal information" },
    text: {
      ko: "예시 약관입니다. 운영사는 SIGNIN_TERMS로 실제 약관을 설정합니다.\n수집 항목: 이름, 휴대폰번호, 통신사, 생년월일, 성별, 내외국인 구분\n이용 목적: 본인 확인, 부정 이용 방지\n보유 기간: 관련 법령이 정한 기간\n동의하지 않을 수 있으나, 이 경우 휴대폰번호 로그인을 이용할 수 없습니다.",
      en: "A sample text: the operator sets the real terms with SIGNIN_TERMS.\nWhat is collected: name, mobile number, carrier, date of birth, gender, national or foreign\nWhy: to confirm who you are and to prevent misuse\nHow long: as long as the law requires\nYou may refuse, but then you cannot sign in with your mobile number.",
    },
  },
  {
    title: { ko: "고유식별정보 처리 동의", en: "Processing of unique identifiers" },
    text: {
      ko: "예시 약관입니다.\n처리 항목: 연계정보(CI)\n이용 목적: 같은 사람인지 확인하고, 번호가 다른 사람에게 넘어갔을 때 이전 사용자의 로그인을 끝내기 위해\n보유 기간: 로그인 연결이 끝날 때까지",
      en: "A sample text.\nWhat is processed: the connecting information (CI)\nWhy: to recognise the same person, and to end the previous holder's logins when a number passes to someone else\nHow long: until the login connection ends",
    },
  },
  {
    title: { ko: "통신사 이용약관 동의", en: "The carrier's terms of use" },
    text: {
      ko: "예시 약관입니다.\n가입하신 통신사가 이름과 휴대폰번호가 가입자 정보와 같은지 확인합니다. 통신사는 확인 결과만 알려 주며, 다른 정보는 제공하지 않습니다.",
      en: "A sample text.\nYour carrier checks that the name and mobile number match its subscriber. The carrier tells only whether they match.",
    },
  },
  {
    title: { ko: "본인확인서비스 이용약관 동의", en: "Terms of the identity check" },
    text: {
      ko: "예시 약관입니다.\n인증번호는 문자로 보내며, 정해진 시간 안에 한 번만 쓸 수 있습니다. 인증번호를 다른 사람에게 알려 주지 마세요.",
      en: "A sample text.\nThe code is sent by text message and works once, for a short time. Never tell anyone your code.",
    },
  },
];

/** SIGNIN_TERMS as agreements, or the samples when unset; throws ConfigError naming what is wrong. */
export function termsVar(env: object): readonly CarrierTerm[] {
  const raw = optionalVar(env, "SIGNIN_TERMS");
  if (raw === undefined) return SAMPLE_TERMS;
  const bad = (why: string) => new ConfigError("SIGNIN_TERMS", why);
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    throw bad("must be JSON: an array of {title: {ko, en}, text: {ko, en}}");
  }
  if (!Array.isArray(doc) || doc.length === 0 || doc.length > MAX_TERMS)
    throw bad(`must be an array of 1 to ${MAX_TERMS} agreements`);
  const text = (v: unknown, max: number, where: string): string => {
    if (typeof v !== "string" || v.trim() === "" || v.length > max)
      throw bad(`${where} must be text of 1 to ${max} characters`);
    return v;
  };
  return doc.map((t: unknown, i) => {
    const o = (t ?? {}) as { title?: Record<string, unknown>; text?: Record<string, unknown> };
    return {
      title: {
        ko: text(o.title?.ko, MAX_TITLE, `[${i}].title.ko`),
        en: text(o.title?.en, MAX_TITLE, `[${i}].title.en`),
      },
      text: { ko: text(o.text?.ko, MAX_TEXT, `[${i}].text.ko`), en: text(o.text?.en, MAX_TEXT, `[${i}].text.en`) },
    };
  });
}

/**
 * The identify form's agreements: one required 전체 동의 box posting `carrierTerms=Y`, then each
 * agreement's title with its full text behind 보기 (a `<details>`: no script needed). `checked`
 * keeps the person's tick across a re-render; `invalid`, the alert is about it.
 */
export function termsBox(L: Lang, terms: readonly CarrierTerm[], checked: boolean, invalid: boolean): SafeHtml {
  const attrs = invalid
    ? raw(' aria-invalid="true" aria-describedby="form-alert terms-hint" autofocus')
    : raw(' aria-describedby="terms-hint"');
  return html`<fieldset class="terms"><legend>${t(L, "termsLegend")}</legend>
<div class="check"><input type="checkbox" id="carrierTerms" name="carrierTerms" value="Y" required${checked ? raw(" checked") : ""}${attrs}>
<label for="carrierTerms">${t(L, "termsAll")}<span class="hint" id="terms-hint"> ${t(L, "termsAllHint")}</span></label></div>
<ul class="terms-list">${terms.map(
    (term) =>
      html`<li><details><summary>${term.title[L]} ${t(L, "termsRequired")} <span class="view">${t(L, "termsView")}</span></summary><div class="term-text" role="region" tabindex="0" aria-label="${term.title[L]}">${term.text[L]}</div></details></li>`,
  )}</ul></fieldset>`;
}
