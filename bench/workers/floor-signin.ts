// The floors of the two flows a person's login crosses (docs/benchmarks.md "Floors"), served by the
// bench entry beside the project's all-in-one worker and measured on the same harness:
//
//   floor-signin       the least a correct sign-in does, as the project's sign-in scenario drives it
//                      (bench/lib/scenarios.mjs `signIn`): a page with its form (the authorization
//                      request checked against the one registered client); identify: one Durable
//                      Object call that checks the number, name and carrier by the number's index and
//                      issues the one-time code's transaction in the same step; the code step: one
//                      call that checks the code atomically (tries counted); consent: one call that
//                      spends the verified transaction, writes the consent (its plid) and mints the
//                      authorization code, then the 302; then the token exchange and the user read
//                      of bench/workers/floor.ts. The transaction rides in a host-only, HttpOnly,
//                      SameSite cookie; everything of one sign-in lives in the number's object.
//   floor-rp-callback  the least a relying party's callback does with the service in the same
//                      worker: the state read and spent in KV, the browser's binding cookie checked
//                      against it in constant time, the exchange with PKCE and the user read (the
//                      floor's token and user/me work, called in process), the five fields decrypted,
//                      the identity sealed (AES-GCM) into the session written to KV, a 303 with the
//                      session cookie.
//
// Compiled into the benchmark bundle only; never deployed.

import {
  base64ToBytes,
  constantTimeEqual,
  decryptField,
  pkceS256,
  randomToken,
  seal,
  sha256,
} from "../../workers/core/crypto";
import { inShard, shardOf } from "../../workers/provider/store/one-time/keys";
import { inTurns } from "./in-turns";
import { CLIENT, type FloorStore, RECORD9, SECRET, floorObject, floorUserBody } from "./floor";

const SHARDS = 16;
const REDIRECT_URI = "https://demo.example/callback";
const TX_COOKIE = "__Host-floor_tx";
const TX_TTL_MS = 180_000;
/** The fixed code of the floor's test people, as the project's test numbers have one. */
export const FLOOR_OTP = "000000";

type Env = { FLOOR: DurableObjectNamespace<FloorStore>; RP_KV: KVNamespace };

/** The object holding a number's person and its sign-ins: by its last two digits, so numbers in sequence spread. */
export const phoneShard = (phone: string): number => Number(phone.slice(-2)) & (SHARDS - 1);

const at = floorObject;

const PAGE_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "Content-Security-Policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
};

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function page(step: string, fields: string, headers: Record<string, string> = {}): Response {
  return new Response(
    `<!doctype html><html lang="ko"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>휴대폰 번호 로그인</title></head><body><form method="post" action="/__floor/signin/${step}">${fields}<button>다음</button></form></body></html>`,
    { headers: { ...PAGE_HEADERS, ...headers } },
  );
}

const refused = (status = 400) => new Response("refused", { status, headers: PAGE_HEADERS });

