// The console's browser import (workers/console/import-script.ts, import-lib.ts), run as the page
// ships it: the script's text is evaluated here, not a copy of it.
// - the script is plain JavaScript an inline <script> can hold, and without the page's form it does nothing;
// - its CSV splitter numbers the rows exactly as the API's parseCsv (quotes, "" and line breaks in
//   fields, CRLF, lone CR, blank rows, a BOM), and the chunks it builds are read by parseCsv as
//   those rows; its byte offsets are UTF-8's;
// - NDJSON lines split as the CLI splits them; a line that is not JSON goes as null, keeping the numbers;
// - the rejected rows' downloads read back as the file's rows with their numbers and reasons;
// - chunks the script builds, sent to the API with their place, leave the server's rejected rows at
//   the rows of the file.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseCsv, parseImport } from "../../workers/admin/directory-input";
import { IMPORT_JS, IMPORT_LIB_JS } from "../../workers/console/import-script";
import { admin } from "../support/admin";

interface Split {
  start: number[];
  end: number[];
  next: number[];
}
interface Chunk {
  to: number;
  body: string;
  toByte: number;
  notJson: number[];
}
interface Source {
  total: number;
  apiFormat: string;
  type: string;
  name: string;
  rowText(row: number): string;
  bytesAfter(k: number): number;
  chunk(done: number): Chunk;
  isJsonRow(row: number): boolean;
  download(rejected: { row: number; reason: string }[]): string;
}
interface Lib {
  splitRows(text: string, csv: boolean): Split;
  utf8Length(text: string, from: number, to: number): number;
  rowsSource(text: string, csv: boolean, maxRows: number, maxBytes: number): Source;
  jsonSource(text: string, fileSize: number, maxBytes: number): Source;
  fileRejections(list: { row: number; reason: string }[], fromRow: number): { row: number; reason: string }[];
  rejectedCsv(header: string, rows: { row: number; reason: string; text: string }[]): string;
  rejectedNdjson(rows: { row: number; reason: string; text: string }[]): string;
}

// eslint-disable-next-line @typescript-eslint/no-implied-eval -- the shipped text itself, evaluated
const lib = new Function(
  `${IMPORT_LIB_JS}; return { splitRows, utf8Length, rowsSource, jsonSource, fileRejections, rejectedCsv, rejectedNdjson };`,
)() as Lib;

const bytes = (s: string) => new TextEncoder().encode(s).length;
const rowsOf = (text: string, csv: boolean) => {
  const sp = lib.splitRows(text, csv);
  return sp.start.map((s, i) => text.slice(s, sp.end[i]));
};
/** What the splitter throws for a file it cannot read: its message key. */
const problem = (f: () => unknown): string | null => {
  try {
    f();
    return null;
  } catch (e) {
    return (e as { key?: string }).key ?? String(e);
  }
};

describe("the shipped script", () => {
  it("has no backtick, no ${ and nothing that ends a script element; it compiles and without the page's form does nothing", () => {
    for (const bad of ["`", "${", "</", "<!--"]) expect(IMPORT_JS.includes(bad), bad).toBe(false);
    expect(IMPORT_JS.includes(IMPORT_LIB_JS)).toBe(true);
    const asked: string[] = [];
    const document = {
      getElementById: (id: string) => (asked.push(id), null),
      querySelector: () => null,
    };
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    new Function("document", "window", IMPORT_JS)(document, {});
    expect(asked[0]).toBe("import-form");
  });
});

