// The import's progress on stderr: counts and rates only, never a row's content (personal data).
// On a terminal one line redrawn in place at most 10 times a second; elsewhere (CI, a pipe, a log
// file) one plain line every few seconds, so a log holds a readable history.

const TTY_INTERVAL_MS = 100;
const PLAIN_INTERVAL_MS = 5000;
const BAR = 20;

const count = (n) => Math.round(n).toLocaleString("en-US");

/** `1h02m`, `4m05s`, `12s`. */
export function duration(seconds) {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h) return `${h}h${String(m).padStart(2, "0")}m`;
  if (m) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${s}s`;
}

export class Progress {
  /**
   * @param {{ write(s: string): unknown; isTTY?: boolean }} err where it is drawn
   * @param {{ total: number; startBytes: number; startRows: number; quiet?: boolean; now?: () => number }} opts
   *   `total` is the file's size; the run starts `startBytes` and `startRows` in (a resumed import).
   */
  constructor(err, { total, startBytes, startRows, quiet = false, now = () => performance.now() }) {
    this.err = err;
    this.tty = err.isTTY === true;
    this.quiet = quiet;
    this.now = now;
    this.total = total;
    this.startBytes = startBytes;
    this.startRows = startRows;
    this.bytes = startBytes;
    this.rows = startRows;
    this.started = now();
    this.lastDraw = this.started;
    this.drawn = false;
  }

  /** Rows and bytes acknowledged so far (whole file, a resumed run's earlier rows included). */
  update(rows, bytes) {
    this.rows = rows;
    this.bytes = bytes;
    const t = this.now();
    if (t - this.lastDraw >= (this.tty ? TTY_INTERVAL_MS : PLAIN_INTERVAL_MS)) this.draw(t);
  }

  /** A line of its own (a retry, a warning), printed above the redrawn line. */
  note(line) {
    this.clear();
    this.err.write(line + "\n");
  }

  /** The last figures, and the terminal's line ended. */
  done() {
    if (this.quiet) return;
    const t = this.now();
    const seconds = (t - this.started) / 1000;
    const rows = this.rows - this.startRows;
    const rate = seconds > 0 ? rows / seconds : 0;
    this.clear();
    this.err.write(`import: ${count(rows)} rows in ${seconds.toFixed(1)} s (${count(rate)} rows/s)\n`);
  }

  /** Leaves the line as it is (before an error message). */
  stop() {
    if (this.quiet || !this.tty || !this.drawn) return;
    this.err.write("\n");
    this.drawn = false;
  }

  clear() {
    if (this.quiet || !this.tty || !this.drawn) return;
    this.err.write("\r\x1b[K");
    this.drawn = false;
  }

  /** @param {number} t */
  draw(t) {
    this.lastDraw = t;
    if (this.quiet) return;
    const seconds = (t - this.started) / 1000;
    const rate = seconds > 0 ? (this.rows - this.startRows) / seconds : 0;
    const byteRate = seconds > 0 ? (this.bytes - this.startBytes) / seconds : 0;
    const share = this.total > 0 ? Math.min(1, this.bytes / this.total) : 1;
    const eta = byteRate > 0 ? duration((this.total - this.bytes) / byteRate) : "?";
    const pct = (share * 100).toFixed(1) + "%";
    if (this.tty) {
      const filled = Math.round(share * BAR);
      const bar = "#".repeat(filled) + "-".repeat(BAR - filled);
      this.err.write(`\r\x1b[K[${bar}] ${pct}  ${count(this.rows)} rows  ${count(rate)} rows/s  ETA ${eta}`);
      this.drawn = true;
    } else {
      this.err.write(`import: ${count(this.rows)} rows, ${count(rate)} rows/s, ${pct} of the file, ETA ${eta}\n`);
    }
  }
}
