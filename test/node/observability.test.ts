// Workers Logs in every deployable worker (docs/operations.md "Workers Logs"), read through
// wrangler's own config reader, so the value checked is the one a deploy of each [env.X] uploads
// (the top level's [observability], which envs inherit, unless an env replaces it with its own).
// Invocation logs must be off: they record each request's full URL, and ours carry authorization
// codes, states and phone numbers; only the router's own redacted line may be kept.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { unstable_readConfig } from "wrangler";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const configPath = join(root, "wrangler.toml");
const toml = readFileSync(configPath, "utf8");
const ENVS = [...new Set([...toml.matchAll(/^\[env\.([A-Za-z0-9_-]+)\]/gm)].map((m) => m[1]!))];

describe("wrangler.toml Workers Logs", () => {
  it("finds the deployable envs", () => {
    expect(ENVS.length).toBeGreaterThan(0);
  });

  it.each(ENVS)(
    "[env.%s] keeps Workers Logs, all of them (head sampling 1), without invocation logs (URLs carry codes, states, phone numbers)",
    (env) => {
      const { observability } = unstable_readConfig({ config: configPath, env }, { hideWarnings: true });
      expect(observability?.enabled).toBe(true);
      expect(observability?.head_sampling_rate).toBe(1);
      expect(observability?.logs?.enabled).toBe(true);
      // a logs-level rate, when set, overrides the one above
      expect(observability?.logs?.head_sampling_rate ?? 1).toBe(1);
      expect(observability?.logs?.invocation_logs).toBe(false);
    },
  );
});
