// The console's browser import (workers/console/import-script.ts) in Debian Chromium against the real
// `npm start` server. The page here is the DOM contract the console's Directory page renders, with
// the script inline under a nonce and the strict policy the console's pages carry plus
// `connect-src 'self'`; its /admin/ requests go through a small proxy that adds the admin token
// where the console's session cookie would be (and checks the CSRF header the script sends), and
// that can refuse or fail a chosen request.
// - a CSV file in three chunks: progress, a 503 sent again, the counts, the rejected rows' table and
//   their download built from the browser's copy;
// - an import stopped by an error shows its message and request id; choosing the same file again
//   resumes at the next row, and the counts are the run's;
// - NDJSON in English: a line that is not JSON is rejected at its row; axe-core finds no violation.
import { createServer, type IncomingMessage, type Server as HttpServer } from "node:http";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IMPORT_JS } from "../../workers/console/import-script";
import { downloadedText, launchChromium } from "./chromium";
import { devAdminToken, sharedServer, type Server } from "./server";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const CSRF = "csrf-token-of-the-test-page";
const NONCE = "bm9uY2Utb2YtdGhlLXRlc3Q";

interface Seen {
  method: string;
  path: string;
  requestId: string;
  status: number;
}

let server: Server;
let proxy: HttpServer;
let origin: string;
let browser: Browser;
const seen: Seen[] = [];
/** The proxy's answer instead of the service's for the request it matches, once. */
let fault: { match: (path: string, n: number) => boolean; status: number; body: string } | null = null;

function page(lang: "ko" | "en"): string {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>Directory</title>
<meta name="csrf" content="${CSRF}"></head><body><main><h1>Directory</h1>
<form id="import-form" data-lang="${lang}" data-max-rows="1000">
<label for="import-file">File</label><input type="file" id="import-file" accept=".csv,.ndjson,.jsonl,.json,text/csv,application/x-ndjson">
<button type="submit" id="import-start">Start</button>
</form>
<div id="import-panel" hidden>
<progress id="import-progress" max="1" value="0"></progress>
<p id="import-status" aria-live="polite"></p>
<div id="import-rejected"></div>
</div></main>
<script nonce="${NONCE}">${IMPORT_JS}</script></body></html>`;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of req) parts.push(p as Buffer);
  return Buffer.concat(parts);
}

beforeAll(async () => {
  server = sharedServer();
  const token = devAdminToken();
  proxy = createServer(async (req, res) => {
    const url = new URL(req.url!, "http://x");
    if (!url.pathname.startsWith("/admin/")) {
      res.writeHead(200, {
        "Content-Type": "text/html; charset=utf-8",
        "Content-Security-Policy": `default-src 'none'; script-src 'nonce-${NONCE}'; style-src 'nonce-${NONCE}'; connect-src 'self'`,
      });
      res.end(page(url.searchParams.get("lang") === "en" ? "en" : "ko"));
      return;
    }
    const requestId = String(req.headers["x-request-id"] ?? "");
    const entry: Seen = { method: req.method!, path: url.pathname + url.search, requestId, status: 0 };
    seen.push(entry);
    const sent = await body(req);
    if (req.headers["x-csrf-token"] !== CSRF) {
      entry.status = 403;
      res.writeHead(403).end();
      return;
    }
    if (fault && fault.match(entry.path, seen.length)) {
      entry.status = fault.status;
      res.writeHead(fault.status, { "Content-Type": "application/json" }).end(fault.body);
      fault = null;
      return;
    }
    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, "X-Request-Id": requestId };
    if (req.headers["content-type"]) headers["Content-Type"] = req.headers["content-type"];
    const answer = await fetch(server.base + entry.path, {
      method: req.method,
      headers,
      body: sent.length ? new Uint8Array(sent) : undefined,
    });
    entry.status = answer.status;
    res.writeHead(answer.status, { "Content-Type": answer.headers.get("Content-Type") ?? "application/json" });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  origin = `http://localhost:${(proxy.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => proxy?.close(r));
  await server?.stop();
});

const HEADER = "telcoCd,phoneNo,name,gender,birth,foreign,ci";
const CI = (n: number) => `CIweb${String(n).padStart(6, "0")}${"Q".repeat(74)}A==`;
const person = (base: number, n: number, name = `웹${n}`) =>
  `S,010${String(base * 10000 + n).padStart(8, "0")},${name},M,1990-01-01,L,${CI(base * 10000 + n)}`;

