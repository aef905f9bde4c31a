// The passkey notices by SMS (docs/passkeys.md "Enrolment"): each fits one SMS (90 bytes of EUC-KR,
// what Naver Cloud SENS and NHN Cloud take as an SMS), names the time in Korea Standard Time, and
// carries no code.
import { describe, expect, it } from "vitest";
import { noticeText } from "../../../../workers/provider/store/flows/passkey-notices";
import { eucKrBytes, SMS_MAX_BYTES } from "../../../../workers/provider/signin/sms/text";
import { signinConfig } from "../../../../workers/provider/signin/config";

describe("passkey notices", () => {
  it("fit one SMS in both languages, with the usable time in KST and no code", () => {
    // 2026-12-31 23:59 KST: the longest month, day, hour and minute
    const at = Date.UTC(2026, 11, 31, 14, 59);
    for (const lang of ["ko", "en"] as const)
      for (const what of [{ kind: "created" as const, usableAt: at }, { kind: "usable" as const }]) {
        const text = noticeText(lang, what);
        expect(eucKrBytes(text), text).toBeLessThanOrEqual(SMS_MAX_BYTES);
        expect(text).not.toMatch(/\d{6}/);
      }
    expect(noticeText("ko", { kind: "created", usableAt: at })).toContain("12/31 23:59부터");
    expect(noticeText("en", { kind: "created", usableAt: at })).toContain("12/31 23:59 KST");
  });
});

describe("passkey configuration", () => {
  it("defaults as the issue gives them: PASSKEY_ACTIVATION_SECONDS 86400 (a day), PASSKEY_RECHECK_SECONDS 7 days", () => {
    const cfg = signinConfig({ DEV_MODE: "true" } as never);
    expect(cfg.passkeyActivationMs).toBe(86400 * 1000);
    expect(cfg.passkeyRecheckMs).toBe(7 * 24 * 3600 * 1000);
  });
});
