// The alerts (docs/operations.md "Alerts"), evaluated every minute by the metrics store's alarm from
// its roll-ups (a few reads of the last minutes, whatever the traffic; the day's SMS per app for the
// budgets), D1's open notices and the apps' SMS budgets. A rule that becomes true fires once,
// repeats at most hourly while it stays true, and sends a recovery when it clears. Each message
// goes to ALERT_WEBHOOK_URL as JSON with a Slack-compatible `text`, signed as the SMS webhook is
// (`X-Signature: sha256=<hex HMAC-SHA256(ALERT_WEBHOOK_SECRET, timestamp + "." + body)>`,
// `X-Signature-Timestamp`), and retried with backoff. The URL takes an app's `events_uri` rules
// (hosts.ts: https to a public host; loopback only with DEV_MODE), and a redirect is never followed:
// a 3xx is a failed try, so a signed alert goes to no host but the one configured.

import { boolVar, configOf, ConfigError, optionalVar } from "../../../core/config";
import { hmacSha256Hex } from "../../../core/crypto";
import { clientSmsBudgets } from "../clients";
import {
  appSmsBudget,
  checkConfig,
  configProblems,
  kstDayStart,
  sharedSecretVar,
  smsBudgetConfig,
  type SmsBudgetVars,
} from "../config";
import { eventsUriProblem } from "../hosts";
import { countNotices } from "../notices";
import {
  type MetricsRoom,
  provenByCode,
  provenBySmsCode,
  PROVEN_SERIES,
  ALL_APPS,
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
} from "../metrics/index";

export interface AlertVars {
  ALERT_WEBHOOK_URL?: string;
  ALERT_WEBHOOK_SECRET?: string;
  SMS_SENDER?: string;
  DEV_MODE?: string;
}

export type AlertEnv = AlertVars & SmsBudgetVars & { DB?: D1Database };

/** Where the messages go and their signing key; both unset: alerts are shown in the console only. */
export interface AlertConfig {
  url: string | undefined;
  secret: string | undefined;
}

function parseAlerts(env: AlertVars): AlertConfig {
  const url = optionalVar(env, "ALERT_WEBHOOK_URL");
  let devMode = false;
  try {
    // DEV_MODE alone: another common variable malformed must not silence the alert naming it
    devMode = boolVar(env, "DEV_MODE", false);
  } catch {
    // a malformed DEV_MODE (config.DEV_MODE) is taken as off: the stricter host rules
  }
  if (url !== undefined && eventsUriProblem(url, devMode) !== null)
    throw new ConfigError("ALERT_WEBHOOK_URL", "must be an https URL on a public host (loopback only with DEV_MODE)");
  return { url, secret: sharedSecretVar(env, "ALERT_WEBHOOK_SECRET", "metrics") };
}

/** ALERT_WEBHOOK_URL and ALERT_WEBHOOK_SECRET, parsed once; throws ConfigError naming a malformed URL. */
export function alertConfig(env: AlertVars): AlertConfig {
  return configOf(env, parseAlerts);
}
checkConfig(alertConfig);

/** The rule of a malformed or missing variable: `config.<VARIABLE>`. */
const CONFIG_RULE = "config.";

/** The rules' thresholds (documented defaults). */
export const THRESHOLDS = {
  smsFailureShare: 20,
  failoverShare: 10,
  codeConversion: 50,
  codeConversionMinSent: 100,
  /** An app's codes delivered and never typed in this and the last hour (below the conversion threshold too). */
  appUntypedCodes: 200,
  carrierFailureShare: 1,
  /** Completed sign-ins per identify match, as a share of the same hour's 7-day median. */
  completionOfMedian: 70,
  /** Fewest identify matches in the hour (and in a past day's hour to count in the median). */
  completionMinMatched: 50,
  /** Fewest past days with that many for a median. */
  completionMinDays: 3,
  /** Fewest attempts in 5 minutes before a share is judged. */
  minAttempts: 5,
  /** The share of a daily SMS budget at which its first rule fires (the second at all of it). */
  smsBudgetShare: 80,
};

/** A rule's judgement now: whether it holds, its value and what the message says. */
interface Judgement {
  rule: string;
  active: boolean;
  value: number;
  text: string;
}