async function open(lang: "ko" | "en" = "ko"): Promise<Page> {
  const p = await browser.newPage();
  await p.goto(`${origin}/console/directory?lang=${lang}`);
  return p;
}

/** Every text the status line shows, from now on (read by `statuses`). */
async function watchStatus(p: Page): Promise<void> {
  await p.evaluate(() => {
    const line = document.getElementById("import-status")!;
    const all: string[] = ((globalThis as unknown as { statuses: string[] }).statuses = []);
    new MutationObserver(() => all.push(line.textContent ?? "")).observe(line, {
      childList: true,
      characterData: true,
    });
  });
}

const statuses = (p: Page) => p.evaluate(() => (globalThis as unknown as { statuses: string[] }).statuses);

async function choose(p: Page, name: string, text: string): Promise<void> {
  await watchStatus(p);
  await p.setInputFiles("#import-file", { name, mimeType: "text/plain", buffer: Buffer.from(text) });
  await p.click("#import-start");
}

const status = (p: Page) => p.locator("#import-status");

describe("the browser import", () => {
  it("imports a CSV file in chunks, sends a 503'd chunk again, and lists and downloads the rejected rows", async () => {
    // 2,500 rows: row 1,500 has a bad birth date, row 2,200 a name with a comma (quoted), row 2,300 too few fields
    const rows = Array.from({ length: 2500 }, (_, i) => person(1, i + 1));
    rows[1499] = rows[1499]!.replace("1990-01-01", "1990-02-30");
    rows[2199] = person(1, 2200, '"Kim, Yuna"');
    rows[2299] = "S,01000000000,short";
    const text = `\ufeff${HEADER}\r\n${rows.join("\r\n")}\r\n`;
    seen.length = 0;
    fault = {
      match: (path, n) => n === 3 && path.startsWith("/admin/directory/import?"),
      status: 503,
      body: '{"error":"server_error","message":"A test failure."}',
    };
    const p = await open();
    await choose(p, "people.csv", text);
    await expect.poll(() => status(p).textContent(), { timeout: 60_000 }).toMatch(/가져오기를 마쳤습니다/);
    expect(await status(p).textContent()).toBe(
      "가져오기를 마쳤습니다: 2,500행 중 추가 2,498, 갱신 0, 번호 이전 0, 거부 2.",
    );
    const said = await statuses(p);
    expect(said.slice(0, 2)).toEqual(["파일을 읽는 중입니다…", "파일을 확인하는 중입니다(SHA-256)…"]);
    expect(said).toContain("2,500행을 가져옵니다.");
    expect(said).toContain("A test failure. 1초 뒤 다시 보냅니다 (1/4).");
    expect(said).toContain("2,500행을 모두 보냈습니다. 마무리하는 중입니다…");
    // after the retry's second, the rows done, the rate and the time left
    expect(
      said.some((t) => /^[\d,]+ \/ 2,500행 · 초당 [\d,]+행 · 약 \d+초 남음$/.test(t)),
      said.join("\n"),
    ).toBe(true);
    expect(await p.locator("#import-progress").evaluate((e: HTMLProgressElement) => [e.value, e.max])).toEqual([
      2500, 2500,
    ]);
    // the GET, three chunks (the second one twice, a fresh request id each time), the commit
    const calls = seen.map((s) => `${s.method} ${s.path.replace(/\?.*/, "")} ${s.status}`);
    expect(calls).toEqual([
      "GET /admin/directory/import/runs 404",
      "POST /admin/directory/import 200",
      "POST /admin/directory/import 503",
      "POST /admin/directory/import 200",
      "POST /admin/directory/import 200",
      "POST /admin/directory/import/commit 200",
    ]);
    expect(new Set(seen.map((s) => s.requestId)).size).toBe(seen.length);
    const places = seen
      .filter((s) => s.path.startsWith("/admin/directory/import?"))
      .map((s) => new URL(s.path, "http://x").searchParams);
    expect(places.map((q) => q.get("from_row"))).toEqual(["0", "1000", "1000", "2000"]);
    expect(places[3]!.get("to_byte")).toBe(String(Buffer.byteLength(text)));
    expect(places[0]!.get("run")).toMatch(/^web-[A-Za-z0-9_-]{24}$/);

    const table = p.locator("#import-rejected table");
    expect(await table.locator("caption").textContent()).toBe("거부된 행 2개");
    expect(await table.locator("thead th[scope=col]").allTextContents()).toEqual(["행", "사유"]);
    expect(await table.locator("tbody th[scope=row]").allTextContents()).toEqual(["1,500", "2,300"]);
    const [download] = await Promise.all([
      p.waitForEvent("download"),
      p.getByRole("button", { name: /거부된 행 내려받기/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("rejected-rows.csv");
    const reasons = await table.locator("tbody td").allTextContents();
    expect(await downloadedText(download)).toBe(
      [
        `\ufefffile_row,reason,${HEADER}`,
        `1500,"${reasons[0]}",${rows[1499]}`,
        `2300,"${reasons[1]}",${rows[2299]}`,
        "",
      ].join("\r\n"),
    );
    await p.close();
  }, 120_000);

  it("an error stops the import with its message and request id; the same file again resumes at the next row", async () => {
    const rows = Array.from({ length: 2300 }, (_, i) => person(2, i + 1));
    rows[99] = rows[99]!.replace("S,", "X,");
    const text = `${HEADER}\n${rows.join("\n")}\n`;
    seen.length = 0;
    fault = {
      match: (path) => path.includes("from_row=1000"),
      status: 400,
      body: '{"error":"invalid_request","message":"A test refusal."}',
    };
    let p = await open();
    await choose(p, "people2.csv", text);
    const alert = p.getByRole("alert");
    await alert.waitFor({ timeout: 60_000 });
    const refused = seen.find((s) => s.status === 400)!;
    expect(await alert.locator("p").allTextContents()).toEqual([
      "요청을 처리하지 못했습니다: A test refusal.",
      `요청 ID: ${refused.requestId}`,
    ]);
    expect(await status(p).textContent()).toBe(
      "1,000행까지 가져왔습니다. 같은 파일을 다시 선택해 시작하면 이어서 가져옵니다.",
    );
    expect(await p.locator("#import-start").isEnabled()).toBe(true);
    await p.close();

    // the tab closed; a new one, the same file
    seen.length = 0;
    p = await open();
    await choose(p, "renamed.csv", text);
    await expect.poll(() => status(p).textContent(), { timeout: 60_000 }).toMatch(/가져오기를 마쳤습니다/);
    expect(seen[0]).toMatchObject({ method: "GET", status: 200 });
    expect(await statuses(p)).toContain("이어서 1,001번째 행부터 가져옵니다 (전체 2,300행).");
    const first = new URL(seen[1]!.path, "http://x").searchParams;
    expect(first.get("from_row")).toBe("1000");
    expect(await status(p).textContent()).toBe(
      "가져오기를 마쳤습니다: 2,300행 중 추가 2,299, 갱신 0, 번호 이전 0, 거부 1.",
    );
    // row 100 was rejected before the tab closed: the server kept its number and reason
    expect(await p.locator("#import-rejected tbody th").allTextContents()).toEqual(["100"]);
    await p.close();
  }, 120_000);

  it("NDJSON in English: a line that is not JSON is rejected at its row; the panel passes axe-core", async () => {
    const lines = Array.from({ length: 5 }, (_, i) =>
      JSON.stringify({
        telcoCd: "K",
        phoneNo: `0103000000${i}`,
        name: `Web ${i}`,
        gender: "F",
        birth: "1991-01-01",
        foreign: "L",
        ci: CI(30000 + i),
      }),
    );
    lines[2] = "{not json";
    const text = `${lines.join("\n")}\n\n`;
    seen.length = 0;
    const p = await open("en");
    await choose(p, "people.ndjson", text);
    await expect.poll(() => status(p).textContent(), { timeout: 60_000 }).toMatch(/Import finished/);
    expect(await status(p).textContent()).toBe(
      "Import finished: of 5 rows, 4 inserted, 0 updated, 0 reassigned, 1 rejected.",
    );
    expect(seen.find((s) => s.path.startsWith("/admin/directory/import?"))).toBeDefined();
    expect(await p.locator("#import-rejected tbody tr").allTextContents()).toEqual(["3row is not JSON"]);
    const [download] = await Promise.all([
      p.waitForEvent("download"),
      p.getByRole("button", { name: "Download the rejected rows (rejected-rows.ndjson)" }).click(),
    ]);
    expect(JSON.parse((await downloadedText(download)).trim())).toEqual({
      file_row: 3,
      reason: "row is not JSON",
      row: null,
      line: "{not json",
    });
    await p.evaluate(AXE); // through the DevTools protocol: the page's CSP allows no other script
    const violations = await p.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run: (ctx: unknown) => Promise<unknown> } }).axe;
      const r = (await axe.run(document)) as { violations: { id: string }[] };
      return r.violations.map((v) => v.id);
    });
    expect(violations).toEqual([]);
    await p.close();
  }, 120_000);
});
