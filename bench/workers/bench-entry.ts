// Bench-only entry: the all-in-one dev worker plus `/__bench/*` routes that mint codes
// and tokens through the core functions, so each load request can spend a distinct one, and the
// floors (bench/workers/floor.ts, floor-signin.ts) beside it. Compiled into the benchmark bundle
// only (bench/lib/server.mjs builds it with esbuild); never deployed. The capacity run and the
// investigations build their own entries on this one (capacity/workers/capacity-entry.ts,
// investigations/workers/investigations-entry.ts).
//
// The variable BENCH_VARIANT (comma-separated) strips parts of the hot path so their share can be
// measured (docs/benchmarks.md "What costs the most"):
//   none      the real worker
//   no-d1     this worker's D1 reads answer from memory (clients, links); the one-time store's
//             batched audit write (to R2) is its object's own, and stays
//   no-do     the one-time store answers from memory (no Durable Object round trip)
// (The investigations' entry adds its own: investigations/workers/investigations-entry.ts.)

import dev from "../../workers/all-in-one/index";
import type { AllInOneEnv } from "../../workers/all-in-one/env";
import { SEED_CLIENTS, SEED_SUBSCRIBERS } from "../../workers/all-in-one/seed";
import { base64ToBytes, constantTimeEqual, encryptField, randomToken, sha256 } from "../../workers/core/crypto";
import { addPasskey, passkeyHandleFor } from "../../workers/provider/store/directory/passkeys";
import { IDENTITY_ITEMS, type IdentityItem } from "../../workers/core/spec";
import { mintCode, tokenForCode } from "../../workers/provider/codes";
import { providerConfig } from "../../workers/provider/config";
import { clientSecrets } from "../../workers/provider/store/clients";
import { dirAt } from "../../workers/provider/store/directory/directory-shard";
import { dirShards } from "../../workers/provider/store/directory/keys";
import { subscriberByPhone, type Subscriber } from "../../workers/provider/store/directory/directory";
import { ciShard, numberShard } from "../../workers/provider/store/directory/keys";
import { consentForLogin } from "../../workers/provider/store/directory/links";
import { plidShard } from "../../workers/provider/store/one-time/keys";
import { storeAt, storeFor, type OneTimeStore } from "../../workers/provider/store/one-time/one-time-store";
import {
  redeemText,
  type CodeGrant,
  type RedeemArgs,
  type TokenGrant,
  type TokenRead,
} from "../../workers/provider/store/one-time/tables/codes";
import { createPkce } from "../../packages/kit/src/client";
import { rpConfig } from "../../packages/kit/src/config";
import { loginStoreFor } from "../../packages/kit/src/store";
import { FLOOR_MINT_KINDS, type FloorStore, floorMe, floorMint, floorToken, floorUnit } from "./floor";
import { floorCallback, floorCallbacks, floorPeople, floorSignin } from "./floor-signin";
import { inTurns } from "./in-turns";

// The product's Durable Object classes and the WebAuthn verifier (the WEBAUTHN binding's entrypoint)
// as the all-in-one worker exports them, and the floors' store.
export {
  DirectoryShard,
  GuardStore,
  MetricsStore,
  OneTimeStore,
  PhoneLoginStore,
  WebAuthnVerifier,
} from "../../workers/all-in-one/index";
export { FloorStore } from "./floor";

/** The bench worker's env: the all-in-one's, plus the variant switch (bench/lib/profile.mjs). */
export type BenchEnv = AllInOneEnv & { BENCH_VARIANT?: string; FLOOR: DurableObjectNamespace<FloorStore> };
type Env = BenchEnv;
/** The store's answers, as its public class and functions give them. */
type RedeemResult = ReturnType<OneTimeStore["redeemCode"]>;

type Part = "no-d1" | "no-do";

const MAX_MINT = 5000;

interface Subject {
  clientId: string;
  subscriber: Subscriber;
  plid: string;
  items: readonly IdentityItem[];
  redirectUri: string;
}

