// POST /sms/inbound (docs/signin.md "A text the person sends", docs/operations.md "Receiving
// texts"): the texts people send to the service's receiving number, as the operator's SMS gateway
// hands them on. Signed like the outbound webhook: `X-Signature: sha256=<hex>`, HMAC-SHA256 under
// SMS_INBOUND_SECRET (or SMS_INBOUND_SECRET_NEXT while it rotates) over `<timestamp>.<body>`, and
// `X-Signature-Timestamp` within five minutes. The body is JSON: `from`, `to`, `body`,
// `receivedAt` (ISO 8601) and `domestic` (whether the text originated on a Korean network: one
// that came from abroad may carry any sender, so it proves nothing).
//
// A text the gateway delivered is answered 200 whatever it proved (it is not retried); what it did
// is in `result` and the audit trail, never its number or body (receive.ts, shared with the
// gateways' own formats: POST /sms/inbound/tobetext/<token>, tobetext.ts).

import { constantTimeEqual, hmacSha256Hex } from "../../core/crypto";
import { readBodyText } from "../../core/http";
import type { RequestContext, Route } from "../../core/router";
import type { ProviderEnv } from "../config";
import { textConfig } from "../signin/index";
import { received, refused, type Inbound } from "./receive";
import { receiveTobetext } from "./tobetext";

/** An inbound text's JSON is small: a text's body is at most a few hundred bytes. */
const MAX_BODY_BYTES = 4096;
/** How far a signature's timestamp may be from now. */
const SKEW_SECONDS = 300;

/** Whether the request is signed with one of the secrets, at a time within the skew. */
async function signed(req: Request, raw: string, secrets: readonly string[]): Promise<boolean> {
  const ts = req.headers.get("X-Signature-Timestamp") ?? "";
  const sig = req.headers.get("X-Signature") ?? "";
  if (!/^\d{1,12}$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > SKEW_SECONDS) return false;
  let ok = false;
  // every secret is tried, so the time does not say which one matched
  for (const s of secrets)
    if (await constantTimeEqual(`sha256=${await hmacSha256Hex(s, `${ts}.${raw}`)}`, sig)) ok = true;
  return ok;
}

/** The fields, each of its type, or the name of the first that is not. */
function fieldsOf(raw: string): Inbound | string {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return "body";
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "body";
  const o = v as Record<string, unknown>;
  for (const k of ["from", "to", "body", "receivedAt"] as const)
    if (typeof o[k] !== "string" || (o[k] as string).length > 1000) return k;
  if (typeof o.domestic !== "boolean") return "domestic";
  if (Number.isNaN(Date.parse(o.receivedAt as string))) return "receivedAt";
  return o as unknown as Inbound;
}

export async function receiveText(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const cfg = textConfig(env);
  if (cfg.number === null || cfg.secrets.length === 0)
    return refused(
      404,
      "not_found",
      "This service receives no signed texts (SMS_INBOUND_NUMBER or SMS_INBOUND_SECRET is not set).",
    );
  const raw = await readBodyText(req, MAX_BODY_BYTES);
  if (!(await signed(req, raw, cfg.secrets))) {
    rc.log.event = "sms.inbound_forged";
    return refused(401, "authentication_failed", "The signature or its timestamp is not valid.");
  }
  const m = fieldsOf(raw);
  if (typeof m === "string") return refused(400, "invalid_request", `The value of ${m} is not valid.`);
  return received(env, rc, m);
}

export const routes: Route<ProviderEnv>[] = [
  { method: "POST", path: "/sms/inbound", handler: receiveText },
  { method: "POST", path: "/sms/inbound/tobetext/:token", handler: receiveTobetext },
  // without a token: refused as a wrong one
  { method: "POST", path: "/sms/inbound/tobetext", handler: receiveTobetext },
];
