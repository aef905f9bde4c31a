import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// Two projects: "workers" runs inside workerd (Miniflare) with real D1, KV and Durable Objects;
// "node" runs what needs the host: the openssl CLI, the real `npm start` server and Chromium.
// wrangler reads wrangler.toml for the pool: its notes (the experimental `secrets` field that types
// each worker's secrets, secrets missing from a checkout without .dev.vars) are not test output.
process.env.WRANGLER_LOG ??= "error";

// The one line a test run prints that no test can avoid: when a test file ends,
// @cloudflare/vitest-pool-workers closes its WebSocket to the runner Durable Object and disposes
// workerd in the next statement (CloudflarePoolWorker.stop in its dist/pool/index.mjs), and workerd
// mostly gets to log the dropped connection as `exception = workerd/api/web-socket.c++:NNN: disconnected: WebSocket
// peer disconnected`. The pool writes workerd's logs to stdout one line at a time and already drops
// the same kind of line for an aborted WebSocket, but not this one. This drops exactly that line,
// written alone; anything else workerd or the tests print passes through (docs/testing.md).
const poolDisconnect = /^exception = workerd\/api\/web-socket\.c\+\+:\d+: disconnected: WebSocket peer disconnected\n$/;
// And workerd's own note that it ran a Durable Object's alarm a few milliseconds after the time its
// alarm manager held (`NOSENTRY SQLite alarm overdue, running despite AlarmManager mismatch; ...`):
// it comes on a loaded machine, from workerd's scheduler, and says nothing of the tests' code.
const alarmOverdue = /^NOSENTRY SQLite alarm overdue, running despite AlarmManager mismatch; [^\n]*\n$/;
const stdoutWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
  (typeof chunk === "string" && (poolDisconnect.test(chunk) || alarmOverdue.test(chunk))) ||
  stdoutWrite(chunk, ...rest)) as typeof process.stdout.write;

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    test: {
      // `npm test` runs both projects in one vitest run, and vitest runs them at once only when they
      // have the same maxWorkers: a file spends much of its time waiting (on workerd's round trips
      // with this process, on Chromium), which another file overlaps. Two files a core: on this
      // 2-core machine both projects took 869 s at once against 499 s + 528 s one after the other
      // (docs/testing.md "Files at once").
      maxWorkers: Math.max(2, availableParallelism() * 2),
      projects: [
        {
          plugins: [
            // oauth4webapi (test/provider/token/interop.test.ts) publishes build/index.js with a source
            // map whose only source, ../src/index.ts, is not in the package; vite warns that the map
            // "points to missing source files" when it reads it. The map leads to nothing, so the
            // tests load the file without its sourceMappingURL comment.
            {
              name: "oauth4webapi-without-its-source-map",
              enforce: "pre",
              async load(id: string) {
                const file = id.split("?")[0]!;
                if (!file.endsWith("/node_modules/oauth4webapi/build/index.js")) return null;
                return (await readFile(file, "utf8")).replace(/\n\/\/# sourceMappingURL=index\.js\.map\s*$/, "\n");
              },
            },
            cloudflareTest({
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: migrations,
                  SEAL_KEY: "dGVzdC1vbmx5LXNlYWwta2V5LTMyLWJ5dGVzLWxvbmc=",
                  DEV_MODE: "true",
                  LOG_REQUESTS: "false",
                  ADMIN_TOKEN: "devAdminToken-local-only-0123456789abcdef",
                  // relying-party kit (docs/rp-kit.md): the dev worker's kit is the seed's demo-client
                  RP_CLIENT_SECRET: "demoSecret0123456789abcdefABCDEF",
                  RP_SEAL_KEY: "dGVzdC1vbmx5LXJwLXNlYWwta2V5LTMyLWJ5dGVzISE=",
                  // randomized race trials per property (test/provider/signin/code/race.test.ts); more or fewer from the shell
                  RACE_TRIALS: process.env.RACE_TRIALS ?? "1000",
                  // fuzz cases per endpoint (test/all-in-one/fuzz.test.ts)
                  FUZZ_RUNS: process.env.FUZZ_RUNS ?? "2000",
                  // the alerts' webhook (test/admin/alerts.test.ts stands in for the receiver; elsewhere refused)
                  ALERT_WEBHOOK_URL: "http://127.0.0.1:9899/alerts",
                  ALERT_WEBHOOK_SECRET: "test-only-alert-webhook-secret",
                  // the SMS-abuse guard: off for the suite, on in its own tests (test/provider/signin/guard/guard.test.ts),
                  // whose challenge is the Turnstile fake's
                  SMS_GUARD: "off",
                  // the text a person sends (SIGNIN_MO) replaces the guard's challenge: off but in its own tests
                  SIGNIN_MO: "off",
                  TURNSTILE_SITE_KEY: "1x0000000000000000FAKE",
                  TURNSTILE_SECRET_KEY: "fake-turnstile-secret-0123456789abcdef",
                  TURNSTILE_SCRIPT_URL: "http://127.0.0.1:9810/turnstile/v0/api.js",
                  TURNSTILE_SITEVERIFY_URL: "http://127.0.0.1:9810/turnstile/v0/siteverify",
                  TURNSTILE_TIMEOUT_MS: "1000",
                },
                // An independent service built from the spec's examples (test/kit/standin.test.ts).
                workers: [
                  {
                    name: "standin-provider",
                    modules: true,
                    scriptPath: "./test/support/fixtures/standin-provider.js",
                    compatibilityDate: "2026-04-20",
                  },
                  // Fakes of the SMS providers (test/support/sms-fakes.ts routes their origins to them).
                  ...["sens-fake", "nhn-fake"].map((name) => ({
                    name,
                    modules: true,
                    scriptPath: `./test/support/fixtures/${name}.js`,
                    modulesRules: [{ type: "ESModule" as const, include: ["**/*.js"] }],
                    compatibilityDate: "2026-04-20",
                  })),
                  // Cloudflare Turnstile's widget and siteverify, reached at http://127.0.0.1:9810.
                  {
                    name: "turnstile-fake",
                    modules: true,
                    scriptPath: "./workers/all-in-one/turnstile-fake.js",
                    compatibilityDate: "2026-04-20",
                  },
                  // A carrier verification API (docs/carrier-api.md), reached at http://127.0.0.1:9753.
                  {
                    name: "fake-carrier",
                    modules: true,
                    scriptPath: "./test/support/fixtures/fake-carrier.js",
                    compatibilityDate: "2026-04-20",
                    bindings: { CARRIER_API_SECRET: "carrier-test-secret-0123456789abcdefABCDEF" },
                  },
                ],
                // the optional Analytics Engine sink of the metrics (Miniflare's local dataset keeps nothing)
                analyticsEngineDatasets: { METRICS_AE: { dataset: "phone_login_metrics" } },
                serviceBindings: {
                  TURNSTILE_FAKE: "turnstile-fake",
                  STANDIN: "standin-provider",
                  SENS_FAKE: "sens-fake",
                  NHN_FAKE: "nhn-fake",
                  FAKE_CARRIER: "fake-carrier",
                },
              },
            }),
          ],
          test: {
            name: "workers",
            // One workerd, isolate and module cache for file after file on each of the run's workers
            // (vitest hands the runner on), rather than a workerd of their own for each of the 112
            // files: test/support/setup.ts empties the storage, forgets what the worker's modules
            // keep in the isolate and sets the fakes back, so each file starts as on a fresh one
            // (docs/testing.md "Where the time goes").
            isolate: false,
            // The worker's libraries bundled once for the run by vite's dependency optimizer: each file's
            // workerd then loads 268 modules where it loaded 604 (@simplewebauthn/server and its
            // @peculiar/asn1-* and tsyringe, jose), each a round trip to this process; 15% less wall and
            // CPU in four pairs of runs (docs/testing.md "Where the time goes").
            deps: { optimizer: { ssr: { enabled: true, include: ["@simplewebauthn/server", "jose", "itty-router"] } } },
            include: ["test/**/*.test.ts"],
            exclude: ["test/node/**"],
            setupFiles: ["./test/support/setup.ts"],
            // generous for a loaded 2-core CI machine; the tests' own clocks are faked where time matters.
            // Hooks get as long as tests (vitest's default is 10 s): a setup that makes many people
            // through the store's objects outgrew it once under load (race.test.ts sets its own).
            testTimeout: 30_000,
            hookTimeout: 30_000,
          },
        },
        {
          test: {
            name: "node",
            include: ["test/node/**/*.test.ts"],
            environment: "node",
            setupFiles: ["./test/node/setup.ts"],
            globalSetup: ["./test/node/global-setup.ts"],
            testTimeout: 120_000,
            hookTimeout: 180_000,
          },
        },
      ],
    },
  };
});
