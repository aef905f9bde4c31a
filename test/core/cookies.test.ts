// core/cookies: __Host- cookies on write and on read (RFC 6265bis §4.1.3.2).
import { describe, expect, it } from "vitest";
import { hostCookie, readHostCookie } from "../../workers/core/cookies";

describe("core/cookies", () => {
  it("__Host- cookies are Secure, HttpOnly, Path=/ and carry no Domain", () => {
    const c = hostCookie("x", "v", { maxAgeSeconds: 60 });
    expect(c).toBe("__Host-x=v; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=60");
    expect(c).not.toMatch(/Domain/i);
  });

  it("reads the __Host- cookie of that name only: not the unprefixed one, not a longer name", () => {
    const req = (cookie: string) => new Request("https://x.example/", { headers: { Cookie: cookie } });
    expect(readHostCookie(req("x=planted; __Host-x=real; __Host-xy=other"), "x")).toBe("real");
    expect(readHostCookie(req("x=planted"), "x")).toBeUndefined();
    expect(readHostCookie(new Request("https://x.example/"), "x")).toBeUndefined();
  });
});
