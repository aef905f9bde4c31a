// The relying-party client of a phone-number login service (docs/interface.md): the one module an
// app's Worker imports to talk to the service, ours or the reference. It builds the authorization
// URL (§4.1), exchanges a code (§4.2, §5), reads and decrypts the user (§4.3, §2.1, §2.2) and
// disconnects a user (§4.4). It tolerates what the spec allows: `expires_in` as a JSON string,
// `token_type` in any letter case, `error` empty on success, empty identity values sent either as
// "" or as an encryption of "" (and `agegroup`'s empty value encrypted).
//
// Every failure is an RpClientError with a kind (network, status, envelope, decryption). Messages
// name the endpoint and what was wrong; they never contain the client secret, the access token,
// the code or a personal value.

import { bytesToBase64, decryptField, pkceS256, randomToken, utf8 } from "./core/crypto.js";
import { readStreamCapped } from "./core/http.js";
import { ENCRYPTED_ITEMS, IDENTITY_ITEMS, type IdentityItem, type YN } from "./core/spec.js";

/** Anything with a Fetcher's `fetch`: a service binding, or an in-process stand-in. */
export interface ProviderFetcher {
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
}

export interface RpClientConfig {
  /** The service's `{base_url}` (spec §1), e.g. `https://login.example.com`; no trailing slash needed. */
  baseUrl: string;
  clientId: string;
  /** The client secret (a Workers secret). Also the field-cipher key (spec §2.2). */
  clientSecret: string;
  /** The callback address registered for the app (spec §4.1). */
  redirectUri: string;
  /** Back channel to the service: a service binding when configured, else global `fetch` to baseUrl. */
  fetcher?: ProviderFetcher;
  /** Token endpoint client authentication (spec §5): Basic (default) or the parameter fallback. */
  clientAuth?: "basic" | "params";
  /** Abort a back-channel call after this many milliseconds (default 10 000). */
  timeoutMs?: number;
}

export type RpEndpoint = "token" | "user" | "disconnect" | "ssf";
/** `ended`: the plid was ended (a disconnect, an event) while the login that read it was under way. */
export type RpClientErrorKind = "network" | "status" | "envelope" | "decryption" | "ended";

/** A typed failure of a call to the service. Carries no secret, token, code or personal value. */
export class RpClientError extends Error {
  readonly kind: RpClientErrorKind;
  readonly endpoint: RpEndpoint;
  /** HTTP status of the service's answer, when there was one. */
  readonly status: number | undefined;
  /** The service's `error` word (spec §7), when it sent one of a sane shape. */
  readonly providerError: string | undefined;
  /** True when the token endpoint said the code is invalid (spec §4.2, reference behaviour). */
  readonly invalidCode: boolean;
  /** True when the disconnect endpoint refused the plid itself (400 naming it): no such link. */
  readonly unknownPlid: boolean;

  constructor(
    kind: RpClientErrorKind,
    endpoint: RpEndpoint,
    detail: string,
    extra: { status?: number; providerError?: string; invalidCode?: boolean; unknownPlid?: boolean } = {},
  ) {
    super(`${endpoint} endpoint: ${detail}`);
    this.name = "RpClientError";
    this.kind = kind;
    this.endpoint = endpoint;
    this.status = extra.status;
    this.providerError = extra.providerError;
    this.invalidCode = extra.invalidCode ?? false;
    this.unknownPlid = extra.unknownPlid ?? false;
  }
}

/** A user record (spec §2.1) with every encrypted item decrypted. Absent items were not agreed. */
export type ProviderUser = { plid: string; autoLoginYn?: YN; autoStatusCheck?: YN } & Partial<
  Record<IdentityItem, string>
>;

export interface TokenSet {
  accessToken: string;
  /** Always "bearer" once accepted (spec §2.3: the case of the response varies). */
  tokenType: "bearer";
  /** Seconds, from a JSON number or a numeric JSON string (spec §2.3); null when absent. */
  expiresIn: number | null;
  state?: string;
}

