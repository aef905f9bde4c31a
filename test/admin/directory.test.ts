// Carrier directory import and delete (docs/operations.md "Import formats"): every row is
// validated, rejected rows are reported by number and reason without echoing personal data.
import { env } from "../support/env";
import { shardRows } from "../support/shards";
import { describe, expect, it } from "vitest";
import { parseCsv } from "../../workers/admin/directory-input";
import { admin } from "../support/admin";
import { DEMO, exchange, HONG, mintFor, tokenFor, userMe } from "../support/helpers";
import { decryptField } from "../../workers/core/crypto";
import { subscriberByPhone } from "../../workers/provider/store/directory/directory";
import { flushAudit } from "../support/audit";

interface Report {
  format: string;
  dry_run: boolean;
  received: number;
  inserted: number;
  updated: number;
  rejected_count: number;
  rejected: { row: number; reason: string }[];
  ignored_columns: string[];
}

/** A canonical Base64 `ci` of 64 bytes (88 characters), distinct per `n`. */
const CI = (n: number) => `CItest${String(n).padStart(4, "0")}${"Q".repeat(75)}A==`;

async function importCsv(text: string, query = ""): Promise<Response> {
  return admin("POST", `/admin/directory/import${query}`, { body: text, type: "text/csv; charset=utf-8" });
}

async function importJson(doc: unknown, query = ""): Promise<Response> {
  return admin("POST", `/admin/directory/import${query}`, { body: JSON.stringify(doc), type: "application/json" });
}

async function report(res: Response): Promise<Report> {
  expect(res.status).toBe(200);
  return (await res.json()) as Report;
}

describe("CSV parsing (RFC 4180)", () => {
  it("handles quotes, escaped quotes, commas and line breaks in fields, CRLF, a BOM and blank lines", () => {
    expect(parseCsv('\ufeffa,b\r\n"x,1","say ""hi"""\n\n"multi\nline",z\n')).toEqual([
      ["a", "b"],
      ["x,1", 'say "hi"'],
      ["multi\nline", "z"],
    ]);
  });

  it("reads a last record without a line break, empty fields, and CR-only line ends", () => {
    expect(parseCsv("a,,c\r1,2,")).toEqual([
      ["a", "", "c"],
      ["1", "2", ""],
    ]);
    expect(parseCsv("")).toEqual([]);
  });
});