/** A bench subscriber consented to a seed client (as a finished sign-in leaves them). */
async function subjectFor(env: Env, clientId: string, phone: string): Promise<Subject> {
  const client = SEED_CLIENTS.find((c) => c.clientId === clientId);
  if (!client) throw new Error(`no seed client ${clientId}`);
  const sub = await subscriberByPhone(env, phone);
  if (!sub) throw new Error(`no bench subscriber ${phone}`);
  const items = client.items.length ? client.items : IDENTITY_ITEMS;
  const plid = (await consentForLogin(env, clientId, sub.id, items))?.plid ?? null;
  if (plid === null) throw new Error(`bench subscriber ${phone} gone`);
  const { testOtpHash: _, ...subscriber } = sub;
  return { clientId, subscriber, plid, items, redirectUri: client.redirectUris[0]! };
}

/**
 * Bench subscribers 0109xxxxxxx (SKT, test numbers with the fixed code 000000, or with BENCH_SMS=true
 * ordinary numbers whose codes go by SMS): fresh people for first sign-ins.
 */
async function makeSubscribers(env: Env, from: number, n: number): Promise<string[]> {
  const otpHash = await sha256("000000");
  const shards = dirShards(env);
  const phones = Array.from({ length: n }, (_, i) => `0109${String(from + i).padStart(7, "0")}`);
  const rows = phones.map((phone) => {
    const ci = `CIbench${phone}`.padEnd(88, "B");
    const f = { telco: "S", phone, name: "벤치사용자", gender: "F", birth: "1995-06-30", foreign: "L", ci };
    // BENCH_SMS=true: ordinary numbers, whose codes go by SMS (the dev outbox), for measuring a sign-in that sends one
    const sms = (env as { BENCH_SMS?: string }).BENCH_SMS === "true";
    return { ...f, testOtpHash: sms ? null : otpHash, ciShard: ciShard(ci, shards) };
  });
  const byShard = new Map<number, typeof rows>();
  for (const r of rows)
    byShard.set(numberShard(r.phone, shards), [...(byShard.get(numberShard(r.phone, shards)) ?? []), r]);
  // the numbers' shards write the people where the number is free (as the dev seed does), then their cis are indexed
  const made = (await Promise.all([...byShard].map(([s, list]) => dirAt(env, s).seed(s, list)))).flat();
  await Promise.all(made.map((m) => dirAt(env, m.ciShard).indexCi(m.ci, m.id)));
  return phones;
}

/**
 * Bench people (`makeSubscribers` from `from`) each with a usable passkey whose COSE public key is
 * `cose` (base64url; the harness holds the private key and signs their assertions,
 * bench/lib/passkey.mjs): the phone, credential id and user handle of each.
 */
async function makePasskeyPeople(env: Env, from: number, n: number, cose: string): Promise<unknown[]> {
  const phones = await makeSubscribers(env, from, n);
  const publicKey = base64ToBytes(cose);
  let next = 0;
  return inTurns(n, async () => {
    const i = next++;
    const person = (await subscriberByPhone(env, phones[i]!))!;
    const handle = (await passkeyHandleFor(env, person.id))!;
    const credentialId = randomToken(16);
    const added = await addPasskey(
      env,
      {
        subscriberId: person.id,
        credentialId,
        publicKey,
        counter: 0,
        transports: ["internal"],
        name: "bench",
        device: "device",
        madeWith: "passkey",
        riskWindowMs: 0,
        usableAt: Date.now(),
        challenge: randomToken(32),
        challengeUntil: Date.now() + 60_000,
      },
      "ko",
    );
    if (!added.ok) throw new Error(`passkey for ${phones[i]}: ${added.reason}`);
    return { phone: phones[i], credentialId, handle };
  });
}

/**
 * The people whose codes and tokens the hot-route scenarios spend: SUBJECTS bench subscribers
 * (numbers 01099xxxxxx, out of the sign-in scenario's reach), each consented to the client, taken
 * in turn by their plid's one-time object. A code lives in its plid's object
 * (workers/provider/codes.ts), so one person's codes would all load one object, which no national
 * load does; these load every object evenly, as the floors' random values do.
 */
