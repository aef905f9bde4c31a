// Output of a benchmark run: the machine it ran on, statistics, the Markdown block of
// docs/benchmarks.md (also what the terminal shows) and the SVG chart. No dependencies: the chart
// is written by hand.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem, type as osType, release } from "node:os";
import { join } from "node:path";

/** An installed package's version: the bench package's own node_modules, else the root's, where npm hoists them. */
function version(root, pkg) {
  for (const dir of [join(root, "bench", "node_modules"), join(root, "node_modules")])
    try {
      return JSON.parse(readFileSync(join(dir, pkg, "package.json"), "utf8")).version;
    } catch {
      /* not there */
    }
  return "?";
}

/**
 * The machine and the commit a run measured, the commit marked when `measured` (paths from the
 * root) has uncommitted changes.
 * @param {string} root
 * @param {string[]} measured
 */
export function machine(root, measured) {
  let commit = "?";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root }).toString().trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", ...measured], { cwd: root })
      .toString()
      .trim();
    if (dirty) commit += " with uncommitted changes";
  } catch {
    /* not a checkout */
  }
  const c = cpus();
  return {
    cpus: c.length,
    cpuModel: (c[0]?.model ?? "?").replace(/\s+/g, " ").trim(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${osType()} ${release()}`,
    node: process.version,
    workerd: version(root, "workerd"),
    miniflare: version(root, "miniflare"),
    autocannon: version(root, "autocannon"),
    commit,
    loadStart: loadavg()[0].toFixed(2),
  };
}

/** Median, min and max of the numbers in `xs` (nulls ignored); null when there are none. */
export function stats(xs) {
  const v = xs.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, min: v[0], max: v[v.length - 1] };
}

const int = (n) => (n === null || n === undefined ? "-" : Math.round(n).toLocaleString("en-US"));
const pct = (n) => (n === null || n === undefined ? "-" : `${(n * 100).toFixed(n < 0.1 ? 1 : 0)}%`);
const ms = (n) => (n === null || n === undefined ? "-" : n < 10 ? n.toFixed(1) : String(Math.round(n)));
// a difference of two noisy measurements can come out below zero: it is then nothing measurable
const partUs = (n) => (n === null || n === undefined ? "-" : n < 0 ? "≈ 0 (within noise)" : int(n));
const times = (x) => `${x.toFixed(2)}×`;
const range = (s, f) => (s ? `${f(s.median)} (${f(s.min)}–${f(s.max)})` : "-");

/**
 * The goals: each route or flow against the floor of its own shape (docs/benchmarks.md "Goals").
 * The all-in-one worker (`single`) serves token and user/me with its store in its own isolate, as
 * floor-token and floor-me do; the route workers reach the store's objects in another script, as
 * the floors served as route workers do; the sign-in and the kit's callback run in the all-in-one,
 * as their floors do.
 */
/** @type {[route: string, floor: string, goal: number][]} */
export const FLOOR_GOALS = [
  ["token", "floor-token", 0.9],
  ["user-me", "floor-me", 0.9],
  ["token-route", "floor-token-route", 0.9],
  ["user-me-route", "floor-me-route", 0.9],
  // OpenID Connect: the token route answering with an ES256 id_token, against floor-token-route
  // plus the same signature (docs/benchmarks.md "The token route with an id_token")
  ["token-oidc-route", "floor-token-oidc-route", 0.9],
  ["signin", "floor-signin", 0.5],
  ["rp-callback", "floor-rp-callback", 0.5],
];

/** Comparisons without a goal: across shapes, the hybrids (docs/benchmarks.md "Hybrids"), and the id_token's cost. */
/** @type {[route: string, floor: string][]} */
const OTHER_PAIRS = [
  // the sign-in's first request alone, against the floor-signin's first page
  ["authorize", "floor-authorize"],
  ["token-route", "floor-token"],
  ["user-me-route", "floor-me"],
  // the hybrids: floor-token with one part of the token route swapped in, and the route with the
  // floor's store; each one's extra µs is that part's share of the route's distance to the floor
  ["floor-token+router", "floor-token-route"],
  ["floor-token+store", "floor-token-route"],
  ["token-route+floor-store", "floor-token-route"],
  ["floor-me+store", "floor-me-route"],
  ["user-me-route+floor-store", "floor-me-route"],
  // what the id_token adds: to the route, and to its floor (the signature and the claims)
  ["token-oidc-route", "token-route"],
  ["floor-token-oidc-route", "floor-token-route"],
];

/**
 * Each route against a floor (bench/workers/floor.ts, floor-signin.ts): CPU ratio of the route ÷
 * the floor's, same run; first the goal pairs (`goal`, `meetsGoal`: the same shape), then the other
 * comparisons (`goal` null). `paired` is the same fraction taken round by round (the floor's CPU per
 * request ÷ the route's, both measured in one round, so the round's load cancels), then the median
 * with min and max: the steadier reading when the two medians above come from different rounds.
 */
export function floorFractions(result) {
  const by = Object.fromEntries(result.scenarios.filter((s) => s.available).map((s) => [s.id, s]));
  /** @type {[string, string, number | null][]} */
  const pairs = [...FLOOR_GOALS, ...OTHER_PAIRS.map(([r, f]) => /** @type {[string, string, null]} */ ([r, f, null]))];
  return pairs
    .filter(([r, f]) => by[r]?.cpuRatio && by[f]?.cpuRatio)
    .map(([r, f, goal]) => {
      const fraction = by[r].cpuRatio.median / by[f].cpuRatio.median;
      return {
        routeId: r,
        floorId: f,
        route: by[r].title,
        floor: by[f].title,
        routeCpu: by[r].cpuRatio.median,
        floorCpu: by[f].cpuRatio.median,
        fraction,
        paired: paired(by[r].rounds, by[f].rounds, (route, floor) => floor / route),
        extraUs: paired(by[r].rounds, by[f].rounds, (route, floor) => route - floor),
        goal,
        meetsGoal: goal === null ? null : fraction >= goal,
      };
    });
}

/** `f(route, floor)` of the CPU µs per request of each round both ran, then median, min and max. */
function paired(route, floor, f) {
  const xs = [];
  for (let i = 0; i < Math.min(route?.length ?? 0, floor?.length ?? 0); i++)
    if (route[i].cpuUs > 0 && floor[i].cpuUs > 0) xs.push(f(route[i].cpuUs, floor[i].cpuUs));
  return xs.length ? stats(xs) : null;
}

/**
 * Each peer's token exchange against ours (same run): how many times cheaper (CPU) and faster ours
 * is. Ours is the token route worker as deployed (the all-in-one's route when it was not run).
 */
export function peerMultiples(result) {
  const live = (id) => result.scenarios.find((s) => s.id === id && s.available && s.cpuRatio);
  const ours = live("token-route") ?? live("token");
  if (!ours) return [];
  return result.scenarios
    .filter((s) => s.available && s.kind === "peer" && s.cpuRatio)
    .map((s) => ({
      ours: ours.title,
      peer: s.title,
      peerCpu: s.cpuRatio.median,
      oursCpu: ours.cpuRatio.median,
      cpuTimes: ours.cpuRatio.median / s.cpuRatio.median,
      rateTimes: s.rate?.median ? ours.rate.median / s.rate.median : null,
    }));
}

/**
 * The terminal's report: the block the docs get (markdownFigures), then each scenario that had
 * failed responses or requests without a fresh code or token.
 */
export function formatTable(result) {
  const bad = result.scenarios.filter((s) => s.available && (s.failedTotal > 0 || s.exhaustedTotal > 0));
  return [
    markdownFigures(result),
    ...bad.map(
      (s) => `  ! ${s.id}: ${s.failedTotal} failed responses, ${s.exhaustedTotal} requests without a fresh code/token`,
    ),
  ].join("\n");
}

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** A horizontal bar chart of the ratio to hello world per scenario (median bar, min–max whisker). */
export function ratioSvg(result) {
  const rows = result.scenarios;
  const W = 860;
  const left = 200;
  const right = 190;
  const top = 46;
  const rowH = 34;
  const plotW = W - left - right;
  // below: each goal pair's route as a fraction of its same-shape floor (CPU), with its goal line
  const goals = floorFractions(result).filter((f) => f.goal !== null);
  const panel = top + rows.length * rowH + 56;
  const H = top + rows.length * rowH + 74 + (goals.length ? 40 + goals.length * rowH + 24 : 0);
  const max = Math.max(1, ...rows.map((s) => s.ratio?.max ?? 0));
  const x = (r) => left + (r / max) * plotW;
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="13">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(
    `<text x="16" y="24" font-size="15" font-weight="600">Throughput as a share of a hello-world Worker on the same workerd</text>`,
  );
  for (const t of [0, 0.25, 0.5, 0.75, 1].filter((t) => t <= max)) {
    out.push(`<line x1="${x(t)}" y1="${top - 6}" x2="${x(t)}" y2="${top + rows.length * rowH}" stroke="#e5e5e5"/>`);
    out.push(
      `<text x="${x(t)}" y="${top + rows.length * rowH + 16}" text-anchor="middle" fill="#666">${pct(t)}</text>`,
    );
  }
  const goal = rows.find((s) => s.goal)?.goal;
  if (goal) {
    out.push(
      `<line x1="${x(goal)}" y1="${top - 10}" x2="${x(goal)}" y2="${top + rows.length * rowH}" stroke="#c0392b" stroke-dasharray="4 3"/>`,
    );
    out.push(`<text x="${x(goal) + 4}" y="${top - 12}" fill="#c0392b">goal ${pct(goal)}</text>`);
  }
  rows.forEach((s, i) => {
    const y = top + i * rowH;
    const cy = y + rowH / 2;
    out.push(`<text x="${left - 10}" y="${cy + 4}" text-anchor="end">${esc(s.label ?? s.title)}</text>`);
    if (!s.available || !s.ratio) {
      out.push(
        `<text x="${left + 6}" y="${cy + 4}" fill="#999" font-style="italic">not available${s.reason ? ": " + esc(s.reason) : ""}</text>`,
      );
      return;
    }
    const fill = s.id === "hello" ? "#9aa5b1" : s.goal && !s.meetsGoal ? "#e67e22" : "#2e86c1";
    out.push(
      `<rect x="${left}" y="${y + 7}" width="${Math.max(1, x(s.ratio.median) - left)}" height="${rowH - 14}" fill="${fill}" rx="2"/>`,
    );
    out.push(`<line x1="${x(s.ratio.min)}" y1="${cy}" x2="${x(s.ratio.max)}" y2="${cy}" stroke="#222"/>`);
    out.push(`<line x1="${x(s.ratio.min)}" y1="${cy - 5}" x2="${x(s.ratio.min)}" y2="${cy + 5}" stroke="#222"/>`);
    out.push(`<line x1="${x(s.ratio.max)}" y1="${cy - 5}" x2="${x(s.ratio.max)}" y2="${cy + 5}" stroke="#222"/>`);
    if (s.cpuRatio)
      out.push(`<path d="M${x(s.cpuRatio.median)} ${cy - 6} l5 6 l-5 6 l-5 -6 z" fill="#fff" stroke="#222"/>`);
    out.push(
      `<text x="${Math.max(x(s.ratio.max), x(s.ratio.median), s.cpuRatio ? x(s.cpuRatio.median) + 5 : 0) + 8}" y="${cy + 4}">${pct(s.ratio.median)} · ${int(s.rate.median)} ${esc(s.unit)}</text>`,
    );
  });
  if (goals.length) {
    const fx = (r) => left + (Math.min(r, 1.25) / 1.25) * plotW;
    out.push(
      `<text x="16" y="${panel}" font-size="15" font-weight="600">CPU per request: each route's floor of the same shape ÷ the route (1 = at its floor)</text>`,
    );
    const ptop = panel + 16;
    for (const t of [0, 0.25, 0.5, 0.75, 1]) {
      out.push(`<line x1="${fx(t)}" y1="${ptop}" x2="${fx(t)}" y2="${ptop + goals.length * rowH}" stroke="#e5e5e5"/>`);
      out.push(
        `<text x="${fx(t)}" y="${ptop + goals.length * rowH + 16}" text-anchor="middle" fill="#666">${times(t)}</text>`,
      );
    }
    goals.forEach((f, i) => {
      const goal = f.goal ?? 0;
      const y = ptop + i * rowH;
      const cy = y + rowH / 2;
      out.push(`<text x="${left - 10}" y="${cy + 4}" text-anchor="end">${esc(f.routeId)} ÷ ${esc(f.floorId)}</text>`);
      out.push(
        `<rect x="${left}" y="${y + 7}" width="${Math.max(1, fx(f.fraction) - left)}" height="${rowH - 14}" fill="${f.meetsGoal ? "#2e86c1" : "#e67e22"}" rx="2"/>`,
      );
      out.push(
        `<line x1="${fx(goal)}" y1="${y + 3}" x2="${fx(goal)}" y2="${y + rowH - 3}" stroke="#c0392b" stroke-width="2" stroke-dasharray="3 2"/>`,
      );
      out.push(
        `<text x="${fx(Math.max(f.fraction, goal)) + 8}" y="${cy + 4}">${times(f.fraction)} (goal ${times(goal)})</text>`,
      );
    });
  }
  const m = result.machine;
  const foot = `${result.date.slice(0, 10)} · ${m.cpus} × ${esc(m.cpuModel)} · ${m.memoryGiB} GiB · Node ${esc(m.node)} · workerd ${esc(m.workerd)} · ${result.settings.connections} connections, ${result.settings.rounds} × ${result.settings.seconds} s, median with min–max`;
  out.push(
    `<text x="16" y="${H - 30}" fill="#444" font-size="11">bar: throughput ÷ hello world's, median; whisker: min–max over rounds; ◇: workerd CPU per request, hello world's ÷ the scenario's</text>`,
  );
  out.push(`<text x="16" y="${H - 12}" fill="#666" font-size="11">${foot}</text>`);
  out.push(`</svg>`);
  return out.join("\n") + "\n";
}

