// The change journal (workers/provider/store/change-journal.ts, docs/operations.md "Unfinished
// changes"): an operator's or developer's change reaches the audit trail even when the worker dies
// between the change and its event. Invariants, with answered, refused, failed and killed changes
// run at once and swept concurrently and again:
// - a change that reached its store has its own event, or exactly one `request.unfinished` event
//   naming its actor and route;
// - a request that answered (done or refused) leaves no row and no `request.unfinished` event;
// - every row is gone after the sweep, and a sweep run again after a kill writes nothing twice.
import { env } from "../support/env";
import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { ADMIN_TOKEN, admin, createClient } from "../support/admin";
import { auditRefused as auditRefused_ } from "../support/faults";
import { Browser } from "../support/signin";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import adminWorker from "../../workers/admin";
import { auditEvents, flushAudit } from "../support/audit";
import { api, createApp, developer } from "../support/developers";
import {
  beginChange,
  appOf,
  journaled,
  journalRows,
  UNFINISHED_AFTER_MS,
} from "../../workers/provider/store/change-journal";
import { sweepUnfinished } from "../../workers/provider/store/flows/journaled-change";
import { audit } from "../../workers/provider/store/one-time/audit";
import { E } from "../../workers/core/errors";

const CTX = { worker: "admin", method: "PATCH", route: "/admin/clients/:id" };

/** Sweeps as a request past the grace would, until nothing is left. */
async function sweepAll(): Promise<void> {
  while ((await sweepUnfinished(env, Date.now() + UNFINISHED_AFTER_MS + 1)) > 0);
}

const detailOf = (e: { detail: string | null }) => JSON.parse(e.detail ?? "{}") as Record<string, unknown>;

beforeAll(async () => {
  // what a change writes, in the real D1: one row per actor
  await env.DB.exec("CREATE TABLE IF NOT EXISTS journal_probe (actor TEXT NOT NULL)");
});

