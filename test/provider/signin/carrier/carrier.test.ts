// The carrier directory behind step 1 (docs/signin.md "Carrier directory interface").
import { describe, expect, it } from "vitest";
import { d1Directory, maskPhone, normalizeName } from "../../../../workers/provider/signin/carrier";
import { env } from "../../../support/env";
import { SMITH } from "../../../support/helpers";

describe("carrier directory", () => {
  it("names: NFC, trimmed, spaces collapsed, case ignored; numbers masked for display", () => {
    expect(normalizeName(" john   smith ")).toBe(normalizeName("John Smith"));
    expect(normalizeName("홍길동".normalize("NFD"))).toBe(normalizeName("홍길동"));
    expect(maskPhone("01012345678")).toBe("010-****-5678");
    expect(maskPhone("0112345678")).toBe("011-***-5678");
  });

  it("the embedded directory confirms only when carrier, name and number all match", async () => {
    const dir = d1Directory(env);
    const ok = await dir.confirm("L", "john smith", SMITH.phone);
    expect(ok?.subscriber.phone).toBe(SMITH.phone);
    expect(ok?.testOtpHash).toBeTruthy();
    expect(await dir.confirm("S", "john smith", SMITH.phone)).toBeNull();
    expect(await dir.confirm("L", "jane smith", SMITH.phone)).toBeNull();
    expect(await dir.confirm("L", "john smith", "01000000000")).toBeNull();
  });
});
