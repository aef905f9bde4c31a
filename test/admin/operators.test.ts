// Roles, named API tokens and the audit's actor (docs/operations.md "Operators and roles"):
// - a viewer and an editor are refused (403) on every admin route above their role, enumerated from
//   the route table, not sampled; a route within the role is never refused for it;
// - a token is shown once, listed without its secret with its last use, and refused once revoked;
// - every mutating admin route, called with a named token, leaves an audit event naming
//   `token:<name>`, and runs under a change journal row naming the token and the route (none left
//   once it answered); the scenarios below must cover every non-GET route of the table;
// - a grant is an invitation (masked number, 7 days); a fixed-code test number is refused.
import { guardStore } from "../../workers/provider/store/guard/reach";
import { guardRules } from "../../workers/provider/store/guard/config";
import { describe, expect, it } from "vitest";
import { admin, createClient } from "../support/admin";
import { auditEvents } from "../support/audit";
import { HONG } from "../support/helpers";
import { ciOf } from "../support/directory";
import { table } from "../../workers/admin/routes";
import { inviteKey, takeInvite, type Operator } from "../../workers/provider/store/operators";
import { env } from "../support/env";
import { journalSeen, watchJournal } from "../support/faults";
import { journalRows } from "../../workers/provider/store/change-journal";
import { submitReview } from "../../workers/provider/store/reviews";

async function token(name: string, role: string): Promise<string> {
  const res = await admin("POST", "/admin/tokens", { json: { name, role } });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { token: string; name: string; role: string };
  expect(body).toMatchObject({ name, role, created_by: "token:ADMIN_TOKEN" });
  expect(body.token).toMatch(/^plt_[A-Za-z0-9_-]{43}$/);
  return body.token;
}

const ORDER = ["viewer", "editor", "admin"];
const above = (role: string, need: string) => ORDER.indexOf(need) > ORDER.indexOf(role);
const concrete = (path: string) =>
  path.replace(":id", "op_AAAAAAAAAAAAAAAA").replace(":phone", "01000000000").replace(":name", "nobody");

describe("roles", () => {
  it("the table gives every route a role, and the least roles are those docs/operations.md lists", () => {
    const least = Object.fromEntries(table.map((r) => [`${r.method} ${r.path}`, r.role]));
    // copied from the issue: editors manage apps but not their secrets or deletion; admins operators and tokens
    expect(least["POST /admin/clients/:id/rotate-secret"]).toBe("admin");
    expect(least["DELETE /admin/clients/:id"]).toBe("admin");
    expect(least["PATCH /admin/clients/:id"]).toBe("editor");
    expect(least["POST /admin/test-numbers"]).toBe("editor");
    expect(least["POST /admin/directory/import"]).toBe("editor");
    expect(least["POST /admin/operators"]).toBe("admin");
    expect(least["POST /admin/tokens"]).toBe("admin");
    // the browser import's resume point is the importer's (an editor's), not a reader's
    expect(least["GET /admin/directory/import/runs"]).toBe("editor");
    for (const r of table.filter((r) => r.method === "GET" && !/operators|tokens|import\/runs/.test(r.path)))
      expect(r.role, r.path).toBe("viewer");
  });

  for (const role of ["viewer", "editor"]) {
    it(`a ${role} is refused on every route above the role, and on none within it`, async () => {
      const secret = await token(`t-${role}`, role);
      for (const r of table) {
        const res = await admin(r.method, concrete(r.path), {
          token: secret,
          ...(r.method === "GET" || r.method === "DELETE" ? {} : { json: {} }),
        });
        if (above(role, r.role)) {
          expect(res.status, `${r.method} ${r.path}`).toBe(403);
          const body = (await res.json()) as { error: string; message: string };
          expect(body.error).toBe("access_denied");
          expect(body.message).toContain(`needs the ${r.role} role`);
        } else {
          expect(res.status, `${r.method} ${r.path}`).not.toBe(403);
          await res.body?.cancel();
        }
      }
    });
  }
});

