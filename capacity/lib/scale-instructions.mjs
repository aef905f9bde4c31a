// Instructions per identify and per whole sign-in at two directory sizes, workerd under callgrind
// (investigations/lib/callgrind.mjs): the CPU ratios of the scale bench compare two moments of a shared
// machine, instruction counts do not depend on them. Each size is a state the scale bench kept
// (`node capacity/scale.mjs --n 1000 --small 100 --no-costs --state DIR`), served again as it was left.
//
//   node capacity/scale.mjs --instructions /dev/shm/scale-1k,/dev/shm/scale-1m [--requests 100] [--rounds 3]

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { counted, haveValgrind, readDump, valgrindPid, workerdWrapper } from "../../investigations/lib/callgrind.mjs";
import { stats } from "../../bench/lib/report.mjs";
import { DEMO, control } from "../../bench/lib/scenarios.mjs";
import { ENTRY, openIdentify, parallel, scale, signIn } from "./scale.mjs";

const FORM = "application/x-www-form-urlencoded";
const log = (...a) => console.error(...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `n` identify POSTs, each on a sign-in opened beforehand; throws unless each reaches the code step. */
async function identifies(ctx, people, n) {
  const opened = await parallel(n, 8, (i) => openIdentify(ctx, DEMO, people[i % people.length]));
  return async () => {
    await parallel(n, 4, async (i) => {
      const e = opened[i];
      const res = await control(ctx.url + e.path, {
        method: "POST",
        headers: { "Content-Type": FORM, Cookie: e.cookie, Origin: ctx.url, "Accept-Language": "ko-KR" },
        body: e.body,
      });
      if (!(await res.text()).includes('name="otp"')) throw new Error("identify did not reach the code step");
    });
  };
}

/** `n` whole sign-ins (a person's first to the app: consent asked), four at a time; their codes. */
const signIns =
  (ctx, people, codes = []) =>
  async () => {
    await parallel(people.length, 4, async (i) => {
      const r = await signIn(ctx, people[i], DEMO);
      if (!r.steps.includes("consent")) throw new Error("not a first sign-in");
      codes[i] = r.code;
    });
  };

const BASIC = "Basic " + Buffer.from(`${DEMO.clientId}:${DEMO.secret}`).toString("base64");

/** Each code exchanged at the token endpoint, four at a time; the access tokens. */
const exchanges = (ctx, codes, tokens) => async () => {
  await parallel(codes.length, 4, async (i) => {
    const res = await control(ctx.url + "/oauth2/token", {
      method: "POST",
      headers: { Authorization: BASIC, "Content-Type": FORM },
      body: `grant_type=authorization_code&code=${encodeURIComponent(codes[i])}`,
    });
    if (res.status !== 200) throw new Error(`token: ${res.status}`);
    tokens[i] = (await res.json()).access_token;
  });
};

/** Each token read once at user/me, four at a time. */
const reads = (ctx, tokens) => async () => {
  await parallel(tokens.length, 4, async (i) => {
    const res = await control(ctx.url + "/v1/user/me", { headers: { Authorization: `Bearer ${tokens[i]}` } });
    if (res.status !== 200) throw new Error(`user/me: ${res.status}`);
    await res.arrayBuffer();
  });
};

export async function runScaleInstructions(root, states, { requests = 100, rounds = 3 } = {}) {
  if (!haveValgrind()) throw new Error("the instruction counts need valgrind (apt-get install -y valgrind)");
  const dir = mkdtempSync(join(tmpdir(), "phone-login-scale-callgrind-"));
  process.env.MINIFLARE_WORKERD_PATH = workerdWrapper(root, dir);
  const { startServers } = await import("../../bench/lib/server.mjs");
  const out = [];
  try {
    for (const state of states) {
      const meta = JSON.parse(readFileSync(join(state, "scale.json"), "utf8"));
      log(
        `  ${state}: ${meta.subscribers.toLocaleString("en-US")} subscribers over ${meta.shards} shards, under callgrind`,
      );
      const srv = await startServers(
        root,
        join(root, "bench", "results", "build"),
        [
          {
            name: "app",
            vars: {
              DIRECTORY_SHARDS: String(meta.shards),
              SIGNIN_RESEND_COOLDOWN_SECONDS: "0",
              SIGNIN_SENDS_PER_WINDOW: "1000",
              // the codes wait for their exchange while callgrind slows the sign-ins (the longest allowed)
              CODE_TTL_SECONDS: "600",
            },
          },
        ],
        { peers: false, state, entry: ENTRY },
      );
      try {
        const ctx = { url: srv.urls.app };
        const pid = valgrindPid(dir);
        // people never armed before (the scale run armed its own): a first sign-in each, and numbers to identify
        const people = await scale(ctx, "arm", { n: (rounds + 2) * requests });
        if (people.length < (rounds + 2) * requests) throw new Error(`${state}: too few people left to arm`);
        const identifyPeople = people.slice(0, requests);
        let next = requests;
        const take = () => people.slice(next, (next += requests));
        // warm-up: the JIT tiers up and the pages the requests touch are read once
        await (
          await identifies(ctx, identifyPeople, requests)
        )();
        await signIns(ctx, take())();
        await sleep(3000);
        /** @type {Record<"identify" | "signin" | "token" | "userMe", ReturnType<typeof readDump>[]>} */
        const got = { identify: [], signin: [], token: [], userMe: [] };
        for (let r = 0; r < rounds; r++) {
          const run = await identifies(ctx, identifyPeople, requests);
          got.identify.push(readDump(await counted(pid, dir, async () => (await run(), await sleep(2000))), requests));
          const signers = take();
          const codes = [];
          const tokens = [];
          got.signin.push(
            readDump(
              await counted(pid, dir, async () => (await signIns(ctx, signers, codes)(), await sleep(2000))),
              requests,
            ),
          );
          got.token.push(
            readDump(
              await counted(pid, dir, async () => (await exchanges(ctx, codes, tokens)(), await sleep(2000))),
              requests,
            ),
          );
          got.userMe.push(
            readDump(await counted(pid, dir, async () => (await reads(ctx, tokens)(), await sleep(2000))), requests),
          );
          const k = (d) => `${Math.round(d.total / 1000)}k`;
          log(
            `    round ${r + 1}/${rounds}: identify ${k(got.identify[r])}, sign-in ${k(got.signin[r])}, token ${k(got.token[r])}, user/me ${k(got.userMe[r])} instructions`,
          );
        }
        const med = (xs) => stats(xs)?.median ?? null;
        out.push({
          state,
          subscribers: meta.subscribers,
          shards: meta.shards,
          identify: { total: med(got.identify.map((d) => d.total)), work: med(got.identify.map((d) => d.work)) },
          signin: { total: med(got.signin.map((d) => d.total)), work: med(got.signin.map((d) => d.work)) },
          token: { total: med(got.token.map((d) => d.total)), work: med(got.token.map((d) => d.work)) },
          userMe: { total: med(got.userMe.map((d) => d.total)), work: med(got.userMe.map((d) => d.work)) },
        });
      } finally {
        await srv.dispose();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
