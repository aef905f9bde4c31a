// The configuration checked in one place (docs/operations.md "Checking the configuration"): every
// variable and secret with a documented form, set malformed (or missing where its form requires
// it), is named by `GET /healthz?deep=1` (503), by the console's overview and by a
// `config.<VARIABLE>` alert at the receiver, by its name only, never its value. Plain /healthz
// stays the cheap liveness answer. The table covers every variable the docs' tables document: a
// variable added to them without a row here fails the first test.
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../workers/all-in-one/index";
import { randomToken } from "../../workers/core/crypto";
import { alertsAlarm, type AlertEnv } from "../../workers/provider/store/flows/alerts";
import type { MetricsRoom, MetricsStore } from "../../workers/provider/store/metrics/metrics-store";
import { admin } from "../support/admin";
import { ciOf, importRows, lastCode } from "../support/directory";
import { env } from "../support/env";
import { BASE } from "../support/helpers";
import { alertText, Browser, type Page } from "../support/signin";
import readme from "../../README.md?raw";
import signinDoc from "../../docs/signin.md?raw";
import abuseDoc from "../../docs/abuse.md?raw";
import operationsDoc from "../../docs/operations.md?raw";
import rpKitDoc from "../../docs/rp-kit.md?raw";
import passkeysDoc from "../../docs/passkeys.md?raw";
import developersDoc from "../../docs/developers.md?raw";
import carrierDoc from "../../docs/carrier-api.md?raw";

// A malformed variable is logged where it is read (the log line names it): expected here, not shown.
beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** An int variable's malformed value: no whole number (and text no answer could hold by chance). */
const NOT_A_NUMBER = "12-not-a-number-34";
/** A public https receiver the alerts may use where DEV_MODE is off or malformed (loopback then refused). */
const PUBLIC_RECEIVER = "https://alerts.receiver.example/hook";

interface Row {
  /** The variable named. */
  variable: string;
  /** The variables set (undefined: unset) to make it malformed or missing. */
  vars: Record<string, string | undefined>;
}

const int = (variable: string): Row => ({ variable, vars: { [variable]: NOT_A_NUMBER } });
const bad = (variable: string, value: string): Row => ({ variable, vars: { [variable]: value } });
/** A gateway named by SMS_SENDER with everything it needs but `missing`. */
const sens = (missing: string): Row => {
  const vars: Record<string, string | undefined> = {
    SMS_SENDER: "naver-sens",
    SENS_SERVICE_ID: "ncp:sms:kr:1234:svc",
    SENS_ACCESS_KEY: "sens-access-key-0123456789",
    SENS_SECRET_KEY: "sens-secret-key-0123456789",
    SMS_FROM: "15880000",
  };
  vars[missing] = undefined;
  return { variable: missing, vars };
};
const nhn = (missing: string): Row => {
  const vars: Record<string, string | undefined> = {
    SMS_SENDER: "nhn-cloud",
    NHN_SMS_APP_KEY: "nhn-app-key-0123456789",
    NHN_SMS_SECRET_KEY: "nhn-secret-key-0123456789",
    SMS_FROM: "15880000",
  };
  vars[missing] = undefined;
  return { variable: missing, vars };
};

