// Automatic-login grants: (device hash, client) → subscriber, expiry, in the directory shard the
// device id names (keys.ts). A device id is made for one person at their opt-in and names
// their home, so a grant lives beside that person's links, and every grant on a device is in one
// shard. A grant's "first report pending" flag lives with its plid's codes in the one-time store
// (firstReportKey), where /v1/user/me takes it in the same call that spends the token's read.

import { sha256 } from "../../../core/crypto";
import { dirAt } from "./directory-shard";
import type { DirectoryEnv } from "./directory";
import { deviceHome, dirShards, homeOfId, newDeviceId } from "./keys";

/** A device as the grants know it: its shard and the SHA-256 of its id (the id itself is never stored). */
export interface Device {
  shard: number;
  hash: string;
}

export async function deviceOf(env: DirectoryEnv, deviceId: string): Promise<Device> {
  return { shard: deviceHome(deviceId, dirShards(env)), hash: await sha256(deviceId) };
}

/** A fresh device id for the person, naming their home (so their grants live beside their links). */
export async function newDevice(env: DirectoryEnv, subscriberId: number): Promise<{ id: string; device: Device }> {
  const id = newDeviceId(homeOfId(subscriberId), dirShards(env));
  return { id, device: await deviceOf(env, id) };
}

export interface AutoLoginGrant {
  device: Device;
  clientId: string;
  subscriberId: number;
  expiresAt: number;
}

/** Creates or renews the grant of (device, client); purges a few expired grants. */
export async function putAutoLoginGrant(env: DirectoryEnv, g: AutoLoginGrant): Promise<void> {
  await dirAt(env, g.device.shard).putGrant(g.device.hash, g.clientId, g.subscriberId, g.expiresAt);
}

/**
 * A fresh device id replaces the one a browser held (an automatic-login opt-in): the subscriber's
 * grants move to the new id, and whatever stays on the old id (another subscriber's grants, for
 * every client) ends: that person's automatic login must not answer from this browser again, even
 * if the new cookie never reaches it (a lost response). The old id itself is never promoted to a
 * new grant (it may have been planted). The subscriber's grants can only be on an old id of their
 * own home (ids are made for one person), so a move never crosses shards.
 */
export async function replaceDevice(
  env: DirectoryEnv,
  old: Device,
  fresh: Device,
  subscriberId: number,
): Promise<void> {
  if (old.shard === fresh.shard) await dirAt(env, old.shard).replaceDevice(old.hash, fresh.hash, subscriberId);
  else await dirAt(env, old.shard).endOthersOnDevice(old.hash, -1);
}

/**
 * Every grant on the device that is not `subscriberId`'s ends, for every client: that subscriber
 * has just proven their number on the browser holding the device id. Grants are only ever created
 * on (or moved to) a fresh device id, so none of another subscriber can land on this one later.
 */
export async function endOthersOnDevice(env: DirectoryEnv, device: Device, subscriberId: number): Promise<void> {
  await dirAt(env, device.shard).endOthersOnDevice(device.hash, subscriberId);
}

/**
 * `endOthersOnDevice`, then the subscriber's own live grant of (device, client), or null, in one
 * step: what an interactive login without the opt-in keeps and reports.
 */
export async function keepOwnGrant(
  env: DirectoryEnv,
  device: Device,
  subscriberId: number,
  clientId: string,
): Promise<AutoLoginGrant | null> {
  const expiresAt = await dirAt(env, device.shard).keepOwnGrant(device.hash, subscriberId, clientId);
  return expiresAt === null ? null : { device, clientId, subscriberId, expiresAt };
}

/** The live grant of (device, client), or null. */
export async function findAutoLoginGrant(
  env: DirectoryEnv,
  device: Device,
  clientId: string,
): Promise<AutoLoginGrant | null> {
  const r = await dirAt(env, device.shard).findGrant(device.hash, clientId);
  return r ? { device, clientId, subscriberId: r.subscriberId, expiresAt: r.expiresAt } : null;
}

/** Ends the grant of (device, client), if any (its link ended while it was being stored). */
export async function deleteAutoLoginGrant(env: DirectoryEnv, device: Device, clientId: string): Promise<void> {
  await dirAt(env, device.shard).deleteGrant(device.hash, clientId);
}

/** Ends every automatic-login grant of the person for the app (every device); returns how many. */
export async function endAutoLogin(env: DirectoryEnv, clientId: string, subscriberId: number): Promise<number> {
  return dirAt(env, homeOfId(subscriberId)).endAutoLogin(clientId, subscriberId);
}
