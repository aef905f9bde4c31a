import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  base64ToBytes,
  bytesToBase64,
  bytesToBase64url,
  constantTimeEqual,
  decryptField,
  encryptField,
  hmacSha256Hex,
  fieldKeyBytes,
  importSealKey,
  randomAlphanumeric,
  randomDigits,
  randomToken,
  seal,
  sha256,
  unseal,
} from "../../workers/core/crypto";

const SECRET = "demoSecret0123456789abcdefABCDEF";

describe("core/crypto", () => {
  it("randomDigits gives n decimal digits, every digit appearing (rejection sampling, no modulo bias)", () => {
    const counts = new Array(10).fill(0) as number[];
    for (let i = 0; i < 2000; i++) {
      const d = randomDigits(6);
      expect(d).toMatch(/^\d{6}$/);
      for (const c of d) counts[Number(c)]!++;
    }
    // 12,000 digits: each expected 1,200; a biased or broken generator falls far outside this band
    for (const c of counts) (expect(c).toBeGreaterThan(1000), expect(c).toBeLessThan(1400));
  });

  it("randomToken is base64url of the requested bytes; randomAlphanumeric is alphanumeric", () => {
    expect(randomToken(32)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(randomToken(64)).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(randomAlphanumeric(64)).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(new Set(Array.from({ length: 100 }, () => randomToken(16))).size).toBe(100);
  });

  it("bytesToBase64url gives RFC 4648 §10's vectors in the URL alphabet without padding", () => {
    const vectors: [string, string][] = [
      ["", ""],
      ["f", "Zg"],
      ["fo", "Zm8"],
      ["foo", "Zm9v"],
      ["foob", "Zm9vYg"],
      ["fooba", "Zm9vYmE"],
      ["foobar", "Zm9vYmFy"],
    ];
    for (const [text, b64] of vectors) expect(bytesToBase64url(new TextEncoder().encode(text))).toBe(b64);
    // the two characters where the alphabets differ: 0xfb 0xff = "+/8=" in Base64
    expect(bytesToBase64(new Uint8Array([0xfb, 0xff]))).toBe("+/8=");
    expect(bytesToBase64url(new Uint8Array([0xfb, 0xff]))).toBe("-_8");
  });

  /** The runtime's own Base64 (btoa of the bytes as a binary string): a reference independent of ours. */
  const reference = (bytes: Uint8Array): string => {
    let bin = "";
    for (const b of bytes) bin += String.fromCharCode(b);
    return btoa(bin);
  };

  it("bytesToBase64 is the runtime's btoa, and bytesToBase64url its URL alphabet unpadded, base64ToBytes reading both back, for any bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const std = reference(bytes);
        expect(bytesToBase64(bytes)).toBe(std);
        const url = bytesToBase64url(bytes);
        expect(url).toBe(std.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
        expect([...base64ToBytes(url)]).toEqual([...bytes]);
        expect([...base64ToBytes(std)]).toEqual([...bytes]);
      }),
      { numRuns: 300 },
    );
  });

  it("long values (a sealed page, more characters than are made a string at once) encode as the reference does", () => {
    // 6,144 bytes are 8,192 characters, the encoder's piece: lengths on both sides of it and of its multiples
    const lengths = fc.oneof(
      fc.integer({ min: 97, max: 3000 }),
      fc.integer({ min: 6140, max: 6150 }),
      fc.integer({ min: 12285, max: 12292 }),
    );
    fc.assert(
      fc.property(lengths, fc.integer(), (n, seed) => {
        const bytes = new Uint8Array(n).map((_, i) => (seed * 31 + i * 17 + ((i * i) >> 3)) & 255);
        const std = reference(bytes);
        expect(bytesToBase64(bytes)).toBe(std);
        expect(bytesToBase64url(bytes)).toBe(std.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
      }),
      { numRuns: 120 },
    );
  });

  it("sha256 matches the FIPS 180-2 'abc' vector (base64url)", async () => {
    expect(await sha256("abc")).toBe("ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
  });

  it("constantTimeEqual compares content of any length", async () => {
    expect(await constantTimeEqual("a", "a")).toBe(true);
    expect(await constantTimeEqual("a", "b")).toBe(false);
    expect(await constantTimeEqual("a", "aa")).toBe(false);
    expect(await constantTimeEqual("", "")).toBe(true);
  });

  it("the field cipher is AES-128-CBC with key = IV = the secret's first 16 characters as bytes (spec §2.2)", async () => {
    expect(new TextDecoder().decode(fieldKeyBytes(SECRET))).toBe("demoSecret012345");
    const ct = await encryptField(SECRET, "홍길동");
    // Known answer computed independently: `printf 홍길동 | openssl enc -aes-128-cbc -K <hex> -iv <hex> -base64`
    expect(ct).toBe("RmIKeU0bF+pY3qrDb3HTHQ==");
    expect(await decryptField(SECRET, ct)).toBe("홍길동");
    // the empty string encrypts to one full padding block
    expect(base64ToBytes(await encryptField(SECRET, "")).length).toBe(16);
    expect(await decryptField(SECRET, await encryptField(SECRET, ""))).toBe("");
  });

  it("decryptField refuses bad Base64, bad padding and a wrong key", async () => {
    await expect(decryptField(SECRET, "not base64!")).rejects.toThrow();
    await expect(decryptField(SECRET, "AAAA")).rejects.toThrow();
    await expect(decryptField("otherSecret0123456789", await encryptField(SECRET, "x"))).rejects.toThrow();
  });

  it("a secret shorter than 16 characters cannot key the field cipher", () => {
    expect(() => fieldKeyBytes("short")).toThrow(RangeError);
  });

  it("seal/unseal round-trip, and a sealed value does not open under another context or when altered", async () => {
    const key = await importSealKey(btoa("k".repeat(32)));
    const sealed = await seal(key, "secret value", "client-secret:a");
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain("secret value");
    expect(await unseal(key, sealed, "client-secret:a")).toBe("secret value");
    await expect(unseal(key, sealed, "client-secret:b")).rejects.toThrow();
    // a character well inside the last part (the last one may carry only padding bits)
    const i = sealed.length - 5;
    const tampered = sealed.slice(0, i) + (sealed[i] === "A" ? "B" : "A") + sealed.slice(i + 1);
    await expect(unseal(key, tampered, "client-secret:a")).rejects.toThrow();
    expect(await seal(key, "x", "c")).not.toBe(await seal(key, "x", "c")); // fresh IV each time
  });

  it("importSealKey refuses a key that is not Base64 of 32 bytes", async () => {
    expect(() => importSealKey(btoa("short"))).toThrow();
    expect(() => importSealKey("!!!")).toThrow();
  });

  it("HMAC-SHA256 matches RFC 4231 test case 2", async () => {
    expect(await hmacSha256Hex("Jefe", "what do ya want for nothing?")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });
});
