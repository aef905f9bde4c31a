// Registering a test number for app review (docs/operations.md "Test numbers"): a directory write
// with its jobs. The number's holder is read, the caller checks it (a directory person keeps their
// number; a suspended registration needs a new code), and the write lands only while that holder
// still holds the number: a directory import or a removal landing in between makes it be decided
// again. Another persona at the number (another ci) is another person: they get a new id, so they
// never inherit a plid, and the previous one's logins end with their row, removed by a job queued
// in the same step that gives the new one the number.

import {
  subscriberRowAtNumber,
  dirAt,
  dirShards,
  numberShard,
  type SubscriberInput,
  type SubscriberRow,
} from "../directory/index";
import { runJobs, type JobEnv } from "./directory-jobs";

/** Rounds of deciding again when the number changed hands between the read and the write. */
const MAX_ROUNDS = 5;

/**
 * Writes the test number `row` with its code, clients and expiry (`test`); `check` may refuse the
 * number's present holder by throwing. The person as written, and whether a holder was replaced.
 */
export async function putTestNumber(
  env: JobEnv,
  row: SubscriberInput,
  test: { otpHash: string; clients: string; expiresAt: number },
  check: (holder: SubscriberRow) => Promise<void>,
): Promise<{ saved: SubscriberRow; replaced: boolean }> {
  const shard = numberShard(row.phone, dirShards(env));
  let replaced = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const h = await dirAt(env, shard).holder(shard, row.phone);
    const holder = h.at === "here" ? h.person : h.at === "away" ? await subscriberRowAtNumber(env, row.phone) : null;
    if (holder) await check(holder);
    const expect = h.at === "none" ? null : h.at === "here" ? h.person.id : h.id;
    const update = holder !== null && holder.ci === row.ci;
    if (holder) replaced = true;
    const put = await dirAt(env, shard).putTestNumber(shard, expect, update, { ...row }, test);
    if (put === null) continue;
    await runJobs(env, [{ shard, jobs: put.jobs }]);
    const saved = await dirAt(env, shard).subscriber(put.id);
    if (saved) return { saved, replaced };
  }
  throw new Error("test number: the number kept changing hands");
}