export interface AuthorizationUrlOptions {
  state: string;
  /** RFC 7636 S256 challenge (see `createPkce`). */
  codeChallenge?: string;
  /** spec §4.1 `prompt`; passed as given. */
  prompt?: string;
  /** spec §4.1 `isHybrid` (WebView mode): true sends `isHybrid=Y`. */
  isHybrid?: boolean;
  /** Extra query parameters (for example `lang` for our provider's pages). */
  extra?: Record<string, string>;
}

const MAX_RESPONSE_BYTES = 64 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;

/** Value shapes of spec §2.1 and reference behaviour "Value formats". "" (mode 2) is always allowed. */
const FORMATS: Record<IdentityItem, RegExp> = {
  ci: /^[\x21-\x7e]{1,256}$/,
  phoneNo: /^01\d{8,9}$/,
  name: /^[^\x00-\x1f\x7f]{1,100}$/u,
  gender: /^[FM]$/,
  agegroup: /^(?:0|[1-9]\d?0)$/,
  birthday: /^(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])$/,
  birthdate: /^\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])$/,
  foreign: /^[LF]$/,
  telcoCd: /^[SKL]$/,
};
/** plid: a UUID at the reference; any bounded URL-safe identifier is accepted. */
export const PLID_SHAPE = /^[A-Za-z0-9._~-]{1,128}$/;
/** What an AES-CBC ciphertext looks like in transport (Base64 of whole 16-byte blocks). */
const CIPHERTEXT_SHAPE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const ERROR_WORD = /^[a-z_]{1,64}$/;

/** The URL to send the browser to (spec §4.1). */
export function authorizationUrl(
  cfg: Pick<RpClientConfig, "baseUrl" | "clientId" | "redirectUri">,
  opts: AuthorizationUrlOptions,
): string {
  const url = new URL(endpointUrl(cfg, "/oauth2/authorize"));
  const q = url.searchParams;
  q.set("response_type", "code");
  q.set("client_id", cfg.clientId);
  q.set("redirect_uri", cfg.redirectUri);
  q.set("state", opts.state);
  if (opts.codeChallenge !== undefined) {
    q.set("code_challenge", opts.codeChallenge);
    q.set("code_challenge_method", "S256");
  }
  if (opts.prompt !== undefined) q.set("prompt", opts.prompt);
  if (opts.isHybrid) q.set("isHybrid", "Y");
  for (const [k, v] of Object.entries(opts.extra ?? {})) q.set(k, v);
  return url.toString();
}

/** A fresh RFC 7636 pair: a 256-bit verifier and its S256 challenge. */
export async function createPkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = randomToken(32);
  return { verifier, challenge: await pkceS256(verifier) };
}

/**
 * `Authorization: Basic` with each half form-url-encoded first (RFC 6749 §2.3.1), so ids and
 * secrets with reserved characters survive a compliant server's decoding.
 */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  const enc = (s: string) => new URLSearchParams({ v: s }).toString().slice(2);
  return "Basic " + bytesToBase64(utf8(`${enc(clientId)}:${enc(clientSecret)}`));
}

/** Exchanges an authorization code for an access token (spec §4.2). */
export async function exchangeCode(
  cfg: RpClientConfig,
  code: string,
  opts: { codeVerifier?: string; state?: string } = {},
): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: "authorization_code", code });
  if (opts.codeVerifier !== undefined) form.set("code_verifier", opts.codeVerifier);
  if (opts.state !== undefined) form.set("state", opts.state);
  const headers: Record<string, string> = {
    "Content-Type": "application/x-www-form-urlencoded",
    Accept: "application/json",
  };
  if (cfg.clientAuth === "params") {
    form.set("client_id", cfg.clientId);
    form.set("client_secret", cfg.clientSecret);
  } else {
    headers.Authorization = basicAuthorization(cfg.clientId, cfg.clientSecret);
  }
  const res = await call(cfg, "token", "/oauth2/token", { method: "POST", headers, body: form.toString() });
  const body = await readJson(res, "token");
  if (res.status !== 200) throw statusError("token", res.status, body);
  // reference behaviour: integrations treat any non-empty `error` key as a failure.
  if (typeof body.error === "string" && body.error !== "") {
    throw new RpClientError("envelope", "token", "error key in a 200 answer", {
      status: 200,
      providerError: errorWord(body),
    });
  }
  const accessToken = body.access_token;
  if (typeof accessToken !== "string" || !/^[\x21-\x7e]{1,4096}$/.test(accessToken)) {
    throw new RpClientError("envelope", "token", "access_token missing or malformed", { status: 200 });
  }
  const tokenType = body.token_type;
  if (tokenType !== undefined && (typeof tokenType !== "string" || tokenType.toLowerCase() !== "bearer")) {
    throw new RpClientError("envelope", "token", "token_type is not bearer", { status: 200 });
  }
  const set: TokenSet = { accessToken, tokenType: "bearer", expiresIn: seconds(body.expires_in) };
  if (typeof body.state === "string") set.state = body.state;
  return set;
}

