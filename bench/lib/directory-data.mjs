// Directory rows as a carrier's file has them, for the scale and abuse runs (capacity/) and the import investigation (investigations/import-rate.mjs): numbers in
// long runs of consecutive numbers (blocks of 1,000 to 10,000, as carriers hand out number ranges)
// under a few crowded prefixes (010 above all, a little of the old 011/016/017/019), never a
// uniform draw; Korean names, birth dates, carriers and canonical 88-character cis. Deterministic:
// the same seed gives the same rows, so two runs load the same directory.

import { createHash } from "node:crypto";

/** mulberry32: small, fast and deterministic. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The crowded prefixes and their share of the blocks; a 010 number has 8 digits after it, the
// others 7 (MOBILE_NUMBER in workers/core/spec.ts).
const PREFIXES = [
  { prefix: "010", digits: 8, share: 0.9 },
  { prefix: "011", digits: 7, share: 0.04 },
  { prefix: "016", digits: 7, share: 0.03 },
  { prefix: "017", digits: 7, share: 0.02 },
  { prefix: "019", digits: 7, share: 0.01 },
];

// 010 exchanges are not spread evenly either: most blocks fall in a few crowded thousands.
const CROWDED_010 = ["2", "3", "4", "5", "6", "7", "8"];

/** Numbers the bench must not take: the dev seed's and the bench's own test subscribers (0109…). */
const RESERVED = new Set(["01012345678", "01023456789", "01034567890", "01045678901", "01056789012"]);
const reserved = (phone) => RESERVED.has(phone) || phone.startsWith("0109");

const SURNAMES = "김이박최정강조윤장임한오서신권황안송류전홍고문양손배백허유남심노하곽성차주우구민진나";
const SYLLABLES = "민서준지현우수연영진하은도윤예성재호유동시아훈채원경태혜정주희승다인소";

/** 64 bytes derived from the index, as canonical Base64 (88 characters, `==`): the shape of a ci. */
function ciOf(seed, i) {
  const a = createHash("sha256").update(`ci:${seed}:${i}`).digest();
  const b = createHash("sha256").update(a).digest();
  return Buffer.concat([a, b]).toString("base64");
}

/**
 * A generator of `n` directory rows (the JSON import's keys), block by block. Blocks never overlap:
 * each starts at a random place of its prefix and is skipped where it would meet one already used.
 */
export function* directoryRows(n, seed = 20260503) {
  const r = rng(seed);
  const used = new Map(); // prefix → sorted list of [start, end) taken
  let i = 0;
  while (i < n) {
    let x = r();
    const p = PREFIXES.find((q) => (x -= q.share) < 0) ?? PREFIXES[0];
    const size = 1000 + Math.floor(r() * 9001);
    const space = 10 ** p.digits;
    let start;
    if (p.prefix === "010") {
      const lead = CROWDED_010[Math.floor(r() * r() * CROWDED_010.length)];
      start = Number(lead) * 10 ** (p.digits - 1) + Math.floor(r() * (10 ** (p.digits - 1) - size));
    } else start = 2 * 10 ** (p.digits - 1) + Math.floor(r() * (8 * 10 ** (p.digits - 1) - size));
    start -= start % 100; // ranges start on round numbers
    const taken = used.get(p.prefix) ?? [];
    if (taken.some(([a, b]) => start < b && a < start + size) || start + size > space) continue;
    taken.push([start, start + size]);
    used.set(p.prefix, taken);
    for (let k = 0; k < size && i < n; k++) {
      const phone = p.prefix + String(start + k).padStart(p.digits, "0");
      if (reserved(phone)) continue;
      const y = 1940 + Math.floor(r() * 70);
      const m = 1 + Math.floor(r() * 12);
      const d = 1 + Math.floor(r() * 28);
      const t = r();
      const given = SYLLABLES[Math.floor(r() * SYLLABLES.length)] + SYLLABLES[Math.floor(r() * SYLLABLES.length)];
      yield {
        telcoCd: t < 0.45 ? "S" : t < 0.75 ? "K" : "L",
        phoneNo: phone,
        name: SURNAMES[Math.floor(r() * r() * SURNAMES.length)] + given,
        gender: r() < 0.5 ? "M" : "F",
        birth: `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`,
        foreign: r() < 0.03 ? "F" : "L",
        ci: ciOf(seed, i),
      };
      i++;
    }
  }
}
