// The configured SMS sender (`SMS_SENDER`, docs/signin.md "SMS interface"), as the sign-in and
// the store's flows (the passkey notices) send: the dev outbox alone,
// or the gateways in the order listed, behind the failover (failover.ts).

import { ConfigError } from "../../../core/config";
import { checkConfig } from "../config";
import { smsConfig, type SmsConfig, type SmsVars } from "./config";
import { failoverSender, type Gateway, type SmsAttempt } from "./failover";
import { nhnSender, sensSender, webhookSender } from "./gateways";
import { outboxSender } from "./outbox";
import type { SmsGatewayName, SmsSender } from "./sender";

/** The variable a gateway needs, or a ConfigError naming it (as the page's 500 logs it). */
function needed<T>(value: T | undefined, variable: string, gateway: SmsGatewayName): T {
  if (value === undefined) throw new ConfigError(variable, `is required for SMS_SENDER ${gateway}`);
  return value;
}

function gateway(name: SmsGatewayName, cfg: SmsConfig): Gateway {
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
export function smsSender(env: { DB: D1Database } & SmsVars, onAttempt?: (a: SmsAttempt) => void): SmsSender {
  const cfg = smsConfig(env);
  if (cfg.smsSenders[0] === "outbox") {
    // the dev outbox's sends are attempts too, so codes sent are counted the same in dev and tests
    const outbox = outboxSender(env);
    return {
      async send(m, o) {
        const started = Date.now();
        await outbox.send(m, o);
        onAttempt?.({ gateway: "outbox", result: "delivered", ms: Date.now() - started });
      },
    };
  }
  const gateways = (cfg.smsSenders as readonly SmsGatewayName[]).map((name) => gateway(name, cfg));
  return failoverSender(gateways, { onAttempt });
}

// each gateway SMS_SENDER names has what it needs (the dev outbox needs nothing)
checkConfig((env: SmsVars) => {
  const cfg = smsConfig(env);
  if (cfg.smsSenders[0] !== "outbox")
    for (const name of cfg.smsSenders as readonly SmsGatewayName[]) gateway(name, cfg);
});