type Counts = Map<string, number>;

function countsOf(room: MetricsRoom, from: number, to: number): Counts {
  const out: Counts = new Map();
  for (const [, series, n] of room.rollups.read("1m", from, to, "", null)) out.set(series, (out.get(series) ?? 0) + n);
  return out;
}

const get = (c: Counts, s: string) => c.get(s) ?? 0;
/** A gateway's delivered series: one message sent, whichever gateways it was tried on before. */
const DELIVERED = /^sms\.[a-z0-9_-]+\.delivered$/;
const share = (part: number, whole: number) => (whole === 0 ? 0 : (100 * part) / whole);

/** Every rule's judgement at `now`. */
export async function judge(room: MetricsRoom, env: AlertEnv, now: number): Promise<Judgement[]> {
  const out: Judgement[] = [];
  const five = countsOf(room, now - 5 * MINUTE_MS, now);
  // an SMS gateway's failure share over 5 minutes
  const providers = new Set([...five.keys()].map((k) => /^sms\.([a-z0-9_-]+)\.[a-z_]+$/.exec(k)?.[1]).filter((p) => p));
  let attempts = 0;
  const perProvider = new Map<string, number>();
  for (const p of providers as Set<string>) {
    const all = [...five].filter(([k]) => k.startsWith(`sms.${p}.`)).reduce((a, [, n]) => a + n, 0);
    const failed = all - get(five, `sms.${p}.delivered`);
    perProvider.set(p, all);
    attempts += all;
    const value = share(failed, all);
    out.push({
      rule: `sms.${p}.failures`,
      active: all >= THRESHOLDS.minAttempts && value > THRESHOLDS.smsFailureShare,
      value,
      text: `SMS gateway ${p}: ${value.toFixed(1)}% of ${all} attempts failed over 5 minutes (threshold ${THRESHOLDS.smsFailureShare}%)`,
    });
  }
  // the failover share: attempts not on the first gateway of SMS_SENDER
  const primary = (env.SMS_SENDER ?? "outbox").split(",")[0]!.trim();
  if (primary !== "outbox") {
    const value = share(attempts - (perProvider.get(primary) ?? 0), attempts);
    out.push({
      rule: "sms.failover",
      active: attempts >= THRESHOLDS.minAttempts && value > THRESHOLDS.failoverShare,
      value,
      text: `SMS failover: ${value.toFixed(1)}% of ${attempts} attempts went past ${primary} over 5 minutes (threshold ${THRESHOLDS.failoverShare}%)`,
    });
  }
  // codes typed per code delivered over 15 minutes
  const fifteen = countsOf(room, now - 15 * MINUTE_MS, now);
  const sent = [...fifteen].filter(([k]) => DELIVERED.test(k)).reduce((a, [, n]) => a + n, 0);
  const bySmsCode = provenBySmsCode((k) => get(fifteen, k));
  const conversion = share(bySmsCode, sent);
  out.push({
    rule: "code.conversion",
    active: sent >= THRESHOLDS.codeConversionMinSent && conversion < THRESHOLDS.codeConversion,
    value: conversion,
    text: `Code conversion: ${conversion.toFixed(1)}% of ${sent} codes sent were typed over 15 minutes (threshold ${THRESHOLDS.codeConversion}%): codes sent and never typed`,
  });
  // each app's codes delivered and never typed, this and the last hour: the SMS-abuse guard's evidence
  out.push(
    ...untypedByApp(
      room,
      now,
      [...fifteen.keys()].filter((k) => DELIVERED.test(k)),
    ),
  );
  // the carrier check: no answer to trust, per check, over 5 minutes
  const failed = get(five, "carrier.failed");
  const checks = failed + get(five, "carrier.ok");
  const carrierShare = share(failed, checks);
  out.push({
    rule: "carrier.failures",
    active: checks >= THRESHOLDS.minAttempts && carrierShare > THRESHOLDS.carrierFailureShare,
    value: carrierShare,
    text: `Carrier API: ${carrierShare.toFixed(1)}% of ${checks} checks had no answer over 5 minutes (threshold ${THRESHOLDS.carrierFailureShare}%)`,
  });
  out.push(completion(room, now));
  // an app's events failing for an hour (none delivered)
  const hourAgo = now - HOUR_MS;
  for (const client of room.rollups.clientsWith("event.failed", hourAgo - (hourAgo % HOUR_MS))) {
    const rows = room.rollups.read("1h", hourAgo - (hourAgo % HOUR_MS), now, client, [
      "event.failed",
      "event.delivered",
    ]);
    const failed = rows.filter((r) => r[1] === "event.failed").reduce((a, r) => a + r[2], 0);
    const delivered = rows.filter((r) => r[1] === "event.delivered").reduce((a, r) => a + r[2], 0);
    out.push({
      rule: `events.${client}`,
      active: failed > 0 && delivered === 0,
      value: failed,
      text: `Events to app ${client}: ${failed} tries failed and none delivered in the last hour`,
    });
  }
  // an operator's or developer's change that never answered (store/change-journal.ts), over the last hour
  const unfinished = room.rollups
    .read("1m", now - HOUR_MS, now, ALL_APPS, [UNFINISHED])
    .reduce((a, [, , n]) => a + n, 0);
  out.push({
    rule: UNFINISHED,
    active: unfinished > 0,
    value: unfinished,
    text: `${unfinished} operator or developer change(s) never answered in the last hour: \`npm run admin -- audit list --type ${UNFINISHED}\` names who started what; check whether each was made`,
  });
  // a review test number suspended by its cap of wrong codes (D1's open notices)
  if (env.DB) {
    const n = await countNotices({ DB: env.DB }, "test_number.suspended");
    out.push({
      rule: "test_number.suspended",
      active: n > 0,
      value: n,
      text: `${n} review test number(s) suspended by their cap of wrong codes: register again with a new code`,
    });
  }
  out.push(...(await smsBudgets(room, env, now)));
  out.push(...configRules(room, env));
  return out;
}