/** spec §2.3: an integer, possibly sent as a JSON string. */
function seconds(v: unknown): number | null {
  if (v === undefined || v === null) return null;
  const n = typeof v === "string" && /^\s*\d{1,10}\s*$/.test(v) ? Number(v) : v;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw new RpClientError("envelope", "token", "expires_in is not a whole number of seconds", { status: 200 });
  }
  return n;
}

/** Reads the user once (spec §4.3), checks the envelope (§2.4) and decrypts every item (§2.2). */
export async function readUser(cfg: RpClientConfig, accessToken: string): Promise<ProviderUser> {
  const res = await call(cfg, "user", "/v1/user/me", {
    method: "GET",
    headers: { Authorization: `Bearer ${accessToken}`, Accept: "application/json" },
  });
  const body = await readJson(res, "user");
  if (res.status !== 200) throw statusError("user", res.status, body);
  checkEnvelope("user", body);
  const user = body.user;
  if (typeof user !== "object" || user === null || Array.isArray(user)) {
    throw new RpClientError("envelope", "user", "user object missing", { status: 200 });
  }
  return decryptUser(cfg.clientSecret, user as Record<string, unknown>);
}

/**
 * Decrypts and validates a raw `user` object (spec §2.1, §2.2). Encrypted items accept "" or an
 * encryption of ""; a plain item that arrives as a ciphertext (spec §2.1: `agegroup`'s empty value)
 * is decrypted too. Unknown keys are dropped; a value of the wrong shape is an envelope error.
 */
export async function decryptUser(clientSecret: string, raw: Record<string, unknown>): Promise<ProviderUser> {
  const plid = raw.plid;
  if (typeof plid !== "string" || !PLID_SHAPE.test(plid)) {
    throw new RpClientError("envelope", "user", "plid missing or malformed", { status: 200 });
  }
  const user: ProviderUser = { plid };
  await Promise.all(
    IDENTITY_ITEMS.map(async (item) => {
      const v = raw[item];
      if (v === undefined || v === null) return;
      if (typeof v !== "string")
        throw new RpClientError("envelope", "user", `${item} is not a string`, { status: 200 });
      user[item] = await itemValue(clientSecret, item, v);
    }),
  );
  for (const flag of ["autoLoginYn", "autoStatusCheck"] as const) {
    const v = raw[flag];
    if (v === undefined || v === null || v === "") continue;
    if (v !== "Y" && v !== "N") throw new RpClientError("envelope", "user", `${flag} is not Y or N`, { status: 200 });
    user[flag] = v;
  }
  return user;
}

async function itemValue(secret: string, item: IdentityItem, v: string): Promise<string> {
  if (v === "") return "";
  const format = FORMATS[item];
  const encrypted = ENCRYPTED_ITEMS.has(item);
  if (!encrypted && format.test(v)) return v;
  if (!encrypted && !(v.length >= 24 && CIPHERTEXT_SHAPE.test(v))) {
    throw new RpClientError("envelope", "user", `${item} has an invalid value`, { status: 200 });
  }
  let plain: string;
  try {
    plain = await decryptField(secret, v);
  } catch {
    throw new RpClientError("decryption", "user", `${item} does not decrypt with the client secret (spec §2.2)`, {
      status: 200,
    });
  }
  if (plain !== "" && !format.test(plain)) {
    throw new RpClientError("envelope", "user", `${item} has an invalid value`, { status: 200 });
  }
  return plain;
}

