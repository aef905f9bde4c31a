// The roll-ups' packed rows (docs/storage.md "Durable Object MetricsStore"). What must hold: a row's
// counts decode to what was encoded, for any ids and counts up to 2^53; whatever batches are
// applied, each tier's read equals the points summed at that tier's step, per app and for all apps;
// the first layout (a row per series) is folded in unchanged and dropped.
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { env } from "../../../support/env";
import type { Point } from "../../../../workers/provider/store/metrics/series";
import { decodeCounts, encodeCounts } from "../../../../workers/provider/store/metrics/tables/counts";
import {
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  Rollups,
  type Step,
} from "../../../../workers/provider/store/metrics/tables/rollups";

/** A fresh metrics object of its own (not the service's `metrics`). */
const fresh = () => env.METRICS.get(env.METRICS.newUniqueId());

describe("packed counts", () => {
  it("decode what was encoded (zero counts left out)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 1_000_000 }),
            fc.maxSafeInteger().map((n) => Math.abs(n)),
          ),
        ),
        (pairs) => {
          const counts = new Map(pairs);
          const back = decodeCounts(encodeCounts(counts));
          expect(back).toEqual(new Map([...counts].filter(([, n]) => n > 0)));
        },
      ),
    );
  });

  it("twenty small series take under 50 bytes", () => {
    const counts = new Map(Array.from({ length: 20 }, (_, i) => [i + 1, 100 + i] as [number, number]));
    expect(encodeCounts(counts).byteLength).toBeLessThan(50);
  });

  it("a blob cut inside a number is refused, not misread", () => {
    expect(() => decodeCounts(Uint8Array.from([1, 0x80]))).toThrow(RangeError);
  });
});

const T0 = Date.UTC(2026, 10, 20, 23, 0);
const point = fc.tuple(
  fc.integer({ min: 0, max: 3 * 24 * 60 - 1 }).map((m) => T0 + m * MINUTE_MS),
  fc.constantFrom("signin.success", "consent", "sms.sens.delivered", "identify.matched"),
  fc.constantFrom(null, "app-a", "app-b"),
  fc.integer({ min: 1, max: 1000 }),
) as fc.Arbitrary<Point>;

/** The points summed at a step for an app ("": all apps; minutes: all apps only), as read answers. */
function expected(points: Point[], step: Step, client: string): Map<string, number> {
  const unit = step === "1m" ? MINUTE_MS : step === "1h" ? HOUR_MS : DAY_MS;
  const out = new Map<string, number>();
  for (const [t, s, c, n] of points) {
    if (client !== "" && c !== client) continue;
    const key = `${t - (t % unit)}|${s}`;
    out.set(key, (out.get(key) ?? 0) + n);
  }
  return out;
}

