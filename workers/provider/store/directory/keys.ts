// Which directory shard holds what (docs/storage.md "Directory shards"): the one place that maps a
// phone number, a ci, a subscriber id, a plid or an automatic-login device id to a shard, names
// the shards' objects, and packs a link's items. Pure functions, so every worker and the shard
// object agree; a shard's stub is taken by its name in directory-shard.ts (`dirAt`).
//
// A person lives in one shard, their home, chosen when they are first written: the shard of the
// number they had then. Their id, the plids of their links and the device ids of their grants
// carry that home in bits chosen when they are made, so a request holding any of them reaches the
// one object that has the person, their links and their grants. A number and a ci are found in
// the shard their hash gives (`numbers` and `by_ci` there point to the person's id); usually that
// is the home itself.

import { B64URL_ALPHABET, randomToken } from "../../../core/crypto";
import { IDENTITY_ITEMS, type IdentityItem } from "../../../core/spec";
import { SHARD_SLOTS, storeConfig, type StoreVars } from "../config";

/** DIRECTORY_SHARDS, parsed once: fixed for a deployment, since numbers, cis and ids map to shards by it. */
export function dirShards(env: StoreVars): number {
  return storeConfig(env).directoryShards;
}

/** The name of directory shard `shard`'s object. */
export function shardName(shard: number): string {
  return `dir-${shard}`;
}

/** FNV-1a over the text, then murmur3's finalizer: sequential numbers land on unrelated shards. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The shard that answers for a phone number (its holder, in `numbers`). */
export function numberShard(phone: string, shards: number): number {
  return hash32(phone) % shards;
}

/** The shard that indexes a ci (`by_ci`: the directory person with it). */
export function ciShard(ci: string, shards: number): number {
  return hash32("ci\u0000" + ci) % shards;
}

/** A person's home: the low bits of their id (ids are `sequence × SHARD_SLOTS + home`). */
export function homeOfId(id: number): number {
  return id % SHARD_SLOTS;
}

/** A slot value in [0, SHARD_SLOTS) that names `shard` under `shards` (random among those that do). */
function slotFor(shard: number, shards: number): number {
  const choices = Math.floor(SHARD_SLOTS / shards);
  const r = crypto.getRandomValues(new Uint16Array(1))[0]! % choices;
  return r * shards + shard;
}

/**
 * A new plid (UUID v4, spec §2.1) whose first three hex digits name the person's home. 110 bits stay
 * random; what the three digits tell an app is the shard, which its own number already decides.
 */
export function newPlid(home: number, shards: number): string {
  const uuid = crypto.randomUUID();
  return slotFor(home, shards).toString(16).padStart(3, "0") + uuid.slice(3);
}

/** The shard of a plid's link. */
export function plidHome(plid: string, shards: number): number {
  const n = parseInt(plid.slice(0, 3), 16);
  return Number.isNaN(n) ? 0 : n % shards;
}

/** A new automatic-login device id (32 random bytes, base64url) whose first two characters name `home`. */
export function newDeviceId(home: number, shards: number): string {
  const v = slotFor(home, shards);
  return B64URL_ALPHABET[v >> 6]! + B64URL_ALPHABET[v & 63]! + randomToken(32).slice(2);
}

/** The shard holding a device id's grants. */
export function deviceHome(deviceId: string, shards: number): number {
  const hi = B64URL_ALPHABET.indexOf(deviceId.charAt(0));
  const lo = B64URL_ALPHABET.indexOf(deviceId.charAt(1));
  return hi < 0 || lo < 0 ? 0 : ((hi << 6) | lo) % shards;
}

/**
 * A new WebAuthn user handle for a person at `home` (docs/passkeys.md): 32 random bytes as base64url,
 * the first two characters naming the home as a device id's do, so an assertion reaches one shard.
 */
export function newPasskeyHandle(home: number, shards: number): string {
  return newDeviceId(home, shards);
}

/** The shard of a user handle's person. */
export function handleHome(handle: string, shards: number): number {
  return deviceHome(handle, shards);
}

/** Consented items as a bit mask (IDENTITY_ITEMS order): 9 bits instead of a JSON list in every link row. */
export function itemsMask(items: readonly IdentityItem[]): number {
  let m = 0;
  for (const i of items) m |= 1 << IDENTITY_ITEMS.indexOf(i);
  return m;
}

export function maskItems(mask: number): IdentityItem[] {
  return IDENTITY_ITEMS.filter((_, i) => (mask & (1 << i)) !== 0);
}

/** Items grouped by the shard `key` gives each (one call per shard). */
export function groupBy<T>(items: readonly T[], key: (t: T) => number): Map<number, T[]> {
  const m = new Map<number, T[]>();
  for (const t of items) {
    const k = key(t);
    const g = m.get(k);
    if (g) g.push(t);
    else m.set(k, [t]);
  }
  return m;
}
