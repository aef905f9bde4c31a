// GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0 §4; docs/oidc.md): what an
// identity platform reads from the issuer URL alone. Nothing is read from storage.

import type { ProviderEnv } from "../config";
import { issuer } from "../store/flows/events";

/** The discovery document for issuer `iss`. */
export function discoveryDocument(iss: string): Record<string, unknown> {
  return {
    issuer: iss,
    authorization_endpoint: `${iss}/oauth2/authorize`,
    token_endpoint: `${iss}/oauth2/token`,
    jwks_uri: `${iss}/oauth2/jwks`,
    userinfo_endpoint: `${iss}/oauth2/userinfo`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code"],
    // the subject is the app's plid: each app sees its own identifier of a person
    subject_types_supported: ["pairwise"],
    id_token_signing_alg_values_supported: ["ES256"],
    scopes_supported: ["openid"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    code_challenge_methods_supported: ["S256"],
    claims_supported: [
      "iss",
      "sub",
      "aud",
      "exp",
      "iat",
      "auth_time",
      "nonce",
      "amr",
      "name",
      "phone_number",
      "phone_number_verified",
      "gender",
      "birthdate",
    ],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

export async function discovery(_req: Request, env: ProviderEnv): Promise<Response> {
  return new Response(JSON.stringify(discoveryDocument(issuer(env))), {
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": "public, max-age=300",
      "X-Content-Type-Options": "nosniff",
      "Access-Control-Allow-Origin": "*",
    },
  });
}