/** Disconnects a user from the app (spec §4.4): Basic client authentication, `plid` in the form. */
export async function disconnectUser(cfg: RpClientConfig, plid: string): Promise<void> {
  const res = await call(cfg, "disconnect", "/v1/user/disconnect", {
    method: "POST",
    headers: {
      Authorization: basicAuthorization(cfg.clientId, cfg.clientSecret),
      "Content-Type": "application/x-www-form-urlencoded",
      Accept: "application/json",
    },
    body: new URLSearchParams({ plid }).toString(),
  });
  const body = await readJson(res, "disconnect");
  if (res.status !== 200) throw statusError("disconnect", res.status, body);
  checkEnvelope("disconnect", body);
}

// ---- transport ----

function endpointUrl(cfg: Pick<RpClientConfig, "baseUrl">, path: string): string {
  return cfg.baseUrl.replace(/\/+$/, "") + path;
}

/** A back-channel call to the service's `path`, bounded by the client's timeout; a failure is an RpClientError. */
export async function call(
  cfg: RpClientConfig,
  endpoint: RpEndpoint,
  path: string,
  init: RequestInit,
): Promise<Response> {
  const ms = cfg.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const request = new Request(endpointUrl(cfg, path), { ...init, redirect: "manual", signal: AbortSignal.timeout(ms) });
  // The race also bounds a fetcher that ignores the signal.
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RpClientError("network", endpoint, "service timed out")), ms);
  });
  try {
    return await Promise.race([cfg.fetcher ? cfg.fetcher.fetch(request) : fetch(request), timeout]);
  } catch (err) {
    if (err instanceof RpClientError) throw err;
    const what =
      err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError") ? "timed out" : "unreachable";
    throw new RpClientError("network", endpoint, `service ${what}`);
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

/** The body as a JSON object, read up to 64 KiB. A non-JSON 200 is an envelope error. */
export async function readJson(res: Response, endpoint: RpEndpoint): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readCapped(res);
  } catch {
    throw new RpClientError(res.ok ? "envelope" : "status", endpoint, "unreadable or oversized body", {
      status: res.status,
    });
  }
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  if (res.status !== 200) return {};
  throw new RpClientError("envelope", endpoint, "body is not a JSON object", { status: res.status });
}

export async function readCapped(res: Response): Promise<string> {
  const declared = Number(res.headers.get("Content-Length") ?? "0");
  if (declared > MAX_RESPONSE_BYTES) throw new RangeError("too large");
  if (!res.body) return "";
  const all = await readStreamCapped(res.body, MAX_RESPONSE_BYTES);
  if (all === null) throw new RangeError("too large");
  return new TextDecoder().decode(all);
}

function errorWord(body: Record<string, unknown>): string | undefined {
  return typeof body.error === "string" && ERROR_WORD.test(body.error) ? body.error : undefined;
}

function statusError(endpoint: RpEndpoint, status: number, body: Record<string, unknown>): RpClientError {
  const providerError = errorWord(body);
  // spec §4.2: the reference answers 500 server_error "Invalid authorization code..."; RFC 6749 says invalid_grant.
  const invalidCode =
    endpoint === "token" &&
    (providerError === "invalid_grant" ||
      (typeof body.message === "string" && body.message.includes("Invalid authorization code")));
  const unknownPlid =
    endpoint === "disconnect" && status === 400 && typeof body.message === "string" && body.message.includes("plid");
  return new RpClientError("status", endpoint, `answered ${status}${providerError ? ` ${providerError}` : ""}`, {
    status,
    providerError,
    invalidCode,
    unknownPlid,
  });
}

/** spec §2.4: `code` "0000"; `error` "success" or empty (or absent). */
function checkEnvelope(endpoint: RpEndpoint, body: Record<string, unknown>): void {
  if (body.code !== "0000") {
    throw new RpClientError("envelope", endpoint, "result code is not 0000", {
      status: 200,
      providerError: errorWord(body),
    });
  }
  const e = body.error;
  if (e !== undefined && e !== null && e !== "" && !(typeof e === "string" && e.toLowerCase() === "success")) {
    throw new RpClientError("envelope", endpoint, "error word is not success", {
      status: 200,
      providerError: errorWord(body),
    });
  }
}
