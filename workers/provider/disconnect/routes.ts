// POST /v1/user/disconnect (spec §4.4, §5; DESIGN.md §4.7): Basic client authentication only.

import { providerConfig, type Env } from "../../core/config";
import { E } from "../../core/errors";
import { json, parseBasic, readParams } from "../../core/http";
import { audit, authenticateClient, disconnectLink } from "../store/registry";
import type { RequestContext, Route } from "../../core/router";

async function disconnect(req: Request, env: Env, rc: RequestContext): Promise<Response> {
  const cfg = providerConfig(env);
  const params = await readParams(req, rc.url, cfg.maxBodyBytes);
  const basic = parseBasic(req.headers.get("Authorization"));
  if (basic.kind === "absent") throw E.clientMissing("disconnect");
  if (basic.kind === "malformed") throw E.badClient("disconnect", basic.reason);
  if (basic.id === "") throw E.clientMissing("disconnect");
  const { client } = await authenticateClient(env, basic.id, basic.secret, "disconnect", cfg.clientCacheMs);
  rc.log.clientId = client.clientId;
  const plid = params.require("plid");
  if (!(await disconnectLink(env, client.clientId, plid))) throw E.invalid("plid", "no such link");
  rc.waitUntil(audit(env, "disconnect", client.clientId));
  return json({ code: "0000", error: "success", message: "The user was disconnected." });
}

export const routes: Route<Env>[] = [{ method: "POST", path: "/v1/user/disconnect", handler: disconnect }];
