// The SMS a person's number gets about their passkeys (docs/passkeys.md "Enrolment"): when one is
// made with an SMS proof alone (with the time it becomes usable), and when it becomes usable (a
// directory shard's job at that time, store/flows/directory-jobs.ts). Each goes through the
// configured gateways like a code, audited by its result only; no code is in it.

import type { ProviderEnv } from "../../config";
import { KST_OFFSET_MS } from "../../dates";
import { audit } from "../../store/one-time/index";
import type { Lang } from "../i18n";
import { smsSender } from "../sms/configured";
import { pt } from "./i18n";

/** A passkey's "now usable" SMS, as the directory shards' alarms send it (the hosting worker sets it). */
export function usableNotice(env: unknown, phone: string, lang: Lang): Promise<boolean> {
  return sendPasskeyNotice(env as ProviderEnv, phone, lang, { kind: "usable" });
}

/** A time in an SMS: `11/27 03:53` (Korea Standard Time; ` KST` in English), short enough for one SMS. */
export function shortKst(ms: number, lang: Lang): string {
  const d = new Date(ms + KST_OFFSET_MS);
  const p = (n: number) => String(n).padStart(2, "0");
  const t = `${d.getUTCMonth() + 1}/${d.getUTCDate()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
  return lang === "ko" ? t : `${t} KST`;
}

/** The text of a passkey notice (each fits one SMS: 90 bytes of EUC-KR). */
export function noticeText(lang: Lang, what: { kind: "created"; usableAt: number } | { kind: "usable" }): string {
  return what.kind === "created"
    ? pt(lang, "smsCreated", { until: shortKst(what.usableAt, lang) })
    : pt(lang, "smsUsable");
}

/** Sends a passkey notice; false when no gateway took it (it is audited either way). */
export async function sendPasskeyNotice(
  env: ProviderEnv,
  to: string,
  lang: Lang,
  what: { kind: "created"; usableAt: number } | { kind: "usable" },
): Promise<boolean> {
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
