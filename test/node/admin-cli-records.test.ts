// The import file splitters of the admin CLI (scripts/lib/records.mjs): records split as the bytes
// stream in, however the stream cuts them, exactly where the server's CSV parser
// (workers/admin/csv.ts `parseCsv`) splits them, with offsets an import resumes from.
import fc from "fast-check";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CsvSplitter, NdjsonSplitter, RecordError, type FileRecord } from "../../scripts/lib/records.mjs";

// The server's parser is the oracle. Imported by path at run time: the node project does not
// type-check the workers' code (it needs the Workers types).
const serverModule = join(import.meta.dirname, "..", "..", "workers", "admin", "csv.ts");
const { parseCsv } = (await import(/* @vite-ignore */ serverModule)) as { parseCsv: (text: string) => string[][] };

type Splitter = CsvSplitter | NdjsonSplitter;
type Made = (opts?: { offset?: number; row?: number; maxRecordBytes?: number }) => Splitter;

/** The records of `bytes` pushed in pieces cut at `cuts`: [row, text, end offset]. */
function split(make: Made, bytes: Buffer, cuts: number[] = [], from = 0, row = 0): [number, string, number][] {
  const s = make({ offset: from, row });
  const out: FileRecord[] = [];
  let at = from;
  for (const cut of [...cuts.filter((c) => c > from && c < bytes.length).sort((a, b) => a - b), bytes.length]) {
    out.push(...s.push(bytes.subarray(at, cut)));
    at = cut;
  }
  out.push(...s.finish());
  return out.map((r) => [r.row, Buffer.from(r.bytes).toString("utf8"), r.end]);
}

const csv: Made = (o) => new CsvSplitter(o);
const ndjson: Made = (o) => new NdjsonSplitter(o);

describe("CSV records", () => {
  it("splits at LF, CRLF and a lone CR; a final record needs no line ending; a BOM is skipped", () => {
    const text = "\ufeffh1,h2\r\na,b\nc,d\re,f";
    const b = Buffer.from(text);
    expect(split(csv, b)).toEqual([
      [1, "h1,h2", 10],
      [2, "a,b", 14],
      [3, "c,d", 18],
      [4, "e,f", 21],
    ]);
  });

  it("keeps quoted commas, doubled quotes and line breaks inside one record (RFC 4180, as the server reads them)", () => {
    const text = 'h\n"Kim, ""Yuna""",x\n"two\r\nlines",y\n';
    const records = split(csv, Buffer.from(text), [4, 9, 10, 24, 25]);
    expect(records.map((r) => r[1])).toEqual(["h", '"Kim, ""Yuna""",x', '"two\r\nlines",y']);
    expect(parseCsv(records.map((r) => r[1]).join("\n"))).toEqual(parseCsv(text));
  });

  it("skips blank records (empty, or one empty quoted field) and does not number them", () => {
    expect(split(csv, Buffer.from('h\n\n""\r\n\ra\n"",\n'))).toEqual([
      [1, "h", 2],
      [2, "a", 10],
      [3, '"",', 14],
    ]);
  });

  it("a quote that does not open the field is data; after a closing quote the field goes on literally", () => {
    expect(split(csv, Buffer.from('a"b,c\n"x"y"z\n')).map((r) => r[1])).toEqual(['a"b,c', '"x"y"z']);
  });

  it("an unclosed quote at the end of the file is an error naming the row, as the server refuses it", () => {
    expect(() => split(csv, Buffer.from('h\na,"b\nc\n'))).toThrow(
      new RecordError("row 2 has a quoted field that is not closed (the file ends inside it)"),
    );
    expect(() => parseCsv('h\na,"b\nc\n')).toThrow();
  });

  it("a record longer than the limit is an error (a quote never closed does not swallow the file)", () => {
    const s = new CsvSplitter({ maxRecordBytes: 100 });
    s.push(Buffer.from('h\na,"' + "x".repeat(50)));
    expect(() => s.push(Buffer.from("y".repeat(60)))).toThrow(/row 2 is longer than 100 bytes/);
  });

  it("resumes at any record's end offset with the same rows that follow", () => {
    const b = Buffer.from('\ufeffh\r\n1,"a\nb"\r\n2\r3\n\n4');
    const all = split(csv, b);
    for (const [row, , end] of all) expect(split(csv, b, [], end, row)).toEqual(all.filter((r) => r[0] > row));
  });

  it("agrees with the server's parser on any text, however the stream is cut", () => {
    const piece = fc.constantFrom("a", "é", "한", ",", '"', '""', "\n", "\r", "\r\n", " ", "x,y");
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 40 }),
        fc.boolean(),
        fc.array(fc.nat(200), { maxLength: 6 }),
        (pieces, bom, cuts) => {
          const text = (bom ? "\ufeff" : "") + pieces.join("");
          const bytes = Buffer.from(text);
          let server: string[][] | "unclosed";
          try {
            server = parseCsv(text);
          } catch {
            server = "unclosed";
          }
          let records: [number, string, number][];
          try {
            records = split(csv, bytes, cuts);
          } catch (e) {
            expect(e).toBeInstanceOf(RecordError);
            expect(server).toBe("unclosed");
            return;
          }
          expect(server).not.toBe("unclosed");
          // the records, sent one per line as a chunk is, read back as the whole file's records
          expect(parseCsv(records.map((r) => r[1]).join("\n"))).toEqual(server);
          expect(records.map((r) => r[0])).toEqual(records.map((_r, i) => i + 1));
          // each record's end is where the next one starts: resuming there gives the rest
          const mid = records[Math.floor(records.length / 2)];
          if (mid) expect(split(csv, bytes, cuts, mid[2], mid[0])).toEqual(records.slice(mid[0]));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("NDJSON lines", () => {
  it("splits at LF and CRLF, skips blank lines unnumbered, keeps a last line with no LF, skips a BOM", () => {
    const b = Buffer.from('\ufeff{"a":1}\r\n\n  \t\n{"b":"x\\ny"}\n{"c":3}');
    expect(split(ndjson, b, [5, 12, 13])).toEqual([
      [1, '{"a":1}', 12],
      [2, '{"b":"x\\ny"}', 30],
      [3, '{"c":3}', 37],
    ]);
    expect(split(ndjson, b, [], 12, 1)).toEqual([
      [2, '{"b":"x\\ny"}', 30],
      [3, '{"c":3}', 37],
    ]);
  });

  it("a line longer than the limit is an error", () => {
    const s = new NdjsonSplitter({ maxRecordBytes: 100 });
    expect(() => s.push(Buffer.from("{}\n" + "x".repeat(200)))).toThrow(/row 2 is longer than 100 bytes/);
  });
});
