// A subscriber row holds one person for its life (docs/account.md "A subscriber is a person"): a
// directory import never turns the row of one person into another's, nor a test number into a
// directory person, whatever lands between its statements. The import decides who holds each
// number and writes it in one D1 transaction (workers/admin/store.ts upsertSubscribers); these tests
// land another operator action, or a sign-in, at every point of it over the real D1.
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ADMIN_TOKEN, admin } from "../support/admin";
import { BASE, DEMO, exchange, intercept, mintFor, userMe } from "../support/helpers";
import { ciOf, importRows, lastCode } from "../support/directory";
import { Browser, DEMO_CB, signInAll } from "../support/signin";
import { subscriberByPhone } from "../../workers/provider/store/directory";
import { decryptField } from "../../workers/core/crypto";
import adminWorker from "../../workers/admin/index";

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

type Exec = "run" | "all" | "first" | "raw";

/**
 * The real D1, running `meanwhile` once, right before the first execution (a statement's run, all,
 * first or raw, or a batch) that `pick` chooses from its SQL and its place among this database's
 * executions (0 first): another request landing between two statements of one operation. The
 * statements stay the binding's own objects (a batch takes only those), their methods wrapped.
 */
function beforeExecution(
  db: D1Database,
  pick: (sql: readonly string[], n: number) => boolean,
  meanwhile: () => Promise<unknown>,
): D1Database & { landed: () => boolean } {
  let done = false;
  let n = 0;
  const sqlOf = new WeakMap<object, string>();
  const before = async (sql: readonly string[]) => {
    if (!done && pick(sql, n++)) {
      done = true;
      await meanwhile();
    }
  };
  const watch = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    sqlOf.set(stmt, sql);
    const s = stmt as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const m of ["run", "all", "first", "raw"] as Exec[]) {
      const real = s[m]!.bind(stmt);
      s[m] = async (...a: unknown[]) => (await before([sql]), real(...a));
    }
    const bind = s.bind!.bind(stmt);
    s.bind = (...a: unknown[]) => watch(bind(...a) as D1PreparedStatement, sql);
    return stmt;
  };
  return intercept(db, {
    prepare: (sql: string) => watch(db.prepare(sql), sql),
    batch: async (stmts: D1PreparedStatement[]) => {
      await before(stmts.map((st) => sqlOf.get(st) ?? ""));
      return db.batch(stmts);
    },
    landed: () => done,
  }) as D1Database & { landed: () => boolean };
}

/** The import's write of the directory rows (its transaction, or a statement of its own). */
const IMPORT_WRITE = (sql: readonly string[]) =>
  sql.some((s) => /INSERT INTO subscribers \(telco, phone, name, gender, birth, foreign_cd, ci, created_at\)/.test(s));

/** An admin API call through the admin worker over `db`. */
async function adminOver(db: D1Database, method: string, path: string, json?: unknown): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  if (json !== undefined) headers["Content-Type"] = "application/json";
  const req = new Request(`${BASE}${path}`, {
    method,
    headers,
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return adminWorker.fetch!(req as never, { ...env, DB: db } as never, ctx);
}

const person = (phone: string, name: string, ci: string) => ({
  telcoCd: "K",
  phoneNo: phone,
  name,
  gender: "F",
  birth: "1990-01-01",
  foreign: "L",
  ci,
});

const testNumber = (phone: string, ci: string) => ({
  ...person(phone, "앱심사", ci),
  code: "246810",
  clients: [DEMO.clientId],
  expiresAt: new Date(Date.now() + 3600_000).toISOString(),
});

/** What the app receives for a code: plid, name and ci (decrypted). */
async function userOf(code: string) {
  const res = await exchange(code);
  expect(res.status).toBe(200);
  const { access_token } = (await res.json()) as { access_token: string };
  const me = await userMe(access_token);
  expect(me.status).toBe(200);
  const { user } = (await me.json()) as { user: Record<string, string> };
  return {
    plid: user.plid!,
    name: await decryptField(DEMO.secret, user.name!),
    ci: await decryptField(DEMO.secret, user.ci!),
  };
}

async function linkCount(plid: string): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM links WHERE plid = ?").bind(plid).first<{ n: number }>())!.n;
}

