// Page languages: Korean by default, English on request (docs/architecture.md §4.7), and every text the
// sign-in pages show. One catalogue, typed keys: a key missing in one language fails typecheck.
import { type IdentityItem } from "../../core/spec";
import type { Lang } from "../store/one-time/index";
import { appWithParticle, withParticle } from "./particles";

/** The pages' languages: the ones a sign-in record can hold. */
export type { Lang };

/**
 * The page language: an explicit `lang` wins; otherwise the Accept-Language entry with the
 * highest q among Korean and English (Korean on a tie or when neither is listed).
 */
export function pickLang(acceptLanguage: string | null, override?: Lang): Lang {
  if (override) return override;
  if (!acceptLanguage) return "ko";
  let best: { lang: Lang; q: number } | undefined;
  for (const entry of acceptLanguage.split(",").slice(0, 20)) {
    const [tag = "", ...params] = entry.trim().split(";");
    const primary = tag.trim().toLowerCase().split("-")[0];
    if (primary !== "ko" && primary !== "en") continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q) || q <= 0) continue;
    if (!best || q > best.q) best = { lang: primary, q };
  }
  return best?.lang ?? "ko";
}

type Vars = Record<string, string | number>;
type Text = string | ((v: Vars) => string);

const ko = {
  accountTitle: "내 휴대폰번호 로그인",
  testingTitle: "아직 테스트 중인 앱입니다",
  testingText: (v: Vars) =>
    `이 앱(${v.app})은 아직 테스트 단계라서 개발 팀과 테스트 번호만 로그인할 수 있습니다. 공개된 뒤에 다시 시도해 주세요. 인증번호는 보내지 않았습니다.`,
  accountIdentifyLead: "휴대폰번호 로그인으로 연결된 앱을 보고 관리하려면 본인 확인을 해 주세요.",
  accountLead: (v: Vars) => `${v.phone} 번호로 로그인하는 앱입니다.`,
  accountNone: "이 번호로 연결된 앱이 없습니다.",
  accountItems: "받는 정보",
  accountConnectedAt: "처음 연결",
  accountLastLogin: "마지막 로그인",
  accountNever: "없음",
  accountAutoLoginOn: (v: Vars) => `자동 로그인: 켜짐 (${v.until}까지)`,
  accountAutoLoginOff: "자동 로그인: 꺼짐",
  accountEndAutoLogin: "자동 로그인 끄기",
  accountTerminate: "연결 끊기",
  accountTerminateHint: "연결을 끊으면 이 앱은 더 이상 내 정보를 받지 않고, 다음에 로그인할 때 동의를 다시 묻습니다.",
  accountDoneAutoLogin: (v: Vars) => `${v.app}의 자동 로그인을 껐습니다.`,
  accountRiskWait: (v: Vars) =>
    `최근 이 번호의 유심이 바뀌었거나 번호이동이 있어, ${v.until}까지는 문자 인증만으로 연결을 끊거나 패스키를 지울 수 없습니다. 패스키로 로그인하면 바로 할 수 있습니다.`,
  accountDoneTerminate: (v: Vars) => `${appWithParticle(String(v.app), "gwa")}의 연결을 끊었습니다.`,
  accountConfirmTerminate: (v: Vars) => `${appWithParticle(String(v.app), "gwa")}의 연결을 끊을까요?`,
  accountKeep: "끊지 않고 돌아가기",
  accountUnknownApp: "그 앱은 이 번호와 연결되어 있지 않습니다.",
  accountSignOut: "이 화면 나가기",
  accountSignedOut: "이 화면에서 나갔습니다. 다시 보려면 본인 확인을 해 주세요.",
  accountExpired: "확인한 지 10분이 지났습니다. 다시 본인 확인을 해 주세요.",
  accountNoItems: "이 앱 전용 식별자만",
  serviceName: "휴대폰번호 로그인",
  identifyTitle: "본인 확인",
  identifyLead: (v: Vars) => `${v.app}에 휴대폰번호로 로그인합니다. 가입한 통신사와 이름, 휴대폰번호를 입력하세요.`,
  carrier: "통신사",
  carrierS: "SKT",
  carrierK: "KT",
  carrierL: "LG U+",
  carrierMS: "SKT 알뜰폰",
  carrierMK: "KT 알뜰폰",
  carrierML: "LG U+ 알뜰폰",
  carrierMvnoHint: "알뜰폰은 쓰는 망(SKT·KT·LG U+)을 고르세요.",
  verifyLeadNoCode: (v: Vars) => `${withParticle(String(v.phone), "euro")} 인증번호를 받으세요.`,
  noticeWait: (v: Vars) => `방금 이 번호로 인증번호를 보냈습니다. ${v.seconds}초 뒤에 새 인증번호를 받을 수 있습니다.`,
  backToApp: "앱으로 돌아가기",
  footerOperator: (v: Vars) => `운영: ${v.name}`,
  footerNav: "서비스 안내",
  terms: "이용약관",
  privacy: "개인정보처리방침",
  help: "도움말",
  consentRecipient: "제공받는 자",
  consentPurpose: "이용 목적",
  consentItems: "제공 항목",
  consentRetention: "보유 기간",
  consentRefuse:
    "동의를 거부할 권리가 있습니다. 거부하면 이 앱에 휴대폰번호로 로그인할 수 없으며, 정보는 제공되지 않습니다.",
  purposeDefault: "회원 식별과 로그인",
  retentionDefault: "로그인 연결을 끊거나 앱이 연결을 해지할 때까지",
  name: "이름",
  phoneNo: "휴대폰번호",
  phonePlaceholder: "010-1234-5678",
  sendCode: "인증번호 받기",
  termsLegend: "약관 동의",
  termsAll: "전체 동의 (필수)",
  termsAllHint: "아래 약관을 확인했고, 모두 동의합니다. 통신사 확인 전에 필요합니다.",
  termsRequired: "(필수)",
  termsView: "보기",
  errTerms: "인증번호를 받으려면 약관에 동의해 주세요. 각 약관은 '보기'를 눌러 확인할 수 있습니다.",
  cancel: "취소",
  verifyTitle: "인증번호 입력",
  verifyLead: (v: Vars) =>
    `${withParticle(String(v.phone), "euro")} 보낸 인증번호 6자리를 ${v.minutes}분 안에 입력하세요 (${v.until}까지).`,
  verifyTestNumber: "테스트 번호입니다. 문자는 발송되지 않으니 정해진 인증번호를 입력하세요.",
  otp: "인증번호",
  countdownLeft: "남은 시간",
  countdownMinutes: (v: Vars) => `남은 시간 ${v.n}분`,
  confirm: "확인",
  resend: "인증번호 다시 받기",
  autoLogin: (v: Vars) => `자동 로그인: 이 기기에서 ${v.days}일 동안 ${v.app}에 바로 로그인합니다.`,
  autoLoginHint: "SKT·KT 가입자만 이용할 수 있습니다. 공용 기기에서는 선택하지 마세요.",
  consentTitle: "정보 제공 동의",
  consentLead: (v: Vars) => `${v.app}에 아래 정보를 제공하는 데 동의하면 로그인이 완료됩니다.`,
  consentNone: "이름이나 번호 같은 개인정보는 제공되지 않고, 이 앱에서만 쓰이는 식별자만 전달됩니다.",
  consentIdentifier: "이 앱 전용 이용자 식별자",
  agree: "동의하고 계속하기",
  disagree: "동의하지 않음",
  language: "언어",
  switchTo: "English",
  footer: "통신 3사 휴대폰번호 로그인",
  // errors and notices
  errTelco: "통신사를 선택하세요.",
  errName: "이름을 입력하세요.",
  errNameLong: "이름은 50자까지 입력할 수 있습니다.",
  errPhone: "휴대폰번호를 입력하세요.",
  errPhoneFormat: "휴대폰번호를 010-1234-5678 형식으로 입력하세요.",
  errUnconfirmed: "입력하신 이름과 휴대폰번호는 통신 3사에서 확인되지 않습니다.",
  riskAutoLoginOff: (v: Vars) =>
    `최근 이 번호의 유심이 바뀌었거나 번호이동이 있었습니다. 안전을 위해 ${v.until}까지는 자동 로그인을 쓸 수 없습니다.`,
  errRiskPasskey:
    "최근 이 번호의 유심이 바뀌었거나 번호이동이 있어, 지금은 문자 인증번호로 로그인할 수 없습니다. 이 번호에 등록된 패스키로 로그인해 주세요. 유심을 바꾼 적이 없다면 바로 통신사에 문의하세요.",
  errCarrierUnavailable: "지금은 통신사에서 본인 확인을 할 수 없습니다. 잠시 뒤에 다시 시도하세요.",
  challengeNeeded:
    "인증번호를 보내기 전에 사람인지 확인이 필요합니다. 아래 확인을 마친 뒤 인증번호 받기를 눌러 주세요.",
  challengeNoScript:
    "사람인지 확인하려면 브라우저에서 JavaScript를 켜야 합니다. JavaScript 없이는 지금 이 네트워크에서 인증번호를 받을 수 없습니다.",
  errChallengeRefused: "사람인지 확인하지 못했습니다. 확인을 다시 마친 뒤 눌러 주세요.",
  errChallengeUnavailable: "지금은 사람인지 확인할 수 없습니다. 잠시 뒤에 다시 시도하세요.",
  errGuardSlowed: (v: Vars) =>
    `이 네트워크에서 인증번호 요청이 많아 잠시 제한됩니다. ${v.minutes}분 뒤에 다시 시도하세요.`,
  pausedTitle: "문자 인증이 잠시 멈췄습니다",
  pausedText: (v: Vars) =>
    `${v.app}의 휴대폰 문자 인증 로그인이 오늘 잠시 멈췄습니다. ${v.until} 이후에 다시 시도하세요.`,
  errOtp: "인증번호 6자리를 입력하세요.",
  errOtpWrong: (v: Vars) => `인증번호가 맞지 않습니다. ${v.left}번 더 입력할 수 있습니다.`,
  errOtpLast: "인증번호가 맞지 않습니다. 이 인증번호는 더 이상 쓸 수 없으니 인증번호를 다시 받으세요.",
  errOtpExhausted: "이 인증번호는 입력 횟수를 모두 썼습니다. 인증번호를 다시 받으세요.",
  errOtpExpired: "인증번호 유효시간이 지났습니다. 인증번호를 다시 받으세요.",
  errOtpGone: "이 인증번호는 더 이상 쓸 수 없습니다. 인증번호를 다시 받으세요.",
  errLocked: (v: Vars) =>
    `인증에 너무 많이 실패해 이 번호는 잠시 잠겼습니다. ${v.until}부터(${v.minutes}분 뒤) 다시 시도할 수 있습니다.`,
  errCooldown: (v: Vars) => `인증번호는 ${v.seconds}초 뒤에 다시 받을 수 있습니다.`,
  errSendLimit: (v: Vars) => `이 번호로 인증번호를 너무 많이 보냈습니다. ${v.minutes}분 뒤에 다시 시도하세요.`,
  // the text's refusal: the window its texts share with its codes is spent, by either
  errTextLimit: (v: Vars) => `이 번호는 인증 횟수를 모두 썼습니다. ${v.minutes}분 뒤에 다시 시도하세요.`,
  errIpLimit: (v: Vars) => `이 네트워크에서 요청이 너무 많습니다. ${v.minutes}분 뒤에 다시 시도하세요.`,
  errSendFailed: "인증번호를 보내지 못했습니다. 잠시 뒤에 다시 시도하세요.",
  errAgree: "동의 여부를 선택하세요.",
  errTermsChanged: "앱이 요청하는 정보가 바뀌었습니다. 내용을 다시 확인하고 동의 여부를 선택하세요.",
  noticeResent: "인증번호를 다시 보냈습니다.",
  noticeResentTest: "테스트 번호입니다. 정해진 인증번호를 그대로 입력하세요.",
  // stop pages
  expiredTitle: "로그인 시간이 지났습니다",
  expiredText: (v: Vars) => `로그인은 ${v.minutes}분 안에 마쳐야 합니다. 처음부터 다시 시작하세요.`,
  unknownTitle: "로그인을 계속할 수 없습니다",
  unknownText: "이 로그인 요청은 유효하지 않거나 이미 끝났습니다. 앱으로 돌아가 다시 시작하세요.",
  forbiddenTitle: "요청을 확인할 수 없습니다",
  forbiddenText: "보안 확인에 실패했습니다. 브라우저의 쿠키가 켜져 있는지 확인하고 처음부터 다시 시작하세요.",
  clientGoneTitle: "앱을 이용할 수 없습니다",
  clientGoneText: "이 앱은 지금 휴대폰번호 로그인을 사용할 수 없습니다.",
  startAgain: "처음부터 다시 시작",
  // SMS (workers/provider/signin/sms/text.ts: each at most 90 bytes in EUC-KR, with the WebOTP line)
  smsFull: (v: Vars) => `[휴대폰번호 로그인] 인증번호 ${v.code} (${v.minutes}분 안에 입력). 타인에게 알려주지 마세요.`,
  smsShort: (v: Vars) => `[휴대폰번호 로그인] 인증번호 ${v.code}. 타인에게 알리지 마세요.`,
  smsCode: (v: Vars) => `[휴대폰번호 로그인] 인증번호 ${v.code}`,
} satisfies Record<string, Text>;

