// The capacity runs' deterministic generator (mulberry32): the same seed draws the same numbers, so
// two runs load the same rows. bench/lib/directory-data.mjs keeps its Node copy for the files
// it writes before any worker runs.

export type Rand = () => number;

export function rng(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
