// The one-time store's door (docs/storage.md "Durable Object OneTimeStore"): what the rest of the
// service may use of the room: how to reach an object and name its keys, the audit trail's
// append, the sign-in record's types, and the code, token and ended-plid types the routes and the
// flows read. Outside this folder, only this module is imported (test/node/architecture.test.ts);
// the class itself is hosted by store/objects.ts.

export { type AuditRecord, type AuditType, audit, auditAll, auditOnce, auditRecord } from "./audit";
export {
  accountSessionKey,
  consoleSessionKey,
  developerSessionKey,
  firstReportKey,
  inShard,
  ipCounter,
  onceKey,
  phoneKey,
  plidShard,
  plidShardsAnyCount,
  shardOf,
  testFailuresKey,
  textKey,
  transactionKey,
} from "./keys";
export { type OneTimeEnv, type OneTimeRoom, storeAt, storeFor } from "./one-time-store";
export type { OneTimeStore } from "./one-time-store";
export { SWEEP_MS } from "./schedule";
export {
  type Lang,
  type NumberLimits,
  type Prompt,
  type Refusal,
  type SigninRecord,
  type Step,
  type StepGate,
  type VerifyResult,
  sameHash,
} from "./signin-store";
export { type CodeGrant, type SubscriberSnapshot, type TokenRead, asciiJson, redeemResultOf } from "./tables/codes";
export {
  type EndReason,
  type StreamReason,
  stampedEvent,
  type EndedPlids,
  type PendingEvent,
  changeEvent,
  newEvent,
  nextAttemptAt,
} from "./tables/ended-plids";
export { identityClaims } from "./tables/grant";
