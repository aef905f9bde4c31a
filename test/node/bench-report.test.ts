// The benchmark's verdicts (docs/benchmarks.md): how a race answer is classified, and the floor
// fraction paired by round. CI fails on them, so they are checked here on known inputs.
import { describe, expect, it } from "vitest";
import { classify } from "../../bench/lib/race.mjs";
import { floorFractions } from "../../bench/lib/report.mjs";
import { TARGET, capacityModel, comparePoints, surgeModel } from "../../capacity/lib/scale.mjs";

describe("bench race: each answer to a concurrent redemption", () => {
  it("a 200 with an access_token wins", () => {
    expect(classify(200, JSON.stringify({ access_token: "t", token_type: "bearer", expires_in: 600 }))).toBe("won");
  });

  it("the service's JSON error (spec: 500 server_error for an invalid code; RFC style 400 invalid_grant) is a refusal", () => {
    expect(classify(500, JSON.stringify({ error: "server_error", message: "x" }))).toBe("refused");
    expect(classify(400, JSON.stringify({ error: "invalid_grant" }))).toBe("refused");
  });

  it("anything else is neither: an unhandled 500, a 200 without a token, an error status without JSON", () => {
    expect(classify(500, "Internal Server Error")).toBe("other");
    expect(classify(200, JSON.stringify({ error: "success" }))).toBe("other");
    expect(classify(200, "not json")).toBe("other");
    expect(classify(302, JSON.stringify({ error: "x" }))).toBe("other");
  });
});

describe("bench report: a route as a fraction of its floor", () => {
  const scenario = (id: string, cpuUs: number[], cpuRatio: number) => ({
    id,
    title: id,
    available: true,
    cpuRatio: { median: cpuRatio, min: cpuRatio, max: cpuRatio },
    rounds: cpuUs.map((c) => ({ cpuUs: c })),
  });

  it("gives the ratio of the medians and, paired by round, the floor's CPU ÷ the route's per round", () => {
    const [f] = floorFractions({
      scenarios: [scenario("token-route", [500, 400, 800], 0.15), scenario("floor-token", [400, 400, 400], 0.2)],
    });
    expect(f!.fraction).toBeCloseTo(0.75);
    // rounds: 400/500 = 0.8, 400/400 = 1, 400/800 = 0.5
    expect(f!.paired).toEqual({ median: 0.8, min: 0.5, max: 1 });
    // and the route's extra CPU per request, round by round: 100, 0, 400
    expect(f!.extraUs).toEqual({ median: 100, min: 0, max: 400 });
  });

  it("compares each hybrid with the floor shaped as a route worker", () => {
    const fr = floorFractions({
      scenarios: [
        scenario("floor-token-route", [400, 300], 0.2),
        scenario("floor-token+store", [440, 320], 0.18),
        scenario("token-route+floor-store", [460, 360], 0.17),
      ],
    });
    expect(fr.map((f) => [f.route, f.floor, f.extraUs!.median])).toEqual([
      ["floor-token+store", "floor-token-route", 30],
      ["token-route+floor-store", "floor-token-route", 60],
    ]);
  });

  it("holds each route to the floor of its own shape: 0.9× for token and user/me (all-in-one and route worker), 0.5× for the sign-in and the kit's callback", () => {
    const ids = [
      ["token", "floor-token"],
      ["user-me", "floor-me"],
      ["token-route", "floor-token-route"],
      ["user-me-route", "floor-me-route"],
      ["signin", "floor-signin"],
      ["rp-callback", "floor-rp-callback"],
    ];
    const fr = floorFractions({
      scenarios: ids.flatMap(([r, f]) => [scenario(r!, [420], 0.19), scenario(f!, [400], 0.2)]),
    });
    const goals = fr.filter((f) => f.goal !== null);
    expect(goals.map((f) => [f.routeId, f.floorId, f.goal])).toEqual([
      ["token", "floor-token", 0.9],
      ["user-me", "floor-me", 0.9],
      ["token-route", "floor-token-route", 0.9],
      ["user-me-route", "floor-me-route", 0.9],
      ["signin", "floor-signin", 0.5],
      ["rp-callback", "floor-rp-callback", 0.5],
    ]);
    // 0.19 / 0.2 = 0.95: above every goal
    expect(goals.every((f) => f.meetsGoal)).toBe(true);
    // the cross-shape comparisons stay, without a goal
    expect(fr.filter((f) => f.goal === null).map((f) => [f.routeId, f.floorId])).toEqual([
      ["token-route", "floor-token"],
      ["user-me-route", "floor-me"],
    ]);
    const below = floorFractions({ scenarios: [scenario("token", [500], 0.17), scenario("floor-token", [400], 0.2)] });
    expect(below[0]!.meetsGoal).toBe(false);
  });

  it("names no fraction for a route whose floor was not run", () => {
    expect(floorFractions({ scenarios: [scenario("token-route", [500], 0.15)] })).toEqual([]);
  });
});

describe("scale bench: the capacity model (docs/capacity.md)", () => {
  const measured = {
    bytesPerSubscriber: 300,
    bytesPerLink: 200,
    bytesPerGrant: 250,
    emptyShardBytes: 50_000,
    skew: 1.1,
  };

  it("projects the national target onto the shards, the largest by the measured skew", () => {
    const m = capacityModel(measured, 64);
    // 50M × 300 + 250M × 200 + 100M × 250 = 15 + 50 + 25 GB
    expect(m.dataBytes).toBe(90e9);
    expect(m.meanShardBytes).toBeCloseTo(90e9 / 64 + 50_000, 0);
    expect(m.largestShardBytes).toBeCloseTo((90e9 / 64 + 50_000) * 1.1, 0);
    expect(m.shareOfLimit).toBeCloseTo(m.largestShardBytes / 10e9, 6);
    expect(m.meetsGoal).toBe(true);
  });

  it("names the fewest shards whose largest stays within a quarter of the limit, and that count meets it where one fewer does not", () => {
    const m = capacityModel(measured, 64);
    expect(capacityModel(measured, m.shardsForGoal).meetsGoal).toBe(true);
    expect(capacityModel(measured, m.shardsForGoal - 1).meetsGoal).toBe(false);
    expect(capacityModel(measured, 16).meetsGoal).toBe(false);
  });

  it("spreads the peak's shard writes over the shards, the largest by the people's skew, against one shard's rate", () => {
    const s = surgeModel({ writesPerSignIn: 3, shardWriteRate: 2000, skew: 1.2 }, 64);
    expect(s.meanWritesPerShard).toBeCloseTo((TARGET.peakSignInsPerSecond * 3) / 64, 6);
    expect(s.largestWritesPerShard).toBeCloseTo(s.meanWritesPerShard * 1.2, 6);
    expect(s.headroom).toBeCloseTo(2000 / s.largestWritesPerShard, 6);
  });

  it("calls a cost flat when its hello-world ratio at the full directory is within 10% of the small one's", () => {
    const point = (label: string, ratio: number) => ({
      label,
      scenarios: [
        { id: "hello", cpuUs: { median: 50 }, cpuRatio: { median: 1 } },
        { id: "identify", title: "identify", cpuUs: { median: 50 / ratio }, cpuRatio: { median: ratio } },
      ],
    });
    expect(comparePoints([point("small", 0.04), point("full", 0.038)])[0]).toMatchObject({
      id: "identify",
      flat: true,
    });
    const grown = comparePoints([point("small", 0.04), point("full", 0.03)])[0]!;
    expect(grown.growth).toBeCloseTo(0.04 / 0.03, 6);
    expect(grown.flat).toBe(false);
  });
});