describe("the tiers", () => {
  it("each tier reads the points summed at its step, per app and for all apps, whatever the batches", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(point, { maxLength: 30 }), { maxLength: 6 }), async (batches) => {
        await runInDurableObject(fresh(), (_o, state) => {
          const r = new Rollups(state.storage.sql, state.storage);
          batches.forEach((b, i) => expect(r.apply(`b-${i}`, b, Date.now())).toBe(true));
          // a batch sent again adds nothing
          if (batches.length > 0) expect(r.apply("b-0", batches[0]!, Date.now())).toBe(false);
          const all = batches.flat();
          const span = [T0 - DAY_MS, T0 + 4 * DAY_MS] as const;
          for (const [step, client] of [
            ["1m", ""],
            ["1h", ""],
            ["1h", "app-a"],
            ["1d", ""],
            ["1d", "app-b"],
          ] as [Step, string][]) {
            const got = new Map(r.read(step, ...span, client, null).map(([t, s, n]) => [`${t}|${s}`, n]));
            expect(got).toEqual(expected(all, step, client));
          }
          // one series, and a series never seen
          const some = r.read("1h", ...span, "", ["consent", "never.seen"]);
          expect(some.every(([, s]) => s === "consent")).toBe(true);
          expect(r.read("1h", ...span, "", ["never.seen"])).toEqual([]);
        });
      }),
      { numRuns: 25 },
    );
  });

  it("totalsSince sums the chosen series per app and for all apps from an hour on, whatever the batches (hours to the next UTC midnight, then days)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(point, { maxLength: 30 }), { maxLength: 6 }),
        fc.integer({ min: -2, max: 3 * 24 + 1 }),
        async (batches, hours) => {
          await runInDurableObject(fresh(), (_o, state) => {
            const r = new Rollups(state.storage.sql, state.storage);
            batches.forEach((b, i) => r.apply(`b-${i}`, b, Date.now()));
            const from = T0 + hours * HOUR_MS;
            const chosen = (s: string) => s === "sms.sens.delivered" || s === "consent";
            const want = new Map<string, number>();
            for (const [t, s, c, n] of batches.flat()) {
              if (t < from || !chosen(s)) continue;
              for (const key of c === null ? [""] : ["", c]) want.set(key, (want.get(key) ?? 0) + n);
            }
            expect(r.totalsSince(chosen, from)).toEqual(want);
          });
        },
      ),
      { numRuns: 25 },
    );
  });

  it("prune drops each tier's rows older than it keeps, for every app, and nothing newer", async () => {
    await runInDurableObject(fresh(), (_o, state) => {
      const r = new Rollups(state.storage.sql, state.storage);
      const now = T0 + 500 * DAY_MS;
      const at = (ago: number) => now - ago;
      r.apply(
        "p",
        [
          [at(15 * DAY_MS), "consent", "app-a", 1], // minute row gone (14 days), hour and day kept
          [at(401 * DAY_MS), "consent", "app-b", 1], // hour rows gone (400 days), day kept
          [at(60_000), "consent", "app-a", 1],
        ],
        now,
      );
      r.prune(now);
      const span = [now - 1000 * DAY_MS, now + DAY_MS] as const;
      expect(r.read("1m", ...span, "", null).length).toBe(1);
      expect(r.read("1h", ...span, "app-a", null).length).toBe(2);
      expect(r.read("1h", ...span, "app-b", null)).toEqual([]);
      expect(r.read("1h", ...span, "", null).length).toBe(2);
      expect(r.read("1d", ...span, "app-b", null).length).toBe(1);
    });
  });

  it("the first layout's rows (one per series) are folded in and its tables dropped", async () => {
    await runInDurableObject(fresh(), (_o, state) => {
      const sql = state.storage.sql;
      sql.exec(`CREATE TABLE per_minute (t INTEGER NOT NULL, series TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (t, series)) WITHOUT ROWID;
CREATE TABLE per_hour (t INTEGER NOT NULL, client TEXT NOT NULL, series TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (client, t, series)) WITHOUT ROWID;
CREATE INDEX per_hour_series ON per_hour (series, t);
CREATE TABLE per_day (t INTEGER NOT NULL, client TEXT NOT NULL, series TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (client, t, series)) WITHOUT ROWID;`);
      sql.exec("INSERT INTO per_minute VALUES (?, 'consent', 3), (?, 'signin.success', 4)", T0, T0 + MINUTE_MS);
      sql.exec("INSERT INTO per_hour VALUES (?, '', 'consent', 3), (?, 'app-a', 'consent', 2)", T0, T0);
      sql.exec("INSERT INTO per_day VALUES (?, 'app-a', 'consent', 9)", T0 - (T0 % DAY_MS));
      const r = new Rollups(sql, state.storage);
      expect(r.read("1m", T0, T0 + HOUR_MS, "", null)).toEqual([
        [T0, "consent", 3],
        [T0 + MINUTE_MS, "signin.success", 4],
      ]);
      expect(r.read("1h", T0, T0 + HOUR_MS, "", null)).toEqual([[T0, "consent", 3]]);
      expect(r.read("1h", T0, T0 + HOUR_MS, "app-a", null)).toEqual([[T0, "consent", 2]]);
      expect(r.read("1d", T0 - DAY_MS, T0 + DAY_MS, "app-a", null)).toEqual([[T0 - (T0 % DAY_MS), "consent", 9]]);
      const left = sql.exec("SELECT name FROM sqlite_master WHERE name LIKE 'per_%'").toArray();
      expect(left).toEqual([]);
    });
  });
});
