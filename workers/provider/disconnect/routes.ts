// POST /v1/user/disconnect (spec §4.4, §5; docs/architecture.md §4.7): Basic client authentication only.

import { providerConfig, type ProviderEnv } from "../config";
import { E } from "../../core/errors";
import { json, readParams } from "../../core/http";
import { authenticateClient } from "../client-auth";
import type { RequestContext, Route } from "../../core/router";
import { endLink } from "../store/flows/end-plids";
import { audit } from "../store/one-time/index";

async function disconnect(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const cfg = providerConfig(env);
  const params = await readParams(req, rc.search, cfg.maxBodyBytes);
  const { client } = await authenticateClient(req, env, cfg.clientCacheMs);
  rc.log.clientId = client.clientId;
  const plid = params.require("plid");
  if (!(await endLink(env, client.clientId, plid, cfg.oneTimeShards, cfg.revocationRetainMs))) {
    throw E.invalid("plid", "no such link");
  }
  rc.waitUntil(audit(env, "disconnect", client.clientId));
  return json({ code: "0000", error: "success", message: "The user was disconnected." });
}

export const routes: Route<ProviderEnv>[] = [{ method: "POST", path: "/v1/user/disconnect", handler: disconnect }];
