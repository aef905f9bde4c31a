// An import run's progress through its file (D1 `import_progress`, docs/operations.md "Importing a
// large file", "From the browser"): the console sends each chunk with the file's SHA-256 and size
// and its place in the file, and resumes from what the server kept.
// - a chunk that starts where the run's applied prefix ends advances it, adding its counts and its
//   rejected rows by file row; a chunk sent again, or ahead of a missing one, changes nothing;
// - a chunk of another file (hash or size) for a run is refused 409 before it is applied;
// - GET /admin/directory/import/runs finds the newest uncommitted run of a file, never a committed one;
// - the place's parameters are checked (all four or none, only in a run, never in a dry run);
// - an invariant over chunks sent in any order with repeats: rows_done is the prefix built by the
//   chunks that each started where the previous one ended, and the counts are those chunks' answers.
import { env } from "../support/env";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { admin } from "../support/admin";
import { subscriberByPhone } from "../../workers/provider/store/directory/directory";

const HEADER = "telcoCd,phoneNo,name,gender,birth,foreign,ci";
/** A canonical Base64 `ci` of 64 bytes (88 characters), distinct per `n`. */
const CI = (n: number) => `CIprog${String(n).padStart(6, "0")}${"Q".repeat(73)}A==`;
const phone = (base: number, n: number) => `010${String(base * 1000 + n).padStart(8, "0")}`;
const good = (base: number, n: number) => `S,${phone(base, n)},진행${n},M,1990-01-01,L,${CI(base * 1000 + n)}`;
/** A row the server rejects: its ci is not a ci. */
const bad = (base: number, n: number) => `K,${phone(base, n)},거부${n},F,1990-01-01,L,not-a-ci`;
const NOT_A_CI = "ci must be canonical Base64";

/** A fake file: its rows, its hash (the server cannot check it) and the byte offset after each row. */
interface File {
  rows: string[];
  hash: string;
  size: number;
  /** ends[i]: the byte offset after row i (the header line first). */
  ends: number[];
}

function file(rows: string[], hashSeed: number): File {
  const bytes = (s: string) => new TextEncoder().encode(s).length;
  let at = bytes(HEADER) + 1;
  const ends = rows.map((r) => (at += bytes(r) + 1));
  return { rows, hash: hashSeed.toString(16).padStart(64, "0"), size: at, ends };
}

interface Progress {
  recorded: boolean;
  rows_done: number;
  bytes_done: number;
  inserted: number;
  updated: number;
  reassigned: number;
  rejected_count: number;
}

interface Answer {
  received: number;
  inserted: number;
  updated: number;
  reassigned: number;
  rejected_count: number;
  rejected: { row: number; reason: string }[];
  progress?: Progress;
}

/** Rows [from, to) of the file as one chunk of run `run`, with the chunk's place in the file. */
function sendChunk(run: string, f: File, from: number, to: number, over: Partial<File> = {}): Promise<Response> {
  const g = { ...f, ...over };
  const q = `run=${run}&file_hash=${g.hash}&file_size=${g.size}&from_row=${from}&to_byte=${f.ends[to - 1]}`;
  return admin("POST", `/admin/directory/import?${q}`, {
    body: [HEADER, ...f.rows.slice(from, to)].join("\n"),
    type: "text/csv",
  });
}

async function chunk(run: string, f: File, from: number, to: number): Promise<Answer> {
  const res = await sendChunk(run, f, from, to);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Answer;
}

async function found(f: Pick<File, "hash" | "size">): Promise<Response> {
  return admin("GET", `/admin/directory/import/runs?file_hash=${f.hash}&file_size=${f.size}`);
}

