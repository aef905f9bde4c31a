// Delivery of one-time codes: one `SmsSender` interface, two implementations. `outbox`
// (DEV_MODE only) keeps messages in D1 for the dev page `/dev/outbox`; `webhook` POSTs a signed
// JSON message to the deployment's SMS gateway. docs/signin.md documents the wire format.

import { hmacSha256Hex } from "../../core/crypto";
import { ConfigError } from "../../core/config";
import { signinConfig, type SigninVars } from "./config";
import type { Lang } from "./i18n";

export interface SmsMessage {
  /** Digits only, `01012345678`. */
  to: string;
  /** The full text to deliver. */
  text: string;
  /** The code alone, for gateways that use their own templates. */
  code: string;
  lang: Lang;
}

export interface SmsSender {
  /** Delivers the message or throws (the page then says the code could not be sent). */
  send(message: SmsMessage): Promise<void>;
}

const OUTBOX_KEEP_MS = 3600_000;
const OUTBOX_KEEP_ROWS = 200;

/** The dev outbox: D1 table `sms_outbox`, pruned on write. */
export function outboxSender(env: { DB: D1Database }): SmsSender {
  return {
    async send(m) {
      const now = Date.now();
      await env.DB.batch([
        env.DB.prepare("INSERT INTO sms_outbox (at, phone, body) VALUES (?, ?, ?)").bind(now, m.to, m.text),
        env.DB.prepare("DELETE FROM sms_outbox WHERE at < ? OR id <= (SELECT max(id) FROM sms_outbox) - ?").bind(
          now - OUTBOX_KEEP_MS,
          OUTBOX_KEEP_ROWS,
        ),
      ]);
    },
  };
}

export interface OutboxRow {
  id: number;
  at: number;
  phone: string;
  body: string;
}

/** The newest outbox messages (dev page, tests). */
export async function readOutbox(env: { DB: D1Database }, limit = 50): Promise<OutboxRow[]> {
  const r = await env.DB.prepare("SELECT id, at, phone, body FROM sms_outbox ORDER BY id DESC LIMIT ?")
    .bind(limit)
    .all<OutboxRow>();
  return r.results;
}

export interface WebhookOptions {
  url: string;
  secret: string;
  timeoutMs: number;
  /** Injected for tests; the platform's fetch otherwise. */
  fetcher?: typeof fetch;
}

/**
 * Signs `timestamp + "." + body` with HMAC-SHA256: `X-Signature: sha256=<hex>` and
 * `X-Signature-Timestamp: <unix seconds>` (the receiver refuses stale timestamps).
 */
export async function signWebhook(secret: string, timestamp: number, body: string): Promise<string> {
  return "sha256=" + (await hmacSha256Hex(secret, `${timestamp}.${body}`));
}

/** POSTs a signed JSON message to the gateway; a non-2xx answer or a timeout throws. */
export function webhookSender(opts: WebhookOptions): SmsSender {
  const doFetch = opts.fetcher ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  return {
    async send(m) {
      const timestamp = Math.floor(Date.now() / 1000);
      const body = JSON.stringify({
        id: crypto.randomUUID(),
        to: m.to,
        text: m.text,
        code: m.code,
        lang: m.lang,
        sentAt: new Date().toISOString(),
      });
      const res = await doFetch(opts.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-Signature-Timestamp": String(timestamp),
          "X-Signature": await signWebhook(opts.secret, timestamp, body),
        },
        body,
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`sms webhook answered ${res.status}`);
    },
  };
}

/** The configured sender (`SMS_SENDER`); throws ConfigError naming a missing webhook variable. */
export function smsSender(env: { DB: D1Database } & SigninVars): SmsSender {
  const cfg = signinConfig(env);
  if (cfg.smsSender === "outbox") return outboxSender(env);
  if (!cfg.smsWebhookUrl) throw new ConfigError("SMS_WEBHOOK_URL", "is required for SMS_SENDER=webhook");
  if (!cfg.smsWebhookSecret) throw new ConfigError("SMS_WEBHOOK_SECRET", "is required for SMS_SENDER=webhook");
  return webhookSender({ url: cfg.smsWebhookUrl, secret: cfg.smsWebhookSecret, timeoutMs: cfg.smsWebhookTimeoutMs });
}