describe("POST /admin/directory/import", () => {
  it("imports a CSV file; the subscribers can sign in and their values reach user/me", async () => {
    const csv = [
      "telcoCd,phoneNo,name,gender,birth,foreign,ci",
      `S,010-5555-0001,박지성,M,1981-02-25,L,${CI(1)}`,
      `K,01055550002,"Kim, Yuna",F,19900905,L,${CI(2)}`,
      `l,01155550003,Lee Test,f,2000-01-01,f,${CI(3)}`,
    ].join("\r\n");
    const r = await report(await importCsv(csv));
    expect(r).toEqual({
      format: "csv",
      dry_run: false,
      received: 3,
      inserted: 3,
      updated: 0,
      reassigned: 0,
      signals_changed: 0,
      rejected_count: 0,
      rejected: [],
      ignored_columns: [],
    });
    const park = await subscriberByPhone(env, "01055550001");
    expect(park).toMatchObject({
      telco: "S",
      name: "박지성",
      gender: "M",
      birth: "1981-02-25",
      foreign: "L",
      ci: CI(1),
      testOtpHash: null,
    });
    expect(await subscriberByPhone(env, "01155550003")).toMatchObject({
      telco: "L",
      gender: "F",
      foreign: "F",
      name: "Lee Test",
    });
    const { token } = await tokenFor("01055550002");
    const { user } = (await (await userMe(token)).json()) as { user: Record<string, string> };
    expect(await decryptField(DEMO.secret, user.name!)).toBe("Kim, Yuna");
    expect(await decryptField(DEMO.secret, user.birthdate!)).toBe("900905");
  });

  it("imports JSON (an array, or {subscribers: [...]}) with the spec's names or the short aliases", async () => {
    const a = await report(
      await importJson([
        { telcoCd: "K", phoneNo: "01055560001", name: "A", gender: "F", birth: "1970-01-01", foreign: "L", ci: CI(11) },
      ]),
    );
    expect(a).toMatchObject({ format: "json", received: 1, inserted: 1, rejected_count: 0 });
    const b = await report(
      await importJson({
        subscribers: [
          {
            telco: "S",
            phone: "01055560002",
            name: "B",
            gender: "M",
            birth: "1970-01-02",
            foreign_cd: "F",
            ci: CI(12),
          },
        ],
      }),
    );
    expect(b).toMatchObject({ inserted: 1, rejected_count: 0 });
    expect(await subscriberByPhone(env, "01055560002")).toMatchObject({ telco: "S", foreign: "F" });
  });

  it("re-importing a phone number updates that subscriber in place: the id, plid links and test code are kept", async () => {
    const before = (await subscriberByPhone(env, HONG.phone))!;
    const { plid } = await mintFor(HONG.phone);
    const r = await report(
      await importJson([
        {
          telcoCd: "K",
          phoneNo: HONG.phone,
          name: "홍길동",
          gender: "M",
          birth: "1990-03-16",
          foreign: "L",
          ci: HONG.ci,
        },
      ]),
    );
    expect(r).toMatchObject({ inserted: 0, updated: 1 });
    const after = (await subscriberByPhone(env, HONG.phone))!;
    expect(after).toMatchObject({ id: before.id, telco: "K", birth: "1990-03-16", testOtpHash: before.testOtpHash });
    const { plid: again } = await mintFor(HONG.phone);
    expect(again).toBe(plid);
  });

  it("accepts only a ci that is canonical Base64 of 64 bytes: each refused row says so, nothing of it is stored", async () => {
    const good = "CIhong0001AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==";
    const bad = [
      good.slice(0, 86) + "AA==", // 90 characters (66 bytes)
      good.slice(0, 85) + "B==", // 88 characters, but unused bits set: decodes and re-encodes differently
      good.slice(0, 86), // no padding
      good.slice(0, 85) + "-==", // URL-safe alphabet
      "CIshort0001AAAA==", // 12 bytes
    ];
    const rows = bad.map((ci, i) => ({
      telcoCd: "S",
      phoneNo: `0107777000${i}`,
      name: "N",
      gender: "M",
      birth: "1980-01-01",
      foreign: "L",
      ci,
    }));
    const r = await report(
      await importJson([...rows, { ...rows[0]!, phoneNo: "01077770009", ci: good.replace("hong", "ciok") }]),
    );
    expect(r).toMatchObject({ received: 6, inserted: 1, rejected_count: 5 });
    expect(r.rejected.map((x) => x.reason)).toEqual(
      Array(5).fill("ci must be canonical Base64 of 64 bytes (88 characters)"),
    );
    for (let i = 0; i < bad.length; i++) expect(await subscriberByPhone(env, `0107777000${i}`)).toBeNull();
  });

  it("rejects bad rows by row number and reason, imports the good ones, and echoes no personal data", async () => {
    const secretName = "비밀이름";
    const rows = [
      `S,01066660001,Good One,M,1980-01-01,L,${CI(21)}`, // 1 ok
      `X,01066660002,${secretName},M,1980-01-01,L,${CI(22)}`, // 2 telco
      `S,02-123-4567,${secretName},M,1980-01-01,L,${CI(23)}`, // 3 phone
      `S,01066660004,,M,1980-01-01,L,${CI(24)}`, // 4 name missing
      `S,01066660005,${secretName},X,1980-01-01,L,${CI(25)}`, // 5 gender
      `S,01066660006,${secretName},M,1980-02-30,L,${CI(26)}`, // 6 date
      `S,01066660007,${secretName},M,2999-01-01,L,${CI(27)}`, // 7 future
      `S,01066660008,${secretName},M,1980-01-01,Z,${CI(28)}`, // 8 foreign
      `S,01066660009,${secretName},M,1980-01-01,L,not base64!`, // 9 ci
      `S,01066660001,${secretName},M,1980-01-01,L,${CI(30)}`, // 10 repeats row 1
      `S,01066660011,${secretName}`, // 11 short row
      `K,01066660012,Good Two,F,1999-12-31,L,${CI(32)}`, // 12 ok
    ];
    const csv = [
      "telcoCd,phoneNo,name,gender,birth,foreign,ci,note",
      ...rows.map((r, i) => (i === 10 ? r : `${r},x`)),
    ].join("\n");
    const res = await importCsv(csv);
    const text = await res.clone().text();
    const r = await report(res);
    expect(r).toMatchObject({ received: 12, inserted: 2, updated: 0, rejected_count: 10, ignored_columns: ["note"] });
    expect(r.rejected).toEqual([
      { row: 2, reason: "telcoCd must be S, K or L" },
      { row: 3, reason: "phoneNo must be a mobile number: 01X then 7 or 8 digits" },
      { row: 4, reason: "name is missing" },
      { row: 5, reason: "gender must be M or F" },
      { row: 6, reason: "birth must be a real date after 1900" },
      { row: 7, reason: "birth must not be in the future" },
      { row: 8, reason: "foreign must be L (national) or F (foreign)" },
      { row: 9, reason: "ci must be canonical Base64 of 64 bytes (88 characters)" },
      { row: 10, reason: "phoneNo repeats row 1" },
      { row: 11, reason: "row has 3 fields; the header has 8" },
    ]);
    for (const leak of [secretName, "01066660002", "02-123-4567", "not base64!", CI(22), "Good One"])
      expect(text).not.toContain(leak);
    expect(await subscriberByPhone(env, "01066660012")).not.toBeNull();
    expect(await subscriberByPhone(env, "01066660002")).toBeNull();
  });

  it("a ci repeated within one file is rejected from its second row (one person, one row), whichever number it names", async () => {
    const r = await report(
      await importJson([
        {
          telcoCd: "S",
          phoneNo: "01066670001",
          name: "한사람",
          gender: "M",
          birth: "1980-01-01",
          foreign: "L",
          ci: CI(61),
        },
        {
          telcoCd: "S",
          phoneNo: "01066670002",
          name: "다른이",
          gender: "M",
          birth: "1980-01-01",
          foreign: "L",
          ci: CI(62),
        },
        {
          telcoCd: "K",
          phoneNo: "01066670003",
          name: "한사람",
          gender: "M",
          birth: "1980-01-01",
          foreign: "L",
          ci: CI(61),
        },
      ]),
    );
    expect(r).toMatchObject({ received: 3, inserted: 2, rejected_count: 1 });
    expect(r.rejected).toEqual([{ row: 3, reason: "ci repeats row 1" }]);
    expect(await subscriberByPhone(env, "01066670001")).toMatchObject({ ci: CI(61) });
    expect(await subscriberByPhone(env, "01066670003")).toBeNull();
  });

  it("JSON rows that are not objects, or hold numbers instead of text, are rejected by row", async () => {
    const r = await report(
      await importJson([
        "01077770001",
        { telcoCd: "S", phoneNo: 1077770002, name: "N", gender: "M", birth: "1980-01-01", foreign: "L", ci: CI(41) },
        {
          telcoCd: "S",
          phoneNo: "01077770003",
          name: "N",
          gender: "M",
          birth: "1980-01-01",
          foreign: "L",
          ci: CI(42),
          "01077770003": "x",
          constructor: "y",
        },
      ]),
    );
    expect(r.rejected).toEqual([
      { row: 1, reason: "row must be an object" },
      { row: 2, reason: "phoneNo must be text (a JSON string)" },
    ]);
    expect(r.ignored_columns.sort()).toEqual(["(unnamed column)", "constructor"]);
    expect(r).toMatchObject({ inserted: 1 });
    expect(JSON.stringify(r)).not.toContain("7777");
  });

  it("dry_run=true validates and counts without writing or auditing", async () => {
    const csv = `telcoCd,phoneNo,name,gender,birth,foreign,ci\nS,01088880001,Dry,M,1980-01-01,L,${CI(51)}\nS,${HONG.phone},홍길동,M,1990-03-15,L,${HONG.ci}`;
    const r = await report(await importCsv(csv, "?dry_run=true"));
    expect(r).toMatchObject({ dry_run: true, received: 2, inserted: 1, updated: 1, rejected_count: 0 });
    expect(await subscriberByPhone(env, "01088880001")).toBeNull();
  });

  it.each([
    ["no header row", "text/csv", "", /file is not valid: it has no header row/],
    [
      "a header without the ci column",
      "text/csv",
      "telcoCd,phoneNo,name,gender,birth,foreign\nS,01012345678,a,M,1980-01-01,L",
      /no ci column/,
    ],
    ["a header and no rows", "text/csv", "telcoCd,phoneNo,name,gender,birth,foreign,ci\n", /it has no rows/],
    [
      "an unclosed quote",
      "text/csv",
      'telcoCd,phoneNo,name,gender,birth,foreign,ci\n"S,',
      /quoted CSV field is not closed/,
    ],
    ["JSON that is not a list", "application/json", '{"rows": []}', /must be a JSON array/],
    ["malformed JSON", "application/json", "[{", /not JSON/],
    [
      "another media type",
      "application/x-www-form-urlencoded",
      "a=b",
      /Content-Type is not valid: send text\/csv or application\/json/,
    ],
  ])("a whole-file problem (%s) is 400 invalid_request and writes nothing", async (_t, type, body, message) => {
    const res = await admin("POST", "/admin/directory/import", { body, type });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request", message: expect.stringMatching(message) });
  });

  it("more rows than ADMIN_MAX_IMPORT_ROWS is refused as a whole; a file over ADMIN_MAX_IMPORT_BYTES is 413", async () => {
    const { default: adminWorker } = await import("../../workers/admin/index");
    const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
    const small = { ...env, ADMIN_MAX_IMPORT_ROWS: "2", ADMIN_MAX_IMPORT_BYTES: "2048" };
    const row = (i: number) => ({
      telcoCd: "S",
      phoneNo: `0109999000${i}`,
      name: "N",
      gender: "M",
      birth: "1980-01-01",
      foreign: "L",
      ci: CI(60 + i),
    });
    const req = (body: string) =>
      new Request("http://localhost/admin/directory/import", {
        method: "POST",
        headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}`, "Content-Type": "application/json" },
        body,
      });
    const three = await adminWorker.fetch!(req(JSON.stringify([row(1), row(2), row(3)])) as never, small, ctx);
    expect(three.status).toBe(400);
    expect(await three.json()).toMatchObject({ message: expect.stringMatching(/more than 2 rows/) });
    const big = await adminWorker.fetch!(req(JSON.stringify([row(1)]) + " ".repeat(3000)) as never, small, ctx);
    expect(big.status).toBe(413);
    expect(await subscriberByPhone(env, "01099990001")).toBeNull();
  });

  it("an import is audited with counts only", async () => {
    await importJson([
      {
        telcoCd: "S",
        phoneNo: "01012120001",
        name: "감사",
        gender: "M",
        birth: "1980-01-01",
        foreign: "L",
        ci: CI(71),
      },
      { telcoCd: "Q" },
    ]);
    await flushAudit();
    const res = await admin("GET", "/admin/audit?type=directory.imported&limit=1");
    const text = await res.text();
    const { events } = JSON.parse(text) as { events: { outcome: string; detail: Record<string, unknown> }[] };
    expect(events[0]).toMatchObject({
      outcome: "refused",
      detail: { format: "json", received: 2, inserted: 1, updated: 0, rejected: 1 },
    });
    expect(text).not.toContain("01012120001");
    expect(text).not.toContain("감사");
  });
});

describe("DELETE /admin/directory/:phone and GET /admin/directory", () => {
  it("deletes one subscriber with their links; sign-in data for them is gone; the audit holds no phone number", async () => {
    await importJson([
      { telcoCd: "K", phoneNo: "01034340001", name: "Del", gender: "F", birth: "1980-01-01", foreign: "L", ci: CI(81) },
    ]);
    const { code, plid } = await mintFor("01034340001");
    const before = (await (await admin("GET", "/admin/directory")).json()) as {
      subscribers: number;
      test_numbers: number;
    };
    const res = await admin("DELETE", "/admin/directory/010-3434-0001");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ deleted: true });
    expect(await subscriberByPhone(env, "01034340001")).toBeNull();
    expect(await shardRows("SELECT plid FROM links WHERE plid = ?", plid)).toEqual([]);
    const tokenRes = await exchange(code);
    if (tokenRes.status === 200) {
      const { access_token } = (await tokenRes.json()) as { access_token: string };
      expect((await userMe(access_token)).status).toBe(401);
    }
    const after = (await (await admin("GET", "/admin/directory")).json()) as { subscribers: number };
    expect(after.subscribers).toBe(before.subscribers - 1);
    await flushAudit();
    const audit = await (await admin("GET", "/admin/audit?type=directory.deleted&limit=1")).text();
    expect(audit).toContain("subscriber_id");
    expect(audit).not.toContain("3434");
  });

  it("an unknown number is 404 'No such subscriber.'; a malformed one is 400", async () => {
    const res = await admin("DELETE", "/admin/directory/01000000000");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "not_found", message: "No such subscriber." });
    expect((await admin("DELETE", "/admin/directory/abc")).status).toBe(400);
  });

  it("the summary gives counts only (seed: four fixed-code numbers, none registered for review, as `test-numbers list` says), from the shards' counters: the shard count and the cross-shard steps not yet finished", async () => {
    const r = (await (await admin("GET", "/admin/directory")).json()) as Record<string, number>;
    expect(Object.keys(r).sort()).toEqual([
      "fixed_code_numbers",
      "pending_changes",
      "shards",
      "subscribers",
      "test_numbers",
    ]);
    const listed = (await (await admin("GET", "/admin/test-numbers")).json()) as { test_numbers: unknown[] };
    expect(r.test_numbers).toBe(listed.test_numbers.length);
    expect(r.test_numbers).toBe(0);
    expect(r.fixed_code_numbers).toBe(4);
    expect(r.shards).toBe(4);
    expect(r.pending_changes).toBe(0);
    // the counters are the rows, kept in the same step as each write
    const rows = await shardRows<{ test: number; review: number }>(
      "SELECT test_otp_hash IS NOT NULL AS test, test_clients IS NOT NULL AS review FROM people",
    );
    expect(r.subscribers).toBe(rows.length);
    expect(r.fixed_code_numbers).toBe(rows.filter((x) => x.test === 1).length);
    expect(r.test_numbers).toBe(rows.filter((x) => x.review === 1).length);
  });
});