/** The figures block of docs/benchmarks.md (between the FIGURES markers). */
export function markdownFigures(result) {
  const m = result.machine;
  const L = [];
  L.push(
    `Run of ${result.date} (${result.mode} mode, commit \`${m.commit}\`): ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB,`,
  );
  L.push(
    `Node ${m.node}, workerd ${m.workerd} (miniflare ${m.miniflare}), autocannon ${m.autocannon}, load average ${m.loadStart} before and ${m.loadEnd} after.`,
  );
  L.push(
    `${result.settings.connections} connections, ${result.settings.rounds} rounds × ${result.settings.seconds} s per scenario after a ${result.settings.warmupSeconds} s warm-up; median (min–max) over rounds.`,
  );
  L.push("");
  L.push(
    "| scenario | ratio to hello world | per second | workerd CPU µs/request | CPU ratio | p50 ms | p99 ms | goal |",
  );
  L.push("|---|---|---|---|---|---|---|---|");
  for (const s of result.scenarios) {
    if (!s.available) {
      L.push(`| ${s.title} | not available: ${s.reason ?? ""} | | | | | | |`);
      continue;
    }
    L.push(
      `| ${s.title} | ${range(s.ratio, pct)} | ${int(s.rate?.median)} ${s.unit} | ${int(s.cpuUs?.median)} | ${pct(s.cpuRatio?.median)} | ${ms(s.p50?.median)} | ${ms(s.p99?.median)} | ${s.goal ? `≥ ${pct(s.goal)}: ${s.meetsGoal ? "met" : "**missed**"}` : ""} |`,
    );
  }
  const fr = floorFractions(result);
  const goals = fr.filter((f) => f.goal !== null);
  if (goals.length) {
    L.push("");
    L.push("Each route and flow against the floor of its own shape (the goals):");
    L.push("");
    L.push(
      "| route | its floor (same shape) | CPU ratio, route | CPU ratio, floor | fraction of the floor | paired by round, median (min–max) | CPU µs a request more than the floor, paired by round | goal |",
    );
    L.push("|---|---|---|---|---|---|---|---|");
    for (const f of goals)
      L.push(
        `| ${f.route} | ${f.floor} | ${pct(f.routeCpu)} | ${pct(f.floorCpu)} | ${f.fraction.toFixed(2)}× | ${range(f.paired, times)} | ${range(f.extraUs, int)} | ≥ ${times(f.goal)}: ${f.meetsGoal ? "met" : "**missed**"} |`,
      );
  }
  const others = fr.filter((f) => f.goal === null);
  if (others.length) {
    L.push("");
    L.push("Across shapes, the hybrids, and what the id_token adds:");
    L.push("");
    L.push(
      "| route | floor | CPU ratio, route | CPU ratio, floor | fraction of the floor | paired by round, median (min–max) | CPU µs a request more than the floor, paired by round |",
    );
    L.push("|---|---|---|---|---|---|---|");
    for (const f of others)
      L.push(
        `| ${f.route} | ${f.floor} | ${pct(f.routeCpu)} | ${pct(f.floorCpu)} | ${f.fraction.toFixed(2)}× | ${range(f.paired, times)} | ${range(f.extraUs, int)} |`,
      );
  }
  const pm = peerMultiples(result);
  if (pm.length) {
    L.push("");
    L.push(
      "| peer token exchange | CPU ratio, peer | CPU ratio, ours | ours × the peer (CPU) | ours × the peer (per second) |",
    );
    L.push("|---|---|---|---|---|");
    for (const p of pm)
      L.push(
        `| ${p.peer} | ${pct(p.peerCpu)} | ${pct(p.oursCpu)} | ${p.cpuTimes.toFixed(1)}× | ${p.rateTimes?.toFixed(1) ?? "-"}× |`,
      );
  }
  if (result.races?.length) {
    L.push("");
    L.push(
      `| race: ${result.races[0].concurrency} concurrent redemptions of one code | trials | exactly one winner | more than one | most winners in a trial | none | losers refused with an error | other answers |`,
    );
    L.push("|---|---|---|---|---|---|---|---|");
    for (const r of result.races)
      L.push(
        `| ${r.title} | ${r.trials} | ${r.exactlyOne} | ${r.moreThanOne} | ${r.maxWinners} | ${r.none} | ${r.refused} | ${r.other ?? "-"} |`,
      );
  }
  for (const p of result.profiles ?? []) {
    L.push("");
    L.push(
      `Profile of ${p.scenario}: variants of the same bundle with one part replaced by an in-memory stand-in (${result.settings.profileRounds} × ${result.settings.profileSeconds} s each):`,
    );
    L.push("");
    L.push("| variant | workerd CPU µs/request | ratio to hello world | per second |");
    L.push("|---|---|---|---|");
    for (const r of p.rows)
      L.push(`| ${r.title} | ${int(r.cpuUs?.median)} | ${pct(r.ratio?.median)} | ${int(r.rate?.median)} |`);
    if (p.shares) {
      L.push("");
      L.push(`| part of ${p.scenario} | CPU µs/request | share |`);
      L.push("|---|---|---|");
      for (const [k, v] of Object.entries(p.shares))
        L.push(`| ${k} | ${partUs(v.us)} | ${v.us < 0 ? "" : pct(v.share)} |`);
    }
  }
  return L.join("\n");
}
