// The carrier directory, spread over DIRECTORY_SHARDS directory-shard objects (the dev seed and the
// admin import fill it; docs/storage.md "Directory shards"): one row per person, found by number in
// one shard (two for a person who moved to a number hashing elsewhere), by id in their home.

import type { Telco } from "../../../core/spec";
import type { StoreVars } from "../config";
import { dirAt, type DirectoryShard } from "./directory-shard";
import { dirShards, homeOfId, numberShard } from "./keys";
import type { LinkRow, SubscriberRow } from "./tables/common";
import { riskFrom, type SimColumns } from "./risk";

export interface Subscriber {
  id: number;
  telco: Telco;
  phone: string;
  name: string;
  gender: "M" | "F";
  birth: string; // YYYY-MM-DD
  foreign: "L" | "F";
  ci: string;
}

export type DirectoryEnv = { DIRECTORY: DurableObjectNamespace<DirectoryShard> } & StoreVars;

export function toSubscriber(r: SubscriberRow): Subscriber {
  return {
    id: r.id,
    telco: r.telco,
    phone: r.phone,
    name: r.name,
    gender: r.gender,
    birth: r.birth,
    foreign: r.foreign_cd,
    ci: r.ci,
  };
}

export async function subscriberById(env: DirectoryEnv, id: number): Promise<Subscriber | null> {
  const r = await dirAt(env, homeOfId(id)).subscriber(id);
  return r ? toSubscriber(r) : null;
}

/**
 * A test number registered for app review: it signs in only for these clients, until `expiresAt`
 * (docs/operations.md "Test numbers"). The dev seed's test numbers have none.
 */
export interface ReviewRestriction {
  clients: string[];
  expiresAt: number;
}

/**
 * `link`: the person's link to the client a sign-in is for, when it was read with the number (one
 * call, where the number's shard is the person's home); absent when it was not read.
 */
export type DirectoryEntry = Subscriber & {
  testOtpHash: string | null;
  review: ReviewRestriction | null;
  link?: LinkRow | null;
  /** The carrier's risk signals as stored, and when the latest risky change was (risk.ts; null: none). */
  sim: SimColumns;
  riskFrom: number | null;
};

/**
 * The person holding `phone`'s row, or null: the number's shard, and the person's home when that is
 * another. A number answers only while its entry and its person's row agree on it (an entry an
 * unfinished move left behind answers nothing).
 */
export async function subscriberRowAtNumber(env: DirectoryEnv, phone: string): Promise<SubscriberRow | null> {
  return (await atNumber(env, phone))?.person ?? null;
}

/** `subscriberRowAtNumber`, with the link to `clientId` when the number's shard is the person's home. */
async function atNumber(
  env: DirectoryEnv,
  phone: string,
  clientId?: string,
): Promise<{ person: SubscriberRow; link?: LinkRow | null } | null> {
  const shard = numberShard(phone, dirShards(env));
  const h = await dirAt(env, shard).holder(shard, phone, clientId);
  if (h.at === "none" || h.at === "stale") return null;
  if (h.at === "here") return h;
  const p = await dirAt(env, homeOfId(h.id)).subscriber(h.id);
  return p && p.phone === phone ? { person: p } : null;
}

/** The person at `phone`; given `clientId`, with their link to it where one call can read it (`DirectoryEntry`). */
export async function subscriberByPhone(
  env: DirectoryEnv,
  phone: string,
  clientId?: string,
): Promise<DirectoryEntry | null> {
  const at = await atNumber(env, phone, clientId);
  return at && { ...entryOf(at.person), link: at.link };
}

/** A person's row as the directory's answer: the subscriber, a test number's code and review restriction. */
function entryOf(r: SubscriberRow): DirectoryEntry {
  const review =
    r.test_clients !== null
      ? { clients: JSON.parse(r.test_clients) as string[], expiresAt: r.test_expires_at ?? 0 }
      : null;
  return {
    ...toSubscriber(r),
    testOtpHash: r.test_otp_hash,
    review,
    sim: { sim_changed_at: r.sim_changed_at, sim_change_kind: r.sim_change_kind, ported_at: r.ported_at },
    riskFrom: riskFrom(r),
  };
}

/** The person `id` with when their number's latest risky change was (risk.ts), from their home shard; null when gone. */
export async function subscriberWithRisk(
  env: DirectoryEnv,
  id: number,
): Promise<{ subscriber: Subscriber; riskFrom: number | null } | null> {
  const r = await dirAt(env, homeOfId(id)).subscriber(id);
  return r && { subscriber: toSubscriber(r), riskFrom: riskFrom(r) };
}

/** The person `id` with a test number's code and review restriction, read from their home shard; null when gone. */
export async function reviewEntryById(env: DirectoryEnv, id: number): Promise<DirectoryEntry | null> {
  const r = await dirAt(env, homeOfId(id)).subscriber(id);
  return r && entryOf(r);
}

/**
 * Every shard's counters, summed (one call per shard, each reading its counter rows): people, test
 * numbers, and the steps of changes across shards not yet finished.
 */
export async function countSubscribers(
  env: DirectoryEnv,
): Promise<{ total: number; testNumbers: number; reviewNumbers: number; shards: number; pendingChanges: number }> {
  const all = await Promise.all(Array.from({ length: dirShards(env) }, (_, s) => dirAt(env, s).counts()));
  return {
    total: all.reduce((n, c) => n + c.people, 0),
    testNumbers: all.reduce((n, c) => n + c.testNumbers, 0),
    reviewNumbers: all.reduce((n, c) => n + c.reviewNumbers, 0),
    shards: all.length,
    pendingChanges: all.reduce((n, c) => n + c.jobs, 0),
  };
}
