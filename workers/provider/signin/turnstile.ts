// Cloudflare Turnstile's server side (docs/signin.md "The challenge"): a widget's token checked
// with siteverify, for the page and the host that showed it. The token goes once to siteverify,
// which refuses it a second time (`timeout-or-duplicate`) and after 300 s. A siteverify that does
// not answer in time, answers something other than its JSON, or reports its own error is
// "unavailable": the person tries again; it is never a pass.

/** Where the widget's script and siteverify are (configuration: locally, the dev worker's fakes). */
export interface TurnstileConfig {
  siteKey: string;
  secretKey: string;
  scriptUrl: string;
  siteverifyUrl: string;
  timeoutMs: number;
}

export const TURNSTILE_SCRIPT_URL = "https://challenges.cloudflare.com/turnstile/v0/api.js";
export const TURNSTILE_SITEVERIFY_URL = "https://challenges.cloudflare.com/turnstile/v0/siteverify";
/** The form field the widget fills. */
export const TOKEN_FIELD = "cf-turnstile-response";
/** Longest token siteverify accepts. */
const MAX_TOKEN = 2048;

export type Verdict = "passed" | "refused" | "unavailable";

interface SiteverifyAnswer {
  success?: unknown;
  "error-codes"?: unknown;
  hostname?: unknown;
  action?: unknown;
}

/**
 * Whether a widget's token proves a solved challenge for `action` on `hostname`, from `remoteIp`.
 * A missing or malformed token is refused without a call.
 */
export async function siteverify(
  cfg: TurnstileConfig,
  token: string | null | undefined,
  expect: { action: string; hostname: string; remoteIp: string | null },
  doFetch: typeof fetch = (input, init) => fetch(input, init),
): Promise<Verdict> {
  if (!token || token.length > MAX_TOKEN) return "refused";
  const body = new URLSearchParams({ secret: cfg.secretKey, response: token, idempotency_key: crypto.randomUUID() });
  if (expect.remoteIp) body.set("remoteip", expect.remoteIp);
  let answer: SiteverifyAnswer;
  try {
    const res = await doFetch(cfg.siteverifyUrl, {
      method: "POST",
      body,
      signal: AbortSignal.timeout(cfg.timeoutMs),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return "unavailable";
    }
    answer = (await res.json()) as SiteverifyAnswer;
  } catch {
    return "unavailable";
  }
  if (typeof answer !== "object" || answer === null) return "unavailable";
  if (answer.success !== true) {
    const codes = Array.isArray(answer["error-codes"]) ? (answer["error-codes"] as unknown[]) : [];
    return codes.includes("internal-error") ? "unavailable" : "refused";
  }
  return answer.hostname === expect.hostname && answer.action === expect.action ? "passed" : "refused";
}
