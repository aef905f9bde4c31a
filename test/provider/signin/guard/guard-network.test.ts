// The guard's view of a request (workers/provider/signin/guard.ts): its network block, ASN, country
// and clock from what Cloudflare's edge reports, DEV_MODE's X-Dev-* stand-ins honoured only there,
// the safe list, and the number's prefix.
import { describe, expect, it } from "vitest";
import { guardNow, prefixOf, requestNetwork } from "../../../../workers/provider/signin/guard";
import { parseCidr, type GuardConfig } from "../../../../workers/provider/signin/guard-config";

const cfg = (devMode: boolean, safe: string[] = []): GuardConfig =>
  ({ devMode, safeBlocks: safe.map((s) => parseCidr(s)!) }) as unknown as GuardConfig;

function request(headers: Record<string, string>, cf?: { asn?: number; country?: string }): Request {
  const req = new Request("https://login.example/oauth2/authorize", { headers });
  if (cf) Object.defineProperty(req, "cf", { value: cf });
  return req;
}

const DEV = {
  "X-Dev-Address": "10.1.2.3",
  "X-Dev-Asn": "64500",
  "X-Dev-Country": "QZ",
  "X-Dev-Clock": "1800000000000",
};

describe("the guard's view of a request", () => {
  it("outside DEV_MODE takes CF-Connecting-IP and request.cf, and ignores every X-Dev-* header", () => {
    const req = request({ ...DEV, "CF-Connecting-IP": "203.0.113.77" }, { asn: 4766, country: "KR" });
    expect(requestNetwork(req, cfg(false))).toEqual({
      block: "203.0.113.0/24",
      asn: "4766",
      country: "KR",
      safe: false,
    });
    const before = Date.now();
    const now = guardNow(req, cfg(false));
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).not.toBe(1_800_000_000_000);
  });

  it("with DEV_MODE takes the X-Dev-* stand-ins", () => {
    const req = request({ ...DEV, "CF-Connecting-IP": "203.0.113.77" }, { asn: 4766, country: "KR" });
    expect(requestNetwork(req, cfg(true))).toEqual({ block: "10.1.2.0/24", asn: "64500", country: "QZ", safe: false });
    expect(guardNow(req, cfg(true))).toBe(1_800_000_000_000);
  });

  it("names an IPv6 address's /48, drops a malformed ASN or country, and knows the safe list", () => {
    const v6 = request({ "CF-Connecting-IP": "2001:db8:abcd:12:1::7" }, { asn: 9318, country: "KR" });
    expect(requestNetwork(v6, cfg(false)).block).toBe("2001:db8:abcd::/48");
    const odd = request({ "CF-Connecting-IP": "198.51.100.9" }, { asn: "x" as never, country: "Korea" });
    expect(requestNetwork(odd, cfg(false))).toMatchObject({ asn: null, country: null });
    const safe = cfg(false, ["198.51.100.0/24", "2001:db8::/32"]);
    expect(requestNetwork(odd, safe).safe).toBe(true);
    expect(requestNetwork(v6, safe).safe).toBe(true);
    expect(requestNetwork(request({ "CF-Connecting-IP": "198.51.101.9" }), safe).safe).toBe(false);
  });

  it("the prefix is the number but its last four digits", () => {
    expect(prefixOf("01012345678")).toBe("010-1234");
    expect(prefixOf("0111234567")).toBe("011-123");
  });
});
