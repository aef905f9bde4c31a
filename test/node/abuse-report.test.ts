// The abuse run's committed result (docs/bench/abuse.json, written by `npm run bench -- --abuse`):
// the figures under the names the issue gives them, each goal with its verdict.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const report = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "..", "docs", "bench", "abuse.json"), "utf8"),
) as {
  mode: string;
  figures: Record<string, number | null>;
  goals: { name: string; met: boolean | null }[];
  profiles: Record<string, unknown>[];
  sweeps: Record<string, unknown>[];
};

describe("docs/bench/abuse.json", () => {
  it("is a full run with the issue's figures: attackSmsOff, attackSmsOn, realSuccessOn, realChallengedOn, attackBudgetShare", () => {
    expect(report.mode).toBe("full");
    for (const name of ["attackSmsOff", "attackSmsOn", "realSuccessOn", "realChallengedOn", "attackBudgetShare"])
      expect(typeof report.figures[name], name).toBe("number");
    expect(report.figures.attackSmsOff).toBe(10_000);
    // each goal judged, met or not (the result says which; docs/benchmarks.md shows it)
    expect(report.goals.length).toBeGreaterThanOrEqual(4);
    for (const g of report.goals) expect(typeof g.met, g.name).toBe("boolean");
  });

  it("carries one object per bot profile in `profiles`, with the issue's names, and the other shares in `sweeps`", () => {
    const names = [
      "name",
      "attackSmsShare",
      "attackFirstMinute",
      "peopleWaited",
      "successRatio",
      "attackedAppSuccessRatio",
      "atRiskSuccessRatio",
      "unattackedChallengedShare",
      "attackBudgetShare",
      "appsPaused",
      "attackWon",
      "attackWonOff",
    ];
    expect(report.profiles.map((p) => p.name)).toEqual([
      "baseline",
      "solver-farm",
      "fresh-blocks",
      "every-app",
      "padding",
      "boundaries",
      "human-paced",
    ]);
    for (const p of [...report.profiles, ...report.sweeps])
      for (const k of names) expect(p, `${String(p.name)}.${k}`).toHaveProperty(k);
    // `null` only where every app is attacked
    for (const p of report.profiles)
      expect(p.unattackedChallengedShare === null, String(p.name)).toBe(p.name === "every-app");
    expect(report.sweeps.length).toBeGreaterThanOrEqual(2);
  });
});
