// The passkey pages' texts (docs/passkeys.md), Korean and English, typed like the sign-in's catalogue.

import type { Lang } from "../i18n";
import { appWithParticle } from "../particles";

type Vars = Record<string, string | number>;
type Entry = string | ((v: Vars) => string);

const ko = {
  signIn: "패스키로 로그인",
  signInHint: "이 기기에 만든 패스키가 있으면 문자 없이 지문이나 얼굴로 로그인합니다.",
  or: "또는 문자로 인증번호 받기",
  errUnknown: "이 패스키는 등록되어 있지 않거나 더 이상 쓸 수 없습니다. 문자로 로그인해 주세요.",
  errRefused: "패스키를 확인하지 못했습니다. 다시 시도하거나 문자로 로그인해 주세요.",
  errReplayed: "이미 사용된 패스키 확인입니다. 패스키로 다시 로그인해 주세요.",
  errPending: (v: Vars) => `이 패스키는 ${v.until}부터 쓸 수 있습니다. 그 전에는 문자로 로그인해 주세요.`,
  errRecheck: "통신사가 이 번호를 더 이상 확인해 주지 않아 패스키를 해지했습니다. 문자로 로그인해 주세요.",
  offerTitle: "다음부터 문자 없이 로그인할까요?",
  offerLead:
    "이 기기에 패스키를 만들면 다음부터 모든 앱에 문자 없이 지문이나 얼굴로 로그인합니다. 피싱 사이트에서는 쓸 수 없습니다.",
  offerDelay: (v: Vars) =>
    `본인 확인을 위해 새 패스키는 ${v.after} 뒤부터 쓸 수 있고, 만들 때와 쓸 수 있게 될 때 이 번호로 문자를 보내 드립니다.`,
  create: "패스키 만들기",
  later: "나중에 하기",
  continueApp: (v: Vars) => `${appWithParticle(String(v.app), "euro")} 계속하기`,
  created: "패스키를 만들었습니다.",
  createdPending: (v: Vars) => `패스키를 만들었습니다. ${v.until}부터 쓸 수 있습니다.`,
  errCreate: "패스키를 만들지 못했습니다.",
  errFull: (v: Vars) => `패스키는 한 사람당 ${v.max}개까지 만들 수 있습니다.`,
  errNeedsPasskey: "이미 쓰고 있는 패스키가 있어, 새 패스키는 그 패스키로 로그인한 뒤에 만들 수 있습니다.",
  errRisk: "최근 이 번호의 유심이 바뀌거나 번호이동이 있어, 며칠 동안은 패스키를 만들 수 없습니다.",
  errExpired: "시간이 지나 만들지 못했습니다. 다시 시도해 주세요.",
  noScript: "패스키를 만들려면 자바스크립트가 필요합니다.",
  listTitle: "패스키",
  listNone: "만든 패스키가 없습니다.",
  listCreated: "만든 날",
  listLastUsed: "마지막 사용",
  listNever: "아직 쓰지 않음",
  listKind: "종류",
  listPending: (v: Vars) => `${v.until}부터 사용 가능`,
  kindSynced: "동기화되는 패스키",
  kindDevice: "이 기기에만 있는 패스키",
  kindKey: "보안 키 또는 다른 기기",
  remove: "삭제",
  cancelPending: "취소",
  removed: "패스키를 삭제했습니다.",
  cancelled: "패스키를 취소했습니다. 이 패스키로는 로그인할 수 없습니다.",
  errRemoveNeedsPasskey: "다른 패스키가 있어, 삭제하려면 패스키로 로그인해야 합니다.",
  errNotYours: "이 패스키를 찾을 수 없습니다.",
  addTitle: "패스키 만들기",
  addHintSms: (v: Vars) => `문자로 확인한 번호로 만든 패스키는 ${v.after} 뒤부터 쓸 수 있습니다.`,
  addHintPasskey: "패스키로 로그인했으므로 새 패스키는 바로 쓸 수 있습니다.",
};

const en: Record<keyof typeof ko, Entry> = {
  signIn: "Sign in with a passkey",
  signInHint: "With a passkey made on this device, sign in with your fingerprint or face and no text message.",
  or: "or get a code by text message",
  errUnknown: "This passkey is not registered or can no longer be used. Please sign in by text message.",
  errRefused: "The passkey could not be checked. Try again, or sign in by text message.",
  errReplayed: "This passkey confirmation was used already. Please sign in with the passkey again.",
  errPending: (v) => `This passkey can be used from ${v.until}. Until then, please sign in by text message.`,
  errRecheck: "The carrier no longer confirms this number, so its passkeys were ended. Please sign in by text message.",
  offerTitle: "Sign in without a text message next time?",
  offerLead:
    "Make a passkey on this device and next time you sign in to any app with your fingerprint or face, no text message. A phishing site cannot use it.",
  offerDelay: (v) =>
    `To protect you, a new passkey can be used after ${v.after}, and this number gets a text message when it is made and when it can be used.`,
  create: "Make a passkey",
  later: "Not now",
  continueApp: (v) => `Continue to ${v.app}`,
  created: "Your passkey was made.",
  createdPending: (v) => `Your passkey was made. It can be used from ${v.until}.`,
  errCreate: "The passkey could not be made.",
  errFull: (v) => `A person can have at most ${v.max} passkeys.`,
  errNeedsPasskey: "You already use a passkey: sign in with it to make another one.",
  errRisk: "This number's SIM changed or the number moved carrier recently: passkeys cannot be made for a few days.",
  errExpired: "This took too long. Please try again.",
  noScript: "Making a passkey needs JavaScript.",
  listTitle: "Passkeys",
  listNone: "You have no passkey.",
  listCreated: "Made",
  listLastUsed: "Last used",
  listNever: "Not used yet",
  listKind: "Kind",
  listPending: (v) => `Usable from ${v.until}`,
  kindSynced: "Synced passkey",
  kindDevice: "On this device only",
  kindKey: "Security key or another device",
  remove: "Delete",
  cancelPending: "Cancel",
  removed: "The passkey was deleted.",
  cancelled: "The passkey was cancelled. It cannot be used to sign in.",
  errRemoveNeedsPasskey: "You have another passkey: sign in with a passkey to delete one.",
  errNotYours: "This passkey was not found.",
  addTitle: "Make a passkey",
  addHintSms: (v) => `A passkey made with a number proven by text message can be used after ${v.after}.`,
  addHintPasskey: "You signed in with a passkey, so a new one can be used at once.",
};

export type PasskeyText = keyof typeof ko;

const catalogue: Record<Lang, Record<PasskeyText, Entry>> = { ko, en };

/** A wait in words: the activation delay as hours, minutes or seconds ("24시간", "24 hours"). */
export function waitText(lang: Lang, ms: number): string {
  const [n, unit] =
    ms >= 3_600_000
      ? [Math.round(ms / 3_600_000), 0]
      : ms >= 60_000
        ? [Math.round(ms / 60_000), 1]
        : [Math.round(ms / 1000), 2];
  if (lang === "ko") return `${n}${["시간", "분", "초"][unit]}`;
  return `${n} ${["hour", "minute", "second"][unit]}${n === 1 ? "" : "s"}`;
}

/** The text of `key` in `lang`, with `vars` filled in. */
export function pt(lang: Lang, key: PasskeyText, vars: Vars = {}): string {
  const entry = catalogue[lang][key];
  return typeof entry === "function" ? entry(vars) : entry;
}