export type MessageKey = keyof typeof ko;

const en: Record<MessageKey, Text> = {
  accountTitle: "My phone number login",
  testingTitle: "This app is still being tested",
  testingText: (v) =>
    `${v.app} is still in its testing stage: only its team and its test numbers can sign in. Try again once it is live. No code was sent.`,
  accountIdentifyLead: "Prove your number to see and manage the apps you log in to with it.",
  accountLead: (v) => `Apps you log in to with ${v.phone}.`,
  accountNone: "No app is connected to this number.",
  accountItems: "Receives",
  accountConnectedAt: "Connected",
  accountLastLogin: "Last login",
  accountNever: "never",
  accountAutoLoginOn: (v) => `Automatic login: on (until ${v.until})`,
  accountAutoLoginOff: "Automatic login: off",
  accountEndAutoLogin: "Turn automatic login off",
  accountTerminate: "End this login",
  accountTerminateHint: "Ending it stops this app receiving your details; the next login asks for your consent again.",
  accountDoneAutoLogin: (v) => `Automatic login for ${v.app} is off.`,
  accountRiskWait: (v) =>
    `This number's SIM changed or the number moved carrier recently: until ${v.until}, a text code alone cannot end logins or remove passkeys. Signed in with a passkey, you can do it now.`,
  accountDoneTerminate: (v) => `Your login with ${v.app} has ended.`,
  accountConfirmTerminate: (v) => `End your login with ${v.app}?`,
  accountKeep: "Keep it and go back",
  accountUnknownApp: "That app is not connected to this number.",
  accountSignOut: "Sign out of this page",
  accountSignedOut: "You are signed out of this page.",
  accountExpired: "Your check is more than 10 minutes old. Prove your number again.",
  accountNoItems: "an identifier only",
  serviceName: "Phone number login",
  identifyTitle: "Confirm it is you",
  identifyLead: (v) => `Log in to ${v.app} with your mobile number. Enter your carrier, name and mobile number.`,
  carrier: "Carrier",
  carrierS: "SKT",
  carrierK: "KT",
  carrierL: "LG U+",
  carrierMS: "SKT MVNO",
  carrierMK: "KT MVNO",
  carrierML: "LG U+ MVNO",
  carrierMvnoHint: "On a budget carrier (MVNO)? Choose the network it uses.",
  verifyLeadNoCode: (v) => `Get a code sent to ${v.phone}.`,
  noticeWait: (v) => `A code was just sent to this number. You can get a new one in ${v.seconds} seconds.`,
  backToApp: "Back to the app",
  footerOperator: (v) => `Operated by ${v.name}`,
  footerNav: "About this service",
  terms: "Terms of use",
  privacy: "Privacy policy",
  help: "Help",
  consentRecipient: "Recipient",
  consentPurpose: "Purpose of use",
  consentItems: "Items",
  consentRetention: "Retention period",
  consentRefuse:
    "You have the right to refuse. If you refuse, you cannot log in to this app with your phone number and nothing is shared.",
  purposeDefault: "Identifying you and logging you in",
  retentionDefault: "Until you terminate the login or the app ends the connection",
  name: "Name",
  phoneNo: "Mobile number",
  phonePlaceholder: "010-1234-5678",
  sendCode: "Send code",
  termsLegend: "Agreements",
  termsAll: "Agree to all (required)",
  termsAllHint:
    "I have read the agreements below and agree to all of them. They are needed before your carrier is asked.",
  termsRequired: "(required)",
  termsView: "View",
  errTerms: "To get a code, agree to the agreements. Open 'View' to read each one.",
  cancel: "Cancel",
  verifyTitle: "Enter the code",
  verifyLead: (v) => `Enter the 6-digit code sent to ${v.phone} within ${v.minutes} minutes (by ${v.until}).`,
  verifyTestNumber: "This is a test number: no text message is sent. Enter its fixed code.",
  otp: "Code",
  countdownLeft: "Time left",
  countdownMinutes: (v) => `${v.n} min left`,
  confirm: "Confirm",
  resend: "Send a new code",
  autoLogin: (v) => `Automatic login: log in to ${v.app} on this device without these steps for ${v.days} days.`,
  autoLoginHint: "For SKT and KT subscribers. Do not choose this on a shared device.",
  consentTitle: "Share your information",
  consentLead: (v) => `Agree to share the information below with ${v.app} to finish logging in.`,
  consentNone:
    "No personal information such as your name or number is shared; only an identifier used by this app alone.",
  consentIdentifier: "A user identifier for this app only",
  agree: "Agree and continue",
  disagree: "Do not agree",
  language: "Language",
  switchTo: "한국어",
  footer: "Phone-number login by Korea's mobile carriers",
  errTelco: "Choose your carrier.",
  errName: "Enter your name.",
  errNameLong: "Your name can be at most 50 characters.",
  errPhone: "Enter your mobile number.",
  errPhoneFormat: "Enter your mobile number like 010-1234-5678.",
  errUnconfirmed: "The entered name and phone number cannot be confirmed with the three carriers.",
  riskAutoLoginOff: (v) =>
    `This number's SIM changed or the number moved carrier recently. To keep you safe, automatic login is off until ${v.until}.`,
  errRiskPasskey:
    "This number's SIM changed or the number moved carrier recently, so a text code cannot sign you in for now. Sign in with the passkey you made for this number. If you did not change your SIM, call your carrier now.",
  errCarrierUnavailable: "Your carrier cannot confirm you right now. Try again shortly.",
  challengeNeeded:
    "Before a code is sent, please confirm you are a person: complete the check below, then ask for the code.",
  challengeNoScript:
    "Confirming you are a person needs JavaScript in your browser. Without it, no code can be sent to you from this network right now.",
  errChallengeRefused: "We could not confirm you are a person. Complete the check again, then press the button.",
  errChallengeUnavailable: "We cannot confirm you are a person right now. Try again shortly.",
  errGuardSlowed: (v) =>
    `Many codes were asked for from your network, so it is limited for now. Try again in ${v.minutes} minutes.`,
  pausedTitle: "Sign-in by SMS is paused",
  pausedText: (v) => `${v.app}'s sign-ins by SMS are paused for today. Try again after ${v.until}.`,
  errOtp: "Enter the 6-digit code.",
  errOtpWrong: (v) => `The code is not correct. ${v.left} ${Number(v.left) === 1 ? "try" : "tries"} left.`,
  errOtpLast: "The code is not correct. This code can no longer be used: send a new code.",
  errOtpExhausted: "This code has no tries left. Send a new code.",
  errOtpExpired: "The code has expired. Send a new code.",
  errOtpGone: "This code can no longer be used. Send a new code.",
  errLocked: (v) =>
    `Too many failed attempts: this number is locked. You can try again from ${v.until} (in ${v.minutes} minutes).`,
  errCooldown: (v) => `You can ask for a new code in ${v.seconds} seconds.`,
  errSendLimit: (v) => `Too many codes were sent to this number. Try again in ${v.minutes} minutes.`,
  errTextLimit: (v) => `This number has used all its sign-ins for now. Try again in ${v.minutes} minutes.`,
  errIpLimit: (v) => `Too many requests from your network. Try again in ${v.minutes} minutes.`,
  errSendFailed: "The code could not be sent. Try again in a moment.",
  errAgree: "Choose whether you agree.",
  errTermsChanged: "What the app asks for has changed. Review it again and choose whether you agree.",
  noticeResent: "A new code was sent.",
  noticeResentTest: "This is a test number: enter its fixed code.",
  expiredTitle: "The login has timed out",
  expiredText: (v) => `A login must be finished within ${v.minutes} minutes. Start again.`,
  unknownTitle: "This login cannot continue",
  unknownText: "This login request is not valid or has already ended. Go back to the app and start again.",
  forbiddenTitle: "The request could not be verified",
  forbiddenText: "The security check failed. Make sure cookies are allowed, then start again.",
  clientGoneTitle: "The app is not available",
  clientGoneText: "This app cannot use phone number login at the moment.",
  startAgain: "Start again",
  smsFull: (v) => `[Phone login] Your code is ${v.code} (valid ${v.minutes} min). Do not share it.`,
  smsShort: (v) => `[Phone login] Your code is ${v.code}. Do not share it.`,
  smsCode: (v) => `[Phone login] Your code is ${v.code}`,
};

const catalogue: Record<Lang, Record<MessageKey, Text>> = { ko, en };

/** The text of `key` in `lang`, with `vars` filled in. */
export function t(lang: Lang, key: MessageKey, vars: Vars = {}): string {
  const entry = catalogue[lang][key];
  return typeof entry === "function" ? entry(vars) : entry;
}

const ITEM_NAMES: Record<Lang, Record<IdentityItem, string>> = {
  ko: {
    ci: "연계정보(CI)",
    phoneNo: "휴대폰번호",
    name: "이름",
    gender: "성별",
    agegroup: "연령대",
    birthday: "생일(월일)",
    birthdate: "생년월일",
    foreign: "내/외국인 구분",
    telcoCd: "통신사",
  },
  en: {
    ci: "Connecting information (CI), a code that identifies you across services",
    phoneNo: "Mobile number",
    name: "Name",
    gender: "Gender",
    agegroup: "Age group",
    birthday: "Birthday (month and day)",
    birthdate: "Date of birth",
    foreign: "Whether you are a Korean national or a foreigner",
    telcoCd: "Mobile carrier",
  },
};

/** The plain-words name of an identity item (consent page). */
export function itemName(lang: Lang, item: IdentityItem): string {
  return ITEM_NAMES[lang][item];
}
