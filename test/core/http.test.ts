import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formPairs, parseBasic, parseBearer, rateLimitNetwork, readParams } from "../../workers/core/http";

describe("core/http parseBasic (RFC 7617, RFC 6749 §2.3.1)", () => {
  it("splits at the first colon and form-url-decodes each half", () => {
    expect(parseBasic("Basic " + btoa("a%3Ab:c:d"))).toEqual({ kind: "basic", id: "a:b", secret: "c:d" });
    expect(parseBasic("Basic " + btoa("a+b:c%2Bd"))).toEqual({ kind: "basic", id: "a b", secret: "c+d" });
  });

  it("falls back to the raw text when a half does not decode", () => {
    expect(parseBasic("Basic " + btoa("id:100%"))).toEqual({ kind: "basic", id: "id", secret: "100%" });
  });

  it("decodes UTF-8 credentials", () => {
    const b64 = btoa(String.fromCharCode(...new TextEncoder().encode("아이디:비밀")));
    expect(parseBasic("Basic " + b64)).toEqual({ kind: "basic", id: "아이디", secret: "비밀" });
  });

  it("an empty header or another scheme is absent; broken Basic is malformed", () => {
    expect(parseBasic(null).kind).toBe("absent");
    expect(parseBasic("").kind).toBe("absent");
    expect(parseBasic("   ").kind).toBe("absent");
    expect(parseBasic("Bearer abc").kind).toBe("absent");
    expect(parseBasic("Basic").kind).toBe("malformed");
    expect(parseBasic("Basic ***").kind).toBe("malformed");
    expect(parseBasic("Basic " + btoa("nocolon")).kind).toBe("malformed");
    expect(parseBasic("Basic a b").kind).toBe("malformed");
  });
});

describe("core/http parseBearer", () => {
  it("takes the token of a case-insensitive Bearer scheme", () => {
    expect(parseBearer("Bearer abc")).toBe("abc");
    expect(parseBearer("bearer abc")).toBe("abc");
    expect(parseBearer("  Bearer   abc  ")).toBe("abc");
    expect(parseBearer("Bearer")).toBeUndefined();
    expect(parseBearer("Basic abc")).toBeUndefined();
    expect(parseBearer(null)).toBeUndefined();
  });
});

describe("core/http readParams (docs/architecture.md §4.7)", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  const read = (url: string, init?: RequestInit) => {
    const req = new Request(url, init);
    return readParams(req, new URL(req.url).search, 1024);
  };

  it("merges query and form body; an empty value counts as missing", async () => {
    const p = await read("http://x/?a=1&e=", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "b=2",
    });
    expect(p.get("a")).toBe("1");
    expect(p.get("b")).toBe("2");
    expect(p.get("e")).toBeUndefined();
    expect(() => p.require("e")).toThrow(/A required item e is missing/);
  });

  it("refuses a name twice in the query or twice in the body; in both, accepts equal values and refuses different ones", async () => {
    await expect(read("http://x/?a=1&a=2")).rejects.toThrow(/a/);
    await expect(read("http://x/", { method: "POST", body: bytes("a=1&a=1") })).rejects.toThrow(/sent more than once/);
    expect((await read("http://x/?a=1", { method: "POST", body: bytes("a=1") })).get("a")).toBe("1");
    await expect(read("http://x/?a=1", { method: "POST", body: bytes("a=2") })).rejects.toThrow(
      /the query and the body differ/,
    );
  });

  it("a body without content type is read as a form; another type with a body is refused; an empty body with any type is fine", async () => {
    // a string body gets text/plain from fetch itself; bytes carry no content type
    expect((await read("http://x/", { method: "POST", body: bytes("a=1") })).get("a")).toBe("1");
    await expect(
      read("http://x/", { method: "POST", headers: { "Content-Type": "text/plain" }, body: "a=1" }),
    ).rejects.toThrow(/Content-Type/);
    expect(
      (await read("http://x/?a=1", { method: "POST", headers: { "Content-Type": "application/json" } })).get("a"),
    ).toBe("1");
  });

  it("refuses a body over the limit, by Content-Length or by its actual size", async () => {
    await expect(read("http://x/", { method: "POST", body: "a=" + "x".repeat(2000) })).rejects.toMatchObject({
      status: 413,
    });
  });
});

describe("core/http formPairs (application/x-www-form-urlencoded, WHATWG URL §5.1)", () => {
  // names and values with the characters a form text may hold, and the ones that trip decoders
  const piece = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          "%",
          "+",
          "=",
          "%2",
          "%zz",
          "%41",
          "%2B",
          "%26",
          "%3D",
          "%C3%A9",
          "%ED%99%8D",
          "%FF",
          "%C3",
          "%ED%A0%80",
          "%EF%BB%BF",
          " ",
          "한",
          "\uFFFD",
        ),
        fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
      ),
      { maxLength: 12 },
    )
    .map((chars) => chars.join(""));
  const text = fc.array(fc.oneof(piece, fc.constant("")), { maxLength: 6 }).map((parts) => parts.join("&"));

  it("reads every text as URLSearchParams does, and refuses exactly the texts naming a name twice", () => {
    fc.assert(
      fc.property(text, (t) => {
        const expected = [...new URLSearchParams(t)];
        const names = expected.map(([k]) => k);
        if (new Set(names).size < names.length) {
          expect(() => formPairs(t)).toThrow(/sent more than once/);
          return;
        }
        expect([...formPairs(t)]).toEqual(expected);
      }),
      { numRuns: 5000 },
    );
  });
});

describe("core/http rateLimitNetwork (what a per-IP limit counts)", () => {
  it("keeps IPv4 as is, maps ::ffff:a.b.c.d to IPv4, and reduces IPv6 to its /64 in one spelling", () => {
    expect(rateLimitNetwork("192.0.2.7")).toBe("192.0.2.7");
    for (const v of ["::ffff:192.0.2.7", "::FFFF:c000:0207", "0:0:0:0:0:ffff:192.0.2.7"])
      expect(rateLimitNetwork(v), v).toBe("192.0.2.7");
    for (const v of ["2001:db8:aa:bb::1", "2001:0DB8:00aa:00bb:ffff:ffff:ffff:ffff", "2001:db8:aa:bb:0:0:0:0"]) {
      expect(rateLimitNetwork(v), v).toBe("2001:db8:aa:bb::/64");
    }
    expect(rateLimitNetwork("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(rateLimitNetwork("::1")).toBe("0:0:0:0::/64");
    expect(rateLimitNetwork("2001:db8:aa:bc::1")).not.toBe(rateLimitNetwork("2001:db8:aa:bb::1"));
  });

  it("answers an unparsable address with itself rather than throwing (it only keys a counter)", () => {
    for (const v of ["fe80::1%eth0", "not:an:address", "1:2:3:4:5:6:7:8:9"]) expect(rateLimitNetwork(v)).toBe(v);
  });
});
