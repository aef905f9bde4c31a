// The service's signing keys for the operator (docs/oidc.md "Signing keys"): list them with their
// lives, and rotate (`npm run admin -- keys rotate`): a new key published now, signing once every
// verifier's cached JWKS holds it; the old one published until what it signed has expired.

import { ApiError } from "../core/errors";
import { json } from "../core/http";
import type { RequestContext } from "../core/router";
import { actorOf, auditBy, callerOf } from "./access";
import type { AdminEnv } from "./config";
import { listSigningKeys, rotateSigningKey } from "../provider/store/signing-keys";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function view(k: Awaited<ReturnType<typeof listSigningKeys>>[number]) {
  return {
    kid: k.kid,
    state: k.state,
    created_at: iso(k.created_at),
    created_by: k.created_by,
    signs_from: iso(k.signs_from),
    signs_until: iso(k.signs_until),
    published_until: iso(k.published_until),
  };
}

/** GET /admin/keys: every key, newest first, with its state and the times of its life. */
export async function listKeys(_req: Request, env: AdminEnv): Promise<Response> {
  return json({ keys: (await listSigningKeys(env)).map(view) });
}

/** POST /admin/keys/rotate: a new key; 409 while the previous rotation's key waits to sign. */
export async function rotateKeys(_req: Request, env: AdminEnv, rc: RequestContext): Promise<Response> {
  const r = await rotateSigningKey(env, actorOf(rc).id);
  if (!r.ok) {
    await auditBy(env, callerOf(rc), "signing_key.rotated", null, "refused", { reason: "pending" });
    throw new ApiError(
      "invalid_request",
      `A rotation is in progress: its key signs from ${iso(r.pendingFrom)}; rotate again after that.`,
      { status: 409, cause: "signing key rotation pending" },
    );
  }
  await auditBy(env, callerOf(rc), "signing_key.rotated", null, "ok", { kid: r.key.kid, signs_from: r.key.signs_from });
  return json(view(r.key), 201);
}
