// What an SMS sender is (docs/signin.md "SMS interface"): the message, the one method every
// sender has, the gateways `SMS_SENDER` can list, and how a send fails. The senders (outbox.ts,
// gateways.ts), the failover across gateways (failover.ts) and the configured choice
// (configured.ts) stand on this file; it imports nothing of theirs.

import type { Lang } from "../one-time/index";

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

/** The gateways `SMS_SENDER` can list (the dev `outbox` stands alone). */
export type SmsGatewayName = "naver-sens" | "nhn-cloud" | "webhook";

/** Why a send did not reach the provider's queue. Only `request_refused` is the request's fault. */
export type SmsFault =
  "timeout" | "server_error" | "throttled" | "provider_refused" | "request_refused" | "network_error";

/** A send that did not deliver; `status` and `code` are the provider's (no personal data). */
export class SmsFailure extends Error {
  constructor(
    readonly fault: SmsFault,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(`sms ${fault}${status === undefined ? "" : ` ${status}`}${code === undefined ? "" : ` ${code}`}`);
    this.name = "SmsFailure";
  }
}
