import { applyD1Migrations } from "cloudflare:test";
import { env } from "./env";
import { applyDevSeed } from "../../workers/all-in-one/seed";

// Storage is isolated per test file: every file starts from the migrated schema and the dev seed.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
await applyDevSeed(env);
