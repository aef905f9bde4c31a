// The pure part of the console's browser import (./import-script.ts): the row splitter, byte
// lengths, the chunk bodies and the rejected rows' files, and the page's words. Plain ES2020 in
// string constants, as IMPORT_JS ships them: no backtick, no `${`, nothing a <script> element would
// end at. Exported so the tests run the very text the page ships (test/console/import-script.test.ts
// checks the splitter against the API's parseCsv, workers/admin/csv.ts).

/** The script's pure functions: no DOM, no network. */
export const IMPORT_LIB_JS = String.raw`
var QUOTE = 34, COMMA = 44, LF = 10, CR = 13, TAB = 9, SPACE = 32;

/* An unreadable file: a message key and its values. */
function fileProblem(key, vars) {
  var e = new Error(key);
  e.key = key;
  e.vars = vars || {};
  return e;
}

/*
 * The records of an import file as the service splits them, as character offsets into the text:
 * start[i], end[i] (before its line ending) and next[i] (after it). A UTF-8 BOM at the start is
 * skipped. CSV, exactly as the API's parseCsv (workers/admin/csv.ts): a field is quoted
 * only when its first character is a quote; inside it "" is a quote and commas and line breaks are
 * data; after the closing quote the rest of the field is kept; LF, CRLF or a lone CR end a record; a
 * record of one empty field (a blank line, or "") is skipped and not numbered; the first record is
 * the header. A quoted field the file ends inside is the problem "unclosed" (row 0: the header).
 * NDJSON, as the CLI splits it (scripts/lib/records.mjs): LF or CRLF end a line; a line of spaces,
 * tabs and CRs only is skipped and not numbered.
 */
function splitRows(text, csv) {
  var start = [], end = [], next = [];
  var n = text.length;
  var i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  var c, j;
  if (!csv) {
    while (i < n) {
      var nl = text.indexOf("\n", i);
      var stop = nl < 0 ? n : nl;
      var e = stop > i && text.charCodeAt(stop - 1) === CR ? stop - 1 : stop;
      for (j = i; j < e; j++) {
        c = text.charCodeAt(j);
        if (c !== SPACE && c !== TAB && c !== CR) break;
      }
      if (j < e) {
        start.push(i);
        end.push(e);
        next.push(nl < 0 ? n : nl + 1);
      }
      i = nl < 0 ? n : nl + 1;
    }
    return { start: start, end: end, next: next };
  }
  var rec = i, fields = 0, empty = false;
  while (i <= n) {
    if (text.charCodeAt(i) === QUOTE) {
      var from = i + 1, len = 0;
      for (;;) {
        var q = text.indexOf('"', from);
        if (q < 0) throw fileProblem("unclosed", { row: start.length });
        len += q - from;
        if (text.charCodeAt(q + 1) === QUOTE) {
          len += 1;
          from = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      j = i;
      while (j < n && (c = text.charCodeAt(j)) !== COMMA && c !== LF && c !== CR) j++;
      empty = len === 0 && j === i;
    } else {
      j = i;
      while (j < n && (c = text.charCodeAt(j)) !== COMMA && c !== LF && c !== CR) j++;
      empty = j === i;
    }
    i = j;
    fields++;
    c = text.charCodeAt(i);
    if (c === COMMA) {
      i++;
      continue;
    }
    var stopAt = i;
    if (c === CR && text.charCodeAt(i + 1) === LF) i += 2;
    else i++;
    if (!(fields === 1 && empty)) {
      start.push(rec);
      end.push(stopAt);
      next.push(i < n ? i : n);
    }
    rec = i;
    fields = 0;
  }
  return { start: start, end: end, next: next };
}

/* The UTF-8 length of text[from, to). */
function utf8Length(text, from, to) {
  var bytes = 0;
  for (var i = from; i < to; i++) {
    var c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < to) {
      var d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

function isJson(line) {
  try {
    JSON.parse(line);
    return true;
  } catch (e) {
    return false;
  }
}

/*
 * A CSV or NDJSON file as the import sends it: rows numbered from 1 (after the CSV header), chunks
 * of at most maxRows rows and maxBytes bytes, and the file's byte offset after each row.
 */
function rowsSource(text, csv, maxRows, maxBytes) {
  var sp = splitRows(text, csv);
  var first = csv ? 1 : 0;
  if (csv && sp.start.length === 0) throw fileProblem("noRows", {});
  var bad = text.indexOf("\uFFFD");
  if (bad >= 0) {
    var k = 0;
    while (k < sp.start.length - 1 && sp.next[k] <= bad) k++;
    throw fileProblem("notUtf8Row", { row: k + 1 - first });
  }
  var header = csv ? text.slice(sp.start[0], sp.end[0]) : "";
  var overhead = csv ? utf8Length(header, 0, header.length) + 1 : 2;
  var at = { chars: 0, bytes: 0 };
  var src = {
    total: sp.start.length - first,
    apiFormat: csv ? "csv" : "json",
    type: csv ? "text/csv; charset=utf-8" : "application/json",
    name: csv ? "rejected-rows.csv" : "rejected-rows.ndjson",
    rowText: function (row) {
      return text.slice(sp.start[row - 1 + first], sp.end[row - 1 + first]);
    },
    /* The file's byte offset after its first k rows (k at least 1). */
    bytesAfter: function (k) {
      var to = sp.next[k - 1 + first];
      if (to < at.chars) at = { chars: 0, bytes: 0 };
      at = { chars: to, bytes: at.bytes + utf8Length(text, at.chars, to) };
      return at.bytes;
    },
    /* The chunk after the first done rows: {to, body, toByte, notJson: rows sent as null}. */
    chunk: function (done) {
      var to = done, size = overhead, parts = csv ? [header] : [], notJson = [];
      while (to < src.total && to - done < maxRows) {
        var line = src.rowText(to + 1);
        var b = utf8Length(line, 0, line.length) + 1;
        if (size + b > maxBytes) {
          if (to === done) throw fileProblem("rowTooLong", { row: to + 1, bytes: maxBytes });
          break;
        }
        size += b;
        to++;
        if (csv || isJson(line)) parts.push(line);
        else {
          parts.push("null");
          notJson.push(to);
        }
      }
      var body = csv ? parts.join("\n") + "\n" : "[" + parts.join(",") + "]";
      return { to: to, body: body, toByte: src.bytesAfter(to), notJson: notJson };
    },
    isJsonRow: function (row) {
      return csv || isJson(src.rowText(row));
    },
    download: function (rejected) {
      var rows = rejected.map(function (r) {
        return { row: r.row, reason: r.reason, text: src.rowText(r.row) };
      });
      return csv ? rejectedCsv(header, rows) : rejectedNdjson(rows);
    },
  };
  return src;
}

/* A JSON file (an array, or {"subscribers": [...]}): sent whole, in one request, as the CLI does. */
function jsonSource(text, fileSize, maxBytes) {
  var body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.indexOf("\uFFFD") >= 0) throw fileProblem("notUtf8", {});
  var doc;
  try {
    doc = JSON.parse(body);
  } catch (e) {
    throw fileProblem("notJson", {});
  }
  var list = Array.isArray(doc) ? doc : doc && Array.isArray(doc.subscribers) ? doc.subscribers : null;
  if (!list) throw fileProblem("notJson", {});
  if (utf8Length(body, 0, body.length) > maxBytes) throw fileProblem("jsonTooBig", { bytes: maxBytes });
  var src = {
    total: list.length,
    apiFormat: "json",
    type: "application/json",
    name: "rejected-rows.ndjson",
    rowText: function (row) {
      return JSON.stringify(list[row - 1]);
    },
    bytesAfter: function () {
      return fileSize;
    },
    chunk: function () {
      return { to: list.length, body: body, toByte: fileSize, notJson: [] };
    },
    isJsonRow: function () {
      return true;
    },
    download: function (rejected) {
      return rejectedNdjson(
        rejected.map(function (r) {
          return { row: r.row, reason: r.reason, text: src.rowText(r.row) };
        }),
      );
    },
  };
  return src;
}

/* A chunk's rejected rows (numbered from 1 in the chunk) as rows of the file. */
function fileRejections(list, fromRow) {
  return list.map(function (r) {
    return {
      row: r.row + fromRow,
      reason: String(r.reason).replace(/\brepeats row (\d+)$/, function (m, n) {
        return "repeats row " + (Number(n) + fromRow);
      }),
    };
  });
}

function csvField(s) {
  return '"' + String(s).replace(/"/g, '""') + '"';
}

/* The rejected rows as CSV: the file's header after file_row,reason, then each row after its number and reason. */
function rejectedCsv(header, rows) {
  var out = ["\uFEFFfile_row,reason," + header];
  rows.forEach(function (r) {
    out.push(r.row + "," + csvField(r.reason) + "," + r.text);
  });
  return out.join("\r\n") + "\r\n";
}

/* The rejected rows as NDJSON: {"file_row", "reason", "row"} (a line that is not JSON: row null and the line as "line"). */
function rejectedNdjson(rows) {
  return rows
    .map(function (r) {
      var head = '{"file_row":' + r.row + ',"reason":' + JSON.stringify(r.reason) + ',"row":';
      return isJson(r.text) ? head + r.text.trim() + "}" : head + 'null,"line":' + JSON.stringify(r.text) + "}";
    })
    .join("\n")
    .concat(rows.length ? "\n" : "");
}

/* How long, in the page's words: seconds, minutes, or hours and minutes. */
function duration(words, seconds) {
  var s = Math.max(1, Math.ceil(seconds));
  if (s < 60) return words.seconds.replace("{n}", s);
  var m = Math.ceil(s / 60);
  if (m < 60) return words.minutes.replace("{n}", m);
  return words.hours.replace("{h}", Math.floor(m / 60)).replace("{m}", m % 60);
}
`;