function cookie(req: Request, name: string): string | undefined {
  const header = req.headers.get("Cookie") ?? "";
  for (const part of header.split(";")) {
    const i = part.indexOf("=");
    if (part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/** GET: the authorization request checked (the one registered client and its redirect URI), the first form. */
function start(url: URL): Response {
  const q = url.searchParams;
  if (q.get("response_type") !== "code" || q.get("client_id") !== CLIENT || q.get("redirect_uri") !== REDIRECT_URI)
    return refused();
  const state = escapeHtml(q.get("state") ?? "");
  return page(
    "identify",
    `<input type="hidden" name="state" value="${state}"><select name="telcoCd"><option value="S">SKT</option><option value="K">KT</option><option value="L">LG U+</option></select><input name="name" autocomplete="name"><input name="phoneNo" inputmode="numeric">`,
  );
}

/** identify: the number's person checked and the transaction issued, in one call to its object. */
async function identify(req: Request, env: Env): Promise<Response> {
  const form = new URLSearchParams(await req.text());
  const phone = form.get("phoneNo") ?? "";
  if (!/^01[016789]\d{7,8}$/.test(phone)) return refused();
  const shard = phoneShard(phone);
  const tx = inShard(randomToken(32), shard, SHARDS);
  const ok = await at(env, shard).identify(
    phone,
    form.get("name") ?? "",
    form.get("telcoCd") ?? "",
    await sha256(tx),
    (form.get("state") ?? "").slice(0, 512),
    Date.now() + TX_TTL_MS,
  );
  if (!ok) return refused();
  return page("otp", `<input name="otp" inputmode="numeric" autocomplete="one-time-code">`, {
    "Set-Cookie": `${TX_COOKIE}=${tx}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=180`,
  });
}

/** The code step: checked atomically (a wrong code counts a try) in the transaction's object. */
async function otp(req: Request, env: Env): Promise<Response> {
  const tx = cookie(req, TX_COOKIE);
  if (!tx) return refused();
  const form = new URLSearchParams(await req.text());
  const [txHash, otpHash] = await Promise.all([sha256(tx), sha256(form.get("otp") ?? "")]);
  if (!(await at(env, shardOf(tx, SHARDS)).checkOtp(txHash, otpHash, Date.now()))) return refused();
  return page("consent", `<input type="checkbox" name="agree" value="Y" required>`);
}

/** Consent: the verified transaction spent, the consent written and the code minted, in one call; the 302. */
async function consent(req: Request, env: Env): Promise<Response> {
  const tx = cookie(req, TX_COOKIE);
  if (!tx) return refused();
  const form = new URLSearchParams(await req.text());
  if (form.get("agree") !== "Y") return refused();
  const shard = shardOf(tx, SHARDS);
  const code = inShard(randomToken(32), shard, SHARDS);
  const [txHash, codeHash] = await Promise.all([sha256(tx), sha256(code)]);
  const state = await at(env, shard).consent(txHash, CLIENT, codeHash, Date.now());
  if (state === null) return refused();
  const location = `${REDIRECT_URI}?${new URLSearchParams(state ? { code, state } : { code })}`;
  return new Response(null, {
    status: 302,
    headers: {
      Location: location,
      "Cache-Control": "no-store",
      "Set-Cookie": `${TX_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0`,
    },
  });
}

export async function floorSignin(req: Request, env: Env): Promise<Response> {
  const url = new URL(req.url);
  if (req.method === "GET" && url.pathname === "/__floor/signin") return start(url);
  if (req.method !== "POST") return refused(405);
  switch (url.pathname) {
    case "/__floor/signin/identify":
      return identify(req, env);
    case "/__floor/signin/otp":
      return otp(req, env);
    case "/__floor/signin/consent":
      return consent(req, env);
    default:
      return refused(404);
  }
}

/** `n` fresh floor people (numbers 0108xxxxxxx from `from`), each in its number's object. */
export async function floorPeople(env: Env, from: number, n: number): Promise<Response> {
  const otpHash = await sha256(FLOOR_OTP);
  const phones = Array.from({ length: n }, (_, i) => `0108${String(from + i).padStart(7, "0")}`);
  const byShard = new Map<number, string[]>();
  for (const p of phones) byShard.set(phoneShard(p), [...(byShard.get(phoneShard(p)) ?? []), p]);
  await Promise.all([...byShard].map(([shard, list]) => at(env, shard).addPeople(list, otpHash)));
  return Response.json(phones);
}

// ---- the relying party's callback ----

const SESSION_COOKIE = "__Host-floor_session";
const BINDING_COOKIE = "__Host-floor_state";
const SESSION_TTL_SECONDS = 3600;

let sealKey: Promise<CryptoKey> | undefined;
const key = () =>
  (sealKey ??= crypto.subtle.importKey("raw", new Uint8Array(32).fill(7), { name: "AES-GCM" }, false, [
    "encrypt",
    "decrypt",
  ]));

/** "state code binding" per callback: the state in KV bound to a browser, a code with its PKCE challenge. */
export async function floorCallbacks(env: Env, n: number): Promise<Response> {
  const one = async () => {
    const state = randomToken(32);
    const binding = randomToken(32);
    const verifier = randomToken(32);
    const code = randomToken(32);
    const [bindingHash, challenge, codeHash] = await Promise.all([sha256(binding), pkceS256(verifier), sha256(code)]);
    await env.RP_KV.put(`floor-state:${state}`, JSON.stringify({ bindingHash, verifier, returnTo: "/" }), {
      expirationTtl: 600,
    });
    await at(env, shardOf(code, SHARDS)).putCode(codeHash, CLIENT, challenge, phoneRecord(crypto.randomUUID()));
    return `${state} ${code} ${binding}`;
  };
  return Response.json(await inTurns(n, one));
}

/** The record a floor code carries (bench/workers/floor.ts RECORD9, formatted as user/me sends it). */
function phoneRecord(plid: string): string {
  return JSON.stringify({ plid, ...RECORD9 });
}

let secretDigest: Promise<ArrayBuffer> | undefined;

export async function floorCallback(req: Request, env: Env): Promise<Response> {
  const q = new URL(req.url).searchParams;
  const state = q.get("state");
  const code = q.get("code");
  const binding = cookie(req, BINDING_COOKIE);
  if (!state || !code || !binding) return refused();
  const stored = await env.RP_KV.get<{ bindingHash: string; verifier: string; returnTo: string }>(
    `floor-state:${state}`,
    "json",
  );
  if (!stored || !(await constantTimeEqual(binding, base64urlDigest(stored.bindingHash)))) return refused();
  await env.RP_KV.delete(`floor-state:${state}`); // spent before the exchange: a second callback exchanges nothing
  // the service's part, in process: the client secret checked, PKCE, the code redeemed, the user read
  secretDigest ??= crypto.subtle.digest("SHA-256", new TextEncoder().encode(SECRET));
  if (!(await constantTimeEqual(SECRET, await secretDigest))) return refused(502);
  const token = code.charAt(0) + randomToken(32).slice(1);
  const [codeHash, tokenHash, challenge] = await Promise.all([sha256(code), sha256(token), pkceS256(stored.verifier)]);
  const object = at(env, shardOf(code, SHARDS));
  if (!(await object.redeem(codeHash, CLIENT, tokenHash, challenge))) return refused(502);
  const record = await object.read(tokenHash);
  if (record === null) return refused(502);
  const body = JSON.stringify(await floorUserBody(JSON.parse(record) as Record<string, string>));
  // the app's part: the answer read, the five fields decrypted, the identity sealed into the session
  const user = (JSON.parse(body) as { user: Record<string, string> }).user;
  const identity: Record<string, string> = { ...user };
  const sealedItems = ["ci", "phoneNo", "name", "birthday", "birthdate"];
  const plain = await Promise.all(sealedItems.map((k) => decryptField(SECRET, user[k] ?? "")));
  sealedItems.forEach((k, i) => (identity[k] = plain[i]!));
  const session = randomToken(32);
  const sealed = await seal(await key(), JSON.stringify(identity), `session:${user.plid}`);
  await env.RP_KV.put(`floor-session:${await sha256(session)}`, JSON.stringify({ plid: user.plid, sealed }), {
    expirationTtl: SESSION_TTL_SECONDS,
  });
  return new Response(null, {
    status: 303,
    headers: {
      Location: stored.returnTo,
      "Cache-Control": "no-store",
      "Set-Cookie": `${SESSION_COOKIE}=${session}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_SECONDS}`,
    },
  });
}

/** A base64url SHA-256 digest (as `sha256` writes it) as the bytes `constantTimeEqual` takes. */
function base64urlDigest(b64url: string): ArrayBuffer {
  return base64ToBytes(b64url.replace(/-/g, "+").replace(/_/g, "/")).buffer as ArrayBuffer;
}