/** Every documented variable with a form: a value (or an absence) that does not meet it. */
const ROWS: Row[] = [
  // every worker (README "Configuration")
  { variable: "DEV_MODE", vars: { DEV_MODE: "yes-please", ALERT_WEBHOOK_URL: PUBLIC_RECEIVER } },
  int("MAX_BODY_BYTES"),
  bad("LOG_REQUESTS", "sometimes-maybe"),
  // the provider (README)
  bad("SEAL_KEY", "not-a-base64-key-of-32-bytes"),
  bad("TOKEN_ERROR_STYLE", "oauth-style-please"),
  int("USER_ME_MAX_READS"),
  int("USERINFO_MAX_READS"),
  int("CLIENT_CACHE_SECONDS"),
  bad("ONE_TIME_SHARDS", "3"),
  int("CODE_TTL_SECONDS"),
  int("ACCESS_TOKEN_TTL_SECONDS"),
  int("DIRECTORY_SHARDS"),
  int("TEST_NUMBER_MAX_FAILURES"),
  int("SIGNIN_RISK_WINDOW_SECONDS"),
  int("JWKS_MAX_AGE_SECONDS"),
  int("AUDIT_RETENTION_DAYS"),
  int("AUDIT_FLUSH_SECONDS"),
  int("SMS_APP_DAILY_BUDGET"),
  int("SMS_GLOBAL_DAILY_BUDGET"),
  int("METRICS_FLUSH_SECONDS"),
  int("ALERT_EVALUATE_SECONDS"),
  // the sign-in pages (docs/signin.md)
  int("SIGNIN_TX_TTL_SECONDS"),
  int("SIGNIN_OTP_TTL_SECONDS"),
  int("SIGNIN_OTP_MAX_ATTEMPTS"),
  int("SIGNIN_LOCK_AFTER_FAILURES"),
  int("SIGNIN_NUMBER_LOCK_AFTER_FAILURES"),
  int("SIGNIN_LOCK_SECONDS"),
  int("SIGNIN_FAILURE_MEMORY_SECONDS"),
  int("SIGNIN_RESEND_COOLDOWN_SECONDS"),
  int("SIGNIN_SENDS_PER_WINDOW"),
  int("SIGNIN_SEND_WINDOW_SECONDS"),
  int("SIGNIN_IP_LIMIT"),
  int("SIGNIN_IP_WINDOW_SECONDS"),
  int("AUTO_LOGIN_TTL_SECONDS"),
  int("PASSKEY_ACTIVATION_SECONDS"),
  int("PASSKEY_RECHECK_SECONDS"),
  bad("CARRIER_DIRECTORY", "soap-directory"),
  bad("CARRIER_API_URL", "ftp://carrier.example/verify"),
  bad("CARRIER_API_SECRET", "short-carrier-secret"),
  bad("CARRIER_API_SECRET_NEXT", "short-next-secret"),
  int("CARRIER_API_TIMEOUT_MS"),
  bad("SMS_SENDER", "carrier-pigeon"),
  bad("SMS_WEBHOOK_URL", "mailto:sms@gateway.example"),
  bad("SMS_WEBHOOK_SECRET", "tiny-secret"),
  int("SMS_WEBHOOK_TIMEOUT_MS"),
  int("SMS_TIMEOUT_MS"),
  bad("SMS_FROM", "12-34"),
  bad("SENS_SERVICE_ID", "ncp sms with spaces!"),
  bad("SENS_BASE_URL", "http://sens.gateway.example"),
  bad("NHN_SMS_BASE_URL", "http://nhn.gateway.example"),
  sens("SENS_ACCESS_KEY"),
  sens("SENS_SECRET_KEY"),
  nhn("NHN_SMS_APP_KEY"),
  nhn("NHN_SMS_SECRET_KEY"),
  bad("OPERATOR_NAME", "운".repeat(101)),
  bad("SIGNIN_TERMS", "not-json-terms"),
  bad("TERMS_URL", "javascript:terms()"),
  bad("PRIVACY_URL", "javascript:privacy()"),
  bad("HELP_URL", "javascript:help()"),
  // the SMS-abuse guard (docs/abuse.md)
  bad("SMS_GUARD", "halfway-on"),
  int("GUARD_MIN_CONVERSION_PERCENT"),
  int("GUARD_MIN_SENDS"),
  int("GUARD_WIDE_FACTOR"),
  int("GUARD_WINDOW_SECONDS"),
  int("GUARD_SETTLE_SECONDS"),
  int("GUARD_COOLDOWN_SECONDS"),
  int("GUARD_MAX_COOLDOWN_SECONDS"),
  int("GUARD_SLOW_CODES"),
  int("GUARD_SLOW_WINDOW_SECONDS"),
  int("GUARD_CACHE_SECONDS"),
  int("GUARD_FLUSH_MS"),
  int("GUARD_SURGE_CODES"),
  int("GUARD_SURGE_FACTOR"),
  bad("GUARD_SAFE_BLOCKS", "10.0.0.0/33"),
  // required while the guard is on outside DEV_MODE
  {
    variable: "TURNSTILE_SITE_KEY",
    vars: { DEV_MODE: "false", SMS_GUARD: "on", TURNSTILE_SITE_KEY: undefined, ALERT_WEBHOOK_URL: PUBLIC_RECEIVER },
  },
  bad("TURNSTILE_SECRET_KEY", "short turnstile"),
  bad("TURNSTILE_SCRIPT_URL", "ftp://turnstile.example/api.js"),
  bad("TURNSTILE_SITEVERIFY_URL", "ftp://turnstile.example/siteverify"),
  int("TURNSTILE_TIMEOUT_MS"),
  // a text the person sends, and a browser's proof (docs/signin.md, docs/abuse.md)
  bad("SIGNIN_MO", "sometimes"),
  int("SIGNIN_MO_TTL_SECONDS"),
  bad("SMS_INBOUND_NUMBER", "call-me-maybe"),
  bad("SMS_INBOUND_SECRET", "short inbound"),
  bad("SMS_INBOUND_SECRET_NEXT", "short next"),
  bad("SMS_INBOUND_TOBETEXT_TOKEN", "short token"),
  int("SIGNIN_PROVED_BROWSER_SECONDS"),
  // the admin API, the consoles and the alerts (docs/operations.md "Configuration")
  bad("ADMIN_TOKEN", "short-admin-token"),
  int("SECRET_ROTATION_GRACE_SECONDS"),
  int("ADMIN_MAX_IMPORT_BYTES"),
  int("ADMIN_MAX_IMPORT_ROWS"),
  bad("ALERT_WEBHOOK_URL", "https://10.0.0.5/alerts"),
  bad("ALERT_WEBHOOK_SECRET", "short-alert"),
  int("DEVELOPER_MAX_APPS"),
  int("CONSOLE_REFRESH_SECONDS"),
  bad("SMS_PRICES_KRW", "free-of-charge"),
  // the kit in this worker (docs/rp-kit.md)
  bad("PROVIDER_BASE_URL", "ftp://provider.example"),
  bad("RP_CLIENT_ID", "client id with spaces"),
  bad("RP_REDIRECT_URI", "ftp://app.example/auth/callback"),
  bad("RP_PUBLIC_ORIGIN", "https://app.example/with-a-path"),
  int("RP_STATE_TTL_SECONDS"),
  int("RP_SESSION_TTL_SECONDS"),
  int("RP_IDENTITY_TTL_SECONDS"),
  bad("RP_PKCE", "perhaps-pkce"),
  bad("RP_SIGNALS", "perhaps"),
  bad("RP_CLIENT_AUTH", "jwt-assertion"),
  int("RP_TOKEN_RATE_LIMIT"),
  int("RP_TOKEN_RATE_WINDOW_SECONDS"),
  int("RP_PROVIDER_TIMEOUT_MS"),
  bad("RP_RELOGIN_PROMPT", "<script>prompt</script>"),
  bad("RP_TOKEN_PKCE", "whenever-pkce"),
  bad("RP_BASE_PATH", "auth-without-slash/"),
  bad("RP_ITEMS", "shoe_size"),
  bad("RP_EVENTS", "events-perhaps"),
  bad("RP_CLIENT_SECRET", "short-rp"),
  bad("RP_SEAL_KEY", "not-a-base64-rp-key"),
];

