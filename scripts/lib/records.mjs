// Splits a directory import file into records as its bytes stream in (docs/operations.md "Import
// formats"), so a file of any size is read once and never held whole. Records keep their bytes as
// they are in the file and their byte offsets, so a chunk is sent as the file has it and an
// interrupted import resumes at a record boundary.
//
// CSV records are split exactly as the server's parser splits them (workers/admin/csv.ts
// `parseCsv`): a field is quoted only when its first character is `"`; inside it `""` is a quote and
// commas and line breaks are data, so one record may span lines; after the closing quote the rest of
// the field is literal; a record ends at LF, CRLF or a lone CR; a blank record (nothing, or `""`) is
// skipped and not numbered. The delimiters are ASCII, so scanning bytes is safe in UTF-8.
import { Buffer } from "node:buffer";

const LF = 10;
const CR = 13;
const QUOTE = 34;
const COMMA = 44;

/** A record of the file: its bytes (no line ending), its row number and the offset just past it. */
export class FileRecord {
  /**
   * @param {Uint8Array} bytes
   * @param {number} row 1 = the first record after the CSV header, or the first line of NDJSON
   * @param {number} end the file offset after the record's line ending
   */
  constructor(bytes, row, end) {
    this.bytes = bytes;
    this.row = row;
    this.end = end;
  }
}

/** A file the splitter cannot read on (an unclosed quote, a record too long to send). */
export class RecordError extends Error {}

const EMPTY = Buffer.alloc(0);
const concat = (/** @type {Buffer} */ a, /** @type {Uint8Array} */ b) =>
  a.length === 0 ? (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.length)) : Buffer.concat([a, b]);

const hasBom = (d) => d[0] === 0xef && d[1] === 0xbb && d[2] === 0xbf;

/** Shared by both splitters: bytes carried over between pushes, the BOM, numbering, the length cap. */
class Splitter {
  /**
   * @param {{ offset?: number; row?: number; maxRecordBytes?: number }} opts `offset` is where the
   *   first pushed byte sits in the file (a record boundary); `row` is the number of records before
   *   it. At offset 0 a UTF-8 BOM is skipped.
   */
  constructor({ offset = 0, row = 0, maxRecordBytes = 1 << 20 } = {}) {
    /** @type {Buffer} */
    this.carry = EMPTY;
    /** File offset of carry[0]. */
    this.base = offset;
    this.row = row;
    this.maxRecordBytes = maxRecordBytes;
    this.bomPending = offset === 0;
  }

  /** @param {Buffer} data @param {number} start */
  skipBom(data, start, final) {
    if (!this.bomPending) return start;
    if (data.length < 3 && !final) return -1; // too few bytes yet to tell
    this.bomPending = false;
    return hasBom(data) ? 3 : start;
  }

  /** Records completed by these bytes. @param {Uint8Array} chunk @returns {FileRecord[]} */
  push(chunk) {
    return this.run(concat(this.carry, chunk), false);
  }

  /** The last record (one with no line ending); throws RecordError for an unfinished quote. */
  finish() {
    const out = this.run(this.carry, true);
    this.carry = EMPTY;
    return out;
  }

  /** @param {Buffer} data @param {boolean} final */
  run(data, final) {
    /** @type {FileRecord[]} */
    const out = [];
    let pos = this.skipBom(data, 0, final);
    if (pos < 0) {
      this.carry = data;
      return out;
    }
    pos = this.scan(data, pos, final, out);
    if (!final && data.length - pos > this.maxRecordBytes) this.tooLong();
    this.carry = data.subarray(pos);
    this.base += pos;
    return out;
  }

  /**
   * Emits the record data[from, to) whose line ending ends at `next`, unless it is blank.
   * @param {FileRecord[]} out @param {Buffer} data
   */
  emit(out, data, from, to, next) {
    if (to - from > this.maxRecordBytes) this.tooLong();
    if (this.isBlank(data, from, to)) return;
    this.row++;
    out.push(new FileRecord(data.subarray(from, to), this.row, this.base + next));
  }

  /**
   * Scans data from `start`, emitting each record it completes; returns where the unfinished one starts.
   * @param {Buffer} _data @param {number} _start @param {boolean} _final @param {FileRecord[]} _out
   * @returns {number}
   */
  scan(_data, _start, _final, _out) {
    throw new Error("a splitter defines scan()");
  }

  /** @param {Buffer} _data @param {number} _from @param {number} _to @returns {boolean} */
  isBlank(_data, _from, _to) {
    throw new Error("a splitter defines isBlank()");
  }