describe("changes through the admin API and the developer console", () => {
  it("a change that answered, and one refused, leave no row", async () => {
    const who = (await (await admin("GET", "/admin/whoami")).json()) as { actor: string };
    const c = await createClient();
    const refused = await admin("PATCH", `/admin/clients/${c.client_id}`, { json: { redirect_uris: "not a list" } });
    expect(refused.status).toBe(400);
    expect((await journalRows(env)).filter((r) => r.actor === who.actor)).toEqual([]);
    const created = await auditEvents({ type: "client.created", clientId: c.client_id });
    expect(created.map((e) => detailOf(e).actor)).toEqual([who.actor]);
    expect((await auditEvents({ type: "request.unfinished" })).filter((e) => detailOf(e).actor === who.actor)).toEqual(
      [],
    );
  });

  it("a developer's app registered through the API leaves no row", async () => {
    const { b, csrf } = await developer("0107");
    const app = await createApp(b, csrf);
    const renamed = await api(b, csrf, "PATCH", `/developers/api/apps/${app.client_id}`, { name: "Demo Shop 2" });
    expect(renamed.status).toBe(200);
    const [created] = await auditEvents({ type: "client.created", clientId: app.client_id });
    const actor = String(detailOf(created!).actor);
    expect(actor).toMatch(/^developer:dv_/);
    expect((await journalRows(env)).filter((r) => r.actor === actor)).toEqual([]);
    // an operator finds the developer's changes by their actor
    const mine = await admin("GET", `/admin/audit?actor=${actor}&limit=500`);
    expect(mine.status, await mine.clone().text()).toBe(200);
    const events = ((await mine.json()) as { events: { type: string; client_id: string }[] }).events;
    expect(events.map((e) => [e.type, e.client_id]).sort()).toEqual([
      ["client.created", app.client_id],
      ["client.updated", app.client_id],
    ]);
  });

  it("an admin change killed after its change is named by the trail, with its actor and route template", async () => {
    const who = (await (await admin("GET", "/admin/whoami")).json()) as { actor: string };
    const route = "/admin/directory/:phone";
    // what a kill leaves: the row written before the handler, nothing after the change
    const id = await beginChange(env, who.actor, { worker: "admin", method: "DELETE", route });
    expect((await journalRows(env)).map((r) => r.id)).toContain(id);
    await sweepAll();
    expect((await journalRows(env)).map((r) => r.id)).not.toContain(id);
    await flushAudit();
    const res = await admin("GET", "/admin/audit?type=request.unfinished&limit=500");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { events: { type: string; outcome: string; detail: Record<string, unknown> }[] };
    const mine = body.events.filter((e) => e.detail.actor === who.actor && e.detail.route === route);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      type: "request.unfinished",
      outcome: "unknown",
      detail: { actor: who.actor, worker: "admin", method: "DELETE", route },
    });
  });

  it("a row that cannot be deleted after the handler answered leaves the answer as it was, and becomes an event too", async () => {
    const noDelete = new Proxy(env.DB, {
      get(t, prop) {
        if (prop === "prepare")
          return (sql: string) =>
            sql.startsWith("DELETE FROM change_journal")
              ? { bind: () => ({ run: () => Promise.reject(new Error("D1 unavailable")) }) }
              : t.prepare(sql);
        const v = Reflect.get(t, prop, t) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
    const out = await journaled({ ...env, DB: noDelete }, "operator:undeleted", CTX, async () => "answered");
    expect(out).toBe("answered");
    expect((await journalRows(env)).filter((r) => r.actor === "operator:undeleted")).toHaveLength(1);
    await sweepAll();
    const named = (await auditEvents({ type: "request.unfinished" })).filter(
      (e) => detailOf(e).actor === "operator:undeleted",
    );
    expect(named).toHaveLength(1);
  });

  it("a read of the trail sweeps: a row past the grace is gone after GET /admin/audit, and becomes its event", async () => {
    const id = await beginChange(env, "operator:left-behind", CTX, Date.now() - UNFINISHED_AFTER_MS - 1000);
    const res = await admin("GET", "/admin/audit?limit=1");
    expect(res.status).toBe(200);
    await res.body?.cancel();
    // the sweep runs after the answer (waitUntil): wait for it, bounded
    for (let i = 0; i < 100 && (await journalRows(env)).some((r) => r.id === id); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect((await journalRows(env)).map((r) => r.id)).not.toContain(id);
    const named = (await auditEvents({ type: "request.unfinished" })).filter(
      (e) => detailOf(e).actor === "operator:left-behind",
    );
    expect(named).toHaveLength(1);
  });

  it("a row younger than the grace is a change still running: the sweep leaves it", async () => {
    const id = await beginChange(env, "operator:running", CTX);
    expect(await sweepUnfinished(env, Date.now(), UNFINISHED_AFTER_MS)).toBeGreaterThanOrEqual(0);
    expect((await journalRows(env)).map((r) => r.id)).toContain(id);
    await sweepAll();
  });
});

/** The real ONE_TIME namespace, but every object refuses audit appends: the kill point, for real requests. */
const auditRefused = auditRefused_();

describe("a real change whose audit event cannot be written", () => {
  it("an operator's: answered 500, the change made, and the trail names who made it", async () => {
    const who = (await (await admin("GET", "/admin/whoami")).json()) as { actor: string };
    const c = await createClient();
    const ctx = createExecutionContext();
    const res = await adminWorker.fetch!(
      new Request(`https://login.example/admin/clients/${c.client_id}`, {
        method: "PATCH",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
        body: JSON.stringify({ name: "Renamed while failing" }),
      }) as never,
      { ...env, ONE_TIME: auditRefused } as never,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status, await res.clone().text()).toBe(500);
    const read = (await (await admin("GET", `/admin/clients/${c.client_id}`)).json()) as { name: string };
    expect(read.name).toBe("Renamed while failing");
    const rows = (await journalRows(env)).filter((r) => r.actor === who.actor);
    expect(rows.map(({ worker, method, route }) => ({ worker, method, route }))).toEqual([
      { worker: "admin", method: "PATCH", route: "/admin/clients/:id" },
    ]);
    await sweepAll();
    const named = (await auditEvents({ type: "request.unfinished" })).filter((e) => detailOf(e).actor === who.actor);
    expect(named.map((e) => [e.outcome, detailOf(e).route, e.client_id])).toContainEqual([
      "unknown",
      "/admin/clients/:id",
      c.client_id,
    ]);
    expect(await journalRows(env)).toEqual([]);
  });

  it("a developer's: the same, through the developer API", async () => {
    const { b, csrf } = await developer("0106");
    const app = await createApp(b, csrf);
    const failing = new Browser({ bindings: { ONE_TIME: auditRefused } });
    for (const [k, v] of b.cookies) failing.cookies.set(k, v);
    const res = await api(failing, csrf, "PATCH", `/developers/api/apps/${app.client_id}`, { name: "Renamed" });
    expect(res.status).toBe(500);
    const [created] = await auditEvents({ type: "client.created", clientId: app.client_id });
    const actor = String(detailOf(created!).actor);
    const rows = (await journalRows(env)).filter((r) => r.actor === actor);
    // (the worker is the one serving /developers: the console's when deployed, the all-in-one here)
    expect(rows.map(({ method, route }) => ({ method, route }))).toEqual([
      { method: "PATCH", route: "/developers/api/apps/:id" },
    ]);
    await sweepAll();
    const named = (await auditEvents({ type: "request.unfinished" })).filter((e) => detailOf(e).actor === actor);
    expect(named.map((e) => e.client_id)).toEqual([app.client_id]);
  });
});

describe("the app a change names", () => {
  it("is the route's :id under /clients/ or /apps/, and nothing else", () => {
    expect(appOf("/admin/clients/:id", { id: "Ab12" })).toBe("Ab12");
    expect(appOf("/admin/clients/:id/guard/clear", { id: "Ab12" })).toBe("Ab12");
    expect(appOf("/developers/api/apps/:id/team/:member", { id: "Ab12", member: "m" })).toBe("Ab12");
    expect(appOf("/console/apps/:id", { id: "Ab12" })).toBe("Ab12");
    expect(appOf("/admin/directory/:phone", { phone: "01012345678" })).toBeUndefined();
    expect(appOf("/admin/operators/:id", { id: "op_1" })).toBeUndefined();
    expect(appOf("/admin/reviews/:id/approve", { id: "7" })).toBeUndefined();
    expect(appOf("/admin/clients", {})).toBeUndefined();
    expect(appOf("/admin/clients/:id", { id: "not an id" })).toBeUndefined();
  });
});

type Fate = "answered" | "refused" | "failed" | "killed";

describe("the invariant under concurrent, failed, killed and replayed changes and sweeps", () => {
  it("every committed change is audited, by its own event or exactly one request.unfinished", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Fate>("answered", "refused", "failed", "killed"), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        async (fates, sweepers, replay) => {
          run++;
          const actorOf = (i: number) => `operator:p${run}x${i}`;
          await Promise.all(
            fates.map(async (fate, i) => {
              const actor = actorOf(i);
              const change = () => env.DB.prepare("INSERT INTO journal_probe (actor) VALUES (?)").bind(actor).run();
              if (fate === "killed") {
                await beginChange(env, actor, CTX);
                await change(); // and the worker dies: nothing after runs
                return;
              }
              await journaled(env, actor, CTX, async () => {
                if (fate === "refused") throw E.invalid("redirect_uris");
                await change();
                if (fate === "failed") throw new Error("the audit append failed");
                await audit(env, "client.updated", null, "ok", { actor });
              }).catch(() => undefined);
            }),
          );
          const left = await journalRows(env);
          // sweeps at once, past the grace; with `replay`, a sweep killed before its delete runs again
          await Promise.all(Array.from({ length: sweepers }, () => sweepAll()));
          if (replay)
            for (const r of left.filter((r) => r.actor.startsWith(`operator:p${run}x`))) {
              await env.DB.prepare(
                "INSERT OR IGNORE INTO change_journal (id, actor, worker, method, route, started_at) VALUES (?, ?, ?, ?, ?, ?)",
              )
                .bind(r.id, r.actor, r.worker, r.method, r.route, r.started_at)
                .run();
              await sweepAll();
            }
          expect((await journalRows(env)).filter((r) => r.actor.startsWith(`operator:p${run}x`))).toEqual([]);
          const own = await auditEvents({ type: "client.updated" });
          const unfinished = await auditEvents({ type: "request.unfinished" });
          for (const [i, fate] of fates.entries()) {
            const actor = actorOf(i);
            const { results } = await env.DB.prepare("SELECT 1 FROM journal_probe WHERE actor = ?").bind(actor).all();
            const committed = results.length === 1;
            const mine = own.filter((e) => detailOf(e).actor === actor).length;
            const named = unfinished.filter((e) => detailOf(e).actor === actor);
            expect({ fate, committed, mine, named: named.length }).toEqual({
              fate,
              committed: fate !== "refused",
              mine: fate === "answered" ? 1 : 0,
              named: fate === "failed" || fate === "killed" ? 1 : 0,
            });
            for (const e of named) expect(detailOf(e)).toEqual({ actor, ...CTX });
          }
        },
      ),
      { numRuns: 12 },
    );
  });
});
