// Which hosts an app's `events_uri` may name (docs/events.md "Registering", docs/security.md): the
// service POSTs signed events there from its own network, so an address that is not public (a
// private network, the cloud's metadata service at 169.254.169.254, loopback) would let whoever
// registers a client make the service send requests inside. Pure: no I/O.
//
// The class is read from the WHATWG URL parser's `hostname`, which has already made every IPv4
// spelling (one decimal, octal or hex number, octal or hex parts, fewer than four parts, a trailing
// dot, percent-encoding, full-width digits) dotted decimal, and every IPv6 literal lower-case and
// compressed (`[::ffff:a9fe:a9fe]`). Names are not resolved: Workers has no DNS lookup, so a public
// name whose address is private is not caught here.

import { LOOPBACK_HOSTS } from "../../core/spec";

export type HostClass =
  | "public"
  /** 127.0.0.0/8, ::1, `localhost` and names under it (RFC 6761). */
  | "loopback"
  /** 0.0.0.0/8 ("this network"), `::`. */
  | "unspecified"
  /** 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 (RFC 1918); fec0::/10 (site-local, deprecated). */
  | "private"
  /** 100.64.0.0/10 (RFC 6598). */
  | "carrier-nat"
  /** 169.254.0.0/16 (the cloud metadata address among them), fe80::/10. */
  | "link-local"
  /** fc00::/7 (RFC 4193). */
  | "unique-local"
  /** ::ffff:0:0/96: an IPv4 address written as IPv6, whichever it is. */
  | "ipv4-mapped"
  /** Documentation, benchmarking, protocol, multicast and future-use ranges; IPv6 outside 2000::/3. */
  | "reserved"
  /** A name only a local network resolves: one label, `.local`, `.internal`, `.home.arpa`. */
  | "local-name";

/** Non-public IPv4 ranges (IANA special-purpose registry, RFC 6890): first address, prefix length. */
const IPV4_RANGES: readonly [string, number, HostClass][] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-nat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "reserved"],
  ["203.0.113.0", 24, "reserved"],
  ["224.0.0.0", 4, "reserved"],
  ["240.0.0.0", 4, "reserved"],
];

/** Names a local network resolves, never the public DNS (`metadata.google.internal` among them). */
const LOCAL_SUFFIXES = [".local", ".internal", ".home.arpa"];

/** A dotted-decimal IPv4 address as a 32-bit number, or null. */
export function ipv4(host: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return parts.reduce((a, p) => a * 256 + p, 0);
}

const prefixOf = (a: number, bits: number) => Math.floor(a / 2 ** (32 - bits));

export function ipv4Class(a: number): HostClass {
  for (const [base, bits, cls] of IPV4_RANGES) if (prefixOf(a, bits) === prefixOf(ipv4(base)!, bits)) return cls;
  return "public";
}

/** An IPv6 literal (without brackets; `::` and a dotted IPv4 tail allowed) as 8 groups, or null. */
export function ipv6(text: string): number[] | null {
  let s = text.toLowerCase();
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const a = ipv4(tail[2]!);
    if (a === null) return null;
    s = `${tail[1]}${Math.floor(a / 65536).toString(16)}:${(a % 65536).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => parseInt(g, 16));
}

export function ipv6Class(g: readonly number[]): HostClass {
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return "unspecified";
  if (zeros(7) && g[7] === 1) return "loopback";
  if (zeros(5) && g[5] === 0xffff) return "ipv4-mapped";
  if ((g[0]! & 0xfe00) === 0xfc00) return "unique-local";
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0]! & 0xffc0) === 0xfec0) return "private";
  // everything else outside global unicast: IPv4-compatible, NAT64, discard-only, multicast
  if ((g[0]! & 0xe000) !== 0x2000) return "reserved";
  // 6to4 carries an IPv4 address in its next 32 bits: that address decides
  if (g[0] === 0x2002) return ipv4Class(g[1]! * 65536 + g[2]!);
  // Teredo (2001::/32), documentation (2001:db8::/32, 3fff::/20)
  if (g[0] === 0x2001 && (g[1] === 0 || g[1] === 0xdb8)) return "reserved";
  if (g[0] === 0x3fff && g[1]! < 0x1000) return "reserved";
  return "public";
}

/** The class of a WHATWG-parsed `hostname` of an http(s) URL. */
export function hostClass(hostname: string): HostClass {
  const h = hostname.toLowerCase();
  if (h.startsWith("[")) {
    const g = h.endsWith("]") ? ipv6(h.slice(1, -1)) : null;
    return g ? ipv6Class(g) : "reserved";
  }
  const a = ipv4(h);
  if (a !== null) return ipv4Class(a);
  const name = h.replace(/\.+$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback";
  if (!name.includes(".") || LOCAL_SUFFIXES.some((s) => name.endsWith(s))) return "local-name";
  // a name ending in a number is an address the parser did not take (no such public name exists)
  if (/\.(\d+|0x[0-9a-f]*)$/.test(name)) return "reserved";
  return "public";
}

const PHRASES: Record<Exclude<HostClass, "public">, string> = {
  loopback: "a loopback host",
  unspecified: "an unspecified address (0.0.0.0/8, ::)",
  private: "a private-network address",
  "carrier-nat": "a carrier-grade NAT address (100.64.0.0/10)",
  "link-local": "a link-local address (169.254.0.0/16, fe80::/10; the cloud metadata service)",
  "unique-local": "a unique-local IPv6 address (fc00::/7)",
  "ipv4-mapped": "an IPv4-mapped IPv6 address (::ffff:0:0/96)",
  reserved: "a reserved, documentation or multicast address",
  "local-name": "a local-network name (one label, .local, .internal, .home.arpa)",
};

/**
 * Why an `events_uri` cannot be registered, or null when it can: an absolute `https` URI without
 * credentials or fragment whose host is public; with DEV_MODE, a loopback host too (and `http` on
 * `localhost`, `127.0.0.1`, `[::1]`). The reason is a fixed phrase that never repeats the input.
 */
export function eventsUriProblem(uri: string, devMode: boolean): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "must be an absolute https URI";
  }
  if (url.username || url.password || url.hash) return "must not contain credentials or a fragment";
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an https URI";
  const cls = hostClass(url.hostname);
  if (devMode && cls === "loopback" && (url.protocol === "https:" || LOOPBACK_HOSTS.has(url.hostname))) return null;
  if (url.protocol !== "https:") return "must be an https URI (http only on a loopback host in DEV_MODE)";
  if (cls === "public") return null;
  return `must name a public host, not ${PHRASES[cls]}${cls === "loopback" ? " (allowed only in DEV_MODE)" : ""}`;
}
