// The guard's pages at the identify step (docs/abuse.md): the challenge asked, checked and refused,
// a slowed network's wait, and an app's paused SMS. All decided from the request before anyone is
// looked up, so none of them differs between a name and number that match and ones that do not.

import type { Client } from "../store/clients";
import { appSmsBudget } from "../store/config";
import type { ProviderEnv } from "../config";
import { audit } from "../store/one-time/index";
import { formatKstTime } from "../dates";
import { failure, minutes, type Flow } from "./flow";
import { guardDecision, takeSlowed, type Decision, type GuardMark } from "./guard";
import { guardConfig } from "./guard-config";
import { t } from "./i18n";
import { identifyPage, stopPage, type Challenge, type IdentifyValues } from "./pages";
import { siteverify, TOKEN_FIELD } from "./turnstile";
import { textOffered } from "./text-config";

/** The action the identify page's challenge is solved for (siteverify checks it). */
export const IDENTIFY_ACTION = "identify";

/** The app's daily SMS budget in messages (its own, else SMS_APP_DAILY_BUDGET), null for the service's own pages. */
export function budgetOf(f: { client: Client; env: ProviderEnv }): number | null {
  return f.client.clientId ? appSmsBudget(f.client, f.env) : null;
}

/** The widget as the identify page shows it. */
export function challengeOf(f: { env: ProviderEnv }): Challenge {
  const c = guardConfig(f.env).turnstile;
  return { siteKey: c.siteKey, scriptUrl: c.scriptUrl, action: IDENTIFY_ACTION };
}

/** A decision audited and counted by what it was and the kinds of scope it came from, never their values. */
function decided(f: Flow, d: Decision, decision: string, outcome: "ok" | "refused"): void {
  f.rc.waitUntil(
    audit(f.env, "guard.decision", f.client.clientId || null, outcome, {
      decision,
      ...(d.challenge.length ? { kinds: d.challenge.join(",") } : {}),
    }),
  );
}

/** siteverify's address: configured, or a path on this host (DEV_MODE's local fake). */
function siteverifyUrl(f: Flow, url: string): string {
  return url.startsWith("/") ? new URL(url, f.req.url).toString() : url;
}

/**
 * The guard at the identify step: a page that stops the submission here (a challenge to solve, a
 * wait, the app's SMS paused), "text" where a text from the person replaces all three, else the
 * mark its code will carry (null when the guard is off). `proved`: the browser proved the typed
 * number before: never stopped.
 */
export async function guardGate(
  f: Flow,
  values: IdentifyValues,
  phone: string,
  proved = false,
): Promise<Response | GuardMark | "text" | null> {
  const d = await guardDecision(f.env, f.rc, f.req, f.client.clientId, phone);
  if (!d) return null;
  const L = f.ctx.lang;
  // A browser that proved this number before (proved-browser.ts) is never challenged, slowed or
  // told to wait: its code is sent, and counted in its scopes as any.
  if (proved) {
    if (d.challenge.length > 0 || d.pausedUntil !== null) decided(f, d, "proved_browser", "ok");
    return { scopes: d.scopes, challenged: false, sentAt: d.now };
  }
  // Where a challenge, a wait or a paused app would answer, the person texts us instead
  // (SIGNIN_MO, docs/abuse.md "A text the person sends"): no code is sent, so no one waits.
  if ((d.pausedUntil !== null || d.challenge.length > 0) && textOffered(f.env)) {
    decided(f, d, "text", "ok");
    return "text";
  }
  if (d.pausedUntil !== null) {
    decided(f, d, "paused", "refused");
    failure(f, "sms_paused");
    const res = stopPage(
      f.ctx,
      t(L, "pausedTitle"),
      t(L, "pausedText", { app: f.client.name, until: formatKstTime(d.pausedUntil, L) }),
      undefined,
      503,
    );
    res.headers.set("Retry-After", String(Math.max(1, Math.ceil((d.pausedUntil - d.now) / 1000))));
    return res;
  }
  let challenged = false;
  if (d.challenge.length > 0) {
    const cfg = guardConfig(f.env).turnstile;
    const token = f.params.get(TOKEN_FIELD);
    if (!token) {
      decided(f, d, "challenge_asked", "refused");
      return identifyPage(f.ctx, values, undefined, {}, challengeOf(f));
    }
    const verdict = await siteverify({ ...cfg, siteverifyUrl: siteverifyUrl(f, cfg.siteverifyUrl) }, token, {
      action: IDENTIFY_ACTION,
      hostname: new URL(f.req.url).hostname,
      remoteIp: f.req.headers.get("CF-Connecting-IP"),
    });
    if (verdict === "unavailable") {
      decided(f, d, "challenge_unavailable", "refused");
      return identifyPage(
        f.ctx,
        values,
        { text: t(L, "errChallengeUnavailable") },
        { status: 503, retryAfterSeconds: 5 },
        challengeOf(f),
      );
    }
    if (verdict === "refused") {
      decided(f, d, "challenge_refused", "refused");
      failure(f, "challenge_refused");
      return identifyPage(f.ctx, values, { text: t(L, "errChallengeRefused") }, { status: 403 }, challengeOf(f));
    }
    decided(f, d, "challenge_passed", "ok");
    challenged = true;
  }
  if (d.slowed.length > 0) {
    const until = await takeSlowed(f.env, f.client.clientId, d);
    if (until !== null) {
      decided(f, d, "slowed", "refused");
      failure(f, "guard_slowed");
      const left = until - d.now;
      return identifyPage(
        f.ctx,
        values,
        { text: t(L, "errGuardSlowed", { minutes: minutes(left) }) },
        { status: 429, retryAfterSeconds: left / 1000 },
      );
    }
  }
  return { scopes: d.scopes, challenged, sentAt: d.now };
}
