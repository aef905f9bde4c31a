// GET /oauth2/jwks (docs/oidc.md "Signing keys"): the public halves of the service's signing keys
// (RFC 7517), every key created and not yet retired past its keep; cacheable for
// JWKS_MAX_AGE_SECONDS, which the rotation waits out before a new key signs.

import type { ProviderEnv } from "../config";
import type { RequestContext } from "../../core/router";
import { publishedKeys } from "../store/signing-keys";
import { storeConfig } from "../store/config";

export async function jwks(_req: Request, env: ProviderEnv, _rc: RequestContext): Promise<Response> {
  return new Response(JSON.stringify({ keys: await publishedKeys(env) }), {
    headers: {
      "Content-Type": "application/jwk-set+json",
      "Cache-Control": `public, max-age=${storeConfig(env).keys.jwksMaxAgeSeconds}`,
      "X-Content-Type-Options": "nosniff",
      "Access-Control-Allow-Origin": "*",
    },
  });
}
