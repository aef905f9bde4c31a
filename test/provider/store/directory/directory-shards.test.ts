// The directory over its shards (docs/storage.md "Directory shards", "Changes across shards"):
// which shard a key maps to, and the changes that span shards finishing, or staying undone, when a
// step dies half way (a fault injected before each step; the shard's alarm runs what was left).
import { env } from "../../../support/env";
import { afterEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import {
  ciShard,
  deviceHome,
  dirShards,
  homeOfId,
  newDeviceId,
  newPlid,
  numberShard,
  plidHome,
} from "../../../../workers/provider/store/directory/keys";
import { countSubscribers, subscriberByPhone } from "../../../../workers/provider/store/directory/directory";
import { dirAt, type DirectoryShard } from "../../../../workers/provider/store/directory/directory-shard";
import { jobHooks } from "../../../../workers/provider/store/flows/directory-jobs";
import { DirectoryBusy, writeSubscriber } from "../../../../workers/provider/store/flows/directory-write";
import type { DirectoryJob } from "../../../../workers/provider/store/directory/tables/jobs";
import { ADMIN_TOKEN, admin } from "../../../support/admin";
import { ciOf, importRows } from "../../../support/directory";
import { exchange, mintFor } from "../../../support/helpers";
import { beforeShardCall, shardRows } from "../../../support/shards";
import adminWorker from "../../../../workers/admin/index";

/** Numbers as a carrier's directory has them: long sequential blocks under a few crowded prefixes. */
function directoryNumbers(count: number): string[] {
  const out: string[] = [];
  const prefixes = ["0101234", "0105555", "0109876", "0102000", "0103100", "0104777"];
  let block = 0;
  while (out.length < count) {
    const prefix = prefixes[block % prefixes.length]!;
    const start = (block * 1237) % 9000;
    for (let i = 0; i < 1000 && out.length < count; i++) out.push(prefix + String(start + i).padStart(4, "0"));
    block++;
  }
  return out;
}

function spread(keys: readonly string[], shardOf: (k: string, n: number) => number, n: number): number {
  const counts = new Array<number>(n).fill(0);
  for (const k of keys) counts[shardOf(k, n)]!++;
  return Math.max(...counts) / (keys.length / n);
}

describe("keys to shards (directory/keys.ts)", () => {
  it("the tests run over 4 shards, so every test crosses shards; a deployment that sets nothing gets 64", () => {
    expect(dirShards(env)).toBe(4);
    expect(dirShards({} as never)).toBe(64);
  });

  it("numbers in sequential blocks and crowded prefixes spread evenly: the largest shard within 1.2× the mean at 4, 64 and 256 shards (a uniform hash's own scatter is about 1.1× at 256)", () => {
    const numbers = directoryNumbers(200_000);
    for (const n of [4, 64, 256]) expect(spread(numbers, numberShard, n)).toBeLessThan(1.2);
  });

  it("cis spread evenly too, and independently of numbers", () => {
    const cis = Array.from({ length: 50_000 }, (_, i) => ciOf(i % 256) + String(i));
    expect(spread(cis, ciShard, 64)).toBeLessThan(1.15);
  });

  it("a plid is a UUID v4 naming its person's home; a device id is 32 bytes of base64url naming it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 512 }), fc.nat(), (n, h) => {
        const home = h % n;
        const plid = newPlid(home, n);
        expect(plid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(plidHome(plid, n)).toBe(home);
        const device = newDeviceId(home, n);
        expect(device).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(deviceHome(device, n)).toBe(home);
      }),
      { numRuns: 500 },
    );
  });

  it("a person's id names their home, the shard of the number they were first written at", async () => {
    await importRows([row("01040400001", 201)]);
    const p = (await subscriberByPhone(env, "01040400001"))!;
    expect(homeOfId(p.id)).toBe(numberShard("01040400001", dirShards(env)));
  });
});

const row = (phone: string, ci: number, name = "분산") => ({
  telcoCd: "S",
  phoneNo: phone,
  name,
  gender: "M",
  birth: "1988-08-08",
  foreign: "L",
  ci: ciOf(ci),
});

/** Two numbers whose shards differ (so a move between them spans shards). */
function numbersOnTwoShards(base: string): [string, string] {
  const n = dirShards(env);
  const first = `${base}00`;
  for (let i = 1; i < 100; i++) {
    const other = `${base}${String(i).padStart(2, "0")}`;
    if (numberShard(other, n) !== numberShard(first, n)) return [first, other];
  }
  throw new Error("no two shards");
}