describe("a directory import with another write landing before its own", () => {
  it("a test number registered meanwhile at the number is removed, never turned into the imported person: its fixed code signs in as no one", async () => {
    const phone = "01077770001";
    const real = person(phone, "실제사람", ciOf(91));
    const db = beforeExecution(env.DB, IMPORT_WRITE, async () => {
      // the operator registers a review test number at the same number (not in the directory yet)
      expect((await admin("POST", "/admin/test-numbers", { json: testNumber(phone, ciOf(92)) })).status).toBe(201);
    });
    const res = await adminOver(db, "POST", "/admin/directory/import", [real]);
    expect(db.landed()).toBe(true);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ inserted: 1, updated: 0, reassigned: 1 });

    const row = (await subscriberByPhone(env, phone))!;
    expect(row).toMatchObject({ name: "실제사람", ci: real.ci, testOtpHash: null, review: null });
    // Whoever holds the reviewers' code (shared with app-store reviewers) does not sign in as the
    // real person: the number now gets an SMS code, and the fixed one is wrong.
    await expect(signInAll(new Browser(), { telco: "K", name: "실제사람", phone, code: "246810" })).rejects.toThrow();
  });

  it("another import giving the number to someone who then signed in: that person's row and plid never carry the first import's person, whose row is new", async () => {
    const phone = "01077770002";
    const earlier = person(phone, "예전주인", ciOf(93)); // in the directory with this number
    const later = person(phone, "새주인", ciOf(94)); // the number passed to this person
    await importRows([earlier]);
    const earlierId = (await subscriberByPhone(env, phone))!.id;
    let laterPlid = "";
    let laterId = 0;
    let laterCode = "";
    // Import A re-sends the earlier person; import B, reassigning the number, runs whole while A
    // sits before its write; the new owner then signs in to an app.
    const db = beforeExecution(env.DB, IMPORT_WRITE, async () => {
      expect(await importRows([later])).toMatchObject({ reassigned: 1 });
      const m = await mintFor(phone);
      laterPlid = m.plid;
      laterId = m.subscriberId;
      expect(await userOf(m.code)).toMatchObject({ name: "새주인", ci: later.ci });
      laterCode = (await mintFor(phone)).code; // a code not yet redeemed
    });
    const res = await adminOver(db, "POST", "/admin/directory/import", [earlier]);
    expect(db.landed()).toBe(true);
    expect(res.status).toBe(200);
    // As if B ran first: the number passed back to the earlier person, a new row and no link.
    expect(await res.json()).toMatchObject({ inserted: 1, updated: 0, reassigned: 1 });
    const row = (await subscriberByPhone(env, phone))!;
    expect(row.ci).toBe(earlier.ci);
    expect(row.id).not.toBe(laterId);
    expect(row.id).not.toBe(earlierId);
    expect(await env.DB.prepare("SELECT id FROM subscribers WHERE id = ?").bind(laterId).first()).toBeNull();
    // The new owner's login with the app ended (its code redeems nothing), as a reassignment ends it.
    expect(await linkCount(laterPlid)).toBe(0);
    expect((await exchange(laterCode)).status).not.toBe(200);

    // The earlier person's next sign-in asks for consent and reaches the app under a new plid.
    const b = new Browser({ vars: { SIGNIN_RESEND_COOLDOWN_SECONDS: "0" } });
    const p1 = await b.authorize();
    const p2 = await b.submit(p1, { telcoCd: "K", name: "예전주인", phoneNo: phone });
    const p3 = await b.submit(p2, { otp: await lastCode(phone) });
    expect(p3.form?.step).toBe("consent");
    const done = await b.submit(p3, { agree: "Y" });
    const loc = new URL(done.res.headers.get("Location")!);
    expect(loc.origin + loc.pathname).toBe(DEMO_CB);
    const got = await userOf(loc.searchParams.get("code")!);
    expect(got).toMatchObject({ name: "예전주인", ci: earlier.ci });
    expect(got.plid).not.toBe(laterPlid);
  });
});

// ---- any interleaving, as a property ----

const POOL = ["01077780001", "01077780002", "01077780003"];
/** Distinct canonical 64-byte cis, apart from any other test's. */
const CIS = [1, 2, 3, 4].map((n) => {
  const b = new Uint8Array(64).fill(0x5a);
  b[0] = n;
  return btoa(String.fromCharCode(...b));
});

