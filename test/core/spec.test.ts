// core/spec: the mobile-number rule and the random-value shape, shared by the service and the kit.
import { describe, expect, it } from "vitest";
import { isRandomValue, normalizePhone } from "../../workers/core/spec";

describe("core/spec", () => {
  it.each([
    ["010-1234-5678", "01012345678"],
    ["01012345678", "01012345678"],
    [" 010 1234 5678 ", "01012345678"],
    ["+82 10-1234-5678", "01012345678"],
    ["+82 010 1234 5678", "01012345678"],
    ["011-234-5678", "0112345678"],
  ])("normalizes the mobile number %j", (input, want) => {
    expect(normalizePhone(input)).toBe(want);
  });

  it.each(["", "02-123-4567", "010-1234-567", "010-1234-56789", "0101234567a", "１０１２３４５６７８"])(
    "refuses %j",
    (input) => {
      expect(normalizePhone(input)).toBeUndefined();
    },
  );

  it("random values are 43 base64url characters (256 bits)", () => {
    expect(isRandomValue("A".repeat(43))).toBe(true);
    expect(isRandomValue("A".repeat(42))).toBe(false);
    expect(isRandomValue("A".repeat(42) + "=")).toBe(false);
    expect(isRandomValue(undefined)).toBe(false);
  });
});
