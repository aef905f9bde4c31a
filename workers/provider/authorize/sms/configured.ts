// Delivery of one-time codes: one `SmsSender` interface. `outbox` (DEV_MODE only) keeps messages in
// D1 for the dev page `/dev/outbox`; the gateways (Naver Cloud SENS, NHN Cloud, and `webhook`, a
// signed JSON POST to a bridge of the deployment's own) are tried in the order `SMS_SENDER` lists
// them (sms-failover.ts). docs/signin.md documents the wire formats.

import { hmacSha256Hex } from "../../core/crypto";
import { ConfigError } from "../../core/config";
import { signinConfig, type SigninConfig, type SigninVars } from "./config";
import { failoverSender, type Gateway, type SmsAttempt, type SmsGatewayName } from "./sms-failover";
import { nhnSender, sensSender, SmsFailure } from "./sms-gateways";
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

export interface SendOptions {
  /** Aborts the request (the failover's per-attempt timeout). */
  signal?: AbortSignal;
}

export interface SmsSender {
  /** Delivers the message or throws (the page then says the code could not be sent). */
  send(message: SmsMessage, opts?: SendOptions): Promise<void>;
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

/**
 * POSTs a signed JSON message to the gateway; a non-2xx answer or a timeout throws (429 and 5xx as
 * the gateway's trouble, any other refusal as the gateway refusing: the next gateway is tried).
 */
export function webhookSender(opts: WebhookOptions): SmsSender {
  const doFetch = opts.fetcher ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  return {
    async send(m, sendOpts) {
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
        signal: sendOpts?.signal ?? AbortSignal.timeout(opts.timeoutMs),
      });
      await res.body?.cancel();
      if (res.ok) return;
      const fault = res.status === 429 ? "throttled" : res.status >= 500 ? "server_error" : "provider_refused";
      throw new SmsFailure(fault, res.status);
    },
  };
}

/** The variable a gateway needs, or a ConfigError naming it (as the page's 500 logs it). */
function needed<T>(value: T | undefined, variable: string, gateway: SmsGatewayName): T {
  if (value === undefined) throw new ConfigError(variable, `is required for SMS_SENDER ${gateway}`);
  return value;
}

function gateway(name: SmsGatewayName, cfg: SigninConfig): Gateway {
  const { sms } = cfg;
  switch (name) {
    case "webhook": {
      const url = needed(cfg.smsWebhookUrl, "SMS_WEBHOOK_URL", name);
      const secret = needed(cfg.smsWebhookSecret, "SMS_WEBHOOK_SECRET", name);
      const timeoutMs = cfg.smsWebhookTimeoutMs;
      return { name, circuit: `webhook ${url}`, timeoutMs, sender: webhookSender({ url, secret, timeoutMs }) };
    }
    case "naver-sens": {
      const serviceId = needed(sms.sens.serviceId, "SENS_SERVICE_ID", name);
      const sender = sensSender({
        baseUrl: sms.sens.baseUrl,
        serviceId,
        accessKey: needed(sms.sens.accessKey, "SENS_ACCESS_KEY", name),
        secretKey: needed(sms.sens.secretKey, "SENS_SECRET_KEY", name),
        from: needed(sms.from, "SMS_FROM", name),
      });
      return { name, circuit: `naver-sens ${serviceId}`, timeoutMs: sms.timeoutMs, sender };
    }
    case "nhn-cloud": {
      const appKey = needed(sms.nhn.appKey, "NHN_SMS_APP_KEY", name);
      const sender = nhnSender({
        baseUrl: sms.nhn.baseUrl,
        appKey,
        secretKey: needed(sms.nhn.secretKey, "NHN_SMS_SECRET_KEY", name),
        sendNo: needed(sms.from, "SMS_FROM", name),
      });
      return { name, circuit: `nhn-cloud ${appKey}`, timeoutMs: sms.timeoutMs, sender };
    }
  }
}

/**
 * The configured sender (`SMS_SENDER`): the outbox, or the gateways in order behind the failover,
 * each attempt reported to `onAttempt`. Throws ConfigError naming a missing variable.
 */
export function smsSender(env: { DB: D1Database } & SigninVars, onAttempt?: (a: SmsAttempt) => void): SmsSender {
  const cfg = signinConfig(env);
  if (cfg.smsSenders[0] === "outbox") return outboxSender(env);
  const gateways = (cfg.smsSenders as readonly SmsGatewayName[]).map((name) => gateway(name, cfg));
  return failoverSender(gateways, { onAttempt });
}
