// The physical floors of the two hot routes (docs/benchmarks.md "Floors"): the least any design
// that keeps the interface's guarantees must do per request on this platform, written without the
// project's router, error catalogue, configuration or audit, so the ratio route ÷ floor says how much
// the project adds.
//   floor-token  Basic credentials, a form body, 3 SHA-256 (the presented secret for the
//                constant-time compare against the stored secret's kept digest, the code, the new
//                token), one Durable Object call doing a conditional
//                UPDATE … RETURNING of the code and the token INSERT, a JSON answer.
//   floor-token-oidc  floor-token for an OpenID Connect client: the redemption returns the code's
//                record, and the answer carries an id_token signed as the service signs its own
//                (ES256 with `jose` SignJWT, the same header and claims) under a key pair generated
//                once per isolate (the service's: read from D1 and imported once per isolate).
//   floor-me     one Durable Object call doing UPDATE … RETURNING of a token record that carries
//                the link (plid, items, subscriber), 5 AES-128-CBC fields, a JSON answer.
// Both spread their records over the same number of objects as the project's store by default
// (ONE_TIME_SHARDS, 16): one object serves about a thousand writes a second, so a service for a
// country shards, and on one local workerd 16 objects cost more than one (docs/benchmarks.md).
// And the units both are made of, one per request, so each floor can be read as a sum
// (`/__floor/unit/<id>`): a DO RPC doing no SQL, a DO RPC with one INSERT, one D1 point SELECT, one
// KV get, AES-128-CBC of the 9 encrypted fields of a full record with its JSON.
// And the hybrids that say where a route's distance to its floor lies (docs/benchmarks.md
// "Hybrids"): the floor with the project's store swapped in (`floorTokenWithProjectStore`),
// the project's token route with the floor's store (`FloorStore.redeemCode`, bound as the route's
// ONE_TIME), and the floor inside the project's router (bench/workers/floor-route.ts); for user/me,
// floor-me with the project's store (`floorMeWithProjectStore`) and the route with the floor's
// (`FloorStore.readToken`).
// Compiled into the benchmark bundle only; never deployed.

import { DurableObject } from "cloudflare:workers";
import { SignJWT } from "jose";
import { base64ToBytes, constantTimeEqual, encryptField, randomToken, sha256 } from "../../workers/core/crypto";
import { shardOf } from "../../workers/provider/store/one-time/keys";
import { storeFor, type OneTimeStore } from "../../workers/provider/store/one-time/one-time-store";
import {
  redeemText,
  type RedeemArgs,
  type TokenGrant,
  type TokenRead,
} from "../../workers/provider/store/one-time/tables/codes";
import { clientSecrets } from "../../workers/provider/store/clients";
import { IDENTITY_ITEMS } from "../../workers/core/spec";
import { SEED_CLIENTS, SEED_SUBSCRIBERS } from "../../workers/all-in-one/seed";

const SHARDS = 16;

/** The project's store answers, as its public class and functions give them. */
type RedeemResult = ReturnType<OneTimeStore["redeemCode"]>;

export const CLIENT = "demo-client";
export const SECRET = "demoSecret0123456789abcdefABCDEF";
/** The OpenID Connect floor's client: the dev seed's client with OpenID Connect on, as the service's scenario uses. */
export const OIDC_CLIENT = "oidc-client";
export const OIDC_SECRET = SEED_CLIENTS.find((c) => c.clientId === OIDC_CLIENT)?.secret ?? "";

