// Which hosts an app's events_uri may name (workers/provider/store/hosts.ts, docs/security.md): every IPv4
// and IPv6 literal outside the public ranges, in any spelling the URL parser takes, and names only a
// local network resolves are refused; loopback only in DEV_MODE. The ranges below are written out
// from the IANA special-purpose registries, independently of the module's table.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventsUriProblem, hostClass, ipv6, type HostClass } from "../../../workers/provider/store/hosts";

const host = (spelling: string) => new URL(`https://${spelling}/events`).hostname;
const classOf = (spelling: string) => hostClass(host(spelling));

/** [CIDR, class]: the IPv4 ranges that are not public. */
const IPV4: [string, HostClass][] = [
  ["0.0.0.0/8", "unspecified"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "carrier-nat"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "reserved"],
  ["192.0.2.0/24", "reserved"],
  ["192.88.99.0/24", "reserved"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "reserved"],
  ["198.51.100.0/24", "reserved"],
  ["203.0.113.0/24", "reserved"],
  ["224.0.0.0/4", "reserved"],
  ["240.0.0.0/4", "reserved"],
];

const bits32 = (a: number) => a.toString(2).padStart(32, "0");
const dotted = (a: number) => [a >>> 24, (a >>> 16) & 255, (a >>> 8) & 255, a & 255].join(".");

/** The oracle: the class of an address by the binary prefixes of the table above. */
function expectedIpv4(a: number): HostClass {
  for (const [cidr, cls] of IPV4) {
    const [base, len] = cidr.split("/");
    const b = base!.split(".").reduce((n, p) => n * 256 + Number(p), 0);
    if (bits32(a).slice(0, Number(len)) === bits32(b).slice(0, Number(len))) return cls;
  }
  return "public";
}

/** An address inside a CIDR of the table, at offset `r` (any 32-bit number) within it. */
function inside(cidr: string, r: number): number {
  const [base, len] = cidr.split("/");
  const b = base!.split(".").reduce((n, p) => n * 256 + Number(p), 0);
  return b + (r % 2 ** (32 - Number(len)));
}

const part = (n: number, radix: 8 | 10 | 16) =>
  radix === 10 ? String(n) : radix === 8 ? `0${n.toString(8)}` : `0x${n.toString(16)}`;

/** Every way the URL parser takes to write IPv4 address `a`. */
function spellings(a: number, radix: (8 | 10 | 16)[]): string[] {
  const [p0, p1, p2, p3] = [a >>> 24, (a >>> 16) & 255, (a >>> 8) & 255, a & 255];
  return [
    dotted(a),
    `${dotted(a)}.`,
    part(a, 10),
    part(a, 8),
    part(a, 16),
    part(a, 16).toUpperCase().replace("0X", "0x"),
    [p0, p1, p2, p3].map((p, i) => part(p, radix[i]!)).join("."),
    `${part(p0, radix[0]!)}.${part(p1, radix[1]!)}.${part((p2 << 8) | p3, radix[2]!)}`,
    `${part(p0, radix[0]!)}.${part(a & 0xffffff, radix[1]!)}`,
    [...dotted(a)].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(""),
  ];
}

const radixes = fc.array(fc.constantFrom<8 | 10 | 16>(8, 10, 16), { minLength: 4, maxLength: 4 });

