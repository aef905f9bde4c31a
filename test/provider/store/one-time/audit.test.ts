// The audit trail's writer (workers/provider/store/one-time/audit.ts, audit-archive.ts and the one-time
// store's flush): an event waits in an object's outbox and reaches R2 as a line of an NDJSON object
// keyed by the UTC hour of its time; a write R2 refuses keeps the outbox, and its retry writes the
// same objects again, so no event is archived twice or lost.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "../../../support/env";
import { describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { randomToken } from "../../../../workers/core/crypto";
import { AUDIT_FLUSH_ROWS } from "../../../../workers/provider/store/one-time/tables/audit-outbox";
import { AUDIT_ONCE_MS, audit, type AuditRecord } from "../../../../workers/provider/store/one-time/audit";
import { HOUR_MS, hourOf, hourPrefix } from "../../../../workers/provider/store/audit-archive";
import { auditEvents, auditKeys } from "../../../support/audit";
import { intercept } from "../../../support/helpers";

/** A store object of this test's own (its events are told apart by its name). */
function ownStore() {
  const name = `audit-${randomToken(6)}`;
  return { name, store: env.ONE_TIME.get(env.ONE_TIME.idFromName(name)) };
}

type Store = ReturnType<typeof ownStore>["store"];

const outboxRows = (store: Store) =>
  runInDurableObject(
    store,
    (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM audit_outbox").one().n,
  );

/** The object's R2 bucket, replaced for the test (`bucket` is the store's binding). */
function replaceBucket(store: Store, make: (real: R2Bucket) => R2Bucket | undefined): Promise<R2Bucket> {
  return runInDurableObject(store, (o) => {
    const self = o as unknown as { bucket: R2Bucket | undefined };
    const real = self.bucket!;
    self.bucket = make(real);
    return real;
  });
}

/** The message the object's flush fails with ("" when it succeeds), called inside the object. */
const failedFlush = (store: Store) =>
  runInDurableObject(store, (o) =>
    o.flushAudit().then(
      () => "",
      (e: unknown) => String(e),
    ),
  );

const ownKeys = async (name: string) => (await auditKeys()).filter((k) => k.includes(`/${name}-`));

describe("the audit outbox goes to R2", () => {
  it("as NDJSON under the UTC hour of each event, one object per hour, ids <object>-<seq> that go on across flushes", async () => {
    const { name, store } = ownStore();
    const h = hourOf(Date.now()) - 5 * HOUR_MS; // a past hour boundary: the batch spans it
    const records: AuditRecord[] = [
      [h - 1, "client.updated", "c1", "ok", null],
      [h - 2, "client.created", "c1", "ok", '{"items":2,"auto_login":true}'],
      [h, "disconnect", null, "refused", '{"reason":"x"}'],
      [h + 1500, "consent", "c2", "ok", '{"items":1}'],
    ];
    await store.appendAudit(records);
    expect(await outboxRows(store)).toBe(4);
    expect(await ownKeys(name)).toEqual([]); // nothing is written per event
    expect(await store.flushAudit()).toBe(4);
    expect(await outboxRows(store)).toBe(0);
    const keys = await ownKeys(name);
    expect(keys).toEqual([`${hourPrefix(h - HOUR_MS)}${name}-1.ndjson`, `${hourPrefix(h)}${name}-3.ndjson`]);
    expect(hourPrefix(h)).toMatch(/^audit\/\d{4}\/\d{2}\/\d{2}\/\d{2}\/$/);
    const before = (await env.AUDIT.get(keys[0]!))!;
    expect(before.httpMetadata?.contentType).toBe("application/x-ndjson; charset=utf-8");
    expect(before.customMetadata).toEqual({ first: String(h - 2), last: String(h - 1), count: "2" });
    // oldest first within the object, whatever the outbox order
    expect((await before.text()).split("\n")).toEqual([
      JSON.stringify({
        id: `${name}-2`,
        at: new Date(h - 2).toISOString(),
        type: "client.created",
        client_id: "c1",
        outcome: "ok",
        detail: { items: 2, auto_login: true },
      }),
      JSON.stringify({
        id: `${name}-1`,
        at: new Date(h - 1).toISOString(),
        type: "client.updated",
        client_id: "c1",
        outcome: "ok",
        detail: null,
      }),
      "",
    ]);
    const after = (await env.AUDIT.get(keys[1]!))!;
    expect(
      (await after.text())
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([
      {
        id: `${name}-3`,
        at: new Date(h).toISOString(),
        type: "disconnect",
        client_id: null,
        outcome: "refused",
        detail: { reason: "x" },
      },
      {
        id: `${name}-4`,
        at: new Date(h + 1500).toISOString(),
        type: "consent",
        client_id: "c2",
        outcome: "ok",
        detail: { items: 1 },
      },
    ]);
    // the next flush's events go on from 5, in an object of their own
    await store.appendAudit([[h + 2000, "consent", "c2", "ok", null]]);
    expect(await store.flushAudit()).toBe(1);
    expect(await ownKeys(name)).toContain(`${hourPrefix(h)}${name}-5.ndjson`);
  });

  it("moves every row once, in order and value for value, in objects of at most AUDIT_FLUSH_ROWS events", async () => {
    const { name, store } = ownStore();
    const h = hourOf(Date.now()) - 2 * HOUR_MS;
    const details = [null, '{"reason":"reused"}', `{"q":"\\"'%?,;$[0]"}`, '{"name":"한글 ✓"}'];
    const rows = Array.from({ length: 2 * AUDIT_FLUSH_ROWS + 203 }, (_, i) => ({
      at: h + i,
      type: i % 2 ? "code.refused" : "code.redeemed",
      client_id: i === 7 ? null : "c",
      outcome: i % 2 ? "refused" : "ok",
      detail: details[i % details.length]!,
    }));
    await runInDurableObject(store, (_o, state) => {
      for (const r of rows)
        state.storage.sql.exec(
          "INSERT INTO audit_outbox (at, type, client_id, outcome, detail) VALUES (?, ?, ?, ?, ?)",
          r.at,
          r.type,
          r.client_id,
          r.outcome,
          r.detail,
        );
    });
    expect(await store.flushAudit()).toBe(rows.length);
    expect(await ownKeys(name)).toHaveLength(3);
    const got = await auditEvents({ object: name });
    expect(got.map(({ at, type, client_id, outcome, detail }) => ({ at, type, client_id, outcome, detail }))).toEqual(
      rows,
    );
    expect(new Set(got.map((e) => e.id)).size).toBe(rows.length);
    expect(await store.flushAudit()).toBe(0);
  });

  it("appendAudit keeps every event of a call, in order and value for value, across its statements of 20", async () => {
    const { name, store } = ownStore();
    const h = hourOf(Date.now()) - HOUR_MS;
    const details = [null, '{"q":"\\"?,(?, ?)"}', '{"name":"한글"}'];
    const records: AuditRecord[] = Array.from({ length: 45 }, (_, i) => [
      h + i,
      i % 2 ? "consent" : "signin.success",
      i % 5 === 0 ? null : `c${i}`,
      i % 3 ? "ok" : "refused",
      details[i % details.length]!,
    ]);
    await store.appendAudit(records);
    expect(await outboxRows(store)).toBe(45);
    expect(await store.flushAudit()).toBe(45);
    const got = await auditEvents({ object: name });
    expect(got.map(({ at, type, client_id, outcome, detail }) => [at, type, client_id, outcome, detail])).toEqual(
      records,
    );
  });

  it("flushes at once when the outbox reaches AUDIT_FLUSH_ROWS, else by the alarm within AUDIT_FLUSH_SECONDS", async () => {
    const { name, store } = ownStore();
    const now = Date.now();
    const row = (i: number): AuditRecord => [now + i, "consent", "c", "ok", null];
    await store.appendAudit(Array.from({ length: AUDIT_FLUSH_ROWS - 1 }, (_, i) => row(i)));
    // the alarm is armed for the flush interval (AUDIT_FLUSH_SECONDS, 60 s by default)
    const alarm = await vi.waitFor(async () => {
      const at = await runInDurableObject(store, (_o, state) => state.storage.getAlarm());
      expect(at).not.toBeNull();
      return at!;
    });
    expect(alarm).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(await outboxRows(store)).toBe(AUDIT_FLUSH_ROWS - 1);
    await store.appendAudit([row(AUDIT_FLUSH_ROWS)]);
    await vi.waitFor(async () => expect(await outboxRows(store)).toBe(0));
    expect(await auditEvents({ object: name })).toHaveLength(AUDIT_FLUSH_ROWS);
    // below the threshold, the alarm writes them
    await store.appendAudit([row(AUDIT_FLUSH_ROWS + 1)]);
    expect(await runDurableObjectAlarm(store)).toBe(true);
    expect(await outboxRows(store)).toBe(0);
    expect(await auditEvents({ object: name })).toHaveLength(AUDIT_FLUSH_ROWS + 1);
  });

  it("a flush R2 refuses keeps the outbox and the alarm; the retry writes the same objects, so no event is archived twice", async () => {
    const { name, store } = ownStore();
    const h = hourOf(Date.now()) - 3 * HOUR_MS;
    await store.appendAudit([
      [h - 1, "consent", "c", "ok", null],
      [h + 1, "consent", "c", "ok", null],
    ]);
    // R2 takes the first hour's object and refuses the second
    let puts = 0;
    const real = await replaceBucket(store, (r) =>
      intercept(r, {
        put: (...a: Parameters<R2Bucket["put"]>) =>
          ++puts === 1 ? r.put(...a) : Promise.reject(new Error("R2 is down")),
      }),
    );
    expect(await failedFlush(store)).toContain("R2 is down");
    expect(await outboxRows(store)).toBe(2);
    expect(await ownKeys(name)).toHaveLength(1);
    expect(await runInDurableObject(store, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    await replaceBucket(store, () => real);
    expect(await runDurableObjectAlarm(store)).toBe(true); // the retry
    expect(await outboxRows(store)).toBe(0);
    expect(await ownKeys(name)).toEqual([
      `${hourPrefix(h - HOUR_MS)}${name}-1.ndjson`,
      `${hourPrefix(h)}${name}-2.ndjson`,
    ]);
    expect((await auditEvents({ object: name })).map((e) => e.id)).toEqual([`${name}-1`, `${name}-2`]);
  });

  it("a worker hosting the store without the AUDIT binding keeps the outbox and names the binding", async () => {
    const { store } = ownStore();
    await store.appendAudit([[Date.now(), "consent", "c", "ok", null]]);
    const real = await replaceBucket(store, () => undefined);
    expect(await failedFlush(store)).toMatch(/AUDIT/);
    expect(await outboxRows(store)).toBe(1);
    await replaceBucket(store, () => real);
    expect(await store.flushAudit()).toBe(1);
  });

  it("appendAuditOnce: however the calls overlap (the same keys again, several at once), each key's event is in the outbox exactly once, written by a call of the first wave that names it", async () => {
    await fc.assert(
      fc.asyncProperty(
        // batches of keys out of 6, each batch one call; calls go in waves run at once
        fc.array(fc.array(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 6 }), { minLength: 1, maxLength: 3 }), {
          minLength: 1,
          maxLength: 4,
        }),
        async (waves) => {
          const { name, store } = ownStore();
          const prefix = `once:${randomToken(8)}:`;
          // each key: the wave it first appears in, and the calls of that wave that name it
          const first = new Map<number, { wave: number; calls: Set<number> }>();
          let call = 0;
          let appended = 0;
          for (const [w, wave] of waves.entries()) {
            const counts = await Promise.all(
              wave.map((keys) => {
                const c = call++;
                // a key may come twice in one call too
                const keyed = keys.map((k): [string, AuditRecord] => {
                  if (!first.has(k)) first.set(k, { wave: w, calls: new Set() });
                  if (first.get(k)!.wave === w) first.get(k)!.calls.add(c);
                  return [`${prefix}${k}`, [Date.now(), "risk.window_opened", `k${k}`, "ok", JSON.stringify({ c })]];
                });
                return store.appendAuditOnce(keyed, AUDIT_ONCE_MS);
              }),
            );
            appended += counts.reduce((a, n) => a + n, 0);
          }
          expect(appended).toBe(first.size);
          expect(await outboxRows(store)).toBe(first.size);
          await store.flushAudit();
          const got = await auditEvents({ object: name });
          const byKey = new Map(got.map((e) => [e.client_id, JSON.parse(e.detail!) as { c: number }]));
          expect(got).toHaveLength(first.size);
          // the calls of a wave run at once, so a key's event is that of any call of the first wave
          // that names it; a later wave never writes it again
          for (const [k, { calls }] of first) expect(calls.has(byKey.get(`k${k}`)!.c)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("audit() is one call to one store object; the event reaches R2 with its flush", async () => {
    const clientId = `c-${randomToken(6)}`;
    const before = Date.now();
    await audit(env, "client.created", clientId, "ok", { items: 3, auto_login: false });
    const [e, ...more] = await auditEvents({ clientId });
    expect(more).toEqual([]);
    expect(e).toMatchObject({ type: "client.created", outcome: "ok", detail: '{"items":3,"auto_login":false}' });
    expect(e!.id).toMatch(/^shard-\d+-\d+$/);
    expect(e!.at).toBeGreaterThanOrEqual(before);
  });
});
