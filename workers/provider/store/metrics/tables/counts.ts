// A roll-up row's counts packed as a blob: the series ids in increasing order, each as its
// difference from the previous id, followed by its count, both unsigned LEB128 varints. Twenty
// series of an app's hour take some 45 bytes.

/** Series id → count. */
export type Counts = Map<number, number>;

/** Adds `more` into `into` (returned). */
export function addInto(into: Counts, more: Counts): Counts {
  for (const [id, n] of more) into.set(id, (into.get(id) ?? 0) + n);
  return into;
}

function putVarint(out: number[], v: number): void {
  // counts stay far below 2^53; division keeps values above 2^31 exact where bit operators would not
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

/** The blob of a row's counts (zero counts are left out). */
export function encodeCounts(counts: Counts): Uint8Array {
  const out: number[] = [];
  let prev = 0;
  for (const id of [...counts.keys()].sort((a, b) => a - b)) {
    const n = counts.get(id)!;
    if (n === 0) continue;
    putVarint(out, id - prev);
    putVarint(out, n);
    prev = id;
  }
  return Uint8Array.from(out);
}

/** A row's counts from its blob. */
export function decodeCounts(blob: ArrayBuffer | Uint8Array): Counts {
  const b = blob instanceof Uint8Array ? blob : new Uint8Array(blob);
  const out: Counts = new Map();
  let i = 0;
  let id = 0;
  const next = () => {
    let v = 0;
    let scale = 1;
    for (;;) {
      if (i >= b.length) throw new RangeError("a roll-up row's counts end inside a number");
      const byte = b[i++]!;
      v += (byte & 0x7f) * scale;
      if (byte < 0x80) return v;
      scale *= 0x80;
    }
  };
  while (i < b.length) {
    id += next();
    out.set(id, next());
  }
  return out;
}
