// The stores as tests set them up and read them, through the rooms' public functions and the
// objects' own RPC methods: a link as an earlier sign-in left it, the one-time object of a plid, and
// a token read's grant as user-me reads it.
import type { IdentityItem } from "../../workers/core/spec";
import { dirAt, dirShards, homeOfId, itemsMask, type DirectoryEnv } from "../../workers/provider/store/directory/index";
import { newPlid } from "../../workers/provider/store/directory/keys";
import {
  plidShard,
  storeAt,
  type CodeGrant,
  type OneTimeEnv,
  type TokenRead,
} from "../../workers/provider/store/one-time/index";

/**
 * Consent to `items` recorded in the person's home shard (its `recordConsent`): the link's plid
 * (kept, or new), or null when the person or the client is gone.
 */
export function recordConsent(
  env: DirectoryEnv,
  clientId: string,
  subscriberId: number,
  items: readonly IdentityItem[],
): Promise<string | null> {
  const home = homeOfId(subscriberId);
  return dirAt(env, home).recordConsent(subscriberId, clientId, itemsMask(items), newPlid(home, dirShards(env)));
}

/** The one-time object holding a plid's codes, tokens and revocation (keys.ts `plidShard`). */
export function storeForPlid(env: OneTimeEnv, plid: string, shards: number) {
  return storeAt(env, plidShard(plid, shards));
}

/** The grant of a token read, with the fingerprint of the secret of its exchange (as user-me reads it). */
export function tokenGrant([grantJson, secretId]: TokenRead): CodeGrant & { secretId: string } {
  return { ...(JSON.parse(grantJson) as CodeGrant), secretId };
}
