// Reading the audit trail back from R2 (docs/operations.md "Audit"): GET /admin/audit lists events
// newest first with filters and an opaque cursor, across objects and hours, never older than
// AUDIT_RETENTION_DAYS and with a bounded number of R2 calls a page; GET /admin/audit/export
// streams a time range as NDJSON, oldest first. The objects of past hours are written here
// directly, with the archive's own writer.
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import { admin } from "../support/admin";
import { intercept } from "../support/helpers";
import { archive, compareEvents, HOUR_MS, hourOf, type OutboxRow } from "../../workers/provider/store/audit-archive";
import { listAudit, MAX_R2_CALLS_PER_PAGE, parseCursor } from "../../workers/admin/audit-store";

const DAY_MS = 86_400_000;
const RETENTION_MS = 730 * DAY_MS; // AUDIT_RETENTION_DAYS' default
const NOW = Date.now();
const H = hourOf(NOW);

interface Written {
  id: string;
  at: number;
  type: string;
  client_id: string | null;
  outcome: string;
  detail: Record<string, unknown> | null;
}

const written: Written[] = [];
let seq = 0;

/** Writes one object of `object`'s with these events, as its flush would. */
async function put(object: string, events: { at: number; type: string; client?: string | null }[]): Promise<void> {
  const rows: OutboxRow[] = events.map((e, i) => ({
    at: e.at,
    type: e.type,
    client_id: e.client ?? null,
    outcome: "ok",
    detail: JSON.stringify({ n: i }),
  }));
  const first = seq + 1;
  seq += rows.length;
  await archive(env.AUDIT, object, first, rows);
  rows.forEach((r, i) =>
    written.push({
      id: `${object}-${first + i}`,
      at: r.at,
      type: r.type,
      client_id: r.client_id,
      outcome: "ok",
      detail: { n: i },
    }),
  );
}

type Page = { events: Written[]; next_before: string | null };