/** The script's words, Korean and English (the form's data-lang). */
export const IMPORT_WORDS_JS = String.raw`
var WORDS = {
  ko: {
    choose: "가져올 파일을 선택해 주세요.",
    kind: "CSV(.csv), NDJSON(.ndjson, .jsonl) 또는 JSON(.json) 파일을 선택해 주세요.",
    tooBig: "브라우저에서는 256MiB까지의 파일을 가져올 수 있습니다. 더 큰 파일은 관리 CLI(npm run admin -- directory import)로 가져와 주세요.",
    reading: "파일을 읽는 중입니다…",
    hashing: "파일을 확인하는 중입니다(SHA-256)…",
    notUtf8: "파일이 UTF-8 텍스트가 아닙니다. UTF-8로 저장한 뒤(엑셀: CSV UTF-8) 다시 선택해 주세요.",
    notUtf8Row: "{where}에 UTF-8이 아닌 글자(U+FFFD)가 있습니다. 원본을 UTF-8로 저장한 뒤 다시 선택해 주세요.",
    unclosed: "{where}의 따옴표로 묶은 값이 닫히지 않았습니다. 파일을 고친 뒤 다시 선택해 주세요.",
    rowTooLong: "{where}이 한 번에 보낼 수 있는 크기({bytes}바이트)보다 큽니다.",
    noRows: "파일에 가져올 행이 없습니다.",
    notJson: "JSON 배열, 또는 {\"subscribers\": [...]} 형식의 JSON 파일이 아닙니다.",
    jsonTooBig: "JSON 파일은 한 번에 보내므로 {bytes}바이트까지만 가져올 수 있습니다. 한 줄에 한 명인 NDJSON으로 바꿔 주세요: jq -c '(.subscribers? // .)[]' 파일.json > 파일.ndjson",
    header: "머리글 행",
    rowN: "{row}번째 행",
    unexpected: "파일을 가져오지 못했습니다",
    resuming: "이어서 {row}번째 행부터 가져옵니다 (전체 {total}행).",
    starting: "{total}행을 가져옵니다.",
    progress: "{done} / {total}행",
    rate: " · 초당 {rate}행 · 약 {left} 남음",
    seconds: "{n}초",
    minutes: "{n}분",
    hours: "{h}시간 {m}분",
    retrying: "{why} {s}초 뒤 다시 보냅니다 ({n}/4).",
    noAnswer: "서버가 응답하지 않습니다.",
    committing: "{total}행을 모두 보냈습니다. 마무리하는 중입니다…",
    done: "가져오기를 마쳤습니다: {total}행 중 추가 {inserted}, 갱신 {updated}, 번호 이전 {reassigned}, 거부 {rejected}.",
    stopped: "{done}행까지 가져왔습니다. 같은 파일을 다시 선택해 시작하면 이어서 가져옵니다.",
    network: "서버에 연결하지 못했습니다.",
    http: "서버가 HTTP {status}로 응답했습니다.",
    misread: "서버가 {sent}행 중 {read}행을 읽었습니다. 가져오기를 멈췄습니다.",
    errorTitle: "요청을 처리하지 못했습니다",
    requestId: "요청 ID: {id}",
    progressLabel: "가져오기 진행률",
    caption: "거부된 행 {count}개",
    captionSome: "거부된 행 {count}개 중 처음 {listed}개",
    row: "행",
    reason: "사유",
    download: "거부된 행 내려받기 ({name})",
    notJsonLine: "row is not JSON",
  },
  en: {
    choose: "Choose a file to import.",
    kind: "Choose a CSV (.csv), NDJSON (.ndjson, .jsonl) or JSON (.json) file.",
    tooBig: "The browser imports files of up to 256 MiB. Import a larger one with the admin CLI (npm run admin -- directory import).",
    reading: "Reading the file…",
    hashing: "Checking the file (SHA-256)…",
    notUtf8: "The file is not UTF-8 text. Save it as UTF-8 (in Excel: CSV UTF-8) and choose it again.",
    notUtf8Row: "{where} holds a character that is not UTF-8 (U+FFFD). Save the original as UTF-8 and choose it again.",
    unclosed: "{where} has a quoted value that is never closed. Mend the file and choose it again.",
    rowTooLong: "{where} is larger than one request may be ({bytes} bytes).",
    noRows: "The file has no rows to import.",
    notJson: "This is not a JSON array, nor JSON of the form {\"subscribers\": [...]}.",
    jsonTooBig: "A JSON file is sent whole, so it may have at most {bytes} bytes. Convert it to NDJSON, one person a line: jq -c '(.subscribers? // .)[]' file.json > file.ndjson",
    header: "The header row",
    rowN: "Row {row}",
    unexpected: "The file could not be imported",
    resuming: "Resuming at row {row} (of {total}).",
    starting: "Importing {total} rows.",
    progress: "{done} of {total} rows",
    rate: " · {rate} rows/s · about {left} left",
    seconds: "{n} s",
    minutes: "{n} min",
    hours: "{h} h {m} min",
    retrying: "{why} Sending again in {s} s ({n} of 4).",
    noAnswer: "The server does not answer.",
    committing: "All {total} rows are sent. Finishing…",
    done: "Import finished: of {total} rows, {inserted} inserted, {updated} updated, {reassigned} reassigned, {rejected} rejected.",
    stopped: "Rows 1 to {done} are in. Choose the same file and start again to resume.",
    network: "Could not reach the server.",
    http: "The server answered HTTP {status}.",
    misread: "The server read {read} of {sent} rows sent. The import stopped.",
    errorTitle: "The request could not be done",
    requestId: "Request id: {id}",
    progressLabel: "Import progress",
    caption: "Rejected rows: {count}",
    captionSome: "Rejected rows: the first {listed} of {count}",
    row: "Row",
    reason: "Reason",
    download: "Download the rejected rows ({name})",
    notJsonLine: "row is not JSON",
  },
};
`;
