// The sign-in pages' languages (docs/signin.md "Languages").
import { describe, expect, it } from "vitest";
import { pickLang, t } from "../../../../workers/provider/signin/i18n";

describe("sign-in languages", () => {
  it.each([
    [null, undefined, "ko"],
    ["", undefined, "ko"],
    ["en-US,en;q=0.9", undefined, "en"],
    ["ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7", undefined, "ko"],
    ["fr-FR,en;q=0.5", undefined, "en"],
    ["fr-FR,de", undefined, "ko"],
    ["en;q=0.3,ko;q=0.4", undefined, "ko"],
    ["en;q=0", undefined, "ko"],
    ["en-US", "ko", "ko"],
    ["ko", "en", "en"],
  ] as const)("Accept-Language %j with lang=%s gives %s", (header, override, want) => {
    expect(pickLang(header, override)).toBe(want);
  });

  it("the directory mismatch sentence is the spec's, with its Korean equivalent", () => {
    expect(t("en", "errUnconfirmed")).toContain("cannot be confirmed with the three carriers");
    expect(t("ko", "errUnconfirmed")).toContain("통신 3사");
  });
});