/** Runs every shard's alarm until no job is left (what a shard does on its own a minute on). */
async function drainJobs(): Promise<void> {
  for (let round = 0; round < 5; round++) {
    await shardRows("UPDATE jobs SET next_at = 0");
    for (let s = 0; s < dirShards(env); s++) await runDurableObjectAlarm(dirAt(env, s));
    if ((await shardRows("SELECT id FROM jobs")).length === 0) return;
  }
  throw new Error("jobs left");
}

/** Throws before the named step of the first job of `kind` (once). */
function faultBefore(kind: DirectoryJob["kind"], step: string): () => boolean {
  let fired = false;
  jobHooks.beforeStep = async (job, name) => {
    if (!fired && job.kind === kind && name === step) {
      fired = true;
      throw new Error(`fault before ${kind}/${step}`);
    }
  };
  return () => fired;
}

afterEach(() => {
  jobHooks.beforeStep = undefined;
});

/** What must hold between people, numbers and the ci index once no job is left. */
async function invariants(): Promise<void> {
  const people = await shardRows<{ id: number; ci: string; phone: string; test: number }>(
    "SELECT id, ci, phone, test_clients IS NOT NULL AS test FROM people",
  );
  const byId = new Map(people.map((p) => [p.id, p]));
  // each person holds their number: its entry names them
  const numbers = await shardRows<{ phone: string; id: number }>("SELECT phone, id FROM numbers");
  const entry = new Map(numbers.map((e) => [e.phone, e.id]));
  for (const p of people) expect(entry.get(p.phone), `person ${p.id} holds ${p.phone}`).toBe(p.id);
  // a ci is one person, indexed to them (test numbers are not indexed)
  const directory = people.filter((p) => p.test === 0);
  expect(new Set(directory.map((p) => p.ci)).size).toBe(directory.length);
  const indexed = await shardRows<{ ci: string; id: number }>("SELECT ci, id FROM by_ci");
  for (const p of directory) expect(indexed.find((e) => e.ci === p.ci)?.id, `ci of ${p.id}`).toBe(p.id);
  for (const e of indexed) expect(byId.get(e.id)?.ci, `index entry ${e.ci}`).toBe(e.ci);
  // links and grants belong to people who exist
  for (const l of await shardRows<{ subscriber_id: number }>("SELECT subscriber_id FROM links"))
    expect(byId.has(l.subscriber_id)).toBe(true);
  // the counters are the rows
  expect((await countSubscribers(env)).total).toBe(people.length);
  // every writer's ci lease ended with its write (a new person's with its index job)
  expect(await shardRows("SELECT ci FROM ci_leases")).toEqual([]);
}

describe("a removal that dies half way finishes at its shard's alarm", () => {
  for (const step of ["end_links", "unindex", "delete"]) {
    it(`fault before "${step}": the request fails, nothing half done shows, and the alarm ends the person's logins and removes them`, async () => {
      const phone = `010505${String(["end_links", "unindex", "delete"].indexOf(step)).padStart(5, "0")}`;
      await importRows([row(phone, 210 + phone.length + step.length)]);
      const { code, plid } = await mintFor(phone);
      const fired = faultBefore("remove", step);
      const res = await admin("DELETE", `/admin/directory/${phone}`);
      expect(fired()).toBe(true);
      expect(res.status).toBe(500);
      // the number no longer answers: the removal's first step (the number freed, the rest queued) held
      expect(await subscriberByPhone(env, phone)).toBeNull();
      await drainJobs();
      expect(await shardRows("SELECT plid FROM links WHERE plid = ?", plid)).toEqual([]);
      expect((await exchange(code)).status).not.toBe(200);
      expect(await shardRows("SELECT id FROM people WHERE phone = ?", phone)).toEqual([]);
      await invariants();
    });
  }
});

