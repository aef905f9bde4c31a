// The console's directory import from the browser (docs/operations.md "Importing a large file", "From
// the browser"): the script the Directory page (/console/directory) serves inline, in a
// `<script nonce=...>`. It reads the chosen CSV, NDJSON or JSON file, hashes it (SHA-256 of the whole
// file), splits its rows as the API splits them, asks the server for an uncommitted run of the same
// file to resume (GET /admin/directory/import/runs), sends the rest in chunks, one at a time, each
// with the file's hash, size and place (POST /admin/directory/import?run=…&from_row=…&to_byte=…),
// then commits the run. The rejected rows are listed by file row and reason and downloaded from the
// browser's own copy of the file: the server keeps their numbers and reasons, never their content.
// Nothing of a row is logged.
//
// The script is plain ES2020 in string constants (as the sign-in page's WEB_OTP is): it has no
// backtick and no `${`, and holds nothing a <script> element would end at. Its pure functions and its
// words are ./import-lib.ts, a part of IMPORT_JS that the tests run as the page ships it.
//
// The page's markup (the DOM contract): <meta name="csrf" content="…">; a form#import-form with
// data-lang="ko|en", data-max-rows (rows per chunk, default 1,000) and optionally data-max-bytes
// (bytes per chunk, default 4 MiB), holding input#import-file and button#import-start; and a
// div#import-panel (hidden until an import starts) holding progress#import-progress,
// p#import-status (aria-live) and div#import-rejected. The page's Content-Security-Policy must allow
// `connect-src 'self'` (its requests to /admin/).

import { IMPORT_LIB_JS, IMPORT_WORDS_JS } from "./import-lib";

export { IMPORT_LIB_JS } from "./import-lib";