async function stored(f: File): Promise<Record<string, unknown>> {
  const res = await found(f);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe("POST /admin/directory/import with the chunk's place in its file", () => {
  it("records the applied prefix, the counts and the rejected rows by file row; the answer is the report plus progress", async () => {
    // rows 1-4, 5-8, 9-10: row 6 is rejected, row 10 repeats row 9's number within its chunk
    const rows = Array.from({ length: 10 }, (_, i) => (i === 5 ? bad(1, i) : good(1, i)));
    rows[9] = `S,${phone(1, 8)},반복,M,1990-01-01,L,${CI(1999)}`;
    const f = file(rows, 0xa1);
    const first = await chunk("prog-run-0001", f, 0, 4);
    expect(Object.keys(first).sort()).toEqual(
      [
        "format",
        "dry_run",
        "received",
        "inserted",
        "updated",
        "reassigned",
        "signals_changed",
        "rejected_count",
        "rejected",
        "ignored_columns",
        "progress",
      ].sort(),
    );
    expect(first.progress).toEqual({
      recorded: true,
      rows_done: 4,
      bytes_done: f.ends[3],
      inserted: 4,
      updated: 0,
      reassigned: 0,
      rejected_count: 0,
    });
    const second = await chunk("prog-run-0001", f, 4, 8);
    // the answer numbers the chunk's rows from 1; the progress numbers the file's
    expect(second.rejected).toEqual([{ row: 2, reason: expect.stringContaining(NOT_A_CI) }]);
    expect(second.progress).toMatchObject({ recorded: true, rows_done: 8, inserted: 7, rejected_count: 1 });
    const third = await chunk("prog-run-0001", f, 8, 10);
    expect(third.rejected).toEqual([{ row: 2, reason: "phoneNo repeats row 1" }]);
    expect(third.progress).toMatchObject({ recorded: true, rows_done: 10, bytes_done: f.size, inserted: 8 });

    const s = await stored(f);
    expect(s).toEqual({
      run: "prog-run-0001",
      file_hash: f.hash,
      file_size: f.size,
      format: "csv",
      rows_done: 10,
      bytes_done: f.size,
      inserted: 8,
      updated: 0,
      reassigned: 0,
      rejected_count: 2,
      rejected: [
        { row: 6, reason: expect.stringContaining(NOT_A_CI) },
        { row: 10, reason: "phoneNo repeats row 9" },
      ],
      started_by: "token:ADMIN_TOKEN",
      started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    // numbers and reasons only: no row's content is kept
    const kept = JSON.stringify(await env.DB.prepare("SELECT * FROM import_progress").all());
    for (const r of rows) for (const field of r.split(",")) if (field.length > 3) expect(kept).not.toContain(field);
  });

  it("a chunk sent again, or one ahead of a missing one, changes nothing; a run's first chunk must be the file's", async () => {
    const f = file(
      Array.from({ length: 9 }, (_, i) => good(2, i)),
      0xa2,
    );
    await chunk("prog-run-0002", f, 0, 3);
    await chunk("prog-run-0002", f, 3, 6);
    const before = await stored(f);
    const again = await chunk("prog-run-0002", f, 0, 3);
    expect(again.updated).toBe(3); // the rows were applied again (idempotent)
    expect(again.progress).toMatchObject({ recorded: false, rows_done: 6, inserted: 6, updated: 0 });
    const ahead = await chunk("prog-run-0002", f, 7, 9);
    expect(ahead.progress).toMatchObject({ recorded: false, rows_done: 6 });
    expect(await stored(f)).toEqual({ ...before, updated_at: expect.any(String) });

    const g = file(
      Array.from({ length: 4 }, (_, i) => good(2, 100 + i)),
      0xa3,
    );
    const late = await chunk("prog-run-0003", g, 2, 4);
    expect(late.progress).toEqual({
      recorded: false,
      rows_done: 0,
      bytes_done: 0,
      inserted: 0,
      updated: 0,
      reassigned: 0,
      rejected_count: 0,
    });
    expect((await found(g)).status).toBe(404);
  });

  it("keeps the first 1,000 rejected rows of the file, in order, and counts them all", async () => {
    const f = file(
      Array.from({ length: 1004 }, (_, i) => bad(8, i)),
      0xa7,
    );
    await chunk("prog-run-0008", f, 0, 998);
    expect((await chunk("prog-run-0008", f, 998, 1003)).progress).toMatchObject({ rejected_count: 1003 });
    await chunk("prog-run-0008", f, 1003, 1004);
    const s = (await stored(f)) as { rejected: { row: number }[]; rejected_count: number };
    expect(s.rejected_count).toBe(1004);
    expect(s.rejected.map((r) => r.row)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
  });

  it("a chunk of another file (hash or size) or format is refused 409 before it is applied", async () => {
    const f = file(
      Array.from({ length: 4 }, (_, i) => good(3, i)),
      0xa4,
    );
    await chunk("prog-run-0004", f, 0, 2);
    for (const over of [{ hash: "b".repeat(64) }, { size: f.size + 1 }]) {
      const res = await sendChunk("prog-run-0004", f, 2, 4, over);
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual({
        error: "invalid_request",
        message: "The value of run is not valid: this run is another file's.",
      });
    }
    const json = await admin(
      "POST",
      `/admin/directory/import?run=prog-run-0004&file_hash=${f.hash}&file_size=${f.size}&from_row=2&to_byte=${f.ends[3]}`,
      {
        json: [
          {
            telcoCd: "S",
            phoneNo: phone(3, 2),
            name: "제이슨",
            gender: "M",
            birth: "1990-01-01",
            foreign: "L",
            ci: CI(3002),
          },
        ],
      },
    );
    expect(json.status).toBe(409);
    expect(((await json.json()) as { message: string }).message).toContain("another format's");
    expect(await subscriberByPhone(env, phone(3, 2))).toBeNull();
    expect(await stored(f)).toMatchObject({ rows_done: 2 });
  });
});

describe("GET /admin/directory/import/runs", () => {
  it("finds the newest uncommitted run of the file, and never a committed one", async () => {
    const f = file(
      Array.from({ length: 4 }, (_, i) => good(4, i)),
      0xa5,
    );
    await chunk("prog-run-old", f, 0, 1);
    await new Promise((r) => setTimeout(r, 5));
    await chunk("prog-run-new", f, 0, 2);
    expect(await stored(f)).toMatchObject({ run: "prog-run-new", rows_done: 2 });
    // another file of the same size, or the same hash with another size, is not this file
    expect((await found({ hash: "c".repeat(64), size: f.size })).status).toBe(404);
    expect((await found({ hash: f.hash, size: f.size + 1 })).status).toBe(404);

    expect((await admin("POST", "/admin/directory/import/commit?run=prog-run-new")).status).toBe(200);
    expect(await stored(f)).toMatchObject({ run: "prog-run-old", rows_done: 1 });
    const row = await env.DB.prepare("SELECT committed_at FROM import_progress WHERE run = 'prog-run-new'").first<{
      committed_at: number;
    }>();
    expect(row!.committed_at).toBeGreaterThan(0);
    expect((await admin("POST", "/admin/directory/import/commit?run=prog-run-old")).status).toBe(200);
    const res = await found(f);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not_found", message: "No such import run." });
  });

  it("needs the editor role: a viewer is refused 403, an editor's runs name the editor", async () => {
    const tokens: Record<string, string> = {};
    for (const role of ["viewer", "editor"]) {
      const res = await admin("POST", "/admin/tokens", { json: { name: `prog-${role}`, role } });
      expect(res.status).toBe(201);
      tokens[role] = ((await res.json()) as { token: string }).token;
    }
    const f = file([good(5, 0)], 0xa6);
    const path = `/admin/directory/import/runs?file_hash=${f.hash}&file_size=${f.size}`;
    const viewer = await admin("GET", path, { token: tokens.viewer });
    expect(viewer.status).toBe(403);
    expect(((await viewer.json()) as { message: string }).message).toContain("needs the editor role");
    const q = `run=prog-run-0006&file_hash=${f.hash}&file_size=${f.size}&from_row=0&to_byte=${f.size}`;
    const sent = await admin("POST", `/admin/directory/import?${q}`, {
      token: tokens.editor,
      body: `${HEADER}\n${f.rows[0]}`,
      type: "text/csv",
    });
    expect(sent.status).toBe(200);
    const res = await admin("GET", path, { token: tokens.editor });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ run: "prog-run-0006", started_by: "token:prog-editor", rows_done: 1 });
  });
});

describe("the place's parameters", () => {
  const hash = "d".repeat(64);
  const body = `${HEADER}\n${good(6, 0)}`;
  const ok = { run: "prog-run-0007", file_hash: hash, file_size: "500", from_row: "0", to_byte: "100" };
  const cases: [string, Record<string, string | undefined>, string][] = [
    ["file_size alone is missing its three partners", { file_hash: undefined }, "file_hash"],
    ["to_byte is missing", { to_byte: undefined }, "to_byte"],
    ["a hash in capitals", { file_hash: hash.toUpperCase() }, "file_hash"],
    ["a short hash", { file_hash: "abc" }, "file_hash"],
    ["a size of 0", { file_size: "0" }, "file_size"],
    ["a negative row", { from_row: "-1" }, "from_row"],
    ["a row with a leading zero", { from_row: "01" }, "from_row"],
    ["a fractional byte", { to_byte: "1.5" }, "to_byte"],
    ["a size too large to be exact", { file_size: "99999999999999999" }, "file_size"],
    ["to_byte past the file's end", { to_byte: "501" }, "to_byte"],
    ["no run", { run: undefined }, "file_hash"],
    ["a dry run", { run: undefined, dry_run: "true" }, "file_hash"],
  ];
  for (const [name, change, param] of cases) {
    it(`refuses ${name} (400, naming ${param})`, async () => {
      const q = new URLSearchParams(
        Object.entries({ ...ok, ...change }).filter((e): e is [string, string] => e[1] !== undefined),
      );
      const res = await admin("POST", `/admin/directory/import?${q}`, { body, type: "text/csv" });
      expect(res.status).toBe(400);
      const err = (await res.json()) as { error: string; message: string };
      expect(err.error).toBe("invalid_request");
      expect(err.message).toContain(`The value of ${param} is not valid:`);
    });
  }

  it("refuses a GET without the file's hash and size, or with bad ones", async () => {
    for (const [q, param] of [
      [`file_size=5`, "file_hash"],
      [`file_hash=${hash}`, "file_size"],
      [`file_hash=x&file_size=5`, "file_hash"],
      [`file_hash=${hash}&file_size=five`, "file_size"],
    ] as const) {
      const res = await admin("GET", `/admin/directory/import/runs?${q}`);
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { message: string }).message).toContain(param);
    }
    // nothing was applied or recorded by the refused chunks
    expect(await subscriberByPhone(env, phone(6, 0))).toBeNull();
    expect((await found({ hash, size: 500 })).status).toBe(404);
  });
});