describe("an import whose cross-shard steps die half way", () => {
  it("a person moving to a number on another shard keeps their plid; the old number is freed by the alarm when its release fails", async () => {
    const [from, to] = numbersOnTwoShards("010606000");
    await importRows([row(from, 220, "이사")]);
    const { plid } = await mintFor(from);
    const fired = faultBefore("release", "release");
    expect(await importRows([row(to, 220, "이사")])).toMatchObject({ inserted: 0, updated: 1, reassigned: 0 });
    expect(fired()).toBe(true);
    expect(await subscriberByPhone(env, to)).toMatchObject({ ci: ciOf(220) });
    expect(await subscriberByPhone(env, from)).toBeNull(); // the old entry is stale: it answers nothing
    await drainJobs();
    expect((await mintFor(to)).plid).toBe(plid);
    expect(await shardRows("SELECT id FROM numbers WHERE phone = ?", from)).toEqual([]);
    await invariants();
  });

  it("a reassigned number's previous holder is removed by the alarm when the removal fails, and a new person's ci is indexed when that fails", async () => {
    const phone = "01061610001";
    await importRows([row(phone, 230, "전주인")]);
    const before = await mintFor(phone);
    const firedRemove = faultBefore("remove", "end_links");
    expect(await importRows([row(phone, 231, "새주인")])).toMatchObject({ inserted: 1, reassigned: 1 });
    expect(firedRemove()).toBe(true);
    await drainJobs();
    expect((await exchange(before.code)).status).not.toBe(200);
    expect(await shardRows("SELECT plid FROM links WHERE plid = ?", before.plid)).toEqual([]);
    const firedIndex = faultBefore("index_ci", "index");
    expect(await importRows([row("01061610002", 232, "새사람")])).toMatchObject({ inserted: 1 });
    expect(firedIndex()).toBe(true);
    await drainJobs();
    await invariants();
  });

  it("a new person's ci stays leased until their index job runs: a carrier-API write of that ci at another number meanwhile is refused as busy, never a second person", async () => {
    const n = dirShards(env);
    const phone = "01063630001";
    // a ci indexed in another shard than the number's: the import queues its index as a job
    const ci = [...Array(50).keys()].map((i) => 260 + i).find((c) => ciShard(ciOf(c), n) !== numberShard(phone, n))!;
    const fired = faultBefore("index_ci", "index");
    expect(await importRows([row(phone, ci, "새사람")])).toMatchObject({ inserted: 1 });
    expect(fired()).toBe(true);
    expect(await shardRows("SELECT ci FROM by_ci WHERE ci = ?", ciOf(ci))).toEqual([]);
    const moved = {
      telco: "S" as const,
      phone: "01063630002",
      name: "새사람",
      gender: "M" as const,
      birth: "1988-08-08",
      foreign: "L" as const,
      ci: ciOf(ci),
    };
    await expect(writeSubscriber(env, moved, 100)).rejects.toBeInstanceOf(DirectoryBusy);
    expect(await subscriberByPhone(env, moved.phone)).toBeNull();
    await drainJobs();
    await invariants();
    // once indexed, the same write is the person moving (one row, the same id)
    const id = (await subscriberByPhone(env, phone))!.id;
    expect(await writeSubscriber(env, moved, 100)).toBe(id);
    await invariants();
  });

  it("any sequence of imports (moves across shards, reassignments, swaps) with a fault before any step: once the alarms ran, every invariant holds and the directory is what the imports give", async () => {
    const pool = ["01062620001", "01062620002", "01062620003", "01062620004", "01062620005"];
    const kinds: [DirectoryJob["kind"], string][] = [
      ["remove", "end_links"],
      ["remove", "delete"],
      ["remove", "unindex"],
      ["release", "release"],
      ["index_ci", "index"],
    ];
    const fileArb = fc
      .array(fc.record({ p: fc.nat({ max: pool.length - 1 }), c: fc.nat({ max: 5 }) }), {
        minLength: 1,
        maxLength: 4,
      })
      .map((rs) => rs.filter((r, i) => rs.findIndex((o) => o.p === r.p || o.c === r.c) === i));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fileArb, fc.option(fc.nat({ max: kinds.length - 1 }), { nil: null })), {
          minLength: 1,
          maxLength: 4,
        }),
        async (steps) => {
          // from an empty pool
          for (const phone of pool) await admin("DELETE", `/admin/directory/${phone}`);
          await drainJobs();
          const expected = new Map<number, number>(); // pool index → ci
          for (const [file, fault] of steps) {
            if (fault !== null) faultBefore(...kinds[fault]!);
            const rows = file.map((r) => row(pool[r.p]!, 240 + r.c));
            // An import first finishes what earlier changes left; when that fails again (the fault
            // fired there) it refuses, and the operator's retry (the CLI's) goes through.
            const res = await admin("POST", "/admin/directory/import", { json: rows });
            jobHooks.beforeStep = undefined;
            if (res.status !== 200)
              expect((await admin("POST", "/admin/directory/import", { json: rows })).status).toBe(200);
            // the model: a ci named moves to its row's number; every other holder there is displaced
            for (const r of file) for (const [p, c] of expected) if (c === r.c) expected.delete(p);
            for (const r of file) expected.set(r.p, r.c);
          }
          await drainJobs();
          for (const [i, phone] of pool.entries()) {
            const got = await subscriberByPhone(env, phone);
            const want = expected.get(i);
            expect(got?.ci ?? null, phone).toBe(want === undefined ? null : ciOf(240 + want));
          }
          await invariants();
        },
      ),
      { numRuns: 30 },
    );
  }, 120_000);
});

