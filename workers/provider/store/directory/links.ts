// Links as a worker reaches them: one pairwise `plid` per (client, person) with the consented
// items (spec §2.1), in the person's home shard, which their id and the plid name (keys.ts); the
// table itself is tables/links.ts. Ending links (their codes, tokens and events too) is a flow
// over two stores: store/flows/end-plids.ts.

import { type IdentityItem } from "../../../core/spec";
import { dirAt, type DirectoryShard } from "./directory-shard";
import { toSubscriber, type DirectoryEnv, type Subscriber } from "./directory";
import { dirShards, homeOfId, itemsMask, newPlid, plidHome } from "./keys";
import type { EndableLink } from "./tables/common";

export interface Link {
  plid: string;
  items: IdentityItem[];
  consentedAt: number;
}

export async function findLink(env: DirectoryEnv, clientId: string, subscriberId: number): Promise<Link | null> {
  return dirAt(env, homeOfId(subscriberId)).findLink(subscriberId, clientId);
}

/**
 * A sign-in's consent to `items`, about to mint its code, in one call to the person's home: the
 * link written with its login recorded (the existing plid kept, or a new UUID v4 plid naming the
 * person's home for a first login or after a disconnect), and the person as it stands now (what
 * the code carries). Null when the person (removed, or the number reassigned) or the client
 * (deleted) went away during the sign-in: both are known to the person's home shard, which refuses
 * the link in the same step (a deletion records the client's end in each shard as it takes the
 * links there), so no read of the client follows.
 */
export async function consentForLogin(
  env: DirectoryEnv,
  clientId: string,
  subscriberId: number,
  items: readonly IdentityItem[],
): Promise<{ plid: string; subscriber: Subscriber } | null> {
  const home = homeOfId(subscriberId);
  const r = await dirAt(env, home).consentLogin(
    subscriberId,
    clientId,
    itemsMask(items),
    newPlid(home, dirShards(env)),
  );
  return r && { plid: r.plid, subscriber: toSubscriber(r.person) };
}

/**
 * Calls the shard of a plid's link: the one its first hex digits name, or, for a plid moved from
 * the single database (`found` false there), the home that shard keeps for it.
 */
async function atPlid<T>(
  env: DirectoryEnv,
  plid: string,
  call: (shard: DurableObjectStub<DirectoryShard>) => Promise<T>,
  found: (t: T) => boolean,
): Promise<T> {
  const named = plidHome(plid, dirShards(env));
  const first = await call(dirAt(env, named));
  if (found(first)) return first;
  const [forward] = await dirAt(env, named).plidForwards([plid]);
  return forward && forward.home !== named ? call(dirAt(env, forward.home)) : first;
}

/** Whether the client's link of this plid still exists (no end has deleted it). */
export async function linkExists(env: DirectoryEnv, clientId: string, plid: string): Promise<boolean> {
  return atPlid(env, plid, (s) => s.linkExists(clientId, plid), Boolean);
}

/** Records a login of the link (shown on the person's /account page). */
export async function touchLink(env: DirectoryEnv, clientId: string, plid: string): Promise<void> {
  await atPlid(env, plid, (s) => s.touchLink(clientId, plid), Boolean);
}

/** The client's link of this plid, or null (at the shard the plid names, or the home kept for it). */
export async function linkByPlid(env: DirectoryEnv, clientId: string, plid: string): Promise<EndableLink | null> {
  return atPlid(env, plid, (s) => s.linkByPlid(clientId, plid), Boolean);
}
