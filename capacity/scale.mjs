#!/usr/bin/env node
// The capacity run (the scale bench): a directory of N subscribers (1,000,000 by default) loaded
// through the admin import, with links and grants, into the directory shards of a plain workerd
// served by the bench's harness (bench/lib/server.mjs), and what the capacity model needs measured
// from it (docs/capacity.md, docs/benchmarks.md "Scale").
//
//   node capacity/scale.mjs              (or npm run bench -- --scale) full run; bench/results/scale-<date>.json
//   node capacity/scale.mjs --short      5,000 subscribers, a second a scenario (CI, via npm run bench -- --short)
//   options: --n N --small N --shards N --links L --grants G --import-concurrency C
//            --rounds N --seconds S --slices K --settle S --warmup S --write-seconds S --no-costs
//            --state DIR   keep the loaded directory in DIR (new) for the instruction counts below
//   node capacity/scale.mjs --instructions DIR1,DIR2 [--requests 100] [--rounds 3]
//            instructions per identify and per whole sign-in at each kept directory (valgrind);
//            bench/results/scale-instructions-<date>.json

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseScaleArgs, runScale } from "./lib/scale.mjs";
import { writeJson } from "../bench/lib/server.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, d) => (args.includes(name) ? args[args.indexOf(name) + 1] : d);

async function instructions() {
  const { runScaleInstructions } = await import("./lib/scale-instructions.mjs");
  const states = String(opt("--instructions", "")).split(",").filter(Boolean);
  const out = await runScaleInstructions(root, states, {
    requests: Number(opt("--requests", "100")),
    rounds: Number(opt("--rounds", "3")),
  });
  const k = (x) => (x === null ? "-" : `${(x / 1000).toFixed(1)}k`);
  const kinds = ["identify", "signin", "token", "userMe"];
  console.log("\ninstructions per request (a whole sign-in: its four requests), median of the rounds");
  for (const r of out)
    console.log(
      `${r.subscribers.toLocaleString("en-US").padStart(11)} subscribers: ` +
        kinds.map((x) => `${x} ${k(r[x].total)} (work ${k(r[x].work)})`).join(", "),
    );
  const [a, b] = [out[0], out[out.length - 1]];
  if (a && b && a !== b)
    console.log(
      "largest over smallest (work): " + kinds.map((x) => `${x} ${(b[x].work / a[x].work).toFixed(3)}×`).join(", "),
    );
  writeJson(
    join(root, "bench", "results", `scale-instructions-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
    out,
  );
  return 0;
}

(args.includes("--instructions") ? instructions() : runScale(root, parseScaleArgs(args)))
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
