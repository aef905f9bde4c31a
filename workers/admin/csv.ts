// CSV as the directory's import files hold it, parsed apart from the import's rows and the store
// so that the admin CLI's splitter (scripts/lib/records.mjs) is tested against this very parser in
// Node (test/node/admin-cli-records.test.ts), without the Workers runtime.

import { E } from "../core/errors";

/** RFC 4180 records: quoted fields with "" escapes and line breaks, CRLF or LF, BOM skipped. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let record: string[] = [];
  // Fields are sliced, not built a character at a time: a 10,000-row file parses in a few ms.
  while (i <= n) {
    let field: string;
    if (text.charCodeAt(i) === 34 /* " */) {
      let out = "";
      let from = i + 1;
      for (;;) {
        const q = text.indexOf('"', from);
        if (q < 0) throw E.invalidBecause("file", "a quoted CSV field is not closed");
        out += text.slice(from, q);
        if (text.charCodeAt(q + 1) === 34) {
          out += '"';
          from = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      // anything between the closing quote and the delimiter is kept, as lenient parsers do
      let j = i;
      while (j < n && text.charCodeAt(j) !== 44 && text.charCodeAt(j) !== 10 && text.charCodeAt(j) !== 13) j++;
      field = out + text.slice(i, j);
      i = j;
    } else {
      let j = i;
      while (j < n && text.charCodeAt(j) !== 44 && text.charCodeAt(j) !== 10 && text.charCodeAt(j) !== 13) j++;
      field = text.slice(i, j);
      i = j;
    }
    record.push(field);
    const c = text.charCodeAt(i);
    if (c === 44 /* , */) {
      i++;
      continue;
    }
    // end of record: newline (CRLF, LF or CR) or end of text
    if (c === 13 && text.charCodeAt(i + 1) === 10) i += 2;
    else i++;
    if (!(record.length === 1 && record[0] === "")) records.push(record); // blank lines are skipped
    record = [];
  }
  return records;
}