describe("IPv4 literals", () => {
  it("the addresses of the issue, in decimal, octal and hex, are the metadata service's link-local address", () => {
    for (const s of ["169.254.169.254", "2852039166", "0251.0376.0251.0376", "0xa9fea9fe", "0xA9.0xFE.0xA9.0xFE"]) {
      expect(host(s), s).toBe("169.254.169.254");
      expect(classOf(s), s).toBe("link-local");
    }
    expect(classOf("10.0.0.1")).toBe("private");
    expect(classOf("127.1")).toBe("loopback");
    expect(classOf("0x7f000001")).toBe("loopback");
    expect(classOf("0")).toBe("unspecified");
    expect(classOf("１２７.０.０.１")).toBe("loopback");
  });

  it("the edges of every range: its first and last address, and the addresses just outside", () => {
    for (const [cidr, cls] of IPV4) {
      const first = inside(cidr, 0);
      const last = inside(cidr, 2 ** 32 - 1);
      expect(classOf(dotted(first)), cidr).toBe(cls);
      expect(classOf(dotted(last)), cidr).toBe(cls);
      if (first > 0) expect(classOf(dotted(first - 1)), cidr).toBe(expectedIpv4(first - 1));
      if (last < 2 ** 32 - 1) expect(classOf(dotted(last + 1)), cidr).toBe(expectedIpv4(last + 1));
    }
    expect(classOf("100.63.255.255")).toBe("public");
    expect(classOf("100.128.0.0")).toBe("public");
    expect(classOf("172.15.255.255")).toBe("public");
    expect(classOf("172.32.0.0")).toBe("public");
    expect(classOf("8.8.8.8")).toBe("public");
  });

  it("property: any address, in any spelling the parser takes, has the class of its range", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), radixes, (a, radix) => {
        for (const s of spellings(a, radix)) {
          expect(host(s), s).toBe(dotted(a));
          expect(classOf(s), s).toBe(expectedIpv4(a));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("property: an address inside any refused range is refused as an events_uri, whatever its spelling", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...IPV4),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        radixes,
        fc.boolean(),
        ([cidr, cls], r, radix, devMode) => {
          const a = inside(cidr, r);
          for (const s of spellings(a, radix)) {
            const problem = eventsUriProblem(`https://${s}/events`, devMode);
            if (cls === "loopback" && devMode) expect(problem, s).toBeNull();
            else expect(problem, s).toMatch(/^must name a public host, not /);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** [prefix groups, prefix length in bits, class]: the IPv6 ranges that are not public. */
const IPV6: [number[], number, HostClass][] = [
  [[0, 0, 0, 0, 0, 0xffff], 96, "ipv4-mapped"],
  [[0xfc00], 7, "unique-local"],
  [[0xfe80], 10, "link-local"],
  [[0xfec0], 10, "private"],
  [[0xff00], 8, "reserved"],
  [[0x2001, 0xdb8], 32, "reserved"],
  [[0x2001, 0], 32, "reserved"],
  [[0x0064, 0xff9b], 32, "reserved"],
  [[0x0100], 8, "reserved"],
];

/** Groups `g` with the first `len` bits of `prefix` put in. */
function withPrefix(g: number[], prefix: number[], len: number): number[] {
  const bits = g.map((x) => x.toString(2).padStart(16, "0")).join("");
  const p = prefix
    .map((x) => x.toString(2).padStart(16, "0"))
    .join("")
    .padEnd(128, "0");
  const merged = p.slice(0, len) + bits.slice(len);
  return Array.from({ length: 8 }, (_, i) => parseInt(merged.slice(i * 16, i * 16 + 16), 2));
}

const groups = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
const full = (g: number[]) => g.map((x) => x.toString(16).padStart(4, "0")).join(":");

describe("IPv6 literals", () => {
  it("loopback, unspecified, mapped, unique-local, link-local; a mapped address whichever IPv4 it carries", () => {
    expect(classOf("[::1]")).toBe("loopback");
    expect(classOf("[0:0:0:0:0:0:0:1]")).toBe("loopback");
    expect(classOf("[::]")).toBe("unspecified");
    expect(host("[::ffff:169.254.169.254]")).toBe("[::ffff:a9fe:a9fe]");
    expect(classOf("[::ffff:169.254.169.254]")).toBe("ipv4-mapped");
    expect(classOf("[::FFFF:8.8.8.8]")).toBe("ipv4-mapped");
    expect(classOf("[fd00::1]")).toBe("unique-local");
    expect(classOf("[fc00::]")).toBe("unique-local");
    expect(classOf("[fe80::1]")).toBe("link-local");
    expect(classOf("[::127.0.0.1]")).toBe("reserved");
    expect(classOf("[64:ff9b::a9fe:a9fe]")).toBe("reserved");
    expect(classOf("[2002:a9fe:a9fe::1]")).toBe("link-local");
    expect(classOf("[2002:808:808::1]")).toBe("public");
    expect(classOf("[2001:4860:4860::8888]")).toBe("public");
  });

  it("property: any address, written in full, upper case or with an IPv4 tail, has one class", () => {
    fc.assert(
      fc.property(groups, (g) => {
        const canonical = host(`[${full(g)}]`);
        const tail = `${full(g).split(":").slice(0, 6).join(":")}:${(g[6]! >> 8) & 255}.${g[6]! & 255}.${(g[7]! >> 8) & 255}.${g[7]! & 255}`;
        for (const s of [full(g), full(g).toUpperCase(), tail]) {
          expect(host(`[${s}]`)).toBe(canonical);
          expect(ipv6(s)).toEqual(g);
        }
        expect(hostClass(canonical)).toBe(classOf(`[${full(g).toUpperCase()}]`));
      }),
      { numRuns: 300 },
    );
  });

  it("property: an address inside any refused range is refused; one in 2000::/3 outside them is public", () => {
    fc.assert(
      fc.property(fc.constantFrom(...IPV6), groups, fc.boolean(), ([prefix, len, cls], g, devMode) => {
        const a = withPrefix(g, prefix, len);
        expect(classOf(`[${full(a)}]`)).toBe(cls);
        expect(eventsUriProblem(`https://[${full(a)}]/events`, devMode)).toMatch(/^must name a public host, not /);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(groups, (g) => {
        const a = withPrefix(g, [0x2400], 6); // 2400::/6: inside 2000::/3, no special range
        expect(classOf(`[${full(a)}]`)).toBe("public");
        expect(eventsUriProblem(`https://[${full(a)}]/events`, false)).toBeNull();
      }),
      { numRuns: 200 },
    );
  });

  it("property: a 6to4 address has the class of the IPv4 address it carries; a mapped one is always refused", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (a) => {
        const hi = (a >>> 16).toString(16);
        const lo = (a & 0xffff).toString(16);
        expect(classOf(`[2002:${hi}:${lo}::1]`)).toBe(expectedIpv4(a));
        expect(classOf(`[::ffff:${dotted(a)}]`)).toBe("ipv4-mapped");
      }),
      { numRuns: 300 },
    );
  });
});

describe("names", () => {
  it("localhost and names under it are loopback; .local, .internal, .home.arpa and one-label names are local", () => {
    expect(classOf("localhost")).toBe("loopback");
    expect(classOf("LOCALHOST.")).toBe("loopback");
    expect(classOf("app.localhost")).toBe("loopback");
    expect(classOf("metadata.google.internal")).toBe("local-name");
    expect(classOf("METADATA.GOOGLE.INTERNAL.")).toBe("local-name");
    expect(classOf("printer.local")).toBe("local-name");
    expect(classOf("nas.home.arpa")).toBe("local-name");
    expect(classOf("metadata")).toBe("local-name");
    expect(classOf("app.example")).toBe("public");
    expect(classOf("internal.example.com")).toBe("public");
    expect(classOf("local.example.com")).toBe("public");
    expect(classOf("xn--9n2bp8q.kr")).toBe("public");
  });

  it("a name the parser left that ends in a number is not taken for a public one", () => {
    expect(hostClass("app.0x1")).toBe("reserved");
    expect(hostClass("app.123")).toBe("reserved");
  });
});

describe("eventsUriProblem", () => {
  it("https to a public host; http and loopback only in DEV_MODE (http on localhost, 127.0.0.1, [::1])", () => {
    expect(eventsUriProblem("https://app.example/events", false)).toBeNull();
    expect(eventsUriProblem("https://8.8.8.8/events", false)).toBeNull();
    expect(eventsUriProblem("http://app.example/events", true)).toMatch(/https/);
    for (const u of [
      "http://localhost:8787/auth/events",
      "http://127.0.0.1:9/e",
      "http://[::1]/e",
      "https://127.0.0.2/e",
    ]) {
      expect(eventsUriProblem(u, true), u).toBeNull();
      expect(eventsUriProblem(u, false), u).not.toBeNull();
    }
    expect(eventsUriProblem("http://127.0.0.2/e", true)).toMatch(/https/);
    expect(eventsUriProblem("https://10.0.0.1/e", true)).toMatch(/private/);
  });

  it("the reason names the rule, never the input", () => {
    for (const u of ["https://169.254.169.254/latest", "https://10.0.0.1/e", "https://metadata.google.internal/x"]) {
      const p = eventsUriProblem(u, false)!;
      expect(p).not.toContain(new URL(u).hostname);
      expect(p).not.toContain(new URL(u).pathname);
    }
    expect(eventsUriProblem("https://u:p@app.example/e", false)).toBe("must not contain credentials or a fragment");
    expect(eventsUriProblem("https://app.example/e#x", false)).toBe("must not contain credentials or a fragment");
    expect(eventsUriProblem("ftp://app.example/e", false)).toBe("must be an https URI");
    expect(eventsUriProblem("not a uri", false)).toBe("must be an absolute https URI");
  });
});