type Held = { ci: number; test: boolean };
type Directory = Map<number, Held>; // pool index → holder
type Op =
  | { kind: "import"; rows: { p: number; c: number }[] }
  | { kind: "testAdd"; p: number; c: number }
  | { kind: "testRemove"; p: number }
  | { kind: "dirDelete"; p: number }
  | { kind: "signIn"; p: number };

/** What each operation does to who holds the pool's numbers, run alone (docs/account.md, docs/operations.md). */
function model(d: Directory, op: Op): Directory {
  const out = new Map(d);
  switch (op.kind) {
    case "import": {
      for (const r of op.rows) {
        // the person's row (same ci, not a test number) moves here; any other holder here is displaced
        for (const [p, h] of d) if (!h.test && h.ci === r.c) out.delete(p);
        out.delete(r.p);
      }
      for (const r of op.rows) out.set(r.p, { ci: r.c, test: false });
      return out;
    }
    case "testAdd": {
      const h = d.get(op.p);
      if (!h || h.test) out.set(op.p, { ci: op.c, test: true });
      return out;
    }
    case "testRemove":
      if (d.get(op.p)?.test) out.delete(op.p);
      return out;
    case "dirDelete":
      out.delete(op.p);
      return out;
    case "signIn":
      return out;
  }
}

function send(db: D1Database, op: Op): Promise<unknown> {
  switch (op.kind) {
    case "import":
      return adminOver(
        db,
        "POST",
        "/admin/directory/import",
        op.rows.map((r) => person(POOL[r.p]!, "사람", CIS[r.c]!)),
      );
    case "testAdd":
      return adminOver(db, "POST", "/admin/test-numbers", testNumber(POOL[op.p]!, CIS[op.c]!));
    case "testRemove":
      return adminOver(db, "DELETE", `/admin/test-numbers/${POOL[op.p]}`);
    case "dirDelete":
      return adminOver(db, "DELETE", `/admin/directory/${POOL[op.p]}`);
    case "signIn":
      return subscriberByPhone(env, POOL[op.p]!).then((s) => (s ? mintFor(POOL[op.p]!) : null));
  }
}

const IN_POOL = `phone IN (${POOL.map(() => "?").join(", ")})`;

/** The pool's rows (and any left parked mid-move), by id. */
async function rows(): Promise<{ id: number; phone: string; ci: string; test: number }[]> {
  return (
    await env.DB.prepare(
      `SELECT id, phone, ci, test_clients IS NOT NULL AS test FROM subscribers WHERE ${IN_POOL} OR phone LIKE 'moving:%'`,
    )
      .bind(...POOL)
      .all<{ id: number; phone: string; ci: string; test: number }>()
  ).results;
}

async function directory(): Promise<Directory> {
  const d: Directory = new Map();
  for (const r of await rows()) d.set(POOL.indexOf(r.phone), { ci: CIS.indexOf(r.ci), test: r.test === 1 });
  return d;
}

const show = (d: Directory) => JSON.stringify([...d].sort((a, b) => a[0] - b[0]));

/** Empties the pool's numbers, then registers the start: directory people, test numbers and their links. */
async function start(initial: (Held | null)[], linked: boolean[]): Promise<void> {
  const ids = `SELECT id FROM subscribers WHERE ${IN_POOL} OR phone LIKE 'moving:%'`;
  await env.DB.batch([
    env.DB.prepare(`DELETE FROM auto_login_grants WHERE subscriber_id IN (${ids})`).bind(...POOL),
    env.DB.prepare(`DELETE FROM links WHERE subscriber_id IN (${ids})`).bind(...POOL),
    env.DB.prepare(`DELETE FROM subscribers WHERE id IN (${ids})`).bind(...POOL),
  ]);
  const people = initial.flatMap((h, p) => (h && !h.test ? [person(POOL[p]!, "사람", CIS[h.ci]!)] : []));
  if (people.length) await importRows(people);
  for (const [p, h] of initial.entries())
    if (h?.test)
      expect((await admin("POST", "/admin/test-numbers", { json: testNumber(POOL[p]!, CIS[h.ci]!) })).status).toBe(201);
  for (const [p, h] of initial.entries()) if (h && linked[p]) await mintFor(POOL[p]!);
}