const IMPORT_UI_JS = String.raw`
var MAX_FILE_BYTES = 256 * 1024 * 1024;
var RETRIES = 4;
var MAX_LISTED = 1000;

var form = document.getElementById("import-form");
var input = document.getElementById("import-file");
var startButton = document.getElementById("import-start");
var panel = document.getElementById("import-panel");
var bar = document.getElementById("import-progress");
var statusLine = document.getElementById("import-status");
var box = document.getElementById("import-rejected");
if (!form || !input || !startButton || !panel || !bar || !statusLine || !box) return;
var meta = document.querySelector('meta[name="csrf"]');
var csrf = (meta && meta.getAttribute("content")) || "";
var lang = form.getAttribute("data-lang") === "en" ? "en" : "ko";
var words = WORDS[lang];
var numbers = new Intl.NumberFormat(lang === "ko" ? "ko-KR" : "en-US");
function intAttr(name, fallback, min, max) {
  var v = Number(form.getAttribute(name));
  return form.hasAttribute(name) && Number.isInteger(v) && v >= min && v <= max ? v : fallback;
}
var maxRows = intAttr("data-max-rows", 1000, 1, 100000);
var maxBytes = intAttr("data-max-bytes", 4 * 1024 * 1024, 1024, 50 * 1024 * 1024);
if (!bar.hasAttribute("aria-label") && !bar.hasAttribute("aria-labelledby"))
  bar.setAttribute("aria-label", words.progressLabel);

/* A message of the page's language with its values filled in (numbers grouped). */
function say(key, vars) {
  vars = vars || {};
  return words[key].replace(/\{(\w+)\}/g, function (m, k) {
    var v = vars[k];
    return typeof v === "number" ? numbers.format(v) : v === undefined ? m : String(v);
  });
}

function show(text) {
  statusLine.textContent = text;
}

function problemText(err) {
  var v = err.vars || {};
  var where = v.row === undefined ? "" : v.row === 0 ? words.header : say("rowN", { row: v.row });
  return say(err.key, { where: where, bytes: v.bytes });
}

var ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
function randomId(n) {
  var b = crypto.getRandomValues(new Uint8Array(n));
  var s = "";
  for (var i = 0; i < n; i++) s += ALPHABET.charAt(b[i] & 63);
  return s;
}

function hex(buf) {
  return Array.prototype.map
    .call(new Uint8Array(buf), function (b) {
      return (b < 16 ? "0" : "") + b.toString(16);
    })
    .join("");
}

function sleep(ms) {
  return new Promise(function (resolve) {
    setTimeout(resolve, ms);
  });
}

function formatOf(name) {
  var m = /\.([A-Za-z0-9]+)$/.exec(name);
  var ext = m ? m[1].toLowerCase() : "";
  if (ext === "csv") return "csv";
  if (ext === "ndjson" || ext === "jsonl") return "ndjson";
  if (ext === "json") return "json";
  return null;
}

/* What went wrong with an answer: the service's message, else the status or the network. */
function problemOf(r) {
  if (r.data && typeof r.data.message === "string") return r.data.message;
  return r.status === 0 ? words.network : say("http", { status: String(r.status) });
}

/*
 * One request of the console's session (its CSRF token, a fresh request id the server logs), sent
 * again after 1, 2, 4 and 8 s (or the Retry-After it names, up to 30 s) when it meets a 429, a 5xx
 * or the network failing.
 */
async function call(method, url, body, type) {
  for (var attempt = 0; ; attempt++) {
    var id = "web-" + randomId(20);
    var headers = { "X-CSRF-Token": csrf, "X-Request-Id": id };
    if (type) headers["Content-Type"] = type;
    var r = { status: 0, data: null, requestId: id, retryAfter: null };
    try {
      var res = await fetch(url, {
        method: method,
        headers: headers,
        body: body,
        credentials: "same-origin",
        cache: "no-store",
      });
      r.retryAfter = res.headers.get("Retry-After");
      var text = await res.text();
      r.status = res.status;
      try {
        r.data = JSON.parse(text);
      } catch (e) {
        r.data = null;
      }
    } catch (e) {
      r.status = 0;
    }
    if (!(r.status === 0 || r.status === 429 || r.status >= 500) || attempt >= RETRIES) return r;
    var wait = 1000 * Math.pow(2, attempt);
    var after = Number(r.retryAfter);
    if (r.retryAfter !== null && isFinite(after) && after > 0) wait = Math.max(wait, Math.min(after, 30) * 1000);
    show(say("retrying", { why: problemOf(r), s: Math.round(wait / 1000), n: attempt + 1 }));
    await sleep(wait);
  }
}

function el(name, text) {
  var e = document.createElement(name);
  if (text !== undefined) e.textContent = text;
  return e;
}

/* An error as the console shows one: the message, and the request id the server's log line has. */
function failBox(message, requestId) {
  var div = el("div");
  div.className = "alert";
  div.setAttribute("role", "alert");
  div.appendChild(el("p", words.errorTitle + ": " + message));
  if (requestId) {
    var rid = el("p", say("requestId", { id: requestId }));
    rid.className = "rid";
    div.appendChild(rid);
  }
  box.insertBefore(div, box.firstChild);
}

function save(text, name) {
  var type = /\.csv$/.test(name) ? "text/csv;charset=utf-8" : "application/x-ndjson;charset=utf-8";
  var url = URL.createObjectURL(new Blob([text], { type: type }));
  var a = el("a");
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(function () {
    URL.revokeObjectURL(url);
  }, 60000);
}

/* The rejected rows: a table of the first 1,000 (row, reason), and the download of all the page knows. */
function showRejected(state, src) {
  var rows = Array.from(state.rejected.keys()).sort(function (a, b) {
    return a - b;
  });
  if (rows.length === 0) return;
  var list = rows.map(function (row) {
    return { row: row, reason: state.rejected.get(row) };
  });
  var count = Math.max(state.totals.rejected_count, list.length);
  var listed = Math.min(list.length, MAX_LISTED);
  var table = el("table");
  table.appendChild(el("caption", listed < count ? say("captionSome", { listed: listed, count: count }) : say("caption", { count: count })));
  var head = el("tr");
  [words.row, words.reason].forEach(function (name) {
    var th = el("th", name);
    th.setAttribute("scope", "col");
    head.appendChild(th);
  });
  table.appendChild(el("thead")).appendChild(head);
  var tbody = table.appendChild(el("tbody"));
  list.slice(0, MAX_LISTED).forEach(function (r) {
    var tr = el("tr");
    var th = el("th", numbers.format(r.row));
    th.setAttribute("scope", "row");
    tr.appendChild(th);
    tr.appendChild(el("td", r.reason));
    tbody.appendChild(tr);
  });
  box.appendChild(table);
  var button = el("button", say("download", { name: src.name }));
  button.type = "button";
  button.className = "secondary";
  button.addEventListener("click", function () {
    save(src.download(list), src.name);
  });
  box.appendChild(button);
}

/* A stop: the answer's message and request id, what is in, and how to go on. */
function stop(r, state, src) {
  failBox(problemOf(r), r.requestId);
  show(state.done > 0 ? say("stopped", { done: state.done }) : "");
  showRejected(state, src);
}

/* The server's run of this file, if it is one this page can go on with (the same rows, the same bytes). */
function resumable(d, src) {
  return (
    d !== null &&
    typeof d === "object" &&
    typeof d.run === "string" &&
    d.format === src.apiFormat &&
    Number.isInteger(d.rows_done) &&
    d.rows_done >= 1 &&
    d.rows_done <= src.total &&
    d.bytes_done === src.bytesAfter(d.rows_done)
  );
}

var COUNTS = ["inserted", "updated", "reassigned", "rejected_count"];

async function importFile(file) {
  bar.max = 1;
  bar.value = 0;
  var format = formatOf(file.name);
  if (!format) throw fileProblem("kind", {});
  if (file.size > MAX_FILE_BYTES) throw fileProblem("tooBig", {});
  if (file.size === 0) throw fileProblem("noRows", {});
  show(words.reading);
  var buf = await file.arrayBuffer();
  show(words.hashing);
  var hash = hex(await crypto.subtle.digest("SHA-256", buf));
  var text;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(buf);
  } catch (e) {
    throw fileProblem("notUtf8", {});
  }
  buf = null;
  var src = format === "json" ? jsonSource(text, file.size, maxBytes) : rowsSource(text, format === "csv", maxRows, maxBytes);
  if (src.total === 0) throw fileProblem("noRows", {});
  var fileQuery = "file_hash=" + hash + "&file_size=" + file.size;
  var state = { run: "", done: 0, totals: { inserted: 0, updated: 0, reassigned: 0, rejected_count: 0 }, rejected: new Map() };

  var found = await call("GET", "/admin/directory/import/runs?" + fileQuery);
  if (found.status === 200 && resumable(found.data, src)) {
    var d = found.data;
    state.run = d.run;
    state.done = d.rows_done;
    COUNTS.forEach(function (k) {
      state.totals[k] = Number(d[k]) || 0;
    });
    (Array.isArray(d.rejected) ? d.rejected : []).forEach(function (x) {
      state.rejected.set(x.row, src.isJsonRow(x.row) ? String(x.reason) : words.notJsonLine);
    });
    show(say("resuming", { row: Math.min(state.done + 1, src.total), total: src.total }));
  } else if (found.status === 200 || found.status === 404) {
    state.run = "web-" + randomId(24);
    show(say("starting", { total: src.total }));
  } else return stop(found, state, src);

  bar.max = src.total;
  bar.value = state.done;
  var t0 = Date.now();
  var fromRow = state.done;
  var shownAt = t0;
  while (state.done < src.total) {
    var c = src.chunk(state.done);
    var url =
      "/admin/directory/import?run=" + state.run + "&" + fileQuery + "&from_row=" + state.done + "&to_byte=" + c.toByte;
    var r = await call("POST", url, c.body, src.type);
    var a = r.data;
    if (r.status !== 200 || !a || typeof a.received !== "number" || !Array.isArray(a.rejected)) return stop(r, state, src);
    var sent = c.to - state.done;
    if (a.received !== sent)
      return stop({ data: { message: say("misread", { read: a.received, sent: sent }) }, requestId: r.requestId }, state, src);
    var notJson = new Set(c.notJson);
    fileRejections(a.rejected, state.done).forEach(function (x) {
      state.rejected.set(x.row, notJson.has(x.row) ? words.notJsonLine : x.reason);
    });
    // the run's totals as the server keeps them (a chunk sent again counts once); else this answer's
    COUNTS.forEach(function (k) {
      state.totals[k] = a.progress ? a.progress[k] : state.totals[k] + a[k];
    });
    state.done = c.to;
    bar.value = state.done;
    var now = Date.now();
    if (now - shownAt >= 1000 || state.done === src.total) {
      shownAt = now;
      var line = say("progress", { done: state.done, total: src.total });
      var rate = ((state.done - fromRow) * 1000) / Math.max(1, now - t0);
      if (state.done < src.total && rate > 0)
        line += say("rate", { rate: Math.round(rate), left: duration(words, (src.total - state.done) / rate) });
      show(line);
    }
  }
  show(say("committing", { total: src.total }));
  var done = await call("POST", "/admin/directory/import/commit?run=" + state.run);
  if (done.status !== 200) return stop(done, state, src);
  var t = state.totals;
  show(
    say("done", {
      total: src.total,
      inserted: t.inserted,
      updated: t.updated,
      reassigned: t.reassigned,
      rejected: t.rejected_count,
    }),
  );
  showRejected(state, src);
}

var running = false;
function busy(on) {
  running = on;
  startButton.disabled = on;
  input.disabled = on;
  if (on) form.setAttribute("aria-busy", "true");
  else form.removeAttribute("aria-busy");
}

window.addEventListener("beforeunload", function (e) {
  if (running) {
    e.preventDefault();
    e.returnValue = "";
  }
});

form.addEventListener("submit", function (e) {
  e.preventDefault();
  if (running) return;
  var file = input.files && input.files[0];
  panel.hidden = false;
  box.textContent = "";
  if (!file) {
    show(words.choose);
    input.focus();
    return;
  }
  show("");
  busy(true);
  importFile(file)
    .catch(function (err) {
      // a file the page cannot read says why; anything else by its kind only (a message may quote the file)
      failBox(err && err.key ? problemText(err) : words.unexpected + " (" + ((err && err.name) || "Error") + ")", null);
    })
    .finally(function () {
      busy(false);
    });
});
`;

/** The Directory page's importer: `<script nonce="…">${IMPORT_JS}</script>` after the form and the panel. */
export const IMPORT_JS = `(function () {\n"use strict";\n${IMPORT_LIB_JS}${IMPORT_WORDS_JS}${IMPORT_UI_JS}})();\n`;
