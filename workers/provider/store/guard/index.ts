// The SMS-abuse guard's door (docs/abuse.md): how to reach an app's object and the index across
// apps, the rules parsed from the variables, and the types of what the object answers. Outside
// this folder, only this module is imported (test/node/architecture.test.ts); the class itself is
// hosted by store/objects.ts.

export { type GuardRuleVars, guardRules } from "./config";
export { type GuardEvent, type GuardStore, type GuardView, type ScopeStatus, type Transition } from "./guard-store";
export { type GuardEnv, NET_SCOPE, SERVICE_SCOPE, guardIndex, guardNet, guardStore } from "./reach";
export type { GuardRules, ScopeKind } from "./rules";
export { kindOf } from "./guard-store";