/**
 * `code.untyped.<app>`: an app's codes delivered in this and the last hour (an app's counts are
 * rolled up by the hour) and never typed (delivered less the sign-ins proven by an SMS code) reach
 * `appUntypedCodes`, its conversion below the threshold: a bot texting strangers through that
 * app's page, or its people not getting their codes. Resolved an hour after it stops.
 */
function untypedByApp(room: MetricsRoom, now: number, delivered: readonly string[]): Judgement[] {
  const from = now - HOUR_MS - (now % HOUR_MS);
  const sentBy = room.rollups.totalsSince((series) => delivered.includes(series), from);
  const clients = [...sentBy.keys()].filter(
    (c) => c !== ALL_APPS && (sentBy.get(c) ?? 0) >= THRESHOLDS.appUntypedCodes,
  );
  const wanted = [...delivered, ...PROVEN_SERIES];
  const out: Judgement[] = [];
  for (const client of clients) {
    const c: Counts = new Map();
    for (const [, series, n] of room.rollups.read("1h", from, now, client, wanted))
      c.set(series, (c.get(series) ?? 0) + n);
    const sent = delivered.reduce((a, d) => a + get(c, d), 0);
    const typed = Math.min(
      sent,
      provenBySmsCode((k) => get(c, k)),
    );
    const untyped = sent - typed;
    out.push({
      rule: `code.untyped.${client}`,
      active: untyped >= THRESHOLDS.appUntypedCodes && share(typed, sent) < THRESHOLDS.codeConversion,
      value: untyped,
      text: `App ${client}: ${untyped} of ${sent} codes sent this and the last hour were never typed (threshold ${THRESHOLDS.appUntypedCodes}): codes texted to people who did not ask, or not reaching them`,
    });
  }
  return out;
}

/**
 * A variable of this worker found malformed or missing (configProblems: by name, never its value)
 * fires `config.<VARIABLE>`; it resolves once the variable is set right (a deploy: a new env).
 */
function configRules(room: MetricsRoom, env: AlertEnv): Judgement[] {
  const problems = configProblems(env);
  const names = new Set(problems);
  for (const s of room.alerts.states())
    if (s.firing && s.rule.startsWith(CONFIG_RULE)) names.add(s.rule.slice(CONFIG_RULE.length));
  return [...names].map((name) => ({
    rule: `${CONFIG_RULE}${name}`,
    active: problems.includes(name),
    value: 1,
    text: `Configuration: ${name} does not have its documented form or is missing (docs/operations.md "Checking the configuration"); \`/healthz?deep=1\` lists every such variable`,
  }));
}

