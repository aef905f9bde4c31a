// The SMS gateways (docs/signin.md "SMS gateways"): Naver Cloud SENS (SMS API v2) and NHN Cloud
// Notification SMS (API v3.0), each exact to its provider's API reference, and `webhook`, a signed
// JSON POST to a bridge of the deployment's own. Each answer is read as the failover needs it:
// accepted (delivered), the provider's fault (the next gateway is tried) or the request's own fault
// (no gateway would deliver it: stop).

import { hmacSha256Base64, hmacSha256Hex } from "../../../core/crypto";
import { SmsFailure, type SendOptions, type SmsFault, type SmsSender } from "./sender";

type Fetcher = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
const platformFetch: Fetcher = (input, init) => fetch(input, init);

/** 429 and 5xx are the provider's trouble at the moment: throttled or down. */
function transient(status: number): SmsFault | undefined {
  if (status === 429) return "throttled";
  if (status >= 500) return "server_error";
  return undefined;
}

/** The answer's JSON, or undefined (an HTML error page, an empty body). */
async function jsonOf(res: Response): Promise<unknown> {
  try {
    return JSON.parse(await res.text());
  } catch {
    return undefined;
  }
}

function field(v: unknown, ...path: (string | number)[]): unknown {
  for (const k of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

export interface SensOptions {
  /** `https://sens.apigw.ntruss.com` (SENS_BASE_URL), no trailing slash. */
  baseUrl: string;
  serviceId: string;
  accessKey: string;
  secretKey: string;
  /** The sender number registered with SENS in advance (SMS_FROM). */
  from: string;
  fetcher?: Fetcher;
}

/**
 * `x-ncp-apigw-signature-v2`: Base64 of HMAC-SHA256 under the secret key over
 * `"<METHOD> <path>\n<timestamp>\n<access key>"` (Naver Cloud API Gateway, signature v2).
 */
export function sensSignature(
  secretKey: string,
  method: string,
  path: string,
  timestamp: string,
  accessKey: string,
): Promise<string> {
  return hmacSha256Base64(secretKey, `${method} ${path}\n${timestamp}\n${accessKey}`);
}

/**
 * Naver Cloud SENS, SMS API v2: `POST /sms/v2/services/{serviceId}/messages`. 202 is accepted;
 * 400 (a malformed request: the number, the content) is the request's fault; 429 and 5xx the
 * provider's trouble; 401, 403, 404 (signature, clock, key, service) the provider refusing us.
 */
export function sensSender(o: SensOptions): SmsSender {
  const doFetch = o.fetcher ?? platformFetch;
  return {
    async send(m, opts?: SendOptions) {
      const path = `/sms/v2/services/${o.serviceId}/messages`;
      const timestamp = String(Date.now());
      const body = JSON.stringify({
        type: "SMS",
        contentType: "COMM",
        countryCode: "82",
        from: o.from,
        content: m.text,
        messages: [{ to: m.to }],
      });
      const res = await doFetch(o.baseUrl + path, {
        method: "POST",
        headers: {
          "Content-Type": "application/json; charset=utf-8",
          "x-ncp-apigw-timestamp": timestamp,
          "x-ncp-iam-access-key": o.accessKey,
          "x-ncp-apigw-signature-v2": await sensSignature(o.secretKey, "POST", path, timestamp, o.accessKey),
        },
        body,
        signal: opts?.signal,
      });
      const answer = await jsonOf(res);
      // 202 Accepted: the message is SENS's to deliver (its outcome per number comes later, by lookup).
      if (res.status === 202) return;
      const code = field(answer, "error", "errorCode");
      const detail = typeof code === "string" || typeof code === "number" ? String(code) : undefined;
      const t = transient(res.status);
      if (t) throw new SmsFailure(t, res.status, detail);
      throw new SmsFailure(res.status === 400 ? "request_refused" : "provider_refused", res.status, detail);
    },
  };
}

export interface NhnOptions {
  /** `https://api-sms.cloud.toast.com` (NHN_SMS_BASE_URL), no trailing slash. */
  baseUrl: string;
  appKey: string;
  secretKey: string;
  /** The sender number registered with NHN Cloud in advance (SMS_FROM). */
  sendNo: string;
  fetcher?: Fetcher;
}

/**
 * NHN Cloud result codes that are the request's fault (its "Result Code" table): the recipient
 * number missing (-2018) or invalid (-2019). Every other refusal (app key, secret, sender number,
 * system errors) is this provider's.
 */
const NHN_REQUEST_FAULTS: ReadonlySet<number> = new Set([-2018, -2019]);

/**
 * NHN Cloud Notification SMS, API v3.0: `POST /sms/v3.0/appKeys/{appKey}/sender/sms` with
 * `X-Secret-Key`. Delivered only when the answer's `header.isSuccessful` is true (and the
 * recipient's own result code is 0); an HTTP 200 with `isSuccessful: false` is a refusal.
 */
export function nhnSender(o: NhnOptions): SmsSender {
  const doFetch = o.fetcher ?? platformFetch;
  return {
    async send(m, opts?: SendOptions) {
      const res = await doFetch(`${o.baseUrl}/sms/v3.0/appKeys/${encodeURIComponent(o.appKey)}/sender/sms`, {
        method: "POST",
        headers: { "Content-Type": "application/json;charset=UTF-8", "X-Secret-Key": o.secretKey },
        body: JSON.stringify({ body: m.text, sendNo: o.sendNo, recipientList: [{ recipientNo: m.to }] }),
        signal: opts?.signal,
      });
      const answer = await jsonOf(res);
      const t = transient(res.status);
      if (t) throw new SmsFailure(t, res.status);
      let code: unknown;
      if (field(answer, "header", "isSuccessful") === true) {
        code = field(answer, "body", "data", "sendResultList", 0, "resultCode");
        if (code === undefined || code === 0) return;
      } else {
        code = field(answer, "header", "resultCode");
      }
      const fault = typeof code === "number" && NHN_REQUEST_FAULTS.has(code) ? "request_refused" : "provider_refused";
      throw new SmsFailure(fault, res.status, typeof code === "number" ? String(code) : undefined);
    },
  };
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