describe("API tokens", () => {
  it("are shown once, listed without the secret with their last use, and refused once revoked", async () => {
    const secret = await token("ci-list", "editor");
    const who = await admin("GET", "/admin/whoami", { token: secret });
    expect(await who.json()).toEqual({ actor: "token:ci-list", role: "editor" });
    const listed = (await (await admin("GET", "/admin/tokens")).json()) as { tokens: Record<string, unknown>[] };
    const mine = listed.tokens.find((t) => t.name === "ci-list")!;
    expect(Object.keys(mine).sort()).toEqual(["created_at", "created_by", "last_used_at", "name", "role"]);
    expect(mine.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed)).not.toContain(secret);
    const again = await admin("POST", "/admin/tokens", { json: { name: "ci-list", role: "viewer" } });
    expect(again.status).toBe(409);
    expect((await admin("DELETE", "/admin/tokens/ci-list")).status).toBe(200);
    const after = await admin("GET", "/admin/whoami", { token: secret });
    expect(after.status).toBe(401);
    expect((await admin("DELETE", "/admin/tokens/ci-list")).status).toBe(404);
  });

  it("refuses bad names, roles and fields with a clear error", async () => {
    for (const json of [
      { name: "Has Space", role: "viewer" },
      { name: "x".repeat(33), role: "viewer" },
      { name: "ok", role: "owner" },
      { name: "ok" },
      { name: "ok", role: "viewer", extra: 1 },
    ]) {
      const res = await admin("POST", "/admin/tokens", { json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
    }
  });

  it("a wrong token that looks like one is refused 401", async () => {
    const res = await admin("GET", "/admin/clients", { token: `plt_${"A".repeat(43)}` });
    expect(res.status).toBe(401);
  });
});

describe("operators", () => {
  it("a grant is an invitation with the number masked; a fixed-code test number is refused", async () => {
    const res = await admin("POST", "/admin/operators", { json: { phone: "01056789012", role: "admin" } });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, string>;
    expect(body).toMatchObject({ masked: "010-****-9012", role: "admin", status: "invited" });
    const days = (Date.parse(body.expires_at!) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);
    const list = await (await admin("GET", "/admin/operators")).text();
    expect(list).toContain("010-****-9012");
    expect(list).not.toContain("01056789012");
    const test = await admin("POST", "/admin/operators", { json: { phone: HONG.phone, role: "viewer" } });
    expect(test.status).toBe(400);
    expect(await test.text()).toContain("fixed-code test number can never hold a role");
    expect((await admin("DELETE", "/admin/operators/invites/01056789012")).status).toBe(200);
    expect((await admin("DELETE", "/admin/operators/invites/01056789012")).status).toBe(404);
  });
});

/** A take that wrote a role (not null, not the last admin's kept). */
function operatorOf(t: Awaited<ReturnType<typeof takeInvite>>): Operator {
  if (t === null || t === "kept_last_admin") throw new Error(`no role written: ${t}`);
  return t;
}

describe("revoking a role", () => {
  /** An operator of `role` who took their invitation (as a console sign-in does). */
  async function operatorWith(phone: string, role: string, subscriberId: number): Promise<string> {
    expect((await admin("POST", "/admin/operators", { json: { phone, role } })).status).toBe(201);
    return operatorOf(await takeInvite(env, await inviteKey(env.SEAL_KEY, phone), subscriberId, "010-****-0000")).id;
  }
  const admins = async () =>
    ((await (await admin("GET", "/admin/operators")).json()) as { operators: { id: string; role: string }[] }).operators
      .filter((o) => o.role === "admin")
      .map((o) => o.id);

  it("ends any role but the last admin's, audited with who did it; admins revoking each other at once leave exactly one", async () => {
    const viewer = await operatorWith("01077770101", "viewer", 910_001);
    const a = await operatorWith("01077770102", "admin", 910_002);
    const b = await operatorWith("01077770103", "admin", 910_003);
    const c = await operatorWith("01077770104", "admin", 910_004);
    const res = await admin("DELETE", `/admin/operators/${viewer}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: viewer, revoked: true });
    const [revoked] = await auditEvents({ type: "operator.revoked" });
    expect(JSON.parse(revoked!.detail!)).toEqual({ actor: "token:ADMIN_TOKEN", operator: viewer, role: "viewer" });
    expect((await admin("DELETE", `/admin/operators/${viewer}`)).status).toBe(404);
    // every admin revoked at once: the console keeps one, whoever it is
    const all = await admins();
    expect(all).toEqual(expect.arrayContaining([a, b, c]));
    const answers = await Promise.all(all.map((id) => admin("DELETE", `/admin/operators/${id}`)));
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(all.length - 1).fill(200), 400]);
    const refused = answers.find((r) => r.status === 400)!;
    expect(await refused.json()).toMatchObject({
      error: "invalid_request",
      message: expect.stringContaining("the last admin"),
    });
    const left = await admins();
    expect(left).toHaveLength(1);
    // the last one stays, asked again
    expect((await admin("DELETE", `/admin/operators/${left[0]}`)).status).toBe(400);
    expect(await admins()).toEqual(left);
    expect(await auditEvents({ type: "operator.revoked" })).toHaveLength(all.length);
  });

  it("an invitation to a lesser role never lowers the last admin: the invitation is taken, the role kept; two admins lowered at once, exactly one is", async () => {
    const x = { phone: "01077770111", id: 930_001 };
    const y = { phone: "01077770112", id: 930_002 };
    const xId = await operatorWith(x.phone, "admin", x.id);
    const yId = await operatorWith(y.phone, "admin", y.id);
    // down to these two admins
    for (const id of (await admins()).filter((id) => id !== xId && id !== yId))
      expect((await admin("DELETE", `/admin/operators/${id}`)).status).toBe(200);
    expect((await admins()).sort()).toEqual([xId, yId].sort());
    // both invited as viewers, both taking at once
    for (const p of [x, y])
      expect((await admin("POST", "/admin/operators", { json: { phone: p.phone, role: "viewer" } })).status).toBe(201);
    const takes = await Promise.all(
      [x, y].map(async (p) => takeInvite(env, await inviteKey(env.SEAL_KEY, p.phone), p.id, "010-****-0000")),
    );
    const lowered = takes.filter((t) => t !== null && t !== "kept_last_admin");
    expect(lowered.map((t) => operatorOf(t).role)).toEqual(["viewer"]);
    expect(takes.filter((t) => t === "kept_last_admin")).toHaveLength(1);
    const kept = await admins();
    expect(kept).toHaveLength(1);
    // both invitations went
    const list = (await (await admin("GET", "/admin/operators")).json()) as { invites: unknown[] };
    expect(list.invites).toEqual([]);
    // asked again, alone: still kept
    const last = takes[0] === "kept_last_admin" ? x : y;
    expect((await admin("POST", "/admin/operators", { json: { phone: last.phone, role: "editor" } })).status).toBe(201);
    expect(await takeInvite(env, await inviteKey(env.SEAL_KEY, last.phone), last.id, "010-****-0000")).toBe(
      "kept_last_admin",
    );
    expect(await admins()).toEqual(kept);
    // an invitation to admin again, or to anyone not the last admin, is taken as before
    expect((await admin("POST", "/admin/operators", { json: { phone: last.phone, role: "admin" } })).status).toBe(201);
    expect(
      operatorOf(await takeInvite(env, await inviteKey(env.SEAL_KEY, last.phone), last.id, "010-****-0000")).role,
    ).toBe("admin");
  });
});

describe("taking an invitation", () => {
  it("of 10 concurrent sign-ins with the invited number, exactly one takes the role; a replay takes nothing", async () => {
    const phone = "01077770099";
    expect((await admin("POST", "/admin/operators", { json: { phone, role: "editor" } })).status).toBe(201);
    const key = await inviteKey(env.SEAL_KEY, phone);
    const taken = await Promise.all(
      Array.from({ length: 10 }, (_, i) => takeInvite(env, key, 900_000 + i, "010-****-0099")),
    );
    const winners = taken.filter((t) => t !== null);
    expect(winners).toHaveLength(1);
    expect(operatorOf(winners[0]!).role).toBe("editor");
    expect(await takeInvite(env, key, 900_000, "010-****-0099")).toBeNull();
    const list = (await (await admin("GET", "/admin/operators")).json()) as {
      operators: unknown[];
      invites: unknown[];
    };
    expect(list.invites).toEqual([]);
  });
});

describe("every change says who made it", () => {
  it("each mutating route, called with a named token, is audited with token:<name>", async () => {
    const secret = await token("auditor", "admin");
    const since = Date.now();
    const c = await createClient({ name: "Actor Shop" });
    const as = { token: secret };
    const scenarios: [string, () => Promise<Response>][] = [
      [
        "POST /admin/clients",
        () =>
          admin("POST", "/admin/clients", {
            ...as,
            json: { name: "A", redirect_uris: ["https://a.example/cb"], items: ["name"] },
          }),
      ],
      [
        "PATCH /admin/clients/:id",
        () => admin("PATCH", `/admin/clients/${c.client_id}`, { ...as, json: { name: "B" } }),
      ],
      ["POST /admin/clients/:id/rotate-secret", () => admin("POST", `/admin/clients/${c.client_id}/rotate-secret`, as)],
      ["POST /admin/clients/:id/disable", () => admin("POST", `/admin/clients/${c.client_id}/disable`, as)],
      ["POST /admin/clients/:id/enable", () => admin("POST", `/admin/clients/${c.client_id}/enable`, as)],
      [
        "POST /admin/clients/:id/guard/clear",
        async () => {
          // a block the guard holds suspect: five codes from it, settled, none typed
          const sentAt = Date.now() - 120_000;
          const sent = { kind: "sent" as const, scopes: ["block:192.0.2.0/24"], sentAt, challenged: false };
          await guardStore(env, c.client_id).record(
            "actor-guard",
            Array(5).fill(sent),
            null,
            Date.now(),
            guardRules(env),
          );
          return admin("POST", `/admin/clients/${c.client_id}/guard/clear`, {
            ...as,
            json: { scope: "block:192.0.2.0/24" },
          });
        },
      ],
      [
        "POST /admin/directory/import",
        () =>
          admin("POST", "/admin/directory/import?run=actor-run", {
            ...as,
            type: "text/csv",
            body: `telcoCd,phoneNo,name,gender,birth,foreign,ci\nK,01077770001,가나다,F,1990-01-01,L,${ciOf(71)}\n`,
          }),
      ],
      ["POST /admin/directory/import/commit", () => admin("POST", "/admin/directory/import/commit?run=actor-run", as)],
      ["DELETE /admin/directory/:phone", () => admin("DELETE", "/admin/directory/01077770001", as)],
      [
        "POST /admin/test-numbers",
        () =>
          admin("POST", "/admin/test-numbers", {
            ...as,
            json: {
              telcoCd: "K",
              phoneNo: "01077770002",
              name: "심사",
              gender: "F",
              birth: "1990-01-01",
              foreign: "L",
              ci: ciOf(72),
              code: "135790",
              clients: [c.client_id],
              expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
            },
          }),
      ],
      ["DELETE /admin/test-numbers/:phone", () => admin("DELETE", "/admin/test-numbers/01077770002", as)],
      ["POST /admin/migrate/directory", () => admin("POST", "/admin/migrate/directory", as)],
      ["POST /admin/migrate/audit", () => admin("POST", "/admin/migrate/audit", as)],
      [
        "POST /admin/operators",
        () => admin("POST", "/admin/operators", { ...as, json: { phone: "01077770003", role: "viewer" } }),
      ],
      ["DELETE /admin/operators/invites/:phone", () => admin("DELETE", "/admin/operators/invites/01077770003", as)],
      [
        "DELETE /admin/operators/:id",
        async () => {
          // a viewer who took the invitation (as a console sign-in does; the store writes no event)
          const phone = "01077770004";
          expect((await admin("POST", "/admin/operators", { ...as, json: { phone, role: "viewer" } })).status).toBe(
            201,
          );
          const op = operatorOf(await takeInvite(env, await inviteKey(env.SEAL_KEY, phone), 920_001, "010-****-0004"));
          return admin("DELETE", `/admin/operators/${op.id}`, as);
        },
      ],
      [
        "POST /admin/tokens",
        () => admin("POST", "/admin/tokens", { ...as, json: { name: "made-by-auditor", role: "viewer" } }),
      ],
      ["DELETE /admin/tokens/:name", () => admin("DELETE", "/admin/tokens/made-by-auditor", as)],
      ["POST /admin/keys/rotate", () => admin("POST", "/admin/keys/rotate", { ...as, json: {} })],
      [
        "POST /admin/reviews/:id/approve",
        async () => {
          const r = await submitReview(
            env,
            c.client_id,
            { name: "B", items: [], purpose: null, retention: null },
            "developer:dv_x",
          );
          return admin("POST", `/admin/reviews/${r!.id}/approve`, { ...as, json: {} });
        },
      ],
      [
        "POST /admin/reviews/:id/reject",
        async () => {
          const r = await submitReview(
            env,
            c.client_id,
            { name: "C", items: [], purpose: null, retention: null },
            "developer:dv_x",
          );
          return admin("POST", `/admin/reviews/${r!.id}/reject`, { ...as, json: { reason: "not yet" } });
        },
      ],
      [
        "POST /admin/clients/:id/owner",
        () => admin("POST", `/admin/clients/${c.client_id}/owner`, { ...as, json: { phone: "01077770004" } }),
      ],
      [
        "POST /admin/clients/:id/events/resume",
        async () => {
          await env.DB.prepare("UPDATE clients SET events_paused_at = ? WHERE client_id = ?")
            .bind(Date.now(), c.client_id)
            .run();
          return admin("POST", `/admin/clients/${c.client_id}/events/resume`, { ...as, json: {} });
        },
      ],
      ["DELETE /admin/clients/:id", () => admin("DELETE", `/admin/clients/${c.client_id}`, as)],
    ];
    const covered = new Set(scenarios.map(([k]) => k));
    for (const r of table.filter((r) => r.method !== "GET"))
      expect(covered.has(`${r.method} ${r.path}`), `no scenario for ${r.method} ${r.path}`).toBe(true);
    await watchJournal();
    let seen = 0;
    for (const [name, run] of scenarios) {
      const before = (await auditEvents({ since })).length;
      const res = await run();
      expect(res.status, `${name}: ${res.status}`).toBeLessThan(300);
      await res.body?.cancel();
      // it ran under a journal row naming the token and the route, and left none behind
      const rows = await journalSeen("token:auditor", seen);
      expect(
        rows.map((r) => `${r.method} ${r.route}`),
        name,
      ).toContain(name);
      seen = rows.at(-1)!.seq;
      expect(
        (await journalRows(env)).filter((r) => r.actor === "token:auditor"),
        name,
      ).toEqual([]);
      const events = (await auditEvents({ since })).slice(before);
      expect(events.length, name).toBeGreaterThan(0);
      for (const e of events.filter((e) => !e.type.startsWith("plid.") && !e.type.startsWith("event.")))
        expect(JSON.parse(e.detail!).actor, `${name}: ${e.type}`).toBe("token:auditor");
    }
  });
});
