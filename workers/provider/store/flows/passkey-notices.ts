// The SMS a person's number gets about their passkeys (docs/passkeys.md "Enrolment"): when one is
// made with an SMS proof alone (with the time it becomes usable: the sign-in's enrolment sends it),
// and when it becomes usable (a directory shard's job at that time, directory-jobs.ts, which
// store/objects.ts wires to `usableNotice`). Each goes through the configured SMS senders
// (store/sms/) like a code, audited by its result only; no code is in it.

import { audit, type Lang } from "../one-time/index";
import { smsSender } from "../sms/index";
import type { JobEnv } from "./directory-jobs";

/** Korea Standard Time: UTC+9, no daylight saving. */
const KST_OFFSET_MS = 9 * 3600_000;

/** The texts of the notices (each fits one SMS: 90 bytes of EUC-KR). */
const TEXTS: Record<Lang, { created: (until: string) => string; usable: string }> = {
  ko: {
    created: (until) => `[휴대폰번호 로그인] 새 패스키 ${until}부터 사용. 본인 아니면 내 휴대폰번호 로그인 취소`,
    usable: "[휴대폰번호 로그인] 새 패스키 이제 사용 가능. 본인이 아니면 내 휴대폰번호 로그인에서 삭제",
  },
  en: {
    created: (until) => `[Phone login] New passkey, usable from ${until}. Not you? Cancel it: My phone login`,
    usable: "[Phone login] Your new passkey works now. Not you? Delete it: My phone login",
  },
};

/** What a notice says: a passkey made (usable from a time), or a passkey now usable. */
export type PasskeyNotice = { kind: "created"; usableAt: number } | { kind: "usable" };

/** What sending a notice reaches: the SMS senders (the dev outbox is in D1) and the one-time store's audit. */
export type NoticeEnv = JobEnv & Parameters<typeof smsSender>[0];

/** A time in an SMS: `11/27 03:53` (Korea Standard Time; ` KST` in English), short enough for one SMS. */
export function shortKst(ms: number, lang: Lang): string {
  const d = new Date(ms + KST_OFFSET_MS);
  const p = (n: number) => String(n).padStart(2, "0");
  const t = `${d.getUTCMonth() + 1}/${d.getUTCDate()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
  return lang === "ko" ? t : `${t} KST`;
}

/** The text of a passkey notice. */
export function noticeText(lang: Lang, what: PasskeyNotice): string {
  return what.kind === "created" ? TEXTS[lang].created(shortKst(what.usableAt, lang)) : TEXTS[lang].usable;
}

/** Sends a passkey notice; false when no sender took it (it is audited either way). */
export async function sendPasskeyNotice(env: NoticeEnv, to: string, lang: Lang, what: PasskeyNotice): Promise<boolean> {
  const text = noticeText(lang, what);
  let ok = true;
  try {
    await smsSender(env).send({ to, code: "", lang, text });
  } catch {
    ok = false;
  }
  await audit(env, "passkey.notified", null, ok ? "ok" : "refused", { notice: what.kind });
  return ok;
}

/** A passkey's "now usable" SMS, as the directory shards' alarms send it (store/objects.ts wires it). */
export function usableNotice(env: JobEnv, phone: string, lang: Lang): Promise<boolean> {
  return sendPasskeyNotice(env as NoticeEnv, phone, lang, { kind: "usable" });
}