const SUBJECTS = 256;
const SUBJECTS_FROM = 9_000_000;
const spread = new Map<string, Promise<Subject[][]>>();
let nextSubject = 0;

async function anySubject(env: Env, clientId: string): Promise<Subject> {
  let groups = spread.get(clientId);
  if (!groups) {
    groups = (async () => {
      const phones = Array.from({ length: SUBJECTS }, (_, i) => `0109${String(SUBJECTS_FROM + i).padStart(7, "0")}`);
      if (!(await subscriberByPhone(env, phones[0]!))) await makeSubscribers(env, SUBJECTS_FROM, SUBJECTS);
      const shards = providerConfig(env).oneTimeShards;
      const byShard = Array.from({ length: shards }, (): Subject[] => []);
      for (const s of await Promise.all(phones.map((p) => subjectFor(env, clientId, p))))
        byShard[plidShard(s.plid, shards)]!.push(s);
      return byShard.filter((g) => g.length > 0);
    })();
    groups.catch(() => spread.delete(clientId));
    spread.set(clientId, groups);
  }
  const g = await groups;
  const i = nextSubject++;
  const group = g[i % g.length]!;
  return group[Math.floor(i / g.length) % group.length]!;
}

/**
 * What a relying-party callback needs, as `/auth/login` and a finished sign-in leave it: a state
 * in the kit's KV bound to a browser cookie (with its PKCE verifier), and a code for the kit's
 * redirect URI with the matching challenge. Returns "state code binding" per callback.
 */
async function rpCallbacks(env: Env, n: number): Promise<Response> {
  const cfg = providerConfig(env);
  const rp = rpConfig(env);
  const store = loginStoreFor(env);
  const one = async (): Promise<string> => {
    const binding = randomToken(32);
    const state = randomToken(32);
    const pkce = await createPkce();
    const subject = { ...(await anySubject(env, rp.clientId)), redirectUri: rp.redirectUri };
    await store.putState(
      state,
      { bindingHash: await sha256(binding), returnTo: "/", created: Date.now(), verifier: pkce.verifier },
      rp.stateTtlSeconds,
    );
    const code = await mintCode(env, cfg.oneTimeShards, cfg.codeTtlMs, {
      ...subject,
      autoLogin: null,
      codeChallenge: pkce.challenge,
    });
    return `${state} ${code} ${binding}`;
  };
  return Response.json(await inTurns(n, one));
}

/** The dev seed's client with OpenID Connect on (clients.oidc = 1): the token-oidc-route scenario's. */
const OIDC_CLIENT = "oidc-client";

/**
 * `n` codes of an OpenID Connect request (`scope=openid` with a nonce) of `OIDC_CLIENT`, with the
 * grant's `oidc` part as the consent step of an SMS sign-in writes it
 * (workers/provider/authorize/complete.ts): the token route answers them with an id_token.
 */
async function oidcCodes(env: Env, n: number): Promise<Response> {
  if (!SEED_CLIENTS.find((c) => c.clientId === OIDC_CLIENT)?.oidc)
    return Response.json({ error: `no seed client ${OIDC_CLIENT} with OpenID Connect on` }, { status: 400 });
  const cfg = providerConfig(env);
  const one = async (): Promise<string> =>
    mintCode(env, cfg.oneTimeShards, cfg.codeTtlMs, {
      ...(await anySubject(env, OIDC_CLIENT)),
      autoLogin: null,
      codeChallenge: null,
      oidc: { authTime: Date.now(), amr: ["sms"], nonce: randomToken(16) },
    });
  return Response.json(await inTurns(n, one));
}

