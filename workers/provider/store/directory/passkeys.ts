// A person's passkeys as the workers reach them (docs/passkeys.md): each call goes to the one shard
// that holds the person, found from their id or from the user handle an assertion carries.

import { isRandomValue } from "../../../core/spec";
import { dirAt } from "./directory-shard";
import type { DirectoryEnv } from "./directory";
import { dirShards, handleHome, homeOfId, newPasskeyHandle } from "./keys";
import type { AddResult, NewPasskey, PasskeyRow, UseResult } from "./tables/passkeys";
import type { LinkRow, SubscriberRow } from "./tables/common";

export type { AddResult, NewPasskey, PasskeyRow, UseResult } from "./tables/passkeys";
export { PASSKEY_MAX } from "./tables/passkeys";

/** The person's user handle, made at their first enrolment; null when the person is gone. */
export function passkeyHandleFor(env: DirectoryEnv, subscriberId: number): Promise<string | null> {
  const home = homeOfId(subscriberId);
  return dirAt(env, home).passkeyHandle(subscriberId, newPasskeyHandle(home, dirShards(env)));
}

/** The person's handle and passkeys for an enrolment, with their row, in one call (`DirectoryShard.passkeyEnrolment`). */
export function passkeyEnrolment(
  env: DirectoryEnv,
  subscriberId: number,
): Promise<{ person: SubscriberRow | null; handle: string | null; passkeys: PasskeyRow[] }> {
  const home = homeOfId(subscriberId);
  return dirAt(env, home).passkeyEnrolment(subscriberId, newPasskeyHandle(home, dirShards(env)));
}

export function passkeysOf(env: DirectoryEnv, subscriberId: number): Promise<PasskeyRow[]> {
  return dirAt(env, homeOfId(subscriberId)).passkeysOf(subscriberId);
}

/** Whether an assertion's user handle is one the service could have made (its shard is then known). */
export function isPasskeyHandle(handle: unknown): handle is string {
  return typeof handle === "string" && isRandomValue(handle);
}

/** The passkey of `credentialId` while `handle` is its person's, with when their number was last confirmed. */
export function findPasskey(
  env: DirectoryEnv,
  credentialId: string,
  handle: string,
): Promise<{ passkey: PasskeyRow; confirmedAt: number } | null> {
  return dirAt(env, handleHome(handle, dirShards(env))).findPasskey(credentialId, handle);
}

export function addPasskey(env: DirectoryEnv, p: NewPasskey, lang: "ko" | "en"): Promise<AddResult> {
  const home = homeOfId(p.subscriberId);
  return dirAt(env, home).addPasskey(p, home, lang);
}

/** A verified assertion signs in (`UseResult`), with the person and their link to `clientId`, in one call. */
export async function usePasskey(
  env: DirectoryEnv,
  subscriberId: number,
  credentialId: string,
  challenge: string,
  challengeUntil: number,
  counter: number,
  clientId?: string,
): Promise<UseResult & { person?: SubscriberRow | null; link?: LinkRow | null }> {
  return dirAt(env, homeOfId(subscriberId)).usePasskey(credentialId, challenge, challengeUntil, counter, clientId);
}

export function removePasskey(env: DirectoryEnv, subscriberId: number, credentialId: string): Promise<boolean> {
  return dirAt(env, homeOfId(subscriberId)).removePasskey(subscriberId, credentialId);
}

export function endPasskeys(env: DirectoryEnv, subscriberId: number): Promise<number> {
  return dirAt(env, homeOfId(subscriberId)).endPasskeys(subscriberId);
}

export function passkeyConfirmed(env: DirectoryEnv, subscriberId: number, at: number): Promise<void> {
  return dirAt(env, homeOfId(subscriberId)).passkeyConfirmed(subscriberId, at);
}