describe("invariant: chunks sent in any order, with repeats", () => {
  it("rows_done is the prefix of chunks each sent once the previous was recorded; the counts are theirs", async () => {
    // 12 rows, rows 3 and 8 rejected: the same people in every trial (later trials update them)
    const rows = Array.from({ length: 12 }, (_, i) => (i === 2 || i === 7 ? bad(7, i) : good(7, i)));
    const f = file(rows, 0);
    // a partition of the rows into contiguous chunks (sizes 1-5), and the order the chunks are sent in
    const partition = fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 12, maxLength: 12 }).map((sizes) => {
      const chunks: [number, number][] = [];
      for (let at = 0, i = 0; at < 12; i++) {
        const to = Math.min(12, at + sizes[i]!);
        chunks.push([at, to]);
        at = to;
      }
      return chunks;
    });
    const trial = partition.chain((chunks) =>
      fc.record({ chunks: fc.constant(chunks), order: fc.array(fc.nat(chunks.length - 1), { maxLength: 12 }) }),
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(trial, async ({ chunks, order }) => {
        const run = `prog-inv-${++n}`;
        const g = { ...f, hash: (0xf000 + n).toString(16).padStart(64, "0") };
        let rowsDone = 0;
        const sum = { inserted: 0, updated: 0, reassigned: 0, rejected_count: 0 };
        for (const k of order) {
          const [from, to] = chunks[k]!;
          const a = await chunk(run, g, from, to);
          const advances = from === rowsDone;
          if (advances) {
            rowsDone = to;
            for (const key of Object.keys(sum) as (keyof typeof sum)[]) sum[key] += a[key];
          }
          expect(a.progress).toEqual({
            recorded: advances,
            rows_done: rowsDone,
            bytes_done: rowsDone === 0 ? 0 : g.ends[rowsDone - 1],
            ...sum,
          });
        }
        const res = await found(g);
        if (rowsDone === 0) {
          expect(res.status).toBe(404);
          return;
        }
        const s = (await res.json()) as Record<string, unknown>;
        expect(s).toMatchObject({ rows_done: rowsDone, ...sum });
        // every row of the prefix is counted once: applied (new or updated) or rejected
        expect(sum.inserted + sum.updated + sum.rejected_count).toBe(rowsDone);
        expect(s.rejected).toEqual(
          [3, 8].filter((r) => r <= rowsDone).map((row) => ({ row, reason: expect.stringContaining(NOT_A_CI) })),
        );
      }),
      { numRuns: 40 },
    );
  }, 180_000);
});
