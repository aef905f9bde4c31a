// GET|POST /oauth2/authorize (spec §4.1; reference behaviour: POST is answered exactly like GET).
// A POST carrying `tx` and no `client_id` is a sign-in step (docs/signin.md); anything else is an
// authorization request, validated before any page.

import { providerConfig, type ProviderEnv } from "../config";
import { readParams } from "../../core/http";
import type { RequestContext, Route } from "../../core/router";
import { appSignin } from "./purpose";
import { startSignIn } from "./start";
import { continueSignIn } from "../signin/index";
import { validateAuthorizeParams } from "./validate";
import { answerOffer } from "./offer";

async function authorize(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const params = await readParams(req, rc.search, providerConfig(env).maxBodyBytes);
  // the answer to a passkey offer at a sign-in's end (docs/passkeys.md "The offer")
  if (req.method === "POST" && params.has("enrol") && !params.has("client_id"))
    return answerOffer(req, env, rc, params);
  if (req.method === "POST" && params.has("tx") && !params.has("client_id"))
    return continueSignIn(req, env, rc, params, appSignin);
  const ar = await validateAuthorizeParams(env, params);
  rc.log.clientId = ar.client.clientId;
  return startSignIn(req, env, rc, ar);
}

export const routes: Route<ProviderEnv>[] = [
  { method: "GET", path: "/oauth2/authorize", handler: authorize, effects: true, page: true },
  { method: "POST", path: "/oauth2/authorize", handler: authorize, page: true },
];