describe("the CSV splitter and the API's parseCsv", () => {
  const tricky: [string, string[]][] = [
    ['\ufeffa,b\r\n"x,1","say ""hi"""\n\n"multi\nline",z\n', ["a,b", '"x,1","say ""hi"""', '"multi\nline",z']],
    ["a,,c\r1,2,", ["a,,c", "1,2,"]],
    ['h\n""\n\r\n\n"",""\n"a"b,c\r\n', ["h", '"",""', '"a"b,c']],
    ['h\r\n"x\r\ny"\r\r\n', ["h", '"x\r\ny"']],
    ["", []],
    ["\ufeff", []],
  ];
  for (const [text, rows] of tricky) {
    it(`splits ${JSON.stringify(text)} as parseCsv numbers it`, () => {
      expect(rowsOf(text, true)).toEqual(rows);
      expect(rows.map((r) => parseCsv(`h\n${r}`)[1] ?? parseCsv(r)[0])).toEqual(parseCsv(text));
    });
  }

  it("a quoted field the file ends inside is a problem naming its row (0: the header)", () => {
    expect(problem(() => lib.splitRows('a\n1\n"2\n3\n', true))).toBe("unclosed");
    try {
      lib.splitRows('a\n1\n"2\n3\n', true);
    } catch (e) {
      expect((e as { vars: { row: number } }).vars.row).toBe(2);
    }
    expect(() => parseCsv('a\n1\n"2\n3\n')).toThrow(/not closed/);
  });

  // Characters that make CSV hard: quotes, commas, every line ending, blanks, a BOM, and multi-byte text.
  const csvText = fc
    .array(fc.constantFrom("a", "b", ",", '"', '""', "\n", "\r", "\r\n", " ", "\ufeff", "한", "😀"), {
      maxLength: 40,
    })
    .map((parts) => parts.join(""));

  it("on any text: the same records, each chunk read by parseCsv as those rows, and UTF-8 byte offsets", () => {
    fc.assert(
      fc.property(csvText, fc.integer({ min: 1, max: 4 }), (text, maxRows) => {
        let records: string[][];
        try {
          records = parseCsv(text);
        } catch {
          expect(problem(() => lib.splitRows(text, true))).toBe("unclosed");
          return;
        }
        const sp = lib.splitRows(text, true);
        expect(sp.start.length).toBe(records.length);
        if (records.length === 0) return;
        const src = lib.rowsSource(text, true, maxRows, 1 << 20);
        expect(src.total).toBe(records.length - 1);
        // A header that starts with U+FEFF after blank lines is a column the API would not know; as a
        // chunk's first characters the API takes it for a BOM (as it does the CLI's chunks).
        if (records[0]![0]!.startsWith("\ufeff")) return;
        for (let done = 0; done < src.total;) {
          const c = src.chunk(done);
          expect(c.to - done).toBeLessThanOrEqual(maxRows);
          expect(parseCsv(c.body)).toEqual([records[0], ...records.slice(done + 1, c.to + 1)]);
          expect(c.toByte).toBe(bytes(text.slice(0, sp.next[c.to]!)));
          done = c.to;
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("counts UTF-8 bytes as TextEncoder does", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 30 }), (s) => {
        expect(lib.utf8Length(s, 0, s.length)).toBe(bytes(s));
      }),
    );
  });

  it("keeps a chunk within its bytes, and names a row too large for one", () => {
    const text = `h\n${"x".repeat(30)}\n${"y".repeat(30)}\n${"z".repeat(2000)}\n`;
    const src = lib.rowsSource(text, true, 100, 1024);
    expect(src.chunk(0).to).toBe(2);
    expect(problem(() => src.chunk(2))).toBe("rowTooLong");
  });
});

describe("NDJSON lines", () => {
  it("split as the CLI splits them: LF or CRLF, blank lines of spaces and tabs skipped, a BOM, a last line without LF", () => {
    const text = '\ufeff{"a":1}\r\n  \t\n\n{"b":2}\n\r\n{"c":3}\r';
    expect(rowsOf(text, false)).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("a line that is not JSON goes as null: the API rejects it at its row", () => {
    const text = '{"telcoCd":"S"}\nnot json {\n{"x":1}\n';
    const src = lib.rowsSource(text, false, 10, 1 << 20);
    const c = src.chunk(0);
    expect(c.body).toBe('[{"telcoCd":"S"},null,{"x":1}]');
    expect(c.notJson).toEqual([2]);
    expect(c.toByte).toBe(bytes(text));
    const parsed = parseImport("json", c.body, 10, Date.now());
    expect(parsed.received).toBe(3);
    expect(parsed.rejected.find((r) => r.row === 2)!.reason).toBe("row must be an object");
    expect(src.isJsonRow(2)).toBe(false);
  });

  it("a CSV file's line that holds U+FFFD (text that was not UTF-8) is a problem before anything is sent", () => {
    expect(problem(() => lib.rowsSource("h\n1\n2\uFFFD\n", true, 10, 1 << 20))).toBe("notUtf8Row");
  });
});

describe("the rejected rows' downloads", () => {
  const reason = fc.string({ maxLength: 20 });
  it("CSV: the header after file_row,reason, each row after its number and reason, read back by parseCsv", () => {
    const text = 'telcoCd,name\r\nS,"Kim, ""Yuna"""\r\nK,"two\nlines"\r\nL,plain\r\n';
    fc.assert(
      fc.property(
        fc.subarray([1, 2, 3], { minLength: 1 }),
        fc.array(reason, { minLength: 3, maxLength: 3 }),
        (rows, rs) => {
          const src = lib.rowsSource(text, true, 10, 1 << 20);
          const file = src.download(rows.map((row) => ({ row, reason: rs[row - 1]! })));
          expect(file.startsWith("\ufeff")).toBe(true);
          const all = parseCsv(text);
          expect(parseCsv(file)).toEqual([
            ["file_row", "reason", ...all[0]!],
            ...rows.map((row) => [String(row), rs[row - 1]!, ...all[row]!]),
          ]);
        },
      ),
    );
  });

  it("NDJSON: one object a line with file_row, reason and the row as the file has it (a line not JSON as line)", () => {
    const text = '{"name":"김, \\"유나\\""}\nnot json\n{"n":[1,2]}\n';
    const src = lib.rowsSource(text, false, 10, 1 << 20);
    const lines = src
      .download([
        { row: 1, reason: 'a "reason"' },
        { row: 2, reason: "row is not JSON" },
        { row: 3, reason: "x" },
      ])
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual([
      { file_row: 1, reason: 'a "reason"', row: { name: '김, "유나"' } },
      { file_row: 2, reason: "row is not JSON", row: null, line: "not json" },
      { file_row: 3, reason: "x", row: { n: [1, 2] } },
    ]);
  });

  it("a chunk's rejections as the file's rows: 'repeats row N' names a file row too", () => {
    expect(
      lib.fileRejections(
        [
          { row: 2, reason: "phoneNo repeats row 1" },
          { row: 3, reason: "name is missing" },
        ],
        1000,
      ),
    ).toEqual([
      { row: 1002, reason: "phoneNo repeats row 1001" },
      { row: 1003, reason: "name is missing" },
    ]);
  });

  it("a JSON file is one chunk: the file as it is, its rows the array's elements", () => {
    const text = '\ufeff{"subscribers":[{"a":"1"},{"b":"2"}]}';
    const src = lib.jsonSource(text, bytes(text), 1 << 20);
    expect(src.total).toBe(2);
    expect(src.chunk(0)).toEqual({ to: 2, body: text.slice(1), toByte: bytes(text), notJson: [] });
    expect(src.rowText(2)).toBe('{"b":"2"}');
    expect(problem(() => lib.jsonSource('{"x":1}', 7, 1 << 20))).toBe("notJson");
  });
});

describe("chunks the script builds, sent to the API", () => {
  const CI = (n: number) => `CIscript${String(n).padStart(4, "0")}${"Q".repeat(73)}A==`;
  const person = (n: number, name: string) => `S,0107700${String(n).padStart(4, "0")},${name},M,1990-01-01,L,${CI(n)}`;

  it("leave the server's progress and rejected rows at the rows of the file (CSV with a BOM, CRLF, blank and multi-line rows)", async () => {
    const text = [
      "\ufefftelcoCd,phoneNo,name,gender,birth,foreign,ci",
      person(1, '"Kim, Yuna"'),
      "",
      person(2, '"두 줄\r\n이름"'),
      "S,01077000003,bad,M,1990-13-45,L," + CI(3),
      person(4, "박"),
      "",
      person(5, '"say ""hi"""'),
      "S,01077000001,repeat,M,1990-01-01,L," + CI(6),
    ].join("\r\n");
    const size = bytes(text);
    const src = lib.rowsSource(text, true, 2, 1 << 20);
    expect(src.total).toBe(6);
    const hash = "e".repeat(64);
    let done = 0;
    while (done < src.total) {
      const c = src.chunk(done);
      const q = `run=script-run-1&file_hash=${hash}&file_size=${size}&from_row=${done}&to_byte=${c.toByte}`;
      const res = await admin("POST", `/admin/directory/import?${q}`, { body: c.body, type: src.type });
      expect(res.status).toBe(200);
      const a = (await res.json()) as { received: number; progress: { recorded: boolean; rows_done: number } };
      expect(a.received).toBe(c.to - done);
      expect(a.progress).toMatchObject({ recorded: true, rows_done: c.to });
      done = c.to;
    }
    const res = await admin("GET", `/admin/directory/import/runs?file_hash=${hash}&file_size=${size}`);
    const run = (await res.json()) as {
      rows_done: number;
      bytes_done: number;
      rejected: { row: number; reason: string }[];
    };
    expect(run.rows_done).toBe(6);
    expect(run.bytes_done).toBe(size);
    // row 2's name holds a line break, row 3 has no real birth date; row 6's number is row 1's (in a
    // later chunk: imported over it, as documented)
    expect(run.rejected).toEqual([
      { row: 2, reason: "name must not contain control characters" },
      { row: 3, reason: expect.stringContaining("birth") },
    ]);
  });
});
