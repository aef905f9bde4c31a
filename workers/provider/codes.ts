// Authorization codes: minted here by the one function the sign-in pages (and tests) call.

import { randomToken, sha256 } from "../core/crypto";
import { storeFor, type CodeGrant, type OneTimeStore } from "./store/one-time-store";

export interface MintCodeInput {
  clientId: string;
  subscriberId: number;
  plid: string;
  redirectUri: string;
  autoLogin: CodeGrant["autoLogin"];
  /** RFC 7636 S256 challenge sent with the authorization request, if any. */
  codeChallenge?: string | null;
}

type MintEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

/**
 * Mints a single-use authorization code (256 random bits, base64url) valid for `ttlMs`, bound to
 * the client. Only its hash is stored (docs/architecture.md §4.3).
 */
export async function mintCode(env: MintEnv, shards: number, ttlMs: number, input: MintCodeInput): Promise<string> {
  const code = randomToken(32);
  const grant: CodeGrant = {
    clientId: input.clientId,
    subscriberId: input.subscriberId,
    plid: input.plid,
    redirectUri: input.redirectUri,
    autoLogin: input.autoLogin,
    issuedAt: Date.now(),
  };
  await storeFor(env, code, shards).putCode(await sha256(code), grant, input.codeChallenge ?? null, ttlMs);
  return code;
}

/**
 * A fresh access token that lives in the same store shard as `code` (its first character is the
 * code's), so a replayed code can revoke it atomically. 250 random bits remain.
 */
export function tokenForCode(code: string): string {
  return code.charAt(0) + randomToken(32).slice(1);
}
