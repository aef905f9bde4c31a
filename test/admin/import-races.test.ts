// A subscriber row holds one person for its life (docs/account.md "A subscriber is a person"): a
// directory import never turns the row of one person into another's, nor a test number into a
// directory person, whatever lands between its steps. The import decides who holds each number and
// each number's shard applies it only while the holder is still the one decided against
// (workers/provider/store/flows/directory-write.ts); these tests land another operator action, or a sign-in,
// before every call the import (or the other action) makes to a directory shard, over the real
// shards (four of them in tests, so the steps of one action land on different shards).
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ADMIN_TOKEN, admin } from "../support/admin";
import { BASE, DEMO, exchange, mintFor, userMe } from "../support/helpers";
import { beforeShardCall, shardExec, shardRows } from "../support/shards";
import type { DirectoryShard } from "../../workers/provider/store/directory/directory-shard";
import { ciOf, importRows, lastCode } from "../support/directory";
import { Browser, DEMO_CB, signInAll } from "../support/signin";
import { subscriberByPhone } from "../../workers/provider/store/directory/directory";
import { decryptField } from "../../workers/core/crypto";
import adminWorker from "../../workers/admin/index";
import { CarrierUnavailable, httpDirectory } from "../../workers/provider/signin/carrier";
import { carrierSignature } from "../../workers/provider/signin/carrier-api";

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

type Dir = DurableObjectNamespace<DirectoryShard>;

/** An admin API call through the admin worker over the directory namespace `dir`. */
async function adminOver(dir: Dir, method: string, path: string, json?: unknown): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  if (json !== undefined) headers["Content-Type"] = "application/json";
  const req = new Request(`${BASE}${path}`, {
    method,
    headers,
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return adminWorker.fetch!(req as never, { ...env, DIRECTORY: dir } as never, ctx);
}

/** The import's write of a number: its claim (the holder decided against, then written). */
const IMPORT_WRITE = (method: string) => method === "claim";
/** The import's first step at a number: an update of the same person is read and written in it. */
const IMPORT_STEP = (method: string) => method === "importAtNumbers" || method === "claim";

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
  return (await shardRows("SELECT plid FROM links WHERE plid = ?", plid)).length;
}

