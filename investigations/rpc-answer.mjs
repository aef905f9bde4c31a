#!/usr/bin/env node
// What the shape of a Durable Object method's answer costs across the RPC (docs/benchmarks.md
// "The redemption's answer as one string"): one object of plain workerd with one object class,
// called from its worker `--calls` times per round, 16 calls in flight, each shape in turn within
// a round. The shapes are the token route's redemption as it was (8 arguments, an object answered:
// `{ ok, idClaims }`), the same answered as an array, as one string (what the route calls now,
// tables/codes.ts `redeemText`), and the floor's (4 arguments, a string). Each figure is workerd's
// CPU µs per call, median over `--rounds` (min–max), then paired against the string's by round.
//
//   node investigations/rpc-answer.mjs [--rounds 8] [--calls 20000]

import { Miniflare } from "miniflare";
import { stats } from "../bench/lib/report.mjs";
import { cpuMicros, findWorkerd } from "../bench/lib/server.mjs";

const args = process.argv.slice(2);
const opt = (name, d) => Number(args.includes(name) ? args[args.indexOf(name) + 1] : d);
const rounds = opt("--rounds", 8);
const calls = opt("--calls", 20000);

const script = `
import { DurableObject } from "cloudflare:workers";
const CLAIMS = JSON.stringify({ sub: "p".repeat(36), aud: "oidc-client", nonce: "n".repeat(22), auth_time: 1764300000, amr: ["sms"], name: "홍길동", phone_number: "+821012345678", phone_number_verified: true, gender: "male", birthdate: "1990-01-01" });
export class S extends DurableObject {
  object(a, b, c, d, e, f, g, h) { return { ok: true, idClaims: CLAIMS }; }
  array(a, b, c, d, e, f, g, h) { return [true, CLAIMS]; }
  text(a, b, c, d, e, f, g, h) { return CLAIMS; }
  floor(a, b, c, d) { return CLAIMS; }
}
export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    const n = Number(u.searchParams.get("n")), shape = u.searchParams.get("shape");
    const stub = env.S.get(env.S.idFromName("rpc-answer"));
    const h = "A".repeat(43);
    for (let i = 0; i < n; i += 16) {
      const ps = [];
      for (let j = 0; j < 16; j++)
        ps.push(shape === "floor" ? stub.floor(h + i + j, "oidc-client", h, h) : stub[shape](h + i + j, "oidc-client", h, h, 600000, null, null, true));
      await Promise.all(ps);
    }
    return new Response("ok");
  },
};`;

const SHAPES = ["object", "array", "text", "floor"];
const mf = new Miniflare({
  modules: true,
  script,
  compatibilityDate: "2026-04-20",
  durableObjects: { S: { className: "S", useSQLite: true } },
});
const url = await mf.ready;
const pid = findWorkerd();
if (pid === null) throw new Error("no workerd child found (this reads /proc: Linux only)");
const run = async (shape, n) => (await fetch(`${url}?shape=${shape}&n=${n}`)).text();
try {
  for (const s of SHAPES) await run(s, 2000); // warm-up
  /** @type {Record<string, number[]>} */
  const per = Object.fromEntries(SHAPES.map((s) => [s, []]));
  for (let r = 0; r < rounds; r++)
    for (const s of SHAPES) {
      const c0 = Number(cpuMicros(pid));
      await run(s, calls);
      per[s].push((Number(cpuMicros(pid)) - c0) / calls);
    }
  const f = (xs) => {
    const st = /** @type {{ median: number; min: number; max: number }} */ (stats(xs));
    return `${st.median.toFixed(1).padStart(6)}  (${st.min.toFixed(1)}–${st.max.toFixed(1)})`;
  };
  console.log(`${rounds} rounds × ${calls} calls; workerd CPU µs per call, median (min–max)`);
  for (const s of SHAPES) console.log(`${s.padEnd(8)} ${f(per[s])}`);
  for (const s of ["object", "array", "floor"])
    console.log(`${s.padEnd(8)} ${f(per[s].map((v, i) => v - per.text[i]))}  more than text, paired by round`);
} finally {
  await mf.dispose();
}
