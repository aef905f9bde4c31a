// How a worker reaches the guard store: the object of an app (or of the service's own pages). Apart
// from the class's module, so that the sign-in's modules import no Durable Object class.

import type { GuardStore } from "./guard-store";

export type GuardEnv = { GUARD: DurableObjectNamespace<GuardStore> };

/** The object name of the service's own pages (/account, the consoles): not an app. */
export const SERVICE_SCOPE = "~service";

/**
 * The object name of the service-wide history of network blocks and ASNs: every app's sends and
 * verifications counted again by their block and ASN, judged by the same rules.
 */
export const NET_SCOPE = "~net";

/** The guard object of an app (`""`: the service's own pages). */
export function guardStore(env: GuardEnv, clientId: string): DurableObjectStub<GuardStore> {
  return env.GUARD.get(env.GUARD.idFromName(clientId || SERVICE_SCOPE));
}

/** The object holding every app's scopes beyond normal, as their objects report them. */
export function guardIndex(env: GuardEnv): DurableObjectStub<GuardStore> {
  return env.GUARD.get(env.GUARD.idFromName("~index"));
}

/** The object holding the service-wide history of network blocks and ASNs (`~net`). */
export function guardNet(env: GuardEnv): DurableObjectStub<GuardStore> {
  return env.GUARD.get(env.GUARD.idFromName(NET_SCOPE));
}
