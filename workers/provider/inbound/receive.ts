// What an inbound text did, whichever webhook delivered it (docs/signin.md "A text the person
// sends"): the generic signed one (routes.ts) and the gateways' own formats (tobetext.ts) each
// check their request's authentication and read its fields into one `Inbound`, then hand it here,
// so every format gets the same checks, results, log event and audit.

import { json } from "../../core/http";
import type { RequestContext } from "../../core/router";
import { providerConfig, type ProviderEnv } from "../config";
import { textArrived, textConfig, type Arrival } from "../signin/index";
import { audit } from "../store/one-time/index";

/** A text as the gateway reported it. */
export interface Inbound {
  from: string;
  to: string;
  body: string;
  receivedAt: string;
  /** Whether it originated on a Korean network: a text from abroad can carry any sender. */
  domestic: boolean;
}

export type Outcome = Arrival | "not_our_number" | "international" | "stale";

export const refused = (status: number, error: string, description: string) =>
  json({ error, error_description: description }, status);

/**
 * The text's outcome: to the receiving number, domestic, in time, then its phrase marked arrived
 * once. Logged and audited by its result, never its number or body; answered 200 `{result}`
 * whatever it did, so the gateway does not send it again.
 */
export async function received(env: ProviderEnv, rc: RequestContext, m: Inbound): Promise<Response> {
  const cfg = textConfig(env);
  let outcome: Outcome;
  if (m.to.replace(/\D/g, "") !== cfg.number) outcome = "not_our_number";
  else if (!m.domestic) outcome = "international";
  else if (Date.now() - Date.parse(m.receivedAt) > cfg.ttlMs) outcome = "stale";
  else outcome = await textArrived(env, providerConfig(env).oneTimeShards, m.from, m.body);
  rc.log.event = `sms.inbound_${outcome}`;
  rc.waitUntil(audit(env, "sms.inbound", null, outcome === "accepted" ? "ok" : "refused", { result: outcome }));
  return json({ result: outcome });
}