/**
 * Documented variables without a form to check: a binding, the bench's own switch, and
 * PUBLIC_BASE_URL, whose absence is documented (events recorded, not sent).
 */
const NO_FORM = ["METRICS_AE", "BENCH_VARIANT", "PUBLIC_BASE_URL"];

/** Every variable named in the first cell of a row of the docs' tables. */
function documented(): Set<string> {
  const names = new Set<string>();
  for (const doc of [readme, signinDoc, abuseDoc, operationsDoc, rpKitDoc, passkeysDoc, developersDoc, carrierDoc])
    for (const line of doc.split("\n")) {
      const first = /^\|([^|]*)\|/.exec(line)?.[1];
      if (first) for (const m of first.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)) names.add(m[1]!);
    }
  return names;
}

const envWith = (vars: Record<string, string | undefined>) => ({ ...env, ...vars }) as typeof env;

async function deep(e: typeof env): Promise<{ status: number; text: string }> {
  const ctx = createExecutionContext();
  const res = await worker.fetch!(new Request(`${BASE}/healthz?deep=1`) as never, e, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, text: await res.text() };
}

/** Values of a row that must never be shown (the empty and unset ones show nothing). */
const values = (r: Row) => Object.values(r.vars).filter((v): v is string => !!v && v.length >= 5);

