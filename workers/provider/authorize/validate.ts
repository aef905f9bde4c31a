// Every check of an authorization request before any page is shown (spec §4.1, §7; docs/architecture.md
// §4.4). The order matters: nothing redirects until client_id and redirect_uri are proven, so an
// unregistered address is never redirected to.

import { providerConfig, type ProviderEnv } from "../config";
import { E } from "../../core/errors";
import type { Params } from "../../core/http";
import { isRandomValue, LOOPBACK_HOSTS } from "../../core/spec";
import type { Prompt } from "../store/one-time/index";
import { type Client, findClient } from "../store/clients";

export type { Prompt } from "../store/one-time/index";

export interface AuthorizeRequest {
  client: Client;
  redirectUri: string;
  /** Echoed byte for byte in the redirect. */
  state: string;
  prompt: Prompt;
  isHybrid: boolean;
  lang: "ko" | "en" | undefined;
  codeChallenge: string | null;
  /**
   * An OpenID Connect request (docs/oidc.md): a client with OpenID Connect on whose `scope` holds
   * `openid`; its `nonce`, echoed in the id_token. Null for every other request.
   */
  oidc: OpenidRequest | null;
}

/** What an OpenID Connect request adds: the `nonce` to echo, and `max_age` in seconds. */
export interface OpenidRequest {
  nonce?: string;
  /** The longest ago the number may have been proven for an automatic login to answer. */
  maxAge?: number;
}

/** `state` is the app's to fill (apps encode JSON in it): up to this many characters, decoded. */
export const MAX_STATE = 8192;
/**
 * The redirect back must fit the platform's URL limit (16 KiB on Cloudflare): the registered
 * address, the code and the state percent-encoded, with room to spare.
 */
const MAX_LOCATION = 16 * 1024 - 256;

/**
 * The registered address equal to the given one (compared decoded; a doubly encoded one too). In
 * DEV_MODE a loopback `http` address matches a registered loopback address on any port (RFC 8252
 * §7.3: a native app's, or `npm start` on another PORT); the given address is then the one used.
 */
export function registeredRedirect(client: Client, given: string, devMode: boolean): string | undefined {
  if (client.redirectUris.includes(given)) return given;
  let once: string;
  try {
    once = decodeURIComponent(given);
  } catch {
    return undefined; // not decodable: no match
  }
  if (client.redirectUris.includes(once)) return once;
  if (devMode) {
    const want = loopbackWithoutPort(once);
    if (want !== undefined && client.redirectUris.some((r) => loopbackWithoutPort(r) === want)) return once;
  }
  return undefined;
}

/** `http://localhost/path?query` of an http loopback address with its port removed; else undefined. */
function loopbackWithoutPort(uri: string): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" || !LOOPBACK_HOSTS.has(u.hostname) || u.username || u.password || u.hash) return undefined;
  return `http://${u.hostname}${u.pathname}${u.search}`;
}

function parsePrompt(v: string | undefined): Prompt {
  // reference behaviour: unknown prompt values are never rejected; they mean the default.
  return v === "login" || v === "select_account" || v === "none" || v === "N" ? v : undefined;
}

/**
 * An OpenID Connect client's `prompt` (Core §3.1.2.1): a space-separated list, unknown values
 * ignored as today's single value is. `login` or `consent` shows the pages (a proof now);
 * `none` never does, and with another known value it is an error.
 */
function parsePromptList(v: string | undefined): Prompt {
  const values = new Set((v ?? "").split(" ").filter((x) => PROMPT_VALUES.has(x)));
  if (values.has("none")) {
    if (values.size > 1) throw E.invalid("prompt", "prompt=none cannot be combined with other values");
    return "none";
  }
  if (values.has("login") || values.has("consent")) return "login";
  if (values.has("select_account")) return "select_account";
  return values.has("N") ? "N" : undefined;
}
const PROMPT_VALUES: ReadonlySet<string> = new Set(["none", "login", "consent", "select_account", "N"]);

/** `max_age` (Core §3.1.2.1): seconds, a non-negative integer; at most about 31 years. */
function parseMaxAge(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,9}$/.test(v)) throw E.invalid("max_age", "max_age must be a non-negative integer of seconds");
  return Number(v);
}

/** The longest `nonce` taken (OpenID Connect Core §3.1.2.1 sets none; libraries send 22–64 characters). */
const MAX_NONCE = 512;

/** An OpenID Connect request's part, or null: only for a client with it on, and a scope holding `openid`. */
function openidOf(client: Client, params: Params): OpenidRequest | null {
  if (!client.oidc || !(params.get("scope") ?? "").split(" ").includes("openid")) return null;
  const maxAge = parseMaxAge(params.get("max_age"));
  const nonce = params.get("nonce");
  if (nonce !== undefined && (nonce.length === 0 || nonce.length > MAX_NONCE || /[\x00-\x1f\x7f]/.test(nonce)))
    throw E.invalid("nonce", `nonce must be 1 to ${MAX_NONCE} characters without control characters`);
  // `login_hint` (and `id_token_hint`) are read by nobody: a number does not belong in a URL, and
  // the first page stays the same for everyone (docs/oidc.md "Parameters")
  return { ...(nonce !== undefined && { nonce }), ...(maxAge !== undefined && { maxAge }) };
}

/** Validates the authorization request parameters; throws the spec's JSON errors. */
export async function validateAuthorizeParams(env: ProviderEnv, params: Params): Promise<AuthorizeRequest> {
  const cfg = providerConfig(env);
  const clientId = params.get("client_id");
  if (clientId === undefined) throw E.clientMissing("request");
  const client = await findClient(env, clientId, cfg.clientCacheMs);
  if (!client) throw E.badClient("request", "unknown or disabled client");

  const given = params.get("redirect_uri");
  if (given === undefined) throw E.missing("redirect_uri");
  const redirectUri = registeredRedirect(client, given, cfg.devMode);
  if (redirectUri === undefined) throw E.redirectMismatch(given.slice(0, 512));

  const responseType = params.require("response_type");
  if (responseType !== "code") throw E.invalid("response_type");
  // An OpenID Connect request may go without `state` when PKCE or a nonce binds it (their libraries
  // send none by default); every other request keeps the reference's rule. "" stands for none: an
  // empty parameter is read as absent, so no request's state is "".
  const oidc = openidOf(client, params);
  const state = oidc ? (params.get("state") ?? "") : params.require("state");
  if (state.length > MAX_STATE) throw E.invalid("state", "state too long");
  if (redirectUri.length + encodeURIComponent(state).length + 64 > MAX_LOCATION)
    throw E.invalid("state", "the redirect with this state would be too long");

  const challenge = params.get("code_challenge") ?? null;
  const method = params.get("code_challenge_method");
  if (challenge !== null) {
    if (method !== "S256") throw E.invalid("code_challenge_method", "PKCE is S256 only");
    if (!isRandomValue(challenge))
      // base64url of a SHA-256 digest: 43 characters
      throw E.invalid("code_challenge");
  } else if (method !== undefined) {
    throw E.missing("code_challenge");
  }

  if (state === "" && challenge === null && oidc?.nonce === undefined) throw E.missing("state");
  const lang = params.get("lang");
  return {
    oidc,
    client,
    redirectUri,
    state,
    prompt: oidc ? parsePromptList(params.get("prompt")) : parsePrompt(params.get("prompt")),
    isHybrid: params.get("isHybrid") === "Y",
    lang: lang === "ko" || lang === "en" ? lang : undefined,
    codeChallenge: challenge,
  };
}