/** Mints `n` codes (or tokens: codes redeemed in the store as the token route does) in parallel. */
async function mint(env: Env, url: URL): Promise<Response> {
  const kind = url.searchParams.get("kind") ?? "code";
  const n = Math.min(Number(url.searchParams.get("n") ?? "1") || 1, MAX_MINT);
  const from = Number(url.searchParams.get("from") ?? "0");
  if (kind === "subscribers") return Response.json(await makeSubscribers(env, from, n));
  if (kind === "passkey-people")
    return Response.json(await makePasskeyPeople(env, from, n, url.searchParams.get("cose") ?? ""));
  if (kind === "rp-callback") return rpCallbacks(env, n);
  if (kind === "oidc-code") return oidcCodes(env, n);
  if (FLOOR_MINT_KINDS.includes(kind)) return floorMint(env, kind, n);
  if (kind === "floor-people") return floorPeople(env, from, n);
  if (kind === "floor-rp-callback") return floorCallbacks(env, n);
  const clientId = SEED_CLIENTS[0]!.clientId;
  const cfg = providerConfig(env);
  // the hot routes' people, made ahead (the capacity run counts them among the directory's people)
  if (kind === "subjects") {
    await anySubject(env, clientId);
    return Response.json({ people: SUBJECTS });
  }
  const secrets = await clientSecrets(env, clientId, cfg.clientCacheMs);
  if (!secrets) return Response.json({ error: `no client ${clientId}` }, { status: 400 });
  const secretId = secrets.current.id;
  const one = async (): Promise<string> => {
    const code = await mintCode(env, cfg.oneTimeShards, cfg.codeTtlMs, {
      ...(await anySubject(env, clientId)),
      autoLogin: null,
      codeChallenge: null,
    });
    if (kind === "code") return code;
    const token = tokenForCode(code);
    const [codeHash, tokenHash] = await Promise.all([sha256(code), sha256(token)]);
    const ttlMs = cfg.accessTokenTtlSeconds * 1000;
    const r = await storeFor(env, code, cfg.oneTimeShards).redeemCode(
      codeHash,
      clientId,
      tokenHash,
      secretId,
      ttlMs,
      null,
      null,
    );
    if (!r.ok) throw new Error(`mint token: ${r.reason}`);
    return token;
  };
  const out = await inTurns(n, one);
  // Settle what the redemptions left for later (their audit counts' R2 write, a minute on):
  // the minting is preparation, and its deferred work must not land in the round it prepares.
  if (kind !== "code")
    await Promise.all(Array.from({ length: cfg.oneTimeShards }, (_, i) => storeAt(env, i).flushAudit()));
  return Response.json(out);
}

/**
 * The crypto work of one request of a route, `n` times over (the caller reads workerd's CPU time
 * around it): token = client secret check + token minting + two hashes; user-me = token hash +
 * the five spec §2.2 field encryptions of a full record.
 */
async function cryptoWork(url: URL): Promise<Response> {
  const route = url.searchParams.get("route") ?? "token";
  const n = Math.min(Number(url.searchParams.get("n") ?? "1") || 1, 200_000);
  const secret = SEED_CLIENTS[0]!.secret;
  const s = SEED_SUBSCRIBERS[0]!;
  for (let i = 0; i < n; i++) {
    if (route === "token") {
      const code = randomToken(32);
      await constantTimeEqual(secret, secret);
      const token = code.charAt(0) + randomToken(32).slice(1);
      await Promise.all([sha256(code), sha256(token)]);
    } else {
      await sha256(randomToken(32));
      await Promise.all([s.ci, s.phone, s.name, "0315", "900315"].map((v) => encryptField(secret, v)));
    }
  }
  return Response.json({ route, n });
}

// ---- variants: in-memory stand-ins for one part of the platform ----

/** A D1 statement answered from rows read once from the real database (same SQL, same binds). */
function memoStatement(real: D1Database, sql: string, memo: Map<string, Promise<unknown>>): D1PreparedStatement {
  let args: unknown[] = [];
  const s: Record<string, unknown> = {
    bind: (...a: unknown[]) => {
      args = a;
      return s;
    },
  };
  for (const m of ["first", "run", "all", "raw"] as const)
    s[m] = (...a: unknown[]) => {
      const k = `${m}\u0000${sql}\u0000${JSON.stringify(args)}`;
      if (!memo.has(k)) {
        const st = real.prepare(sql).bind(...args);
        memo.set(k, (st[m] as (...x: unknown[]) => Promise<unknown>).apply(st, a));
      }
      return memo.get(k);
    };
  return s as unknown as D1PreparedStatement;
}