describe("a directory import with another write landing before its own", () => {
  it("a test number registered meanwhile at the number is removed, never turned into the imported person: its fixed code signs in as no one", async () => {
    const phone = "01077770001";
    const real = person(phone, "실제사람", ciOf(91));
    const db = beforeShardCall(env.DIRECTORY, IMPORT_WRITE, async () => {
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

  it("another import sent while the first is between its read and its write waits for it (one import at a time): the result is the two one after the other, and the person it displaces is a new row", async () => {
    const phone = "01077770002";
    const earlier = person(phone, "예전주인", ciOf(93)); // in the directory with this number
    const later = person(phone, "새주인", ciOf(94)); // the number passed to this person
    await importRows([earlier]);
    const earlierId = (await subscriberByPhone(env, phone))!.id;
    const { plid: earlierPlid } = await mintFor(phone);
    // Import A re-sends the earlier person; import B, reassigning the number, is sent while A is
    // at its first step. B waits for A's lease, so it runs whole after A.
    let b: Promise<Response> | null = null;
    let bDone = false;
    const db = beforeShardCall(env.DIRECTORY, IMPORT_STEP, async () => {
      b = admin("POST", "/admin/directory/import", { json: [later] }).then((r) => ((bDone = true), r));
      await new Promise((r) => setTimeout(r, 200));
    });
    const res = await adminOver(db, "POST", "/admin/directory/import", [earlier]);
    expect(db.landed()).toBe(true);
    expect(bDone).toBe(false); // it waited
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ inserted: 0, updated: 1, reassigned: 0 });
    const bRes = await b!;
    expect(bRes.status).toBe(200);
    expect(await bRes.json()).toMatchObject({ inserted: 1, updated: 0, reassigned: 1 });
    const row = (await subscriberByPhone(env, phone))!;
    expect(row).toMatchObject({ name: "새주인", ci: later.ci });
    expect(row.id).not.toBe(earlierId);
    // the earlier person's login with the app ended, as a reassignment ends it
    expect(await linkCount(earlierPlid)).toBe(0);
    const m = await mintFor(phone);
    expect(await userOf(m.code)).toMatchObject({ name: "새주인", ci: later.ci });
    expect(m.plid).not.toBe(earlierPlid);
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
  | { kind: "signIn"; p: number }
  /** A sign-in with CARRIER_DIRECTORY=http whose carrier says number p is person c's. */
  | { kind: "carrier"; p: number; c: number };

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
    case "carrier":
      // a test number is answered by the directory (nothing written); anyone else is written as a
      // one-row import
      return d.get(op.p)?.test ? out : model(d, { kind: "import", rows: [{ p: op.p, c: op.c }] });
  }
}

const CARRIER_SECRET = "carrier-race-secret-0123456789abcdefABCDEF";

/** A carrier API that says every number it is asked about is person `c`'s, signing its answer. */
function carrierSaying(c: number): typeof fetch {
  return async (_input, init) => {
    const { requestId } = JSON.parse(String(init!.body)) as { requestId: string };
    const body = JSON.stringify({ requestId, match: true, ci: CIS[c], gender: "F", birth: "1990-01-01", foreign: "L" });
    const ts = String(Math.floor(Date.now() / 1000));
    return new Response(body, {
      headers: { "X-Signature-Timestamp": ts, "X-Signature": await carrierSignature(CARRIER_SECRET, ts, body) },
    });
  };
}

/** The step-1 confirmation of a carrier-API sign-in (as the pages ask it) over the namespace `dir`. */
function carrierSignIn(dir: Dir, op: Extract<Op, { kind: "carrier" }>): Promise<unknown> {
  const api = {
    url: "https://carrier.example/verify",
    secret: CARRIER_SECRET,
    timeoutMs: 5000,
    fetcher: carrierSaying(op.c),
  };
  // a long wait for another writer's ci lease: here that writer may be held until this one ends
  // "try again shortly" (the carrier's answer could not be written: the number's holder kept
  // changing, or the person's removal was still running) changes nothing: the person retries
  return httpDirectory({ ...env, DIRECTORY: dir }, api, 60_000)
    .confirm("K", "사람", POOL[op.p]!)
    .catch((err: unknown) => {
      if (!(err instanceof CarrierUnavailable)) throw err;
      refused.add(op);
      return null;
    });
}

/** The carrier sign-ins that answered "try again shortly" (they happened not at all). */
const refused = new Set<Op>();

/** Whether two operations touch a number or a ci in common (the only way one can refuse the other). */
function overlap(a: Op, b: Op): boolean {
  const numbers = (op: Op) => ("rows" in op ? op.rows.map((r) => r.p) : [op.p]);
  return numbers(a).some((p) => numbers(b).includes(p)) || cisOf(a).some((c) => cisOf(b).includes(c));
}

function send(dir: Dir, op: Op): Promise<unknown> {
  switch (op.kind) {
    case "import":
      return adminOver(
        dir,
        "POST",
        "/admin/directory/import",
        op.rows.map((r) => person(POOL[r.p]!, "사람", CIS[r.c]!)),
      );
    case "testAdd":
      return adminOver(dir, "POST", "/admin/test-numbers", testNumber(POOL[op.p]!, CIS[op.c]!));
    case "testRemove":
      return adminOver(dir, "DELETE", `/admin/test-numbers/${POOL[op.p]}`);
    case "dirDelete":
      return adminOver(dir, "DELETE", `/admin/directory/${POOL[op.p]}`);
    case "signIn":
      return subscriberByPhone(env, POOL[op.p]!).then((s) => (s ? mintFor(POOL[op.p]!) : null));
    case "carrier":
      return carrierSignIn(dir, op);
  }
}

const IN_POOL = `phone IN (${POOL.map(() => "?").join(", ")})`;

/** The people rows naming a pool number, by id. */
async function rows(): Promise<{ id: number; phone: string; ci: string; test: number }[]> {
  return shardRows<{ id: number; phone: string; ci: string; test: number }>(
    `SELECT id, phone, ci, test_clients IS NOT NULL AS test FROM people WHERE ${IN_POOL}`,
    ...POOL,
  );
}

/** Who holds each pool number, as a sign-in finds them. */
async function directory(): Promise<Directory> {
  const d: Directory = new Map();
  for (const [i, phone] of POOL.entries()) {
    const s = await subscriberByPhone(env, phone);
    if (s) d.set(i, { ci: CIS.indexOf(s.ci), test: s.review !== null });
  }
  return d;
}

const show = (d: Directory) => JSON.stringify([...d].sort((a, b) => a[0] - b[0]));

/** Empties the pool's numbers, then registers the start: directory people, test numbers and their links. */
async function start(initial: (Held | null)[], linked: boolean[]): Promise<void> {
  const ids = `SELECT id FROM people WHERE ${IN_POOL}`;
  await shardExec(`DELETE FROM grants WHERE subscriber_id IN (${ids})`, ...POOL);
  await shardExec(`DELETE FROM links WHERE subscriber_id IN (${ids})`, ...POOL);
  await shardExec(`DELETE FROM people WHERE ${IN_POOL}`, ...POOL);
  await shardExec(`DELETE FROM numbers WHERE ${IN_POOL}`, ...POOL);
  await shardExec(`DELETE FROM by_ci WHERE ci IN (${CIS.map(() => "?").join(", ")})`, ...CIS);
  await shardExec("DELETE FROM ci_leases");
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
const carrier = fc.record({ kind: fc.constant("carrier" as const), p, c });
/** The operations whose statements the property splits: their decision by a read, their write after. */
const split = fc.oneof({ arbitrary: importOp, weight: 3 }, { arbitrary: carrier, weight: 2 }, testAdd, testRemove);
const whole = fc.oneof(
  { arbitrary: importOp, weight: 2 },
  { arbitrary: carrier, weight: 2 },
  { arbitrary: testAdd, weight: 2 },
  testRemove,
  fc.record({ kind: fc.constant("dirDelete" as const), p }),
  fc.record({ kind: fc.constant("signIn" as const), p }),
);

/** The cis an operation decides (an import's rows, a carrier sign-in's person): it leases them. */
const cisOf = (op: Op): number[] =>
  op.kind === "import" ? op.rows.map((r) => r.c) : op.kind === "carrier" ? [op.c] : [];
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
    const db = beforeShardCall(
      env.DIRECTORY,
      (_method, _args, n) => n === 1, // after the read of who holds the number, before anything else
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
    expect(await shardRows("SELECT plid FROM links WHERE plid = ?", plid)).toHaveLength(1);
  });
});

describe("any operator action or sign-in (the carrier API's too) landing between any two statements of another", () => {
  it("every row keeps its one person (ci) and its kind (test number or not), and the directory is one that the two actions, run one after the other, give", async () => {
    await fc.assert(
      fc.asyncProperty(initial, split, whole, fc.nat({ max: 8 }), async (init, a, b, k) => {
        await start(init.held, init.linked);
        refused.clear();
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
        // Imports run one at a time (the directory's import lease), so does a carrier sign-in that
        // passes a number to another person (it takes the same lease: two such sign-ins wait for
        // each other too), and the writers of one ci one after the other (its ci lease): such a
        // write landing inside another waits for it, so it is sent and awaited after the first one
        // ends. (Awaited inside the first, it waited out its whole lease wait, 60 s, and refused.)
        const leased = (x: typeof a | typeof b) => x.kind === "import" || x.kind === "carrier";
        const waits = (leased(a) && leased(b)) || cisOf(a).some((ci) => cisOf(b).includes(ci));
        let waiting: Promise<unknown> | null = null;
        const db = beforeShardCall(
          env.DIRECTORY,
          (_method, _args, n) => n === k,
          async () => {
            await observe();
            if (waits) waiting = send(env.DIRECTORY, b);
            else await send(env.DIRECTORY, b);
            await observe();
          },
        );
        await send(db, a);
        if (waiting) await waiting;
        if (!db.landed()) await send(env.DIRECTORY, b);
        await observe();
        expect(await shardRows("SELECT job FROM jobs"), "a change left unfinished").toEqual([]);
        expect(await shardRows("SELECT ci FROM ci_leases"), "a ci lease left behind").toEqual([]);
        const got = show(await directory());
        const serial = [show(model(model(before, a), b)), show(model(model(before, b), a))];
        // a carrier sign-in refused with "try again shortly" did not happen; only ever when the two
        // contend for a number or a ci
        for (const [op, other] of [
          [a, b],
          [b, a],
        ] as const)
          if (refused.delete(op)) {
            expect(overlap(op, other), `${JSON.stringify(op)} refused without contention`).toBe(true);
            serial.push(show(model(before, other)));
          }
        expect(serial, `${JSON.stringify({ init, a, b, k })} gave ${got}`).toContain(got);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