describe("an import run: a file sent in several requests, committed once", () => {
  const post = (rows: unknown[], run?: string) =>
    admin("POST", "/admin/directory/import" + (run ? `?run=${run}` : ""), { json: rows });
  const commit = (run: string) => admin("POST", `/admin/directory/import/commit?run=${run}`);

  it("a person whose number a first chunk gives away and whom a later chunk names at a new number keeps their row and plid: their removal waits for the commit, which finds them moved", async () => {
    const [old, moved] = numbersOnTwoShards("010707000");
    await importRows([row(old, 250, "옮길사람")]);
    const { plid, subscriberId } = await mintFor(old);
    const run = "run-" + crypto.randomUUID();
    // chunk 1: the old number to someone new; chunk 2: the person at their new number
    expect(await (await post([row(old, 251, "새주인")], run)).json()).toMatchObject({ inserted: 1, reassigned: 1 });
    expect(await subscriberByPhone(env, old)).toMatchObject({ ci: ciOf(251) });
    expect(await (await post([row(moved, 250, "옮길사람")], run)).json()).toMatchObject({ updated: 1 });
    const res = await commit(run);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ run, removed: 0, left: 0 });
    const now = (await subscriberByPhone(env, moved))!;
    expect(now.id).toBe(subscriberId);
    expect((await mintFor(moved)).plid).toBe(plid);
    await invariants();
    // committing again finds nothing held
    expect(await (await commit(run)).json()).toEqual({ run, removed: 0, left: 0 });
  });

  it("without a run the same two requests remove the person at the first (each request is decided alone): the second makes a new person", async () => {
    const [old, moved] = numbersOnTwoShards("010707100");
    await importRows([row(old, 252, "옮길사람")]);
    const { plid } = await mintFor(old);
    await post([row(old, 253, "새주인")]);
    await post([row(moved, 252, "옮길사람")]);
    expect((await mintFor(moved)).plid).not.toBe(plid);
  });

  it("a holder displaced in a run and named nowhere else is removed at the commit: their codes redeem nothing from then on", async () => {
    const phone = "01070720001";
    await importRows([row(phone, 254, "전주인")]);
    const before = await mintFor(phone);
    const run = "run-" + crypto.randomUUID();
    await post([row(phone, 255, "새주인")], run);
    expect(await (await commit(run)).json()).toEqual({ run, removed: 1, left: 0 });
    expect((await exchange(before.code)).status).not.toBe(200);
    expect(await shardRows("SELECT plid FROM links WHERE plid = ?", before.plid)).toEqual([]);
    await invariants();
    // a commit sent again (its answer lost on the way) reports the run's removals, not its own none
    expect(await (await commit(run)).json()).toEqual({ run, removed: 1, left: 0 });
  });

  it("a run never committed: its held removals run once their hold is over (the shard's alarm)", async () => {
    const phone = "01070730001";
    await importRows([row(phone, 256, "전주인")]);
    const before = await mintFor(phone);
    await post([row(phone, 257, "새주인")], "run-abandoned-" + crypto.randomUUID().slice(0, 8));
    expect((await shardRows<{ run: string }>("SELECT run FROM jobs WHERE run IS NOT NULL")).length).toBe(1);
    await drainJobs(); // as when RUN_HOLD_MS has passed
    expect((await exchange(before.code)).status).not.toBe(200);
    await invariants();
  });

  it("a malformed run id, a run on a dry run, or a commit without one: 400", async () => {
    expect((await post([row("01070740001", 258)], "x")).status).toBe(400);
    expect((await admin("POST", "/admin/directory/import?dry_run=true&run=run-12345678", { json: [] })).status).toBe(
      400,
    );
    expect((await admin("POST", "/admin/directory/import/commit")).status).toBe(400);
  });
});