const p = fc.integer({ min: 0, max: POOL.length - 1 });
const c = fc.integer({ min: 0, max: CIS.length - 1 });
/** A file names a number once and a person once. */
const file = fc
  .array(fc.record({ p, c }), { minLength: 1, maxLength: POOL.length })
  .map((rs) => rs.filter((r, i) => rs.findIndex((o) => o.p === r.p || o.c === r.c) === i));
const importOp = file.map((rows): Op => ({ kind: "import", rows }));
const testAdd = fc.record({ kind: fc.constant("testAdd" as const), p, c });
const testRemove = fc.record({ kind: fc.constant("testRemove" as const), p });
/** The operations whose statements the property splits: their decision by a read, their write after. */
const split = fc.oneof({ arbitrary: importOp, weight: 3 }, testAdd, testRemove);
const whole = fc.oneof(
  { arbitrary: importOp, weight: 2 },
  { arbitrary: testAdd, weight: 2 },
  testRemove,
  fc.record({ kind: fc.constant("dirDelete" as const), p }),
  fc.record({ kind: fc.constant("signIn" as const), p }),
);
/** The start: each number free, a directory person's (distinct cis) or a test number; a link or not. */
const initial = fc
  .tuple(
    fc.array(fc.option(fc.record({ ci: c, test: fc.boolean() }), { nil: null }), {
      minLength: POOL.length,
      maxLength: POOL.length,
    }),
    fc.array(fc.boolean(), { minLength: POOL.length, maxLength: POOL.length }),
  )
  .map(([hs, linked]) => ({
    held: hs.map((h, i) => (h && !h.test && hs.findIndex((o) => o && !o.test && o.ci === h.ci) !== i ? null : h)),
    linked,
  }));

describe("removing a subscriber with another write landing before its own", () => {
  it("an import moving the person to another number between the removal's read and its statements: the person, their plid and the number's new holder stay (404)", async () => {
    const [old, moved] = ["01099996661", "01099996662"];
    const person = {
      telcoCd: "K",
      phoneNo: old,
      name: "옮긴사람",
      gender: "F",
      birth: "1991-02-03",
      foreign: "L",
      ci: ciOf(311),
    };
    await importRows([person]);
    const { plid } = await mintFor(old);
    const db = beforeExecution(
      env.DB,
      (_sql, n) => n === 1, // after the read of who holds the number, before anything else
      () =>
        importRows([
          { ...person, phoneNo: moved },
          { telcoCd: "S", phoneNo: old, name: "새사람", gender: "M", birth: "1980-01-01", foreign: "L", ci: ciOf(312) },
        ]),
    );
    const res = await adminOver(db, "DELETE", `/admin/directory/${old}`);
    expect(db.landed()).toBe(true);
    expect(res.status).toBe(404);
    expect(await subscriberByPhone(env, moved)).toMatchObject({ ci: ciOf(311) });
    expect(await subscriberByPhone(env, old)).toMatchObject({ ci: ciOf(312) });
    expect(await env.DB.prepare("SELECT plid FROM links WHERE plid = ?").bind(plid).first()).not.toBeNull();
  });
});

describe("any operator action or sign-in landing between any two statements of another", () => {
  it("every row keeps its one person (ci) and its kind (test number or not), and the directory is one that the two actions, run one after the other, give", async () => {
    await fc.assert(
      fc.asyncProperty(initial, split, whole, fc.nat({ max: 8 }), async (init, a, b, k) => {
        await start(init.held, init.linked);
        const before = await directory();
        const seen = new Map<number, string>();
        const observe = async () => {
          for (const r of await rows()) {
            const who = `${r.ci} ${r.test}`;
            expect(seen.get(r.id) ?? who, `row ${r.id} changed person or kind`).toBe(who);
            seen.set(r.id, who);
          }
        };
        await observe();
        const db = beforeExecution(
          env.DB,
          (_sql, n) => n === k,
          async () => {
            await observe();
            await send(env.DB, b);
            await observe();
          },
        );
        await send(db, a);
        if (!db.landed()) await send(env.DB, b);
        await observe();
        expect(await rows(), "a row left parked mid-move").not.toContainEqual(
          expect.objectContaining({ phone: expect.stringMatching(/^moving:/) }),
        );
        const got = show(await directory());
        const serial = [show(model(model(before, a), b)), show(model(model(before, b), a))];
        expect(serial, `${JSON.stringify({ init, a, b, k })} gave ${got}`).toContain(got);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