async function page(query: string): Promise<Page> {
  const res = await admin("GET", `/admin/audit?${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { events: (Omit<Written, "at"> & { at: string })[]; next_before: string | null };
  return { events: body.events.map((e) => ({ ...e, at: Date.parse(e.at) })), next_before: body.next_before };
}

/** Every page of a query, following next_before to the end. */
async function allPages(query: string): Promise<{ events: Written[]; pages: number }> {
  const events: Written[] = [];
  let before: string | null = null;
  for (let pages = 1; pages < 1000; pages++) {
    const p = await page(query + (before === null ? "" : `&before=${encodeURIComponent(before)}`));
    events.push(...p.events);
    before = p.next_before;
    if (before === null) return { events, pages };
  }
  throw new Error("no end of pages");
}

const newestFirst = (events: Written[]) => [...events].sort((a, b) => compareEvents(b, a));
const live = (e: Written) => e.at >= NOW - RETENTION_MS + 60_000; // a minute's margin for the test's own run

async function expectError(res: Response, param: RegExp) {
  expect(res.status).toBe(400);
  expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
  const body = (await res.json()) as { error: string; message: string };
  expect(body.error).toBe("invalid_request");
  expect(body.message).toMatch(param);
}

describe("GET /admin/audit reads R2 newest first", () => {
  it("pages through objects and hours (two objects whose times interleave, ties included) without skipping or repeating an event", async () => {
    const h2 = H - 2 * HOUR_MS;
    await put("shard-1", [
      { at: h2 + 1000, type: "client.created", client: "a" },
      { at: h2 + 3000, type: "consent", client: "b" },
      { at: h2 + 5000, type: "client.updated", client: "a" },
      { at: h2 + 7000, type: "signin.success", client: "a" },
    ]);
    await put("shard-2", [
      { at: h2 + 2000, type: "consent", client: "a" },
      { at: h2 + 5000, type: "client.deleted", client: "b" }, // the same millisecond as shard-1's
      { at: h2 + 5000, type: "consent", client: null },
      { at: h2 + 8000, type: "client.created", client: "b" },
    ]);
    await put("shard-1", [{ at: h2 + 4000, type: "consent", client: "a" }]); // a later flush, an earlier event
    await put("shard-3", [
      { at: H - 5 * HOUR_MS + 10, type: "client.updated", client: "a" },
      { at: H - 5 * HOUR_MS + 20, type: "consent", client: "b" },
    ]);
    await put("shard-1", [{ at: NOW - 10 * DAY_MS, type: "client.created", client: "c" }]);
    const expected = newestFirst(written.filter(live));
    for (const limit of [1, 2, 3, 7, 500]) {
      const { events } = await allPages(`limit=${limit}`);
      expect(events, `limit=${limit}`).toEqual(expected);
    }
    // a batch spanning an hour boundary is one object per hour, both listed
    await put("shard-4", [
      { at: H - 20 * HOUR_MS - 1, type: "consent", client: "a" },
      { at: H - 20 * HOUR_MS, type: "consent", client: "a" },
    ]);
    expect((await allPages("limit=4")).events).toEqual(newestFirst(written.filter(live)));
  });

  it("filters by an exact type, a prefix ending in '.', and a client, page after page", async () => {
    const all = newestFirst(written.filter(live));
    expect((await allPages("type=consent&limit=2")).events).toEqual(all.filter((e) => e.type === "consent"));
    expect((await allPages("type=client.&limit=2")).events).toEqual(all.filter((e) => e.type.startsWith("client.")));
    expect((await allPages("client_id=a&limit=3")).events).toEqual(all.filter((e) => e.client_id === "a"));
    expect((await allPages("type=client.&client_id=b")).events).toEqual(
      all.filter((e) => e.type.startsWith("client.") && e.client_id === "b"),
    );
    expect((await page("type=nothing.here")).events).toEqual([]);
  });

  it("filters by a time range [since, until) and an actor, page after page", async () => {
    const all = newestFirst(written.filter(live));
    const iso = (ms: number) => new Date(ms).toISOString();
    const since = H - 5 * HOUR_MS + 20;
    const until = H - 2 * HOUR_MS + 5000;
    const range = `since=${iso(since)}&until=${iso(until)}`;
    const want = all.filter((e) => e.at >= since && e.at < until);
    expect(want.length).toBeGreaterThan(3);
    for (const limit of [1, 2, 500]) expect((await allPages(`${range}&limit=${limit}`)).events).toEqual(want);
    expect((await allPages(`since=${iso(since)}`)).events).toEqual(all.filter((e) => e.at >= since));
    expect((await allPages(`until=${iso(until)}&client_id=a`)).events).toEqual(
      all.filter((e) => e.at < until && e.client_id === "a"),
    );
    // an event with an actor, as an admin call writes it (the other events have none)
    const at = H - 3 * HOUR_MS + 1;
    const detail = { actor: "token:ci" };
    await archive(env.AUDIT, "shard-7", 1, [
      { at, type: "client.updated", client_id: "a", outcome: "ok", detail: JSON.stringify(detail) },
    ]);
    written.push({ id: "shard-7-1", at, type: "client.updated", client_id: "a", outcome: "ok", detail });
    const byActor = await allPages("actor=token:ci");
    expect(byActor.events.map((e) => e.detail)).toEqual([{ actor: "token:ci" }]);
    await expectError(await admin("GET", `/admin/audit?since=${iso(until)}&until=${iso(since)}`), /until/);
    await expectError(await admin("GET", "/admin/audit?since=yesterday"), /since/);
  });

  it("never lists an event older than AUDIT_RETENTION_DAYS (730 by default), also within an hour that straddles the cut-off", async () => {
    await put("shard-5", [{ at: NOW - RETENTION_MS - DAY_MS, type: "consent", client: "old" }]);
    await put("shard-5", [{ at: NOW - RETENTION_MS + DAY_MS, type: "consent", client: "old" }]);
    const cut = NOW - RETENTION_MS;
    await put("shard-6", [
      { at: cut - 5 * 60_000, type: "consent", client: "edge" },
      { at: cut + 5 * 60_000, type: "consent", client: "edge" },
    ]);
    const old = (await allPages("client_id=old")).events;
    expect(old.map((e) => e.at)).toEqual([NOW - RETENTION_MS + DAY_MS]);
    const edge = (await allPages("client_id=edge")).events;
    expect(edge.map((e) => e.at)).toEqual([cut + 5 * 60_000]);
    // a cursor past the window ends the list
    expect(await page(`before=${cut - DAY_MS}`)).toEqual({ events: [], next_before: null });
  });

  it("a page spends a bounded number of R2 calls, however many objects a filter must read, and goes on from its cursor", async () => {
    const hour = H - 40 * HOUR_MS;
    for (let i = 0; i < 2 * MAX_R2_CALLS_PER_PAGE; i++)
      await put(`noise-${i}`, [
        { at: hour + i * 1000, type: "signin.failure", client: "noisy" },
        { at: hour + i * 1000 + 1, type: i % 50 === 0 ? "consent" : "signin.failure", client: "noisy" },
      ]);
    let calls = 0;
    const counted = intercept(env.AUDIT, {
      list: (o?: R2ListOptions) => (calls++, env.AUDIT.list(o)),
      get: (k: string) => (calls++, env.AUDIT.get(k)),
    });
    const found: string[] = [];
    let before = undefined as ReturnType<typeof parseCursor> | undefined;
    let pages = 0;
    for (;;) {
      calls = 0;
      const p = await listAudit(
        counted,
        { limit: 500, type: "consent", clientId: "noisy", ...(before ? { before } : {}) },
        Date.now(),
        RETENTION_MS,
      );
      pages++;
      // the walk down the key tree to the next hour may list up to four levels past the budget
      expect(calls).toBeLessThanOrEqual(MAX_R2_CALLS_PER_PAGE + 5);
      found.push(...p.events.map((e) => e.id));
      if (p.next === null) break;
      before = p.next;
    }
    expect(pages).toBeGreaterThan(1);
    expect(found).toEqual(
      newestFirst(written.filter((e) => e.client_id === "noisy" && e.type === "consent")).map((e) => e.id),
    );
  });

  it("refuses malformed parameters with invalid_request, never a 500", async () => {
    await expectError(await admin("GET", "/admin/audit?limit=0"), /limit/);
    await expectError(await admin("GET", "/admin/audit?limit=501"), /limit/);
    await expectError(await admin("GET", "/admin/audit?before=x"), /before/);
    await expectError(await admin("GET", "/admin/audit?before=12.a%2Fb"), /before/);
    await expectError(await admin("GET", "/admin/audit?type=Client"), /type/);
    await expectError(await admin("GET", "/admin/audit?client_id=%20"), /client_id/);
  });
});

describe("GET /admin/audit/export streams a range as NDJSON, oldest first", () => {
  const lines = async (res: Response) => {
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/x-ndjson; charset=utf-8");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    // UTF-8 text by the header above; res.text() would have workerd warn that x-ndjson is not a text type
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(await res.arrayBuffer());
    return text === "" ? [] : text.trimEnd().split("\n");
  };
  const line = (e: Written) =>
    JSON.stringify({
      id: e.id,
      at: new Date(e.at).toISOString(),
      type: e.type,
      client_id: e.client_id,
      outcome: e.outcome,
      detail: e.detail,
    });
  const exported = (from: number, to: number) =>
    admin("GET", `/admin/audit/export?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`);
  const inRange = (from: number, to: number) =>
    written.filter((e) => e.at >= from && e.at < to && live(e)).sort(compareEvents);

  it("exactly the events within [from, to), in time order across objects and hours", async () => {
    const h2 = H - 2 * HOUR_MS;
    expect(inRange(h2 + 2500, h2 + 7500).length).toBeGreaterThan(3);
    expect(await lines(await exported(h2 + 2500, h2 + 7500))).toEqual(inRange(h2 + 2500, h2 + 7500).map(line));
    const wide = [H - 21 * HOUR_MS, H - HOUR_MS] as const;
    expect(await lines(await exported(...wide))).toEqual(inRange(...wide).map(line));
    // the same instant at +09:00; a date alone is UTC midnight
    const kst = new Date(h2 + 9 * HOUR_MS).toISOString().replace("Z", "+09:00");
    const res = await admin(
      "GET",
      `/admin/audit/export?from=${encodeURIComponent(kst)}&to=${new Date(h2 + HOUR_MS).toISOString()}`,
    );
    expect(await lines(res)).toEqual(inRange(h2, h2 + HOUR_MS).map(line));
    expect(await lines(await exported(H - 60 * HOUR_MS, H - 59 * HOUR_MS))).toEqual([]);
  });

  it("streams object by object: a large hour arrives in many chunks, every line once and in order", async () => {
    const hour = H - 50 * HOUR_MS;
    const many = Array.from({ length: 1500 }, (_, i) => ({ at: hour + i * 997, type: "consent", client: "bulk" }));
    await put(
      "bulk-a",
      many.filter((_, i) => i % 3 !== 0),
    );
    await put(
      "bulk-b",
      many.filter((_, i) => i % 3 === 0),
    );
    const res = await exported(hour, hour + HOUR_MS);
    const reader = res.body!.getReader();
    let chunks = 0;
    let text = "";
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks++;
      text += decoder.decode(value, { stream: true });
    }
    expect(chunks).toBeGreaterThan(5);
    expect(text.trimEnd().split("\n")).toEqual(inRange(hour, hour + HOUR_MS).map(line));
  });

  it("returns nothing older than AUDIT_RETENTION_DAYS", async () => {
    const from = NOW - RETENTION_MS - 12 * HOUR_MS;
    await put("shard-7", [
      { at: from + HOUR_MS, type: "consent", client: "expired" },
      { at: NOW - RETENTION_MS + 2 * HOUR_MS, type: "consent", client: "kept" },
    ]);
    const got = await lines(await exported(from, from + 24 * HOUR_MS));
    expect(got).toEqual(inRange(from, from + 24 * HOUR_MS).map(line));
    expect(got.join()).toContain('"kept"');
    expect(got.join()).not.toContain('"expired"');
  });

  it("refuses a missing or malformed range with invalid_request, never a 500", async () => {
    const t = new Date(H).toISOString();
    await expectError(await admin("GET", "/admin/audit/export"), /from/);
    await expectError(await admin("GET", "/admin/audit/export?from=yesterday"), /from/);
    await expectError(await admin("GET", "/admin/audit/export?from=2026-05-01T10:00"), /from/); // no offset
    await expectError(await admin("GET", "/admin/audit/export?from=2026-13-45"), /from/);
    await expectError(await admin("GET", `/admin/audit/export?from=${t}&to=${t}`), /to/);
    const later = new Date(H + 25 * HOUR_MS).toISOString();
    await expectError(await admin("GET", `/admin/audit/export?from=${t}&to=${later}`), /to.*24 hours/);
  });
});