  /** @returns {never} */
  tooLong() {
    throw new RecordError(
      `row ${this.row + 1} is longer than ${this.maxRecordBytes} bytes: a quoted field that is never closed, or not a directory file`,
    );
  }
}

/** CSV records (the header is the first one: the caller takes it). */
export class CsvSplitter extends Splitter {
  constructor(opts = {}) {
    super(opts);
    /** Where the unfinished record's scan stands: at a field's start, in a quoted field, or in an unquoted one. */
    this.state = FIELD;
    /** How far the unfinished record (carry[0..]) has been scanned. */
    this.scanned = 0;
  }

  isBlank(data, from, to) {
    return to === from || (to - from === 2 && data[from] === QUOTE && data[from + 1] === QUOTE);
  }

  /** @param {Buffer} data @param {number} start @param {boolean} final @param {FileRecord[]} out */
  scan(data, start, final, out) {
    const n = data.length;
    let recStart = start;
    let pos = start + this.scanned;
    let state = this.state;
    // Positions of the next quote and CR, found once and reused, so a file without them is scanned by
    // indexOf alone (lines of plain fields are the common case and take the fast path).
    let nextQuote = -2;
    let nextCr = -2;
    for (;;) {
      if (state === FIELD && pos === recStart) {
        const nl = data.indexOf(LF, pos);
        if (nl < 0 && !final) break;
        if (nl >= 0) {
          if (nextQuote !== -1 && nextQuote < pos) nextQuote = data.indexOf(QUOTE, pos);
          if (nextCr !== -1 && nextCr < pos) nextCr = data.indexOf(CR, pos);
          const plainQuotes = nextQuote === -1 || nextQuote > nl;
          const plainCr = nextCr === -1 || nextCr >= nl - 1; // no CR, or only the CR of a CRLF
          if (plainQuotes && plainCr) {
            const to = nextCr === nl - 1 && nl > pos ? nl - 1 : nl;
            this.emit(out, data, recStart, to, nl + 1);
            pos = recStart = nl + 1;
            continue;
          }
        }
      }
      // Byte by byte: a record with quotes or lone CRs, or the file's last record.
      if (pos >= n) {
        if (!final) break;
        if (state === QUOTED) {
          throw new RecordError(`row ${this.row + 1} has a quoted field that is not closed (the file ends inside it)`);
        }
        if (pos > recStart || state !== FIELD) this.emit(out, data, recStart, pos, pos);
        recStart = pos;
        state = FIELD;
        break;
      }
      const c = data[pos];
      if (state === QUOTED) {
        if (c === QUOTE) {
          if (pos + 1 >= n && !final) break; // a quote at the end: escaped or closing, the next byte says
          if (data[pos + 1] === QUOTE) pos += 2;
          else {
            state = UNQUOTED;
            pos++;
          }
        } else pos++;
        continue;
      }
      if (state === FIELD && c === QUOTE) {
        state = QUOTED;
        pos++;
        continue;
      }
      if (c === COMMA) {
        state = FIELD;
        pos++;
        continue;
      }
      if (c === LF || c === CR) {
        if (c === CR && pos + 1 >= n && !final) break; // CR at the end: a CRLF or a lone CR, the next byte says
        const next = c === CR && data[pos + 1] === LF ? pos + 2 : pos + 1;
        this.emit(out, data, recStart, pos, next);
        pos = recStart = next;
        state = FIELD;
        continue;
      }
      state = UNQUOTED;
      pos++;
    }
    this.state = state;
    this.scanned = pos - recStart;
    return recStart;
  }
}

const FIELD = 0;
const UNQUOTED = 1;
const QUOTED = 2;

/** NDJSON lines: LF or CRLF; lines of only spaces and tabs are skipped and not numbered. */
export class NdjsonSplitter extends Splitter {
  isBlank(data, from, to) {
    for (let i = from; i < to; i++) if (data[i] !== 32 && data[i] !== 9 && data[i] !== CR) return false;
    return true;
  }

  /** @param {Buffer} data @param {number} start @param {boolean} final @param {FileRecord[]} out */
  scan(data, start, final, out) {
    let recStart = start;
    for (;;) {
      const nl = data.indexOf(LF, recStart);
      if (nl < 0) {
        if (final && recStart < data.length) {
          this.emit(out, data, recStart, data[data.length - 1] === CR ? data.length - 1 : data.length, data.length);
          recStart = data.length;
        }
        return recStart;
      }
      this.emit(out, data, recStart, nl > recStart && data[nl - 1] === CR ? nl - 1 : nl, nl + 1);
      recStart = nl + 1;
    }
  }
}
