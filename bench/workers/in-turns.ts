// The bench's minting, a few at a time (bench/workers/bench-entry.ts, floor-signin.ts).

const MINT_WIDTH = 16;

/**
 * `n` results of `one`, at most `MINT_WIDTH` in flight. Preparation must leave little behind for
 * the round it prepares: with all `n` in flight (a thousand at a time) every intermediate object
 * outlived a young-generation collection and was promoted, and the old generation's collection of
 * them then ran during the measured slice, on whichever scenario came next (docs/benchmarks.md
 * "Preparation's garbage").
 */
export async function inTurns<T>(n: number, one: () => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      out[i] = await one();
    }
  };
  await Promise.all(Array.from({ length: Math.min(MINT_WIDTH, n) }, lane));
  return out;
}
