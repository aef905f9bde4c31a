// POST /sms/inbound/tobetext/<token> (docs/signin.md "ToBeText's format", docs/operations.md
// "Receiving texts"): the texts people send to a receiving number of ToBeText (투비텍스트), in the
// format of its Inbound SMS API (https://tobetext.com/api-docs/api-references/inbound-sms): a POST
// to the URL the operator registered with ToBeText, its parameters `SendNum` (the sender's number),
// `RecvNum` (the receiving number ToBeText assigned) and `Body` (the text, after the operator's
// ToBeText prefix number when it has one), form-encoded as in ToBeText's own sample. ToBeText sends
// a text again, at most three times, when it cannot confirm the delivery.
//
// ToBeText documents no signature and no credential for this POST, so the URL carries one: the
// token (SMS_INBOUND_TOBETEXT_TOKEN), compared in constant time. What that does not stop is in
// docs/security.md. The format carries no time and no network of origin: the text is taken as
// received now, and as domestic only on a Korean representative number (15xx, 16xx, 18xx), which
// no network abroad can text; on any other number it proves nothing (`international`).
//
// The text then goes the generic webhook's way (receive.ts): the same checks, results and audit.

import { constantTimeEqual } from "../../core/crypto";
import { formPairs, readBodyText } from "../../core/http";
import type { RequestContext } from "../../core/router";
import type { ProviderEnv } from "../config";
import { textConfig } from "../signin/index";
import { received, refused } from "./receive";

/** A form of three short fields: a text's body is at most a few hundred bytes. */
const MAX_BODY_BYTES = 4096;
/** The parameters ToBeText posts, in the order a missing one is named. */
const FIELDS = ["SendNum", "RecvNum", "Body"] as const;

/** A Korean representative number (전국대표번호): eight digits, 15xx, 16xx or 18xx. */
export const representative = (digits: string) => /^1[568]\d{6}$/.test(digits);

/** The three fields, or the name of the first that is missing, too long or not UTF-8. */
function fieldsOf(raw: string): Record<(typeof FIELDS)[number], string> | string {
  let pairs: Map<string, string>;
  try {
    pairs = formPairs(raw);
  } catch {
    return "body"; // a name sent twice
  }
  const out: Partial<Record<(typeof FIELDS)[number], string>> = {};
  for (const k of FIELDS) {
    const v = pairs.get(k);
    if (v === undefined || v === "" || v.length > 1000 || v.includes("\uFFFD")) return k;
    out[k] = v;
  }
  return out as Record<(typeof FIELDS)[number], string>;
}

export async function receiveTobetext(req: Request, env: ProviderEnv, rc: RequestContext): Promise<Response> {
  const cfg = textConfig(env);
  if (cfg.number === null || cfg.tobetextToken === null)
    return refused(
      404,
      "not_found",
      "This service receives no texts from ToBeText (SMS_INBOUND_NUMBER or SMS_INBOUND_TOBETEXT_TOKEN is not set).",
    );
  if (!(await constantTimeEqual(cfg.tobetextToken, rc.params.token ?? ""))) {
    rc.log.event = "sms.inbound_forged";
    return refused(401, "authentication_failed", "The token in the URL is not valid.");
  }
  const type = req.headers.get("Content-Type");
  if (type !== null && !/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type))
    return refused(415, "invalid_request", "The body must be application/x-www-form-urlencoded.");
  const m = fieldsOf(await readBodyText(req, MAX_BODY_BYTES));
  if (typeof m === "string") return refused(400, "invalid_request", `The value of ${m} is not valid.`);
  return received(env, rc, {
    from: m.SendNum,
    to: m.RecvNum,
    body: m.Body,
    receivedAt: new Date().toISOString(),
    domestic: representative(cfg.number),
  });
}
