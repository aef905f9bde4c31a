// Authorization codes: minted here by the one function the sign-in pages (and tests) call.

import { randomToken, sha256 } from "../core/crypto";
import type { IdentityItem } from "../core/spec";
import {
  firstReportKey,
  inShard,
  plidShard,
  storeFor,
  type OneTimeStore,
  type CodeGrant,
  type SubscriberSnapshot,
  type AuditRecord,
} from "./store/one-time/index";
import type { Subscriber } from "./store/directory/index";

export interface MintCodeInput {
  clientId: string;
  /** The subscriber as the directory has them now: the code carries this snapshot. */
  subscriber: Subscriber;
  plid: string;
  /** The client's agreed items the subscriber consented to. */
  items: readonly IdentityItem[];
  redirectUri: string;
  autoLogin: CodeGrant["autoLogin"];
  /** An automatic-login opt-in: the grant's first report becomes pending for this long. */
  firstReportTtlMs?: number;
  /** RFC 7636 S256 challenge sent with the authorization request, if any. */
  codeChallenge?: string | null;
  /** An OpenID Connect request's part of the grant (docs/oidc.md); absent otherwise. */
  oidc?: CodeGrant["oidc"];
  /** Audit events of the sign-in, appended with the code in the same call (workers/provider/store/one-time/audit.ts). */
  audit?: readonly AuditRecord[];
}

type MintEnv = { ONE_TIME: DurableObjectNamespace<OneTimeStore> };

function snapshot(s: Subscriber): SubscriberSnapshot {
  return {
    telco: s.telco,
    phone: s.phone,
    name: s.name,
    gender: s.gender,
    birth: s.birth,
    foreign: s.foreign,
    ci: s.ci,
  };
}

/**
 * Mints a single-use authorization code (256 random bits less log2(shards), base64url) valid for
 * `ttlMs`, bound to the client, in the store object of its plid. Only its hash is stored
 * (docs/architecture.md §4.3).
 */
export async function mintCode(env: MintEnv, shards: number, ttlMs: number, input: MintCodeInput): Promise<string> {
  const code = inShard(randomToken(32), plidShard(input.plid, shards), shards);
  const grant: CodeGrant = {
    clientId: input.clientId,
    subscriberId: input.subscriber.id,
    plid: input.plid,
    redirectUri: input.redirectUri,
    autoLogin: input.autoLogin,
    issuedAt: Date.now(),
    items: [...input.items],
    subscriber: snapshot(input.subscriber),
    ...(input.oidc && { oidc: input.oidc }),
  };
  const report =
    input.autoLogin && input.firstReportTtlMs !== undefined
      ? { key: firstReportKey(input.autoLogin.deviceHash, input.clientId), ttlMs: input.firstReportTtlMs }
      : undefined;
  await storeFor(env, code, shards).putCode(
    await sha256(code),
    grant,
    input.codeChallenge ?? null,
    ttlMs,
    report,
    input.audit,
  );
  return code;
}

/**
 * A fresh access token that lives in the same store shard as `code` (its first character is the
 * code's), so a replayed code can revoke it atomically, and its plid's revocation reaches it.
 */
export function tokenForCode(code: string): string {
  return code.charAt(0) + randomToken(32).slice(1);
}