/** The audit type of a change that never answered: its series, and its rule's name. */
const UNFINISHED = "request.unfinished";

const BUDGET = "sms.budget.";
const GLOBAL = "global";

/**
 * The daily SMS budgets (docs/operations.md "SMS budgets"): each app's SMS delivered since midnight
 * in Korea against its budget (its own, else SMS_APP_DAILY_BUDGET), `sms.budget.<client_id>`, and
 * every SMS (apps and the service's own pages) against SMS_GLOBAL_DAILY_BUDGET, `sms.budget.global`;
 * each rule fires at 80% of its budget, and its `.exhausted` twin at 100%. They only tell: the
 * sign-in's guard stops an app's sends at its budget, and nothing stops at the global one (else one
 * attacker could stop every app's sign-ins by SMS). An app whose rule fires is judged until it
 * clears, so the turn of the day resolves it.
 */
async function smsBudgets(room: MetricsRoom, env: AlertEnv, now: number): Promise<Judgement[]> {
  const sent = room.rollups.totalsSince((s) => DELIVERED.test(s), kstDayStart(now));
  const out = budgetRules(
    GLOBAL,
    "the service",
    sent.get(ALL_APPS) ?? 0,
    smsBudgetConfig(env).globalDaily,
    "nothing is stopped (each app's own budget still applies)",
  );
  const apps = new Set([...sent.keys()].filter((c) => c !== ALL_APPS));
  for (const s of room.alerts.states())
    if (s.firing && s.rule.startsWith(BUDGET)) apps.add(s.rule.slice(BUDGET.length).replace(/\.exhausted$/, ""));
  apps.delete(GLOBAL); // generated client ids are 20 alphanumerics: never `global`
  if (apps.size === 0) return out;
  let clients = new Map<string, { name: string; smsDailyBudget: number | null }>();
  if (env.DB) {
    try {
      clients = await clientSmsBudgets({ DB: env.DB }, [...apps]);
    } catch (err) {
      // judged again next minute; the default in the meantime would fire for apps given more
      console.log(JSON.stringify({ worker: "metrics", cause: `SMS budgets: ${String(err)}` }));
      return out;
    }
  }
  for (const id of apps) {
    const c = clients.get(id);
    out.push(
      ...budgetRules(
        id,
        c ? `app ${c.name} (${id})` : `app ${id}`,
        sent.get(id) ?? 0,
        appSmsBudget(c ?? { smsDailyBudget: null }, env),
        "its sign-ins by SMS are paused until midnight KST",
      ),
    );
  }
  return out;
}

/** A budget's two rules: `sms.budget.<key>` at 80% of it, `sms.budget.<key>.exhausted` at all of it. */
function budgetRules(key: string, who: string, n: number, budget: number, atFull: string): Judgement[] {
  const value = (100 * n) / budget;
  const of = `${n.toLocaleString("en-US")} of ${budget.toLocaleString("en-US")} messages sent today (KST), ${value.toFixed(1)}%`;
  return [
    {
      rule: `${BUDGET}${key}`,
      // whole numbers: 80% of the budget exactly is reached, with no rounding of a share
      active: 100 * n >= THRESHOLDS.smsBudgetShare * budget,
      value,
      text: `SMS budget of ${who}: ${of} (threshold ${THRESHOLDS.smsBudgetShare}%)`,
    },
    {
      rule: `${BUDGET}${key}.exhausted`,
      active: n >= budget,
      value,
      text: `SMS budget of ${who} used up: ${of}: ${atFull}`,
    },
  ];
}

/**
 * Completed sign-ins per identify match over the last hour (ending 2 minutes ago, so both counts
 * have arrived) against the median of the same hour on each of the 7 days before: people whose
 * number was confirmed stopped finishing (codes not arriving, a broken page, an app's callback).
 * Eight hours of minute rows are read, whatever the traffic.
 */