describe("an import's new people are indexed by ci in batches", () => {
  /** A canonical ci per index (more than ciOf's 256). */
  const manyCi = (i: number) => {
    const b = new Uint8Array(64).fill(77);
    b[0] = i & 255;
    b[1] = i >> 8;
    return btoa(String.fromCharCode(...b));
  };
  const file = (base: string, count: number, from: number) =>
    Array.from({ length: count }, (_, i) => ({
      ...row(`${base}${String(i).padStart(4, "0")}`, 0),
      ci: manyCi(from + i),
    }));
  const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
  const importOver = (dir: DurableObjectNamespace<DirectoryShard>, rows: unknown[]) =>
    adminWorker.fetch!(
      new Request("https://login.example.com/admin/directory/import", {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
        body: JSON.stringify(rows),
      }) as never,
      { ...env, DIRECTORY: dir } as never,
      ctx,
    );

  it("300 new people: every ci indexed to its person, one write per ci shard and no call per person, no job left, ids distinct", async () => {
    const dir = beforeShardCall(
      env.DIRECTORY,
      () => false,
      async () => undefined,
    );
    const res = await importOver(dir, file("0107575", 300, 1000));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ inserted: 300 });
    expect(dir.calls.filter((c) => c === "indexCi" || c === "person")).toEqual([]);
    expect(dir.calls.filter((c) => c === "indexCis").length).toBeLessThanOrEqual(dirShards(env));
    expect(await shardRows("SELECT id FROM jobs")).toEqual([]);
    // each shard took its new people's ids from its sequence at once: distinct, each naming its home
    const made = await shardRows<{ id: number; phone: string }>(
      "SELECT id, phone FROM people WHERE phone LIKE '0107575%'",
    );
    expect(made.length).toBe(300);
    expect(new Set(made.map((p) => p.id)).size).toBe(300);
    for (const p of made) expect(homeOfId(p.id)).toBe(numberShard(p.phone, dirShards(env)));
    await invariants();
  });

  it("an import's new people cost the shards statements a batch, not a row", async () => {
    // every statement any shard runs while the import is written (the shards share this isolate)
    const proto = await runInDurableObject(dirAt(env, 0), (_o, state: DurableObjectState) =>
      Object.getPrototypeOf(state.storage.sql),
    );
    const exec = proto.exec;
    let statements = 0;
    proto.exec = function (this: SqlStorage, ...args: unknown[]) {
      statements++;
      return exec.apply(this, args);
    };
    try {
      expect(await importRows(file("0107676", 400, 4000))).toMatchObject({ inserted: 400 });
    } finally {
      proto.exec = exec;
    }
    // a statement a row was 400 at least; the batches' statements do not grow with the rows
    expect(statements).toBeGreaterThan(0);
    expect(statements).toBeLessThan(400);
    await invariants();
  });

  it("a fault before one person's index step leaves that one job queued and indexes the others; the alarm indexes it", async () => {
    const fired = faultBefore("index_ci", "index");
    expect(await importRows(file("0107171", 40, 2000))).toMatchObject({ inserted: 40 });
    expect(fired()).toBe(true);
    const jobs = await shardRows<{ job: string }>("SELECT job FROM jobs");
    expect(jobs.map((j) => (JSON.parse(j.job) as DirectoryJob).kind)).toEqual(["index_ci"]);
    const unindexed = (JSON.parse(jobs[0]!.job) as { ci: string }).ci;
    const indexed = await shardRows<{ ci: string }>(
      "SELECT ci FROM by_ci WHERE ci IN (SELECT value FROM json_each(?))",
      JSON.stringify(file("0107171", 40, 2000).map((r) => r.ci)),
    );
    expect(indexed.length).toBe(39);
    expect(indexed.map((e) => e.ci)).not.toContain(unindexed);
    await drainJobs();
    await invariants();
  });

  it("a person removed before the batch runs is not indexed, and their job is done", async () => {
    const rows = file("0107272", 20, 3000);
    let removed: string | null = null;
    jobHooks.beforeStep = async (job) => {
      if (removed === null && job.kind === "index_ci") {
        removed = rows.find((r) => r.ci === job.ci)!.phoneNo;
        expect((await admin("DELETE", `/admin/directory/${removed}`)).status).toBe(200);
      }
    };
    expect(await importRows(rows)).toMatchObject({ inserted: 20 });
    jobHooks.beforeStep = undefined;
    expect(removed).not.toBeNull();
    expect(await subscriberByPhone(env, removed!)).toBeNull();
    expect(await shardRows("SELECT id FROM jobs")).toEqual([]);
    await invariants();
  });
});
