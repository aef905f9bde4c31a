// Moving a deployment of the single-database layout to the directory shards and the R2 audit trail
// (docs/operations.md "Moving a single-database deployment to shards"): the people, their links
// (plids kept) and the audit events of D1, a batch at a time, by D1 id. Every batch is idempotent
// (a person whose number already answers in its shard is not written twice, a link already there
// is kept, an audit object is keyed by its first event), so the operator's command resumes from
// the last batch it saw answered, or starts over, and ends with the same result. What a shard
// writes is its own module (workers/provider/store/directory/tables/adoption.ts, through the
// shard's adopt* methods); the operator's command is `migrate` in scripts/admin.mjs.
//
// Not moved: automatic-login grants (a grant is found by its device id, which D1 never held, only
// its hash: the person ticks automatic login again; grants lived at most 14 days), import staging
// (transient) and the id high-water mark (ids in the shards are new).

import { E } from "../../core/errors";
import { auditBy, callerOf } from "../access";
import { json } from "../../core/http";
import type { RequestContext } from "../../core/router";
import { isIdentityItem } from "../../core/spec";
import { archive } from "../../provider/store/audit-archive";
import {
  dirAt,
  ciShard,
  dirShards,
  groupBy,
  homeOfId,
  itemsMask,
  numberShard,
  plidHome,
} from "../../provider/store/directory/index";
import { legacyAuditEvents, legacyGrantCount, legacyLinksOf, legacyPeople } from "../../provider/store/single-database";
import type { AdminEnv } from "../config";

const DEFAULT_BATCH = 500;
const MAX_BATCH = 2000;

function cursorOf(url: URL): { after: number; limit: number } {
  const after = url.searchParams.get("after") ?? "0";
  const limit = url.searchParams.get("limit") ?? String(DEFAULT_BATCH);
  if (!/^\d{1,15}$/.test(after)) throw E.invalidBecause("after", "must be the next_after of the previous batch");
  if (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_BATCH)
    throw E.invalidBecause("limit", `must be a whole number from 1 to ${MAX_BATCH}`);
  return { after: Number(after), limit: Number(limit) };
}

/**
 * `POST /admin/migrate/directory?after=ID&limit=N`: the next N people of D1 `subscribers` after
 * D1 id `after`, with their links. `next_after` continues; null when every person has moved.
 */
export async function migrateDirectory(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const { after, limit } = cursorOf(rc.url);
  const n = dirShards(env);
  const rows = await legacyPeople(env, after, limit);
  // the people, in their numbers' shards
  const adopted = (
    await Promise.all(
      [...groupBy(rows, (r) => numberShard(r.phone, n))].map(([s, list]) =>
        dirAt(env, s).adoptPeople(
          s,
          list.map((r) => ({
            legacyId: r.id,
            telco: r.telco,
            phone: r.phone,
            name: r.name,
            gender: r.gender,
            birth: r.birth,
            foreign: r.foreign_cd,
            ci: r.ci,
            testOtpHash: r.test_otp_hash,
            testClients: r.test_clients,
            testExpiresAt: r.test_expires_at,
            createdAt: r.created_at,
          })),
        ),
      ),
    )
  ).flat();
  const idOf = new Map(adopted.map((a) => [a.legacyId, a.id]));
  // their cis (not registered test numbers) in the index
  await Promise.all(
    [
      ...groupBy(
        adopted.filter((a) => a.indexed),
        (a) => ciShard(a.ci, n),
      ),
    ].map(([s, list]) => Promise.all(list.map((a) => dirAt(env, s).indexCi(a.ci, a.id)))),
  );
  // their links, plids kept: at the person's home, and where the plid names another shard, that
  // shard keeps the home
  const links = rows.length
    ? (
        await legacyLinksOf(
          env,
          rows.map((r) => r.id),
        )
      ).filter((l) => idOf.has(l.subscriber_id))
    : [];
  const moved = links.map((l) => {
    const id = idOf.get(l.subscriber_id)!;
    const items = (JSON.parse(l.items) as string[]).filter(isIdentityItem);
    return {
      subscriberId: id,
      clientId: l.client_id,
      plid: l.plid,
      items: itemsMask(items),
      consentedAt: l.consented_at,
      linkedAt: l.linked_at ?? l.consented_at,
      lastLoginAt: l.last_login_at,
    };
  });
  await Promise.all(
    [...groupBy(moved, (l) => homeOfId(l.subscriberId))].map(([home, list]) => dirAt(env, home).adoptLinks(list)),
  );
  const forwards = moved
    .map((l) => ({ plid: l.plid, home: homeOfId(l.subscriberId) }))
    .filter((f) => plidHome(f.plid, n) !== f.home);
  await Promise.all(
    [...groupBy(forwards, (f) => plidHome(f.plid, n))].map(([s, list]) => dirAt(env, s).adoptPlidHomes(list)),
  );
  const grants = rows.length
    ? await legacyGrantCount(
        env,
        rows.map((r) => r.id),
      )
    : 0;
  rc.log.event = "migrate.directory";
  await auditBy(env, callerOf(rc), "migration.batch", null, "ok", { store: "directory", people: rows.length });
  return json({
    people: rows.length,
    // a number already held in its shard by someone else (imported since) keeps them
    kept_newer: rows.length - adopted.length,
    links: moved.length,
    grants_not_moved: grants,
    next_after: rows.length === limit ? rows[rows.length - 1]!.id : null,
  });
}

/**
 * `POST /admin/migrate/audit?after=ID&limit=N`: the next N events of D1 `audit_events` into the R2
 * archive, as objects of object name `d1` keyed by the hour and the batch's first event id.
 */
export async function migrateAudit(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const { after, limit } = cursorOf(rc.url);
  const rows = await legacyAuditEvents(env, after, limit);
  // one batch at a time, by D1 id: ids in the archive are `d1-<D1 id>` while D1's have no gaps
  for (const run of contiguous(rows)) await archive(env.AUDIT, "d1", run[0]!.id, run);
  rc.log.event = "migrate.audit";
  await auditBy(env, callerOf(rc), "migration.batch", null, "ok", { store: "audit", events: rows.length });
  return json({ events: rows.length, next_after: rows.length === limit ? rows[rows.length - 1]!.id : null });
}

/** Rows split where their ids leave a gap, so each event's archive id is its D1 id. */
function contiguous<T extends { id: number }>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (const r of rows) {
    const last = out[out.length - 1];
    if (last && last[last.length - 1]!.id + 1 === r.id) last.push(r);
    else out.push([r]);
  }
  return out;
}
