// `__Host-` cookies, on write and on read (RFC 6265bis §4.1.3.2): Secure, Path=/, no Domain, so a
// cookie set by one host cannot be planted or read by a sibling subdomain. Names are given
// without the prefix; both functions add it.

export interface CookieOptions {
  maxAgeSeconds?: number;
  sameSite?: "Lax" | "Strict";
}

/** `Set-Cookie` for `__Host-<name>`: Secure, HttpOnly, Path=/, SameSite (Lax unless told). Max-Age 0 clears it. */
export function hostCookie(name: string, value: string, opts: CookieOptions = {}): string {
  const parts = [`__Host-${name}=${value}`, "Path=/", "Secure", "HttpOnly", `SameSite=${opts.sameSite ?? "Lax"}`];
  if (opts.maxAgeSeconds !== undefined) parts.push(`Max-Age=${opts.maxAgeSeconds}`);
  return parts.join("; ");
}

/** The value of the request's `__Host-<name>` cookie, or undefined. */
export function readHostCookie(req: Request, name: string): string | undefined {
  const header = req.headers.get("Cookie");
  if (!header) return undefined;
  const want = `__Host-${name}`;
  for (const part of header.split(";")) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    if (part.slice(0, i).trim() === want) return part.slice(i + 1).trim();
  }
  return undefined;
}
