// The directory's door (docs/storage.md "Durable Object DirectoryShard"): people, numbers, links,
// automatic-login grants, passkeys and SIM-change signals, each through a function that finds the
// shard, and the row types the flows above the rooms take. Outside this folder, only this module
// is imported (test/node/architecture.test.ts); the class itself is hosted by store/objects.ts.

export {
  type DirectoryEntry,
  type DirectoryEnv,
  type ReviewRestriction,
  type Subscriber,
  countSubscribers,
  subscriberRowAtNumber,
  subscriberWithRisk,
  reviewEntryById,
  subscriberById,
  subscriberByPhone,
  toSubscriber,
} from "./directory";
export { dirAt } from "./directory-shard";
export type { DirectoryShard } from "./directory-shard";
export {
  deleteAutoLoginGrant,
  deviceOf,
  endAutoLogin,
  endOthersOnDevice,
  findAutoLoginGrant,
  keepOwnGrant,
  newDevice,
  putAutoLoginGrant,
  replaceDevice,
} from "./grants";
export { ciShard, dirShards, groupBy, homeOfId, itemsMask, maskItems, numberShard, plidHome } from "./keys";
export { type Link, consentForLogin, findLink, linkByPlid, linkExists, touchLink } from "./links";
export {
  PASSKEY_MAX,
  type PasskeyRow,
  addPasskey,
  endPasskeys,
  findPasskey,
  isPasskeyHandle,
  passkeyConfirmed,
  passkeyEnrolment,
  passkeysOf,
  removePasskey,
  usePasskey,
} from "./passkeys";
export {
  SIGNAL_FIELDS,
  type SignalField,
  type SimColumns,
  type SimSignal,
  applySignal,
  hasSignal,
  readSignals,
  riskFrom,
  riskUntil,
} from "./risk";
export {
  APP_TEST_RANGE,
  COLUMNS,
  type Column,
  type SubscriberInput,
  isAppTestNumber,
  kstToday,
  validateRow,
} from "./rows";
export type { EndableLink, LinkRow, SubscriberFields, SubscriberRow } from "./tables/common";
export type { DirectoryJob, Jobs, QueuedJob } from "./tables/jobs";
export type { Claim, NumberHolder } from "./tables/people";