describe("every documented variable is checked in one place", () => {
  it("the table has a row for every variable the docs' tables document", () => {
    const covered = new Set([...ROWS.map((r) => r.variable), ...NO_FORM]);
    expect([...documented()].filter((n) => !covered.has(n)).sort()).toEqual([]);
  });

  it("the test worker's own configuration has no problem: /healthz?deep=1 answers 200 with none; /healthz stays the plain liveness answer", async () => {
    expect(await deep(env)).toEqual({ status: 200, text: JSON.stringify({ status: "ok", problems: [] }) });
    // the case: a short CARRIER_API_SECRET_NEXT leaves the liveness answer alone, the deep one names it
    const e = envWith({ CARRIER_API_SECRET_NEXT: "short-next-secret" });
    const ctx = createExecutionContext();
    const res = await worker.fetch!(new Request(`${BASE}/healthz`) as never, e, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    expect(await deep(e)).toEqual({
      status: 503,
      text: JSON.stringify({ status: "misconfigured", problems: ["CARRIER_API_SECRET_NEXT"] }),
    });
  });

  it.each(ROWS.map((r) => [r.variable, r] as const))(
    "%s malformed: /healthz?deep=1 answers 503 naming it, never its value",
    async (_, row) => {
      const { status, text } = await deep(envWith(row.vars));
      expect(status).toBe(503);
      const body = JSON.parse(text) as { status: string; problems: string[] };
      expect(body.status).toBe("misconfigured");
      expect(body.problems).toContain(row.variable);
      for (const v of values(row)) expect(text).not.toContain(v);
    },
  );

  it.each(ROWS.map((r) => [r.variable, r] as const))(
    "%s malformed: the config.<VARIABLE> alert fires at the receiver, naming it, never its value",
    async (_, row) => {
      const e = envWith(row.vars) as unknown as AlertEnv;
      const got: { alert: string; status: string; text: string }[] = [];
      const raw: string[] = [];
      vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
        const req = new Request(input, init);
        expect(req.url).toBe(e.ALERT_WEBHOOK_URL);
        const body = await req.text();
        raw.push(body);
        got.push(JSON.parse(body) as (typeof got)[number]);
        return new Response(null, { status: 204 });
      });
      const m = env.METRICS.get(env.METRICS.idFromName(`config-${randomToken(6)}`));
      await runInDurableObject(m, (o: MetricsStore) => alertsAlarm(e, (o as unknown as { room: MetricsRoom }).room));
      const state = (await m.alerts()).find((a) => a.rule === `config.${row.variable}`);
      expect(state?.firing).toBe(true);
      if (row.variable === "ALERT_WEBHOOK_URL") {
        // nowhere to send it: the rule fires in the console alone, and nothing goes to the refused host
        expect(got).toEqual([]);
        return;
      }
      const mine = got.find((g) => g.alert === `config.${row.variable}`);
      expect(mine?.status).toBe("firing");
      expect(mine?.text).toContain(`Configuration: ${row.variable} `);
      for (const v of values(row)) for (const b of raw) expect(b).not.toContain(v);
    },
  );
});