export class FloorStore extends DurableObject {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS codes (hash TEXT PRIMARY KEY, client TEXT, record TEXT, used INTEGER DEFAULT 0, challenge TEXT);
CREATE TABLE IF NOT EXISTS people (id INTEGER PRIMARY KEY, phone TEXT UNIQUE, name TEXT, telco TEXT, otp_hash TEXT, record TEXT);
CREATE TABLE IF NOT EXISTS txs (hash TEXT PRIMARY KEY, person INTEGER, otp_hash TEXT, state TEXT, expires INTEGER, step INTEGER DEFAULT 0, tries INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS links (person INTEGER, client TEXT, plid TEXT, PRIMARY KEY (person, client));
CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, record TEXT, reads INTEGER DEFAULT 0, expires INTEGER);
CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, at INTEGER)`);
  }

  nothing(): number {
    return 1;
  }

  insert(): number {
    this.sql.exec("INSERT INTO rows (at) VALUES (?)", Date.now());
    return 1;
  }

  /** A code with a PKCE challenge (the relying-party callback's floor). */
  putCode(codeHash: string, client: string, challenge: string, record: string): void {
    this.sql.exec(
      "INSERT INTO codes (hash, client, record, challenge) VALUES (?, ?, ?, ?)",
      codeHash,
      client,
      record,
      challenge,
    );
  }

  /** Test people of the sign-in floor (bench/workers/floor-signin.ts), their record formatted once. */
  addPeople(phones: string[], otpHash: string): void {
    for (const phone of phones)
      this.sql.exec(
        "INSERT OR IGNORE INTO people (phone, name, telco, otp_hash, record) VALUES (?, ?, 'S', ?, ?)",
        phone,
        FLOOR_PERSON_NAME,
        otpHash,
        JSON.stringify({ ...RECORD9, phoneNo: phone, ci: `CIfloor${phone}`.padEnd(88, "F") }),
      );
  }

  /** identify: the number's person by its index (name and carrier must match), and the sign-in's transaction. */
  identify(phone: string, name: string, telco: string, txHash: string, state: string, expires: number): boolean {
    const p = this.sql
      .exec<{ id: number; name: string; telco: string; otp_hash: string }>(
        "SELECT id, name, telco, otp_hash FROM people WHERE phone = ?",
        phone,
      )
      .toArray()[0];
    if (!p || p.name !== name || p.telco !== telco) return false;
    this.sql.exec(
      "INSERT INTO txs (hash, person, otp_hash, state, expires) VALUES (?, ?, ?, ?, ?)",
      txHash,
      p.id,
      p.otp_hash,
      state,
      expires,
    );
    return true;
  }

  /** The code step: one try counted, verified only with the right code, at most five tries, before expiry. */
  checkOtp(txHash: string, otpHash: string, now: number): boolean {
    const row = this.sql
      .exec<{ step: number }>(
        "UPDATE txs SET step = (otp_hash = ?), tries = tries + 1 WHERE hash = ? AND step = 0 AND tries < 5 AND expires > ? RETURNING step",
        otpHash,
        txHash,
        now,
      )
      .toArray()[0];
    return row?.step === 1;
  }

  /** Consent: the verified transaction spent, the link written (its plid kept), the code minted; the state, or null. */
  consent(txHash: string, client: string, codeHash: string, now: number): string | null {
    const tx = this.sql
      .exec<{ person: number; state: string }>(
        "UPDATE txs SET step = 2 WHERE hash = ? AND step = 1 AND expires > ? RETURNING person, state",
        txHash,
        now,
      )
      .toArray()[0];
    if (!tx) return null;
    const { plid } = this.sql
      .exec<{ plid: string }>(
        "INSERT INTO links (person, client, plid) VALUES (?, ?, ?) ON CONFLICT (person, client) DO UPDATE SET plid = plid RETURNING plid",
        tx.person,
        client,
        crypto.randomUUID(),
      )
      .one();
    const { record } = this.sql.exec<{ record: string }>("SELECT record FROM people WHERE id = ?", tx.person).one();
    this.sql.exec(
      "INSERT INTO codes (hash, client, record) VALUES (?, ?, ?)",
      codeHash,
      client,
      `{"plid":${JSON.stringify(plid)},${record.slice(1)}`,
    );
    return tx.state;
  }

  put(codeHashes: string[], tokenHashes: string[], record: string): void {
    for (const h of codeHashes)
      this.sql.exec("INSERT INTO codes (hash, client, record) VALUES (?, ?, ?)", h, CLIENT, record);
    for (const h of tokenHashes)
      this.sql.exec("INSERT INTO tokens (hash, record, expires) VALUES (?, ?, ?)", h, record, Date.now() + 600_000);
  }

  /** OpenID Connect codes of `client`, each with its own record (its nonce). */
  putRecords(client: string, codeHashes: string[], records: string[]): void {
    codeHashes.forEach((h, i) =>
      this.sql.exec("INSERT INTO codes (hash, client, record) VALUES (?, ?, ?)", h, client, records[i]),
    );
  }

  /** Spends a code (this client's, with this PKCE challenge or none) and stores the token issued from it. */
  redeem(codeHash: string, client: string, tokenHash: string, challenge: string | null = null): boolean {
    return this.redeemRecord(codeHash, client, tokenHash, challenge) !== null;
  }

  /** `redeem`, answering the code's record (null: refused): an OpenID Connect code's id_token claims. */
  redeemRecord(codeHash: string, client: string, tokenHash: string, challenge: string | null = null): string | null {
    const row = this.sql
      .exec<{ record: string }>(
        "UPDATE codes SET used = 1 WHERE hash = ? AND client = ? AND used = 0 AND challenge IS ? RETURNING record",
        codeHash,
        client,
        challenge,
      )
      .toArray()[0];
    if (!row) return null;
    this.sql.exec(
      "INSERT INTO tokens (hash, record, expires) VALUES (?, ?, ?)",
      tokenHash,
      row.record,
      Date.now() + 600_000,
    );
    return row.record;
  }

  /** The same redemption behind the project's store interface, for its token route (a hybrid). */
  redeemCode(...[codeHash, clientId, tokenHash]: RedeemArgs): RedeemResult {
    return this.redeem(codeHash, clientId, tokenHash) ? { ok: true } : { ok: false, reason: "unknown" };
  }

  /** `redeemCode` answered as the project's store answers its token route (tables/codes.ts `redeemText`). */
  redeemCodeText(...args: RedeemArgs): string {
    return redeemText(this.redeemCode(...args));
  }

  /** The same read behind the project's store interface, for its user/me route (a hybrid). */
  readToken(tokenHash: string): TokenRead | null {
    const record = this.read(tokenHash);
    return record === null ? null : [record, (JSON.parse(record) as TokenGrant).secretId, false];
  }

  read(tokenHash: string): string | null {
    const row = this.sql
      .exec<{ record: string }>(
        "UPDATE tokens SET reads = reads + 1 WHERE hash = ? AND reads = 0 AND expires > ? RETURNING record",
        tokenHash,
        Date.now(),
      )
      .toArray()[0];
    return row ? row.record : null;
  }
}

type FloorEnv = {
  FLOOR: DurableObjectNamespace<FloorStore>;
  DB: D1Database;
  RP_KV: KVNamespace;
  ONE_TIME: Parameters<typeof storeFor>[0]["ONE_TIME"];
};

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });

const ids = new Map<number, DurableObjectId>();

/**
 * The object holding a random value's record: by its first character, as the project's store.
 * `asProjectShard`: the object the project's store would name (`shard-N`), for the route bound to
 * this class as its ONE_TIME (its codes are minted there).
 */
function store(env: FloorEnv, value = "", asProjectShard = false): DurableObjectStub<FloorStore> {
  const shard = shardOf(value, SHARDS);
  if (asProjectShard) return env.FLOOR.get(env.FLOOR.idFromName(`shard-${shard}`));
  return floorObject(env, shard);
}

/** The floor's object number `shard` (its id kept). */
export function floorObject(env: Pick<FloorEnv, "FLOOR">, shard: number): DurableObjectStub<FloorStore> {
  let id = ids.get(shard);
  if (!id) ids.set(shard, (id = env.FLOOR.idFromName(`floor-${shard}`)));
  return env.FLOOR.get(id);
}

/** How a floor exchange spends a code: the floor's own store, or a hybrid's. */
type Redeem = (env: FloorEnv, code: string, codeHash: string, clientId: string, tokenHash: string) => Promise<boolean>;

const floorRedeem: Redeem = (env, code, codeHash, clientId, tokenHash) =>
  store(env, code).redeem(codeHash, clientId, tokenHash);

/** The project's one-time store (conditions, trigger, audit row), called as its token route does. */
const projectRedeem: Redeem = async (env, code, codeHash, clientId, tokenHash) =>
  (await storeFor(env, code, SHARDS).redeemCodeText(codeHash, clientId, tokenHash, "floor", 600_000, null, null)) ===
  "";

let storedDigest: Promise<ArrayBuffer> | undefined;

export async function floorToken(req: Request, env: FloorEnv, redeem: Redeem = floorRedeem): Promise<Response> {
  const auth = req.headers.get("Authorization") ?? "";
  const [id, secret] = new TextDecoder().decode(base64ToBytes(auth.slice(6))).split(":");
  const form = new URLSearchParams(await req.text());
  const code = form.get("code");
  if (form.get("grant_type") !== "authorization_code" || !code) return json({ error: "invalid_request" }, 400);
  // the constant-time compare hashes the presented secret (the stored one's digest is kept), then
  // the code's and the token's digests
  storedDigest ??= crypto.subtle.digest("SHA-256", new TextEncoder().encode(SECRET));
  if (id !== CLIENT || !(await constantTimeEqual(secret ?? "", await storedDigest)))
    return json({ error: "invalid_client" }, 401);
  const token = code.charAt(0) + randomToken(32).slice(1); // in the code's object, as the project's
  const [codeHash, tokenHash] = await Promise.all([sha256(code), sha256(token)]);
  if (!(await redeem(env, code, codeHash, id, tokenHash))) return json({ error: "invalid_grant" }, 400);
  return json({ access_token: token, token_type: "bearer", expires_in: 600 });
}

/** The floor's id_token key: an ES256 pair generated once per isolate, its kid as long as the service's. */
let floorKey: Promise<{ kid: string; key: CryptoKey }> | undefined;

function floorSigningKey(): Promise<{ kid: string; key: CryptoKey }> {
  floorKey ??= (async () => {
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    return { kid: randomToken(16), key: pair.privateKey };
  })();
  return floorKey;
}

/** An OpenID Connect floor code's record (`floorMintOidc`): the person's fields the claims need, and the sign-in's part. */
export interface OidcRecord {
  plid: string;
  name: string;
  phoneNo: string;
  gender: "M" | "F";
  birth: string;
  oidc: { authTime: number; amr: string[]; nonce: string };
}

let oidcDigest: Promise<ArrayBuffer> | undefined;

/** How floor-token-oidc spends a code (as floor-token's `Redeem`): its store's record, or one from memory (investigations/workers/parts.ts). */
type RedeemRecord = (
  env: FloorEnv,
  code: string,
  codeHash: string,
  clientId: string,
  tokenHash: string,
) => Promise<string | null>;

const floorRedeemRecord: RedeemRecord = (env, code, codeHash, clientId, tokenHash) =>
  store(env, code).redeemRecord(codeHash, clientId, tokenHash);

/**
 * floor-token for an OpenID Connect client (`oidc-client`): the same checks and the one call, which
 * answers the code's record, then an id_token with the service's header and claims for the same
 * grant (workers/provider/token/id-token.ts: the person's agreed items in OpenID Connect's forms as
 * workers/provider/store/one-time/tables/grant.ts gives them, auth_time, amr, nonce; iss, sub, aud, iat, exp with
 * the access token's default life), signed with `jose` SignJWT.
 */
export async function floorTokenOidc(
  req: Request,
  env: FloorEnv & { PUBLIC_BASE_URL?: string },
  redeem: RedeemRecord = floorRedeemRecord,
): Promise<Response> {
  const auth = req.headers.get("Authorization") ?? "";
  const [id, secret] = new TextDecoder().decode(base64ToBytes(auth.slice(6))).split(":");
  const form = new URLSearchParams(await req.text());
  const code = form.get("code");
  if (form.get("grant_type") !== "authorization_code" || !code) return json({ error: "invalid_request" }, 400);
  oidcDigest ??= crypto.subtle.digest("SHA-256", new TextEncoder().encode(OIDC_SECRET));
  if (id !== OIDC_CLIENT || !(await constantTimeEqual(secret ?? "", await oidcDigest)))
    return json({ error: "invalid_client" }, 401);
  const token = code.charAt(0) + randomToken(32).slice(1);
  const [codeHash, tokenHash] = await Promise.all([sha256(code), sha256(token)]);
  const record = await redeem(env, code, codeHash, id, tokenHash);
  if (record === null) return json({ error: "invalid_grant" }, 400);
  const r = JSON.parse(record) as OidcRecord;
  const { kid, key } = await floorSigningKey();
  const iat = Math.floor(Date.now() / 1000);
  const idToken = await new SignJWT({
    name: r.name,
    phone_number: `+82${r.phoneNo.slice(1)}`,
    phone_number_verified: true,
    gender: r.gender === "F" ? "female" : "male",
    birthdate: r.birth,
    auth_time: Math.floor(r.oidc.authTime / 1000),
    amr: r.oidc.amr,
    nonce: r.oidc.nonce,
  })
    .setProtectedHeader({ alg: "ES256", kid, typ: "JWT" })
    .setIssuer(env.PUBLIC_BASE_URL ?? "http://localhost:8787")
    .setSubject(r.plid)
    .setAudience(id)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 600)
    .sign(key);
  return json({ access_token: token, token_type: "bearer", expires_in: 600, id_token: idToken });
}

/** floor-token with the project's store in place of the floor's: the store's share of the gap. */
export const floorTokenWithProjectStore = (req: Request, env: FloorEnv) => floorToken(req, env, projectRedeem);

/** How floor-me reads a token's record: the floor's own store, or a hybrid's. */
type Read = (env: FloorEnv, token: string, tokenHash: string) => Promise<Record<string, string> | null>;

const floorRead: Read = async (env, token, tokenHash) => {
  const record = await store(env, token).read(tokenHash);
  return record === null ? null : (JSON.parse(record) as Record<string, string>);
};

/** A project token grant laid flat as the floor's record (its fields already formatted). */
export function flatRecord(grant: TokenGrant): Record<string, string> {
  const s = grant.subscriber;
  const [, mm, dd] = s.birth.split("-");
  return {
    plid: grant.plid,
    ci: s.ci,
    phoneNo: s.phone,
    name: s.name,
    gender: s.gender,
    agegroup: "30",
    birthday: `${mm}${dd}`,
    birthdate: `${s.birth.slice(2, 4)}${mm}${dd}`,
    foreign: s.foreign,
    telcoCd: s.telco,
  };
}

/** The project's one-time store read (revocation, expiry, read count), its grant laid flat. */
const projectRead: Read = async (env, token, tokenHash) => {
  const read = await storeFor(env, token, SHARDS).readToken(tokenHash, 1);
  if (!read) return null;
  const [grantJson, secretId] = read as TokenRead;
  return flatRecord({ ...(JSON.parse(grantJson) as TokenGrant), secretId });
};

/** floor-me with the project's store in place of the floor's: the store's share of the gap. */
export const floorMeWithProjectStore = (req: Request, env: FloorEnv) => floorMe(req, env, projectRead);

export async function floorMe(req: Request, env: FloorEnv, read: Read = floorRead): Promise<Response> {
  const token = (req.headers.get("Authorization") ?? "").slice(7);
  const r = await read(env, token, await sha256(token));
  if (r === null) return json({ error: "authentication_failed" }, 401);
  return json(await floorUserBody(r));
}

/** floor-me's answer for a flat record: its 5 encrypted fields, then the body's JSON shape. */
export async function floorUserBody(r: Record<string, string>) {
  const [ci, phoneNo, name, birthday, birthdate] = await Promise.all(
    [r.ci!, r.phoneNo!, r.name!, r.birthday!, r.birthdate!].map((v) => encryptField(SECRET, v)),
  );
  return {
    code: "0000",
    error: "success",
    message: "",
    user: {
      plid: r.plid,
      ci,
      phoneNo,
      name,
      gender: r.gender,
      agegroup: r.agegroup,
      birthday,
      birthdate,
      foreign: r.foreign,
      telcoCd: r.telcoCd,
      autoLoginYn: "N",
      autoStatusCheck: "N",
    },
  };
}

/** The name the sign-in floor's test people are registered under (bench/lib/scenarios.mjs sends it). */
export const FLOOR_PERSON_NAME = "벤치사용자";

export const RECORD9 = {
  ci: "CIhong0001AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
  phoneNo: "01012345678",
  name: "홍길동",
  gender: "M",
  agegroup: "30",
  birthday: "0315",
  birthdate: "900315",
  foreign: "L",
  telcoCd: "S",
};

/** One unit of platform work per request (see the head of this file). */
export async function floorUnit(unit: string, env: FloorEnv): Promise<Response> {
  switch (unit) {
    case "do-rpc":
      return json(await store(env).nothing());
    case "do-insert":
      return json(await store(env).insert());
    case "d1-select":
      return json(await env.DB.prepare("SELECT name FROM clients WHERE client_id = ?").bind(CLIENT).first("name"));
    case "kv-get": {
      const v = await env.RP_KV.get("bench-unit");
      if (v === null) await env.RP_KV.put("bench-unit", "x".repeat(200)); // a hit from the second request on
      return json(v);
    }
    case "aes9": {
      const entries = await Promise.all(
        Object.entries(RECORD9).map(async ([k, v]) => [k, await encryptField(SECRET, v)] as const),
      );
      return json(Object.fromEntries(entries));
    }
    default:
      return json({ error: "not_found" }, 404);
  }
}

/**
 * A token grant in the project's shape for the demo client and the first seed subscriber, all items
 * consented: the record the user/me route reads from the floor's store, and the grant of
 * investigations/workers/parts.ts.
 */
export function demoGrant(plid: string, secretId: string, issuedAt: number): TokenGrant {
  const { code: _, ...subscriber } = SEED_SUBSCRIBERS[0]!;
  return {
    clientId: CLIENT,
    subscriberId: 1,
    plid,
    redirectUri: "https://demo.example/callback",
    autoLogin: null,
    issuedAt,
    items: [...IDENTITY_ITEMS],
    subscriber,
    secretId,
  };
}

/** What `floorMint` mints: floor codes or tokens, or (`-shard`) in the objects the project's store names. */
export const FLOOR_MINT_KINDS = [
  "floor-code",
  "floor-token",
  "floor-code-shard",
  "floor-token-shard",
  "floor-code-oidc",
];

/**
 * `n` fresh floor codes or tokens (their hashes stored), for one measured round; kinds
 * `floor-code-shard` and `floor-token-shard`: in the objects the project's store names (tokens in
 * its grant shape), for the routes bound to the floor's store.
 */
export async function floorMint(
  env: FloorEnv & Parameters<typeof clientSecrets>[0],
  kind: string,
  n: number,
): Promise<Response> {
  if (kind === "floor-code-oidc") return floorMintOidc(env, n);
  const values = Array.from({ length: n }, () => randomToken(32));
  const hashes = await Promise.all(values.map((v) => sha256(v)));
  const tokens = kind === "floor-token" || kind === "floor-token-shard";
  // a token in the project's grant shape names the demo client's secret (its fingerprint), as the token route writes it
  const secretId = async () => (await clientSecrets(env, CLIENT, 60_000))?.current.id ?? "no-secret";
  const record =
    kind === "floor-token-shard"
      ? JSON.stringify(demoGrant(crypto.randomUUID(), await secretId(), Date.now()))
      : JSON.stringify({ plid: crypto.randomUUID(), ...RECORD9 });
  const byShard = new Map<number, { first: string; hashes: string[] }>();
  values.forEach((v, i) => {
    const shard = shardOf(v, SHARDS);
    const group = byShard.get(shard) ?? { first: v, hashes: [] };
    group.hashes.push(hashes[i]!);
    byShard.set(shard, group);
  });
  await Promise.all(
    [...byShard.values()].map((g) =>
      store(env, g.first, kind.endsWith("-shard")).put(tokens ? [] : g.hashes, tokens ? g.hashes : [], record),
    ),
  );
  return json(values);
}

/**
 * `n` fresh OpenID Connect floor codes of `oidc-client`, each with its record: a bench person as the
 * service's scenario has them (bench/workers/bench-entry.ts `makeSubscribers`), a plid, and the
 * sign-in's part as the service's consent step writes it (auth_time now, amr ["sms"], a nonce).
 */
async function floorMintOidc(env: FloorEnv, n: number): Promise<Response> {
  const values = Array.from({ length: n }, () => randomToken(32));
  const hashes = await Promise.all(values.map((v) => sha256(v)));
  const byShard = new Map<number, { first: string; hashes: string[]; records: string[] }>();
  values.forEach((v, i) => {
    const record: OidcRecord = {
      plid: crypto.randomUUID(),
      name: FLOOR_PERSON_NAME,
      phoneNo: `0109${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`,
      gender: "F",
      birth: "1995-06-30",
      oidc: { authTime: Date.now(), amr: ["sms"], nonce: randomToken(16) },
    };
    const shard = shardOf(v, SHARDS);
    const group = byShard.get(shard) ?? { first: v, hashes: [], records: [] };
    group.hashes.push(hashes[i]!);
    group.records.push(JSON.stringify(record));
    byShard.set(shard, group);
  });
  await Promise.all([...byShard.values()].map((g) => store(env, g.first).putRecords(OIDC_CLIENT, g.hashes, g.records)));
  return json(values);
}
