// The import's progress line (scripts/lib/progress.mjs): redrawn in place at most 10 times a second
// on a terminal, a plain line every 5 seconds elsewhere, nothing with --quiet.
import { describe, expect, it } from "vitest";
import { duration, Progress } from "../../scripts/lib/progress.mjs";

function drive(isTTY: boolean, quiet = false) {
  let out = "";
  let t = 0;
  const p = new Progress(
    { write: (s: string) => (out += s), isTTY },
    { total: 2_000_000, startBytes: 0, startRows: 0, quiet, now: () => t },
  );
  // 10 s of acknowledgements every 10 ms: 100 rows and 1,000 bytes each
  for (let i = 1; i <= 1000; i++) {
    t = i * 10;
    p.update(i * 100, i * 1000);
  }
  p.done();
  return out;
}

describe("import progress", () => {
  it("on a terminal: one line redrawn in place, at most 10 times a second, with rows, rate, share and time left", () => {
    const out = drive(true);
    const draws = out.split("\r\x1b[K").filter((s) => s.startsWith("["));
    expect(draws.length).toBeLessThanOrEqual(100);
    expect(draws.length).toBeGreaterThan(90);
    expect(draws.at(-1)).toBe("[##########----------] 50.0%  100,000 rows  10,000 rows/s  ETA 10s");
    expect(out.endsWith("\r\x1b[Kimport: 100,000 rows in 10.0 s (10,000 rows/s)\n")).toBe(true);
  });

  it("elsewhere: a plain line every 5 seconds and one at the end, no carriage returns", () => {
    expect(drive(false)).toBe(
      "import: 50,000 rows, 10,000 rows/s, 25.0% of the file, ETA 15s\n" +
        "import: 100,000 rows, 10,000 rows/s, 50.0% of the file, ETA 10s\n" +
        "import: 100,000 rows in 10.0 s (10,000 rows/s)\n",
    );
  });

  it("--quiet prints nothing", () => {
    expect(drive(true, true)).toBe("");
    expect(drive(false, true)).toBe("");
  });

  it("durations read as hours and minutes, minutes and seconds, or seconds", () => {
    expect([duration(7), duration(245), duration(3725), duration(Infinity)]).toEqual(["7s", "4m05s", "1h02m", "?"]);
  });
});
