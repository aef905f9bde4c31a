// The test pool's env, typed as the all-in-one worker's (the generated `Cloudflare.Env` is the
// union of every worker's bindings, each optional) plus what vitest.config.ts adds for tests.
import type { D1Migration } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import type { AllInOneEnv } from "../../workers/all-in-one/env";

export type TestEnv = AllInOneEnv & {
  DB: D1Database;
  RP_KV: KVNamespace;
  SEAL_KEY: string;
  ADMIN_TOKEN: string;
  RP_CLIENT_SECRET: string;
  RP_SEAL_KEY: string;
  TEST_MIGRATIONS: D1Migration[];
  RACE_TRIALS?: string;
  FUZZ_RUNS?: string;
  STANDIN: Fetcher;
  SENS_FAKE: Fetcher;
  NHN_FAKE: Fetcher;
  FAKE_CARRIER: Fetcher;
  TURNSTILE_FAKE: Fetcher;
  METRICS_AE?: AnalyticsEngineDataset;
};

export const env = poolEnv as unknown as TestEnv;
