#!/usr/bin/env node
// The scale bench: a directory of N subscribers (1,000,000 by default) loaded through the admin
// import, with links and grants, into the directory shards of a plain workerd, and what the
// capacity model needs measured from it (docs/capacity.md, docs/benchmarks.md "Scale").
//
//   node bench/scale.mjs                 (or npm run bench -- --scale) full run; bench/results/scale-<date>.json
//   node bench/scale.mjs --short         5,000 subscribers, a few seconds a scenario (CI, via npm run bench -- --short)
//   options: --n N --small N --shards N --links L --grants G --import-concurrency C
//            --rounds N --seconds S --slices K --settle S --warmup S --write-seconds S --no-costs

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseScaleArgs, runScale } from "./lib/scale.mjs";

process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
runScale(root, parseScaleArgs(process.argv.slice(2)))
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