function completion(room: MetricsRoom, now: number): Judgement {
  const end = now - 2 * MINUTE_MS;
  const ratioAt = (daysBack: number): { matched: number; ratio: number } => {
    const to = end - daysBack * DAY_MS;
    const c = countsOf(room, to - HOUR_MS, to);
    const matched = get(c, "identify.matched");
    return { matched, ratio: matched === 0 ? 0 : provenByCode((k) => get(c, k)) / matched };
  };
  const today = ratioAt(0);
  const past = [1, 2, 3, 4, 5, 6, 7]
    .map(ratioAt)
    .filter((d) => d.matched >= THRESHOLDS.completionMinMatched)
    .map((d) => d.ratio)
    .sort((a, b) => a - b);
  const median = past.length === 0 ? 0 : (past[(past.length - 1) >> 1]! + past[past.length >> 1]!) / 2;
  const value = median === 0 ? 100 : (100 * today.ratio) / median;
  return {
    rule: "signin.completion",
    active:
      past.length >= THRESHOLDS.completionMinDays &&
      today.matched >= THRESHOLDS.completionMinMatched &&
      value < THRESHOLDS.completionOfMedian,
    value,
    text: `Sign-in completion: ${(100 * today.ratio).toFixed(1)}% of ${today.matched} confirmed numbers signed in over the last hour, ${value.toFixed(0)}% of the same hour's 7-day median ${(100 * median).toFixed(1)}% (threshold ${THRESHOLDS.completionOfMedian}%)`,
  };
}

/** How long a firing rule waits before it is sent again. */
export const REPEAT_MS = HOUR_MS;
/** A message's tries: the first at once, then after 1, 2, 4, 8, 16 and 32 minutes. */
const MAX_TRIES = 7;

/** The minute's work: judge every rule, record what changed, send the due messages. */
export async function alertsAlarm(env: AlertEnv, room: MetricsRoom): Promise<void> {
  const now = Date.now();
  const states = new Map(room.alerts.states().map((s) => [s.rule, s]));
  let webhook: string | undefined;
  try {
    webhook = alertConfig(env).url;
  } catch {
    // a malformed URL sends nothing: its own rule, config.ALERT_WEBHOOK_URL, shows in the console
    webhook = undefined;
  }
  for (const j of await judge(room, env, now)) {
    const s = states.get(j.rule);
    const firing = s?.firing ?? false;
    let status: "firing" | "resolved" | null = null;
    if (j.active && (!firing || now - s!.lastSent >= REPEAT_MS)) status = "firing";
    else if (!j.active && firing) status = "resolved";
    if (status === null) {
      if (s) room.alerts.put({ ...s, value: j.value, text: j.active ? j.text : s.text });
      continue;
    }
    const since = status === "firing" && firing ? s!.since : now;
    room.alerts.put({ rule: j.rule, firing: j.active, since, lastSent: now, value: j.value, text: j.text });
    if (webhook) {
      const text = `[phone-login] ${status === "firing" ? "FIRING" : "RESOLVED"}: ${j.text}`;
      room.alerts.enqueue(
        JSON.stringify({
          alert: j.rule,
          status,
          value: j.value,
          since: new Date(since).toISOString(),
          at: new Date(now).toISOString(),
          text,
        }),
        now,
      );
    }
  }
  if (webhook) await deliver(env, room, webhook, now);
}

async function deliver(env: AlertEnv, room: MetricsRoom, url: string, now: number): Promise<void> {
  for (const m of room.alerts.due(now, 20)) {
    const timestamp = Math.floor(Date.now() / 1000);
    let ok = false;
    try {
      const headers: Record<string, string> = {
        "Content-Type": "application/json",
        "X-Signature-Timestamp": String(timestamp),
      };
      const secret = alertConfig(env).secret;
      if (secret) headers["X-Signature"] = "sha256=" + (await hmacSha256Hex(secret, `${timestamp}.${m.body}`));
      const res = await fetch(url, {
        method: "POST",
        headers,
        body: m.body,
        signal: AbortSignal.timeout(5000),
        redirect: "manual",
      });
      await res.body?.cancel();
      ok = res.ok;
    } catch {
      ok = false;
    }
    if (ok) room.alerts.sent(m.id);
    else {
      const tries = m.attempts + 1;
      room.alerts.failed(m.id, tries, tries >= MAX_TRIES ? null : now + MINUTE_MS * 2 ** (tries - 1));
    }
  }
}