function variantDb(real: D1Database): D1Database {
  const memo = new Map<string, Promise<unknown>>();
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "prepare") {
        return (sql: string) => {
          if (sql.startsWith("SELECT")) return memoStatement(target, sql, memo);
          return target.prepare(sql);
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The one-time store's code and token methods, in this isolate's memory (no Durable Object). */
class MemoryStore {
  private readonly codes = new Map<string, { grant: CodeGrant; used: boolean }>();
  private readonly tokens = new Map<string, { grant: TokenGrant; reads: number }>();

  async putCode(codeHash: string, grant: CodeGrant): Promise<void> {
    this.codes.set(codeHash, { grant, used: false });
  }

  async redeemCode(...args: RedeemArgs): Promise<RedeemResult> {
    const [codeHash, clientId, tokenHash, secretId] = args;
    const c = this.codes.get(codeHash);
    if (!c) return { ok: false, reason: "unknown" };
    if (c.used) return { ok: false, reason: "reused" };
    if (c.grant.clientId !== clientId) return { ok: false, reason: "foreign_client" };
    c.used = true;
    this.tokens.set(tokenHash, { grant: { ...c.grant, secretId }, reads: 0 });
    return { ok: true };
  }

  async redeemCodeText(...args: RedeemArgs): Promise<string> {
    return redeemText(await this.redeemCode(...args));
  }

  async readToken(tokenHash: string, maxReads: number): Promise<TokenRead | null> {
    const t = this.tokens.get(tokenHash);
    if (!t || t.reads >= maxReads) return null;
    t.reads++;
    return [JSON.stringify(t.grant), t.grant.secretId, false];
  }

  /** Nothing is deferred here (no audit is kept): the bench's minting settles it all the same. */
  async flushAudit(): Promise<number> {
    return 0;
  }
}

function memoryNamespace(): DurableObjectNamespace<OneTimeStore> {
  const store = new MemoryStore();
  return {
    idFromName: (name: string) => ({ name, toString: () => name }),
    get: () => store,
  } as unknown as DurableObjectNamespace<OneTimeStore>;
}

const variantEnvs = new WeakMap<object, Env>();

/** The env with the parts named in BENCH_VARIANT (comma-separated) replaced; other names are left to the entries built on this one. */
function envFor(env: Env): Env {
  const spec = typeof env.BENCH_VARIANT === "string" ? env.BENCH_VARIANT : "";
  if (spec === "" || spec === "none") return env;
  let v = variantEnvs.get(env);
  if (!v) {
    const parts = new Set(spec.split(",") as Part[]);
    v = { ...env };
    if (parts.has("no-d1")) v.DB = variantDb(env.DB);
    if (parts.has("no-do")) v.ONE_TIME = memoryNamespace();
    variantEnvs.set(env, v);
  }
  return v;
}

export default {
  async fetch(req, env, ctx) {
    const e = envFor(env);
    // no URL parse on the measured path: this wrapper should cost nothing
    if (req.url.includes("/__floor/")) {
      if (req.url.endsWith("/__floor/token")) return floorToken(req, e);
      if (req.url.endsWith("/__floor/me")) return floorMe(req, e);
      if (req.url.includes("/__floor/signin")) return floorSignin(req, e);
      if (req.url.includes("/__floor/callback?")) return floorCallback(req, e);
      const unit = req.url.indexOf("/__floor/unit/");
      if (unit >= 0) return floorUnit(req.url.slice(unit + 14), e as never);
    }
    if (req.url.includes("/__bench/")) {
      const url = new URL(req.url);
      if (url.pathname === "/__bench/mint") {
        await dev.fetch(new Request(new URL("/healthz", url)), e, ctx); // dev seed on first use
        return mint(e, url);
      }
      if (url.pathname === "/__bench/crypto") return cryptoWork(url);
    }
    return dev.fetch(req, e, ctx);
  },
} satisfies ExportedHandler<Env>;
