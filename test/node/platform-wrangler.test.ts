// Deploy-path rules of wrangler.toml that `wrangler deploy --dry-run` does not check, read through
// wrangler's own config reader (the same inheritance rules a real deploy applies).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { unstable_readConfig } from "wrangler";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const configPath = join(root, "wrangler.toml");
const toml = readFileSync(configPath, "utf8");
const ENVS = [...new Set([...toml.matchAll(/^\[env\.([A-Za-z0-9_-]+)\]/gm)].map((m) => m[1]!))];
const PROVIDER_ENVS = [
  "authorize",
  "webauthn",
  "token",
  "user-me",
  "disconnect",
  "admin",
  "console",
  "developers",
  "single",
];
const KIT_ENVS = ["rp-login", "rp-callback", "rp-session"];

function read(env?: string) {
  return unstable_readConfig({ config: configPath, ...(env ? { env } : {}) }, { hideWarnings: true });
}

/** What `wrangler deploy` publishes on *.workers.dev: the explicit value, else true only without routes. */
function onWorkersDev(env?: string): boolean {
  const c = read(env);
  return c.workers_dev ?? (c.routes ?? []).length === 0;
}

function zonesOf(env: string): string[] {
  const routes: unknown[] = read(env).routes ?? [];
  return routes.map((r) => (typeof r === "object" && r !== null && "zone_name" in r ? String(r.zone_name) : String(r)));
}

describe("wrangler.toml deploy path", () => {
  it("lists every provider and kit env (the rules below cover them all)", () => {
    expect(ENVS.sort()).toEqual([...PROVIDER_ENVS, ...KIT_ENVS].sort());
  });

  it.each(ENVS)(
    "[env.%s] is not also published on *.workers.dev (it would bypass the zone's Access, WAF and rate rules; workers_dev is inherited from the top level)",
    (env) => {
      expect(onWorkersDev(env)).toBe(false);
    },
  );

  it("the top-level dev worker (DEV_MODE=true, dev seed with public test secrets) has no deploy target, so a `wrangler deploy` without --env cannot publish it", () => {
    const c = read();
    expect(c.vars.DEV_MODE).toBe("true");
    expect(c.routes ?? []).toEqual([]);
    expect(onWorkersDev()).toBe(false);
  });

  it.each(KIT_ENVS.filter((e) => e !== "rp-login"))(
    "[env.%s] reaches the provider: a fetch() to a route on its own zone goes to the origin, not to a Worker, so a shared zone needs a PROVIDER service binding",
    (env) => {
      const providerZones = new Set(PROVIDER_ENVS.flatMap(zonesOf));
      const sameZone = zonesOf(env).some((z) => providerZones.has(z));
      const services: { binding: string }[] = read(env).services ?? [];
      const hasBinding = services.some((s) => s.binding === "PROVIDER");
      expect(sameZone && !hasBinding).toBe(false);
    },
  );
});
