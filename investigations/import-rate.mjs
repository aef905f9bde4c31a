#!/usr/bin/env node
// The admin CLI's directory import as an operator runs it (docs/capacity.md "The import"): a file of
// `--rows` generated subscribers (bench/lib/directory-data.mjs, NDJSON) imported by
// scripts/admin.mjs with its defaults into a fresh plain workerd of the bench's harness
// (bench/lib/server.mjs, in memory), once per checkout and round, the checkouts alternating so
// each pair meets the same load. Prints, per run, the wall time and rows a second, and the CPU a
// row of workerd and of the CLI; then each checkout's minimum, median and maximum.
//
//   node investigations/import-rate.mjs [--rows 100000] [--rounds 2] [--shards N] [--base ../other-checkout]
//        [--cli "--chunk-size 10000 --parallel 2"]   options for the CLI's import

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { directoryRows } from "../bench/lib/directory-data.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, d) => (args.includes(name) ? args[args.indexOf(name) + 1] : d);
const rows = Number(opt("--rows", "100000"));
const rounds = Number(opt("--rounds", "2"));
const roots = [root, ...(opt("--base") ? [resolve(opt("--base"))] : [])];
const cliArgs = String(opt("--cli", "")).split(" ").filter(Boolean);
/** The admin token of the test vars (.dev.vars.example): the server is local only. */
const ADMIN_TOKEN = "devAdminToken-local-only-0123456789abcdef";

/** CPU time (µs) of this process's waited-for children so far (the CLI). */
function childrenCpu() {
  const s = readFileSync("/proc/self/stat", "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return (Number(f[13]) + Number(f[14])) * 10_000;
}

const dir = join(tmpdir(), "phone-login-import-rate");
mkdirSync(dir, { recursive: true });
const file = join(dir, `${rows}.ndjson`);
if (!existsSync(file)) writeFileSync(file, [...directoryRows(rows)].map((r) => JSON.stringify(r)).join("\n") + "\n");

async function once(checkout) {
  const { startServers, cpuMicros } = await import(join(checkout, "bench/lib/server.mjs"));
  const vars = opt("--shards") ? { DIRECTORY_SHARDS: opt("--shards") } : {};
  const srv = await startServers(checkout, join(checkout, "bench/results/build-import"), [{ name: "app", vars }], {
    peers: false,
    entry: "capacity/workers/capacity-entry.ts",
  });
  try {
    rmSync(`${file}.import-state.json`, { force: true });
    const cpu0 = cpuMicros(srv.pid);
    const cli0 = childrenCpu();
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [
        join(checkout, "scripts/admin.mjs"),
        "--base-url",
        srv.urls.app,
        "directory",
        "import",
        file,
        "--quiet",
        ...cliArgs,
      ],
      { env: { ...process.env, ADMIN_TOKEN }, stdio: ["ignore", "ignore", "pipe"] },
    );
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const code = await new Promise((r) => child.on("exit", r));
    const seconds = (performance.now() - t0) / 1000;
    if (code !== 0) throw new Error(`the import failed (${code}): ${err.slice(-1000)}`);
    return {
      seconds,
      rowsPerSecond: rows / seconds,
      workerdUsPerRow: (cpuMicros(srv.pid) - cpu0) / rows,
      cliUsPerRow: (childrenCpu() - cli0) / rows,
      load: loadavg()[0],
    };
  } finally {
    await srv.dispose();
  }
}

/** @type {Map<string, Awaited<ReturnType<typeof once>>[]>} */
const results = new Map(roots.map((r) => [r, []]));
for (let i = 0; i < rounds; i++)
  for (const checkout of roots) {
    const r = await once(checkout);
    results.get(checkout)?.push(r);
    console.log(
      `${checkout}: ${Math.round(r.rowsPerSecond).toLocaleString("en-US")} rows/s (${r.seconds.toFixed(1)} s), ` +
        `workerd ${r.workerdUsPerRow.toFixed(1)} µs a row, CLI ${r.cliUsPerRow.toFixed(1)} µs a row, load ${r.load.toFixed(1)}`,
    );
  }
const spread = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0].toFixed(1)} / ${s[Math.floor(s.length / 2)].toFixed(1)} / ${s[s.length - 1].toFixed(1)}`;
};
console.log(`\n${rows.toLocaleString("en-US")} rows, min / median / max of ${rounds} runs:`);
for (const [checkout, rs] of results)
  console.log(
    `${checkout}: rows/s ${spread(rs.map((r) => r.rowsPerSecond))}; workerd µs a row ${spread(rs.map((r) => r.workerdUsPerRow))}; CLI µs a row ${spread(rs.map((r) => r.cliUsPerRow))}`,
  );
