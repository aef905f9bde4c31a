// The SMS senders' door (docs/signin.md "SMS interface"): the configured sender, what a send and
// its attempts are, and the senders' variables. The sign-in sends its codes through it, the store's
// flows the passkey notices (flows/passkey-notices.ts).

export { smsSender } from "./configured";
export { GATEWAYS, smsConfig, type SmsConfig, type SmsGatewayConfig, type SmsVars } from "./config";
export type { SmsAttempt, SmsAttemptResult } from "./failover";
export { SmsFailure, type SmsFault, type SmsGatewayName, type SmsMessage, type SmsSender } from "./sender";