/**
 * What the console itself reads to serve any page (its session in the store, its gate in the admin
 * API's configuration, the router): malformed, every console page is the plain 500, and
 * /healthz?deep=1 and the alert (tested above) name them. TURNSTILE_SITE_KEY's row turns DEV_MODE
 * off, where the console answers https only (the test's origin is http).
 */
const CONSOLE_NEEDS = [
  "DEV_MODE",
  "LOG_REQUESTS",
  "MAX_BODY_BYTES",
  "TOKEN_ERROR_STYLE",
  "USER_ME_MAX_READS",
  "USERINFO_MAX_READS",
  "CLIENT_CACHE_SECONDS",
  "ONE_TIME_SHARDS",
  "CODE_TTL_SECONDS",
  "ACCESS_TOKEN_TTL_SECONDS",
  "DIRECTORY_SHARDS",
  "TEST_NUMBER_MAX_FAILURES",
  "SIGNIN_RISK_WINDOW_SECONDS",
  "JWKS_MAX_AGE_SECONDS",
  "ADMIN_TOKEN",
  "SECRET_ROTATION_GRACE_SECONDS",
  "ADMIN_MAX_IMPORT_BYTES",
  "ADMIN_MAX_IMPORT_ROWS",
  "AUDIT_RETENTION_DAYS",
  "AUDIT_FLUSH_SECONDS",
  "SEAL_KEY",
];

// The console's overview, read by an operator signed in with the test worker's configuration,
// then served with each row's.
describe("the console's overview names each malformed variable", () => {
  let session: Map<string, string> | null = null;

  async function signedIn(): Promise<Map<string, string>> {
    if (session) return session;
    const phone = "01077001234";
    await importRows([
      { telcoCd: "K", phoneNo: phone, name: "운영자", gender: "F", birth: "1988-02-03", foreign: "L", ci: ciOf(777) },
    ]);
    const res = await admin("POST", "/admin/operators", { json: { phone, role: "viewer" } });
    expect(res.status, await res.clone().text()).toBe(201);
    const b = new Browser();
    const p1 = await b.page(await b.fetch("/console"));
    const p2 = await b.submit(p1, { telcoCd: "K", name: "운영자", phoneNo: phone });
    expect(p2.form?.step, alertText(p2.html)).toBe("verify");
    const p3: Page = await b.submit(p2, { otp: await lastCode(phone) });
    expect(p3.status, alertText(p3.html)).toBe(303);
    session = b.cookies;
    return session;
  }

  it("with the test worker's configuration the overview shows no configuration problem", async () => {
    const b = new Browser();
    for (const [k, v] of await signedIn()) b.cookies.set(k, v);
    const res = await b.fetch("/console");
    expect(res.status).toBe(200);
    expect(await res.text()).not.toContain('id="config-problems"');
  });

  it.each(
    ROWS.filter((r) => ![...CONSOLE_NEEDS, "TURNSTILE_SITE_KEY"].includes(r.variable)).map(
      (r) => [r.variable, r] as const,
    ),
  )("%s malformed: the overview lists it by name, never its value", async (_, row) => {
    const cookies = await signedIn();
    const b = new Browser({ vars: row.vars as Record<string, string> });
    for (const [k, v] of cookies) b.cookies.set(k, v);
    const res = await b.fetch("/console");
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(200);
    const section = /<section class="alert" id="config-problems"[^]*?<\/section>/.exec(text)?.[0] ?? "";
    expect(section).toContain(`<code>${row.variable}</code>`);
    for (const v of values(row)) expect(text).not.toContain(v);
  });

  it.each(CONSOLE_NEEDS)("%s malformed: the console answers its plain 500, without the value", async (name) => {
    const row = ROWS.find((r) => r.variable === name)!;
    const cookies = await signedIn();
    const b = new Browser({ vars: row.vars as Record<string, string> });
    for (const [k, v] of cookies) b.cookies.set(k, v);
    const res = await b.fetch("/console");
    const text = await res.text();
    expect(res.status).toBe(500);
    for (const v of values(row)) expect(text).not.toContain(v);
  });
});
